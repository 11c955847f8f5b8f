package patch_test

import (
	"errors"
	"reflect"
	"testing"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	"github.com/kapi-dev/kapi/apiserver/patch"
)

// FuzzStrategic checks that no document and patch make Strategic panic, and
// that every failure is a *patch.Error.
func FuzzStrategic(f *testing.F) {
	seeds := [][2]string{
		{`{"spec":{"containers":[{"name":"a","image":"a"}]}}`, `{"spec":{"containers":[{"name":"b"},{"name":"a","$patch":"delete"}]}}`},
		{`{"metadata":{"finalizers":["a","b"]}}`, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"],"$setElementOrder/finalizers":["b","c"],"finalizers":["c"]}}`},
		{`{"spec":{"volumes":[{"name":"v","emptyDir":{}}]}}`, `{"spec":{"volumes":[{"name":"v","$retainKeys":["name","hostPath"],"hostPath":{"path":"/"}}]}}`},
		{`{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80}]}]}}`, `{"spec":{"$setElementOrder/containers":[{"name":"a"}],"containers":[{"$patch":"replace"},{"name":"a","ports":[[1]]}]}}`},
		{`{"metadata":{"labels":{"a":"1"}}}`, `{"metadata":{"labels":{"$patch":"replace"},"ownerReferences":[{"uid":1.0}]}}`},
		{`{}`, `[]`},
		{`[]`, `{}`},
		{`{"a":1}`, `{"a":{"$retainKeys":[1]}}`},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]), false)
		f.Add([]byte(s[0]), []byte(s[1]), true)
	}
	types := []reflect.Type{podType, reflect.TypeFor[appsv1.Deployment]()}
	f.Fuzz(func(t *testing.T, doc, p []byte, deployment bool) {
		typ := types[0]
		if deployment {
			typ = types[1]
		}
		for _, ty := range []reflect.Type{typ, nil} {
			out, err := patch.Strategic(doc, p, ty)
			if err != nil {
				var pe *patch.Error
				if !errors.As(err, &pe) {
					t.Fatalf("error %v is %T, not *patch.Error", err, err)
				}
				continue
			}
			// A result is itself a valid document: patching it again with
			// an empty patch gives it back unchanged.
			again, err := patch.Strategic(out, []byte(`{}`), ty)
			if err != nil {
				t.Fatalf("result %s does not patch: %v", out, err)
			}
			if string(again) != string(out) {
				t.Fatalf("empty patch changed %s into %s", out, again)
			}
		}
	})
}
