package golden

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestEditJSONKeepsBytes: parsing and writing back a capture without an edit
// gives its bytes, so a normalized capture differs only where it was edited.
func TestEditJSONKeepsBytes(t *testing.T) {
	for _, r := range Releases {
		paths, _ := filepath.Glob(filepath.Join(r.Dir(), "[0-9]*.txt"))
		for _, p := range paths {
			x, err := r.Raw(filepath.Base(p))
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range [][]byte{x.RequestBody, x.ResponseBody} {
				if x.Status >= 400 && bytes.Equal(b, x.RequestBody) {
					continue // deliberately malformed requests
				}
				out, err := editJSON(b, func(*node) {})
				if err != nil {
					if bytes.HasPrefix(b, []byte("{")) {
						t.Errorf("%s %s: %v", r.Name, x.Name, err)
					}
					continue
				}
				if !bytes.Equal(out, b) {
					t.Errorf("%s %s: rewritten\n got  %s\n want %s", r.Name, x.Name, out, b)
				}
			}
		}
	}
}

// TestReleaseDifferences proves Differences complete and needed: every
// v1.32.2 capture, loaded (normalized), equals its v1.37.2 twin except for
// what varies between runs (uids, resourceVersions, timestamps, generated
// names, continue tokens, cluster IPs); and every normalized case differs
// before normalization.
func TestReleaseDifferences(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(V132.Dir(), "[0-9]*.txt"))
	seen := map[string]bool{}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".txt")
		seen[name] = true
		d, listed := Differences[name]
		new, err := V137.Raw(name)
		switch {
		case d.Use == OnlyV132:
			if err == nil {
				t.Errorf("%s: listed as captured from v1.32.2 only, but v1.37.2 has it", name)
			}
			if _, err := V137.Load(name); !errors.Is(err, ErrNotCaptured) {
				t.Errorf("%s: V137.Load: %v, want ErrNotCaptured", name, err)
			}
			continue
		case err != nil:
			t.Errorf("%s: no v1.37.2 twin and not listed as v1.32.2-only: %v", name, err)
			continue
		}
		old, err := V132.Raw(name)
		if err != nil {
			t.Fatal(err)
		}
		if d.Use == ReleaseOwn || d.Use == AsCaptured {
			if diff := compare(old, new); diff == "" {
				t.Errorf("%s: listed (%s) but the captures do not differ", name, d.V132)
			}
			if _, err := V132.Load(name); (d.Use == ReleaseOwn) != errors.Is(err, ErrNotComparable) {
				t.Errorf("%s: V132.Load: %v", name, err)
			}
			continue
		}
		if listed && compare(old, new) == "" {
			t.Errorf("%s: listed (%s) but the captures do not differ", name, d.V132)
		}
		norm, err := V132.Load(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want, err := V137.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := compare(norm, want); diff != "" {
			t.Errorf("%s: v1.32.2 (normalized) and v1.37.2 differ: %s", name, diff)
		}
	}
	for name := range Differences {
		if !seen[name] {
			t.Errorf("Differences lists %s, which v1.32.2 did not capture", name)
		}
	}
	for name := range Nondeterministic {
		if !seen[name] {
			t.Errorf("Nondeterministic lists %s, which is no case", name)
		}
	}
	paths, _ = filepath.Glob(filepath.Join(V137.Dir(), "[0-9]*.txt"))
	for _, p := range paths {
		if name := strings.TrimSuffix(filepath.Base(p), ".txt"); !seen[name] {
			t.Errorf("%s: captured from v1.37.2 only, not listed", name)
		}
	}
}

// compare describes how two exchanges differ beyond what varies between runs,
// or returns "".
func compare(a, b *Exchange) string {
	if a.Method != b.Method || maskPath(a.Path) != maskPath(b.Path) {
		return fmt.Sprintf("request %s %s, want %s %s", a.Method, a.Path, b.Method, b.Path)
	}
	if !reflect.DeepEqual(a.RequestHeader, b.RequestHeader) || !reflect.DeepEqual(a.ResponseHeader, b.ResponseHeader) {
		return fmt.Sprintf("headers %v %v, want %v %v", a.RequestHeader, a.ResponseHeader, b.RequestHeader, b.ResponseHeader)
	}
	if a.Status != b.Status || a.Reason != b.Reason {
		return fmt.Sprintf("status %d %s, want %d %s", a.Status, a.Reason, b.Status, b.Reason)
	}
	for _, side := range []struct {
		name string
		a, b []byte
	}{{"request", a.RequestBody, b.RequestBody}, {"response", a.ResponseBody, b.ResponseBody}} {
		if d := compareBody(side.a, side.b); d != "" {
			return side.name + " body: " + d
		}
	}
	return ""
}

func compareBody(a, b []byte) string {
	if bytes.HasPrefix(a, protoMagic) || bytes.HasPrefix(a, []byte{0, 0}) {
		x, y := flatProto(a, ""), flatProto(b, "")
		if !reflect.DeepEqual(x, y) {
			return fmt.Sprintf("protobuf\n%s\nwant\n%s", strings.Join(x, "\n"), strings.Join(y, "\n"))
		}
		return ""
	}
	x, errA := jsonDocs(a)
	y, errB := jsonDocs(b)
	if errA != nil || errB != nil {
		if !bytes.Equal(a, b) {
			return fmt.Sprintf("%q, want %q", a, b)
		}
		return ""
	}
	if !reflect.DeepEqual(x, y) {
		xs, _ := json.Marshal(x)
		ys, _ := json.Marshal(y)
		return fmt.Sprintf("\n%s\nwant\n%s", xs, ys)
	}
	return ""
}

func jsonDocs(b []byte) ([]any, error) {
	var out []any
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, mask(v, ""))
	}
	return out, nil
}

var (
	volatileKeys = map[string]bool{"uid": true, "resourceVersion": true, "creationTimestamp": true, "deletionTimestamp": true, "time": true, "continue": true, "clusterIP": true, "clusterIPs": true}
	uidText      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeText     = regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z`)
	longNumber   = regexp.MustCompile(`[0-9]{3,}`)
	generated    = regexp.MustCompile(`\b(gen|kube-api-access)-[a-z0-9]{5}\b`)
	continueText = regexp.MustCompile(`^eyJ[A-Za-z0-9_=-]+$`) // a continue token: base64 of {"v":...
	ageText      = regexp.MustCompile(`^([0-9]+[smhdy])+$|\(([0-9]+[smhdy])+ ago\)`)
)

// mask replaces what varies between two runs of the capture.
func mask(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if volatileKeys[k] && x != nil {
				out[k] = "<varies>"
				continue
			}
			out[k] = mask(x, k)
		}
		if v["generateName"] != nil && v["name"] != nil {
			out["name"] = "<generated>"
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = mask(x, key)
		}
		return out
	case string:
		return maskText(v)
	}
	return v
}

func maskText(s string) string {
	s = continueText.ReplaceAllString(s, "<continue>")
	s = uidText.ReplaceAllString(s, "<uid>")
	s = timeText.ReplaceAllString(s, "<time>")
	s = generated.ReplaceAllString(s, "$1-<gen>")
	s = ageText.ReplaceAllString(s, "<age>")
	return longNumber.ReplaceAllString(s, "<n>")
}

var queryIDs = regexp.MustCompile(`(resourceVersion|continue)=[^&]*`)

func maskPath(p string) string { return queryIDs.ReplaceAllString(p, "$1=<varies>") }

// flatProto lists the fields of a protobuf body (an envelope, or a watch
// stream of length-prefixed frames), nested messages by path, with what
// varies between runs masked: a bytes field that is text is a leaf.
func flatProto(b []byte, path string) []string {
	if path == "" && !bytes.HasPrefix(b, protoMagic) {
		var out []string // a watch stream: 4-byte big-endian lengths
		for i := 0; len(b) >= 4; i++ {
			n := int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3])
			if n > len(b)-4 {
				return append(out, "truncated")
			}
			out = append(out, flatProto(b[4:4+n], fmt.Sprintf("frame%d", i))...)
			b = b[4+n:]
		}
		return out
	}
	b = bytes.TrimPrefix(b, protoMagic)
	var out []string
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return append(out, path+": bad")
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return append(out, path+": bad")
		}
		p := fmt.Sprintf("%s.%d", path, num)
		switch typ {
		case protowire.VarintType:
			v, _ := protowire.ConsumeVarint(b[n:])
			if v > 1e9 {
				out = append(out, p+"=<time>")
			} else {
				out = append(out, fmt.Sprintf("%s=%d", p, v))
			}
		case protowire.BytesType:
			v, _ := protowire.ConsumeBytes(b[n:])
			if isText(v) {
				out = append(out, p+"="+maskIP(maskText(string(v))))
			} else if sub := flatProto(v, p); !strings.HasSuffix(strings.Join(sub, ""), "bad") {
				out = append(out, sub...)
			} else {
				out = append(out, fmt.Sprintf("%s=%x", p, v))
			}
		default:
			out = append(out, fmt.Sprintf("%s=%x", p, b[n:n+m]))
		}
		b = b[n+m:]
	}
	return out
}

var ipText = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$`)

// maskIP masks an address of the captures' service range 10.0.0.0/24 (cluster IPs).
func maskIP(s string) string {
	if ipText.MatchString(s) && strings.HasPrefix(s, "10.0.0.") {
		return "<cluster-ip>"
	}
	return s
}

func isText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range string(b) {
		if c < ' ' {
			return false
		}
	}
	return true
}
