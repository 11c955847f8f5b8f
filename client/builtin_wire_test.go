package client

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/golden"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// kindCapture is a create-*, full-* or review-* capture of testdata/golden-1.37/kinds
// and the Go type the builtin scheme has for its resource.
type kindCapture struct {
	name string
	body []byte // the 201 response body, compacted
	typ  reflect.Type
}

// builtinKindCaptures loads the creates captured from kube-apiserver v1.37.2
// for every resource, and the answered access and token reviews, mapping each file name (create-<group>-<resource>...)
// through its group and resource, and the response's apiVersion, to the Go
// type NewBuiltinScheme registers for it.
func builtinKindCaptures(t *testing.T) []kindCapture {
	t.Helper()
	var paths []string
	for _, glob := range []string{"create-*.txt", "full-*.txt", "review-*.txt"} {
		p, err := filepath.Glob(filepath.Join(golden.KindsDir(), glob))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p...)
	}
	s := NewBuiltinScheme()
	var out []kindCapture
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".txt")
		parts := strings.SplitN(name, "-", 4)
		if len(parts) < 3 {
			t.Fatalf("%s: not <case>-<group>-<resource>", name)
		}
		group, resource := parts[1], parts[2]
		if group == "core" {
			group = ""
		}
		x, err := golden.LoadKind(name)
		if err != nil {
			t.Fatal(err)
		}
		if x.Status != 201 {
			if parts[0] == "review" {
				continue // an invalid review: a Status, not the kind
			}
			t.Fatalf("%s: status %d, want a 201 create", name, x.Status)
		}
		var tm metav1.TypeMeta
		if err := kjson.Unmarshal(x.ResponseBody, &tm); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, version, ok := strings.Cut(tm.APIVersion, "/")
		if !ok {
			version = tm.APIVersion
		}
		var typ reflect.Type
		for _, k := range s.Kinds() {
			if k.Group == group && k.Version == version && k.Resource == resource {
				typ = s.byGVK[k.GroupVersionKind()]
			}
		}
		if typ == nil {
			t.Fatalf("%s: no Go type for %s/%s %s", name, group, version, resource)
		}
		if typ.Name() != tm.Kind {
			t.Fatalf("%s: resource %s has Go type %v, the body is a %s", name, resource, typ, tm.Kind)
		}
		var body bytes.Buffer
		if err := json.Compact(&body, x.ResponseBody); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// The server escapes <, > and &; a raw one is the capture's redaction
		// of a secret ("<admin-token>"), escaped here as the server would.
		b := strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`).Replace(body.String())
		out = append(out, kindCapture{name: name, body: []byte(b), typ: typ})
	}
	if len(out) < 120 {
		t.Fatalf("only %d kind captures", len(out))
	}
	return out
}

// TestBuiltinKindsJSONRoundTrip decodes what kube-apiserver v1.37.2 answered
// to the create of each kind into its Go type, refusing members the type
// does not declare, and encodes it again: the bytes must be the server's
// (<, > and & in strings escaped, \u003c ..., as kube-apiserver writes the
// CEL expressions of ValidatingAdmissionPolicies and DeviceClasses).
func TestBuiltinKindsJSONRoundTrip(t *testing.T) {
	kinds := map[reflect.Type]bool{}
	for _, c := range builtinKindCaptures(t) {
		kinds[c.typ] = true
		t.Run(c.name, func(t *testing.T) {
			obj := reflect.New(c.typ).Interface()
			unknown, err := kjson.UnmarshalKnown(c.body, obj)
			if err != nil || unknown {
				t.Fatalf("decode into %v: unknown members %v, err %v", c.typ, unknown, err)
			}
			got, err := kjson.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, c.body) {
				t.Errorf("re-encoded %v differs\n got %s\nwant %s", c.typ, got, c.body)
			}
		})
	}
	t.Logf("%d kinds", len(kinds))
}
