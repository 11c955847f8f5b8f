package v1

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/kjson"
)

func TestTimeJSON(t *testing.T) {
	ts := time.Date(2026, 11, 21, 19, 1, 2, 500_000_000, time.FixedZone("x", 3600))
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"zero Time is null", Time{}, `null`},
		{"Time is UTC seconds", NewTime(ts), `"2026-11-21T18:01:02Z"`},
		{"zero MicroTime is null", MicroTime{}, `null`},
		{"MicroTime keeps microseconds", NewMicroTime(ts.Add(123456)), `"2026-11-21T18:01:02.500123Z"`},
		{"Duration", Duration{90 * time.Second}, `"1m30s"`},
	} {
		for lib, marshal := range map[string]func(any) ([]byte, error){"kjson": kjson.Marshal, "encoding/json": json.Marshal} {
			got, err := marshal(c.v)
			if err != nil || string(got) != c.want {
				t.Errorf("%s (%s): got %s, %v; want %s", c.name, lib, got, err, c.want)
			}
		}
	}
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{`"2026-11-21T19:01:02Z"`, time.Date(2026, 11, 21, 19, 1, 2, 0, time.UTC)},
		{`"2026-11-21T20:01:02+01:00"`, time.Date(2026, 11, 21, 19, 1, 2, 0, time.UTC)},
		{`"2026-11-21T19:01:02.25Z"`, time.Date(2026, 11, 21, 19, 1, 2, 250_000_000, time.UTC)},
		{`null`, time.Time{}},
		{`""`, time.Time{}},
	} {
		for lib, unmarshal := range map[string]func([]byte, any) error{"kjson": kjson.Unmarshal, "encoding/json": json.Unmarshal} {
			var tm Time
			if err := unmarshal([]byte(c.in), &tm); err != nil || !tm.Time.Equal(c.want) {
				t.Errorf("%s (%s): got %v, %v; want %v", c.in, lib, tm, err, c.want)
			}
			var mt MicroTime
			if err := unmarshal([]byte(c.in), &mt); err != nil || !mt.Time.Equal(c.want) {
				t.Errorf("MicroTime %s (%s): got %v, %v; want %v", c.in, lib, mt, err, c.want)
			}
		}
	}
	for _, bad := range []string{`"yesterday"`, `12`, `{}`, `"2026-13-01T00:00:00Z"`} {
		var tm Time
		if err := kjson.Unmarshal([]byte(bad), &tm); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}

func TestTimeProtobuf(t *testing.T) {
	// Golden 08: creationTimestamp 2026-11-21T19:01:02Z is {seconds: 1795277662, nanos: 0}.
	tm := NewTime(time.Date(2026, 11, 21, 19, 1, 2, 0, time.UTC))
	b, err := tm.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if want := "\x08\xee\xd4\x87\xd8\x06\x10\x00"; string(b) != want {
		t.Errorf("Time encodes as %x, want %x", b, want)
	}
	zero := Time{}
	if zb, _ := zero.Marshal(); len(zb) != 0 || zero.Size() != 0 {
		t.Errorf("zero Time encodes as %x", zb)
	}
	for _, v := range []time.Time{time.Unix(0, 1).UTC(), time.Unix(-5, 999).UTC(), time.Unix(1795201262, 123456789).UTC()} {
		in := MicroTime{v}
		b, _ := in.Marshal()
		var out MicroTime
		if err := out.Unmarshal(b); err != nil || !out.Time.Equal(v) {
			t.Errorf("MicroTime %v: got %v, %v", v, out, err)
		}
	}
	var bad Time
	if err := bad.Unmarshal([]byte{0x08}); err == nil {
		t.Error("truncated Time: want an error")
	}
	d := Duration{-3 * time.Second}
	db, _ := d.Marshal()
	var d2 Duration
	if err := d2.Unmarshal(db); err != nil || d2 != d {
		t.Errorf("Duration round trip: %v, %v", d2, err)
	}
}

func TestRawJSON(t *testing.T) {
	type holder struct {
		F *FieldsV1    `json:"f,omitempty"`
		R RawExtension `json:"r"`
	}
	in := `{"f":{"f:data":{".":{}}},"r":{"kind":"X","n":1}}`
	var h holder
	if err := kjson.Unmarshal([]byte(in), &h); err != nil {
		t.Fatal(err)
	}
	if string(h.F.Raw) != `{"f:data":{".":{}}}` || string(h.R.Raw) != `{"kind":"X","n":1}` {
		t.Errorf("raw values: %s %s", h.F.Raw, h.R.Raw)
	}
	out, err := kjson.Marshal(h)
	if err != nil || string(out) != in {
		t.Errorf("round trip: %s, %v", out, err)
	}
	var empty holder
	if out, _ := kjson.Marshal(empty); string(out) != `{"r":null}` {
		t.Errorf("empty: %s", out)
	}
	fb, _ := h.F.Marshal()
	var f FieldsV1
	if err := f.Unmarshal(fb); err != nil || string(f.Raw) != string(h.F.Raw) {
		t.Errorf("FieldsV1 protobuf round trip: %s %v", f.Raw, err)
	}
}

func TestObjectMetaImplementsObject(t *testing.T) {
	var m ObjectMeta
	var o Object = &m
	o.SetName("a")
	o.SetNamespace("ns")
	o.SetLabels(map[string]string{"k": "v"})
	o.SetFinalizers([]string{"f"})
	if m.Name != "a" || m.Namespace != "ns" || m.Labels["k"] != "v" || m.Finalizers[0] != "f" {
		t.Errorf("setters did not reach the struct: %+v", m)
	}
}
