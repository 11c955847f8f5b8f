package codec_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/golden"
)

func mustParseMediaType(t testing.TB, s string) codec.MediaType {
	t.Helper()
	m, err := codec.ParseMediaType(s)
	if err != nil {
		t.Fatalf("ParseMediaType(%q): %v", s, err)
	}
	return m
}

func TestMediaTypeConstantsParse(t *testing.T) {
	for _, s := range []string{
		codec.MediaTypeJSON, codec.MediaTypeYAML, codec.MediaTypeProtobuf,
		codec.MediaTypeJSONWatch, codec.MediaTypeProtobufWatch, codec.MediaTypeTableJSON,
		codec.MediaTypeJSONPatch, codec.MediaTypeMergePatch, codec.MediaTypeStrategicMergePatch,
		codec.MediaTypeApplyPatch,
	} {
		m := mustParseMediaType(t, s)
		if got := m.String(); got != s {
			t.Errorf("ParseMediaType(%q).String() = %q", s, got)
		}
	}
}

func TestParseMediaType(t *testing.T) {
	tests := []struct {
		in   string
		want codec.MediaType
	}{
		{"application/json", codec.MediaType{Type: "application", Subtype: "json", Q: 1}},
		{"Application/JSON", codec.MediaType{Type: "application", Subtype: "json", Q: 1}},
		{"  application/yaml\t", codec.MediaType{Type: "application", Subtype: "yaml", Q: 1}},
		{"application/vnd.kubernetes.protobuf;stream=watch",
			codec.MediaType{Type: "application", Subtype: "vnd.kubernetes.protobuf", Stream: "watch", Q: 1}},
		{"application/json;as=Table;g=meta.k8s.io;v=v1",
			codec.MediaType{Type: "application", Subtype: "json", As: "Table", Group: "meta.k8s.io", Version: "v1", Q: 1}},
		{"application/json ; AS = Table ;G=meta.k8s.io; v=v1;",
			codec.MediaType{Type: "application", Subtype: "json", As: "Table", Group: "meta.k8s.io", Version: "v1", Q: 1}},
		{"application/json; charset=utf-8",
			codec.MediaType{Type: "application", Subtype: "json", Params: []codec.MediaTypeParam{{Name: "charset", Value: "utf-8"}}, Q: 1}},
		{`text/plain;x="a;b,c\"d\\";;y=z`,
			codec.MediaType{Type: "text", Subtype: "plain", Params: []codec.MediaTypeParam{{Name: "x", Value: `a;b,c"d\`}, {Name: "y", Value: "z"}}, Q: 1}},
		{`application/json;as="Table"`, codec.MediaType{Type: "application", Subtype: "json", As: "Table", Q: 1}},
		{`application/json;x=""`,
			codec.MediaType{Type: "application", Subtype: "json", Params: []codec.MediaTypeParam{{Name: "x", Value: ""}}, Q: 1}},
		// q is an ordinary parameter in a Content-Type.
		{"application/json;q=0.5",
			codec.MediaType{Type: "application", Subtype: "json", Params: []codec.MediaTypeParam{{Name: "q", Value: "0.5"}}, Q: 1}},
	}
	for _, tt := range tests {
		got, err := codec.ParseMediaType(tt.in)
		if err != nil {
			t.Errorf("ParseMediaType(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseMediaType(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		// String re-parses to the same value.
		again, err := codec.ParseMediaType(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("ParseMediaType(%q) = %+v, %v; want %+v", got.String(), again, err, got)
		}
	}
}

func TestParseMediaTypeErrors(t *testing.T) {
	for _, in := range []string{
		"", " ", "application", "application/", "/json", "application/json/x",
		"*/*", "application/*", "*/json",
		"application/json;as", "application/json;as=", "application/json;=x",
		"application/json x", "application/json,application/yaml", `application/json;a="x`, `application/json;a="x\`,
		"application/json;as=a;as=b", "application/json;a=1;A=2", "app lication/json", "application/json;a=\"\x01\"",
		"application/json;a=b c", "appli(ation/json", "application/json;a=\"\\\x12\"",
	} {
		m, err := codec.ParseMediaType(in)
		if err == nil {
			t.Errorf("ParseMediaType(%q) = %+v, want error", in, m)
			continue
		}
		var mte *codec.MediaTypeError
		if !errors.As(err, &mte) || !errors.Is(err, codec.ErrInvalidMediaType) {
			t.Errorf("ParseMediaType(%q) error %v is not a *MediaTypeError", in, err)
			continue
		}
		if mte.Input != in || mte.Offset < 0 || mte.Offset > len(in) {
			t.Errorf("ParseMediaType(%q) error %+v: bad input or offset", in, mte)
		}
	}
}

func TestParseAccept(t *testing.T) {
	json := codec.MediaType{Type: "application", Subtype: "json", Q: 1}
	yaml := codec.MediaType{Type: "application", Subtype: "yaml", Q: 1}
	withQ := func(m codec.MediaType, q float64) codec.MediaType { m.Q = q; return m }
	tests := []struct {
		in   string
		want []codec.MediaType
	}{
		{"", nil},
		{" \t ", nil},
		{",, ,", nil},
		{"application/json", []codec.MediaType{json}},
		{"application/json, application/yaml;q=0.5", []codec.MediaType{json, withQ(yaml, 0.5)}},
		{"application/json;q=0,application/yaml;q=1.000", []codec.MediaType{withQ(json, 0), yaml}},
		{",application/json ,, application/yaml ,", []codec.MediaType{json, yaml}},
		{"*/*;q=0.1, application/*", []codec.MediaType{
			{Type: "*", Subtype: "*", Q: 0.1}, {Type: "application", Subtype: "*", Q: 1}}},
		{"application/json;as=Table;g=meta.k8s.io;v=v1, application/json", []codec.MediaType{
			{Type: "application", Subtype: "json", As: "Table", Group: "meta.k8s.io", Version: "v1", Q: 1}, json}},
		{`text/x;a="1,2", application/json;Q=0.25`, []codec.MediaType{
			{Type: "text", Subtype: "x", Params: []codec.MediaTypeParam{{Name: "a", Value: "1,2"}}, Q: 1}, withQ(json, 0.25)}},
		{"application/json;q=0.5;pretty=1", []codec.MediaType{
			{Type: "application", Subtype: "json", Params: []codec.MediaTypeParam{{Name: "pretty", Value: "1"}}, Q: 0.5}}},
		{"application/json;q=0.001", []codec.MediaType{withQ(json, 0.001)}},
		{"application/json;q=1.", []codec.MediaType{json}},
	}
	for _, tt := range tests {
		got, err := codec.ParseAccept(tt.in)
		if err != nil {
			t.Errorf("ParseAccept(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseAccept(%q) =\n  %+v\nwant\n  %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseAcceptErrors(t *testing.T) {
	for _, in := range []string{
		"application", "application/json application/yaml", "*/json",
		"application/json;q=1.5", "application/json;q=2", "application/json;q=abc", "application/json;q=0.1234",
		"application/json;q=", "application/json;q=-0", "application/json;q=.5", "application/json;q=1.001",
		"application/json;q=0.5;q=0.6", "text/html;level", `text/html;a="b`, "application/json;;=",
	} {
		got, err := codec.ParseAccept(in)
		if err == nil {
			t.Errorf("ParseAccept(%q) = %+v, want error", in, got)
			continue
		}
		if !errors.Is(err, codec.ErrInvalidMediaType) {
			t.Errorf("ParseAccept(%q) error %v does not match ErrInvalidMediaType", in, err)
		}
	}
}

func TestAccepts(t *testing.T) {
	tests := []struct {
		rng, typ string
		want     bool
	}{
		{"*/*", codec.MediaTypeJSON, true},
		{"application/*", codec.MediaTypeYAML, true},
		{"text/*", codec.MediaTypeYAML, false},
		{"application/json", codec.MediaTypeJSON, true},
		{"application/json", codec.MediaTypeYAML, false},
		{"application/json", codec.MediaTypeJSONWatch, true},
		{"application/json;stream=watch", codec.MediaTypeJSONWatch, true},
		{"application/json;stream=watch", codec.MediaTypeJSON, false},
		{"*/*", codec.MediaTypeTableJSON, false},
		{"application/json", codec.MediaTypeTableJSON, false},
		{codec.MediaTypeTableJSON, codec.MediaTypeTableJSON, true},
		{codec.MediaTypeTableJSON, codec.MediaTypeJSON, false},
		{"application/json;as=Table;g=meta.k8s.io;v=v1beta1", codec.MediaTypeTableJSON, false},
		{"application/json;as=Table;v=v1", codec.MediaTypeTableJSON, false},
		{"application/*;as=Table;g=meta.k8s.io;v=v1", codec.MediaTypeTableJSON, true},
		{"application/json;charset=utf-8", codec.MediaTypeJSON, true},
		{"application/json;charset=utf-8", "application/json;charset=UTF-8", true},
		{"application/json;charset=utf-8", "application/json;charset=latin1", false},
	}
	for _, tt := range tests {
		accept, err := codec.ParseAccept(tt.rng)
		if err != nil || len(accept) != 1 {
			t.Fatalf("ParseAccept(%q) = %v, %v", tt.rng, accept, err)
		}
		if got := accept[0].Accepts(mustParseMediaType(t, tt.typ)); got != tt.want {
			t.Errorf("%q.Accepts(%q) = %v, want %v", tt.rng, tt.typ, got, tt.want)
		}
	}
}

func TestMediaTypeParam(t *testing.T) {
	m := mustParseMediaType(t, "application/json;as=Table;g=meta.k8s.io;v=v1;stream=watch;Charset=utf-8")
	for name, want := range map[string]string{"as": "Table", "G": "meta.k8s.io", "v": "v1", "stream": "watch", "charset": "utf-8"} {
		if got, ok := m.Param(name); !ok || got != want {
			t.Errorf("Param(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	if got, ok := m.Param("q"); ok {
		t.Errorf("Param(q) = %q, true", got)
	}
	if got := m.String(); got != "application/json;as=Table;g=meta.k8s.io;v=v1;stream=watch;charset=utf-8" {
		t.Errorf("String() = %q", got)
	}
	m = codec.MediaType{Type: "text", Subtype: "plain", Params: []codec.MediaTypeParam{{Name: "a", Value: `x "y"`}, {Name: "b", Value: ""}}}
	if got, want := m.String(), `text/plain;a="x \"y\"";b=""`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func offers(t testing.TB, types ...string) []codec.MediaType {
	out := make([]codec.MediaType, len(types))
	for i, s := range types {
		out[i] = mustParseMediaType(t, s)
	}
	return out
}

func TestNegotiate(t *testing.T) {
	std := offers(t, codec.MediaTypeJSON, codec.MediaTypeYAML, codec.MediaTypeProtobuf)
	table := offers(t, codec.MediaTypeTableJSON, codec.MediaTypeJSON, codec.MediaTypeYAML, codec.MediaTypeProtobuf)
	crd := offers(t, codec.MediaTypeJSON, codec.MediaTypeYAML)
	watch := offers(t, codec.MediaTypeJSONWatch, codec.MediaTypeProtobufWatch)
	pbFirst := offers(t, codec.MediaTypeProtobuf, codec.MediaTypeJSON)

	tests := []struct {
		name   string
		accept string
		offers []codec.MediaType
		want   string // "" means not acceptable
	}{
		{"empty accept takes first offer", "", std, codec.MediaTypeJSON},
		{"blank accept takes first offer", "  ", pbFirst, codec.MediaTypeProtobuf},
		{"no offers", "", nil, ""},
		{"no offers with accept", "*/*", nil, ""},
		{"exact", "application/yaml", std, codec.MediaTypeYAML},
		{"case-insensitive", "APPLICATION/Vnd.Kubernetes.Protobuf", std, codec.MediaTypeProtobuf},
		{"protobuf with json fallback", "application/vnd.kubernetes.protobuf, application/json", std, codec.MediaTypeProtobuf},
		{"protobuf falls back to json for CRDs (golden 90)", "application/vnd.kubernetes.protobuf, application/json", crd, codec.MediaTypeJSON},
		{"protobuf only for CRDs (golden 89)", "application/vnd.kubernetes.protobuf", crd, ""},
		{"xml (golden 54)", "application/xml", std, ""},
		{"table first (golden 68)", "application/json;as=Table;g=meta.k8s.io;v=v1, application/json", table, codec.MediaTypeTableJSON},
		{"table with json fallback", "application/json;as=Table;g=meta.k8s.io;v=v1, application/json", std, codec.MediaTypeJSON},
		{"json listed before table still prefers table", "application/json, application/json;as=Table;g=meta.k8s.io;v=v1", table, codec.MediaTypeTableJSON},
		{"table only (golden 63)", "application/json;as=Table;g=meta.k8s.io;v=v1", table, codec.MediaTypeTableJSON},
		{"table only, not offered", "application/json;as=Table;g=meta.k8s.io;v=v1", std, ""},
		{"table of another version", "application/json;as=Table;g=meta.k8s.io;v=v1beta1", table, ""},
		{"table without group", "application/json;as=Table;v=v1", table, ""},
		{"table with lower q", "application/json;as=Table;g=meta.k8s.io;v=v1;q=0.5, application/json", table, codec.MediaTypeJSON},
		{"wildcard never picks table", "*/*", table, codec.MediaTypeJSON},
		{"wildcard takes first offer", "*/*", pbFirst, codec.MediaTypeProtobuf},
		{"type wildcard", "application/*", std, codec.MediaTypeJSON},
		{"text wildcard", "text/*", std, ""},
		{"specific beats wildcard", "*/*, application/vnd.kubernetes.protobuf", std, codec.MediaTypeProtobuf},
		{"type wildcard beats full wildcard", "*/*;q=0.9, application/*;q=0.8", std, codec.MediaTypeJSON},
		{"q orders", "application/json;q=0.5, application/yaml;q=0.8", std, codec.MediaTypeYAML},
		{"q beats specificity", "application/json;q=0.5, */*", pbFirst, codec.MediaTypeProtobuf},
		{"header order breaks ties", "application/json, application/vnd.kubernetes.protobuf", pbFirst, codec.MediaTypeJSON},
		{"q=0 excludes", "application/json;q=0, */*", std, codec.MediaTypeYAML},
		{"q=0 wins over wildcard for its type only", "application/json;q=0, application/yaml;q=0, */*;q=0.1", std, codec.MediaTypeProtobuf},
		{"q=0 everything", "*/*;q=0", std, ""},
		{"q=0.000", "application/json;q=0.000", std, ""},
		{"more specific q=0 overrides", "application/*;q=1, application/json;q=0", crd, codec.MediaTypeYAML},
		{"more params are more specific", "application/json;q=0, application/json;pretty=1", std, codec.MediaTypeJSON},
		{"unknown params ignored", "application/json; charset=utf-8", std, codec.MediaTypeJSON},
		{"malformed entries ignored", "garbage, application/yaml", std, codec.MediaTypeYAML},
		{"bad q ignored", "application/json;q=2, application/yaml", std, codec.MediaTypeYAML},
		{"quoted comma", `text/x;a="1, application/json", application/yaml`, std, codec.MediaTypeYAML},
		{"all malformed", "text/html;q=abc", std, ""},
		{"dangling escape", `"\`, std, ""},
		{"dangling escape in quotes", `text/x;a="\`, std, ""},
		{"only commas", ",,", std, ""},
		{"watch json (golden 93)", "application/json", watch, codec.MediaTypeJSONWatch},
		{"watch protobuf (golden 94)", "application/vnd.kubernetes.protobuf", watch, codec.MediaTypeProtobufWatch},
		{"watch explicit", "application/vnd.kubernetes.protobuf;stream=watch, application/json", watch, codec.MediaTypeProtobufWatch},
		{"watch yaml", "application/yaml", watch, ""},
		{"stream asked of a plain endpoint", "application/json;stream=watch", std, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codec.Negotiate(tt.accept, tt.offers)
			if tt.want == "" {
				var nae *codec.NotAcceptableError
				if !errors.As(err, &nae) || !errors.Is(err, codec.ErrNotAcceptable) {
					t.Fatalf("Negotiate(%q) = %v, %v; want *NotAcceptableError", tt.accept, got, err)
				}
				if nae.Accept != tt.accept || !reflect.DeepEqual(nae.Offers, tt.offers) {
					t.Errorf("error carries %q, %v", nae.Accept, nae.Offers)
				}
				return
			}
			if err != nil {
				t.Fatalf("Negotiate(%q): %v", tt.accept, err)
			}
			if got.String() != tt.want {
				t.Errorf("Negotiate(%q) = %q, want %q", tt.accept, got.String(), tt.want)
			}
		})
	}
}

// goldenStatusMessage returns the message of the Status in a golden exchange.
func goldenStatusMessage(t *testing.T, name string) string {
	t.Helper()
	_, body := goldenExchange(t, name)
	var status struct{ Message string }
	if err := json.Unmarshal(body, &status); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return status.Message
}

func TestNotAcceptableMessageGolden(t *testing.T) {
	std := offers(t, codec.MediaTypeJSON, codec.MediaTypeYAML, codec.MediaTypeProtobuf)
	_, err := codec.Negotiate("application/xml", std)
	var nae *codec.NotAcceptableError
	if !errors.As(err, &nae) {
		t.Fatalf("Negotiate: %v", err)
	}
	want := goldenStatusMessage(t, "54-not-acceptable.txt")
	if got := nae.Message(); got != want {
		t.Errorf("Message() = %q\nwant        %q", got, want)
	}
	// Tables and duplicates are not representations of their own.
	withTable := offers(t, codec.MediaTypeTableJSON, codec.MediaTypeJSON, codec.MediaTypeYAML, codec.MediaTypeJSON, codec.MediaTypeProtobuf)
	if got := codec.NotAcceptableMessage(withTable); got != want {
		t.Errorf("NotAcceptableMessage(with table) = %q\nwant %q", got, want)
	}
	watch := offers(t, codec.MediaTypeJSONWatch, codec.MediaTypeProtobufWatch)
	if got, want := codec.NotAcceptableMessage(watch),
		"406: Not Acceptable\n\nAvailable representations: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"; got != want {
		t.Errorf("NotAcceptableMessage(watch) = %q, want %q", got, want)
	}
	if msg := err.Error(); !strings.Contains(msg, "application/xml") || !strings.Contains(msg, codec.MediaTypeProtobuf) {
		t.Errorf("Error() = %q, want the header and the offers", msg)
	}
}

// goldenExchange reads a golden exchange as the reference release captured
// it (golden.Load) and returns its response status line and body (without
// the file's final newline).
func goldenExchange(t testing.TB, name string) (status string, body []byte) {
	t.Helper()
	x, err := golden.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d %s", x.Status, x.Reason), x.ResponseBody
}

// goldenExchangeFrom is goldenExchange for release r; ok is false where r
// has no capture of the case to compare with.
func goldenExchangeFrom(t testing.TB, r golden.Release, name string) (status string, body []byte, ok bool) {
	t.Helper()
	x, err := r.Load(name)
	if errors.Is(err, golden.ErrNotCaptured) || errors.Is(err, golden.ErrNotComparable) {
		return "", nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d %s", x.Status, x.Reason), x.ResponseBody, true
}

func FuzzParseAccept(f *testing.F) {
	for _, s := range []string{
		"", "application/json", "application/json;as=Table;g=meta.k8s.io;v=v1, application/json",
		`text/x;a="1,\"2";q=0.5, */*;q=0`, "application/*;q=0.001", "a/b;;c=d ,, e/f",
		`"\`,               // once made the lenient parser skip past the end
		"0/0;0=\"\\\x12\"", // an escaped control character
	} {
		f.Add(s)
	}
	std := offers(f, codec.MediaTypeTableJSON, codec.MediaTypeJSON, codec.MediaTypeYAML, codec.MediaTypeProtobuf)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := codec.Negotiate(s, std)
		if err == nil && !containsMediaType(std, got) {
			t.Fatalf("Negotiate(%q) = %v, not an offer", s, got)
		}
		list, err := codec.ParseAccept(s)
		if err != nil {
			return
		}
		for _, m := range list {
			if m.Q < 0 || m.Q > 1 {
				t.Fatalf("ParseAccept(%q): q %v out of range", s, m.Q)
			}
			if m.Type == "*" || m.Subtype == "*" {
				continue
			}
			again, err := codec.ParseMediaType(m.String())
			if err != nil {
				t.Fatalf("ParseMediaType(%q) of ParseAccept(%q): %v", m.String(), s, err)
			}
			again.Q = m.Q
			if !reflect.DeepEqual(again, m) {
				t.Fatalf("round trip of %q: %+v != %+v", s, again, m)
			}
		}
	})
}

func containsMediaType(list []codec.MediaType, m codec.MediaType) bool {
	for _, o := range list {
		if reflect.DeepEqual(o, m) {
			return true
		}
	}
	return false
}
