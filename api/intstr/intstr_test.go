package intstr

import (
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi/internal/kjson"
)

func TestJSON(t *testing.T) {
	for _, c := range []struct {
		in   string
		want IntOrString
	}{
		{`8080`, FromInt32(8080)},
		{`-1`, FromInt32(-1)},
		{`"http"`, FromString("http")},
		{`"25%"`, FromString("25%")},
		{`""`, FromString("")},
	} {
		for name, unmarshal := range map[string]func([]byte, any) error{"kjson": kjson.Unmarshal, "encoding/json": json.Unmarshal} {
			var got IntOrString
			if err := unmarshal([]byte(c.in), &got); err != nil {
				t.Fatalf("%s %s: %v", name, c.in, err)
			}
			if got != c.want {
				t.Errorf("%s %s: got %+v want %+v", name, c.in, got, c.want)
			}
			out, err := kjson.Marshal(got)
			if err != nil || string(out) != c.in {
				t.Errorf("%s: marshal %+v = %s, %v; want %s", name, got, out, err, c.in)
			}
			out, err = json.Marshal(got)
			if err != nil || string(out) != c.in {
				t.Errorf("encoding/json marshal %+v = %s, %v; want %s", got, out, err, c.in)
			}
		}
	}
	for _, bad := range []string{`1.5`, `true`, `{}`, `[]`, `99999999999`} {
		var v IntOrString
		if err := kjson.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("%s: want an error, got %+v", bad, v)
		}
	}
}

func TestProtobufRoundTrip(t *testing.T) {
	for _, v := range []IntOrString{FromInt32(0), FromInt32(-5), FromInt32(1 << 30), FromString("x"), FromString("")} {
		b, err := v.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != v.Size() {
			t.Errorf("%+v: Size %d, encoded %d", v, v.Size(), len(b))
		}
		var got IntOrString
		if err := got.Unmarshal(b); err != nil || got != v {
			t.Errorf("round trip %+v: got %+v, %v", v, got, err)
		}
	}
	// Kubernetes writes all three fields: {type: 1 (string), intVal: 0, strVal: "http"}.
	http := FromString("http")
	b, _ := http.Marshal()
	if want := "\x08\x01\x10\x00\x1a\x04http"; string(b) != want {
		t.Errorf("encoding %q, want %q", b, want)
	}
}

func TestScaledValue(t *testing.T) {
	for _, c := range []struct {
		v       IntOrString
		total   int
		roundUp bool
		want    int
		wantErr bool
	}{
		{FromInt32(3), 10, false, 3, false},
		{FromString("25%"), 10, true, 3, false},
		{FromString("25%"), 10, false, 2, false},
		{FromString("100%"), 7, false, 7, false},
		{FromString("abc"), 10, false, 0, true},
		{FromString("x%"), 10, false, 0, true},
	} {
		got, err := c.v.ScaledValue(c.total, c.roundUp)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("%v.ScaledValue(%d, %v) = %d, %v; want %d (err %v)", c.v, c.total, c.roundUp, got, err, c.want, c.wantErr)
		}
	}
	if Parse("12").Type != Int || Parse("12a").Type != String {
		t.Error("Parse")
	}
}
