package patch_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/apiserver/patch"
	"github.com/kapi-dev/kapi/internal/golden"
)

// loadGolden reads case name as release r captured it (v1.32.2's normalized
// to v1.37.2, golden.Differences).
func loadGolden(t *testing.T, r golden.Release, name string) *golden.Exchange {
	t.Helper()
	x, err := r.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode: %v\n%s", err, b)
	}
	return m
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dropServerWritten removes what the server, not the patch, changes on a write.
func dropServerWritten(obj map[string]any) {
	md, _ := obj["metadata"].(map[string]any)
	for _, k := range []string{"resourceVersion", "generation", "managedFields"} {
		delete(md, k)
	}
}

// 69: a merge patch deletes data.b and adds data.c.
func TestGoldenMergePatch(t *testing.T) {
	for _, r := range golden.Releases {
		t.Run(r.Name, func(t *testing.T) {
			x := loadGolden(t, r, "69-patch-merge")
			after := decode(t, x.ResponseBody)
			before := decode(t, x.ResponseBody)
			before["data"] = map[string]any{"a": "changed", "b": "2"}
			got, err := patch.MergePatch(encode(t, before), x.RequestBody)
			if err != nil {
				t.Fatal(err)
			}
			g := decode(t, got)
			dropServerWritten(g)
			dropServerWritten(after)
			if !reflect.DeepEqual(g, after) {
				t.Errorf("got  %s\nwant %s", encode(t, g), encode(t, after))
			}
		})
	}
}

// 70: a JSON patch adds a label to the object 69 left.
func TestGoldenJSONPatch(t *testing.T) {
	for _, r := range golden.Releases {
		t.Run(r.Name, func(t *testing.T) {
			before := loadGolden(t, r, "69-patch-merge").ResponseBody
			x := loadGolden(t, r, "70-patch-json")
			got, err := patch.JSONPatch(before, x.RequestBody)
			if err != nil {
				t.Fatal(err)
			}
			g, want := decode(t, got), decode(t, x.ResponseBody)
			dropServerWritten(g)
			dropServerWritten(want)
			if !reflect.DeepEqual(g, want) {
				t.Errorf("got  %s\nwant %s", encode(t, g), encode(t, want))
			}
		})
	}
}

// 71: a failing test operation is 422 with kube-apiserver's message.
func TestGoldenJSONPatchTestFails(t *testing.T) {
	for _, r := range golden.Releases {
		t.Run(r.Name, func(t *testing.T) {
			before := loadGolden(t, r, "70-patch-json").ResponseBody
			x := loadGolden(t, r, "71-patch-json-test-fails")
			_, err := patch.JSONPatch(before, x.RequestBody)
			var pe *patch.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *patch.Error", err)
			}
			var status struct {
				Message string
				Code    int
			}
			if err := json.Unmarshal(x.ResponseBody, &status); err != nil {
				t.Fatal(err)
			}
			if pe.Code != x.Status || pe.Code != status.Code || pe.Message != status.Message {
				t.Errorf("got %d %q, want %d %q", pe.Code, pe.Message, status.Code, status.Message)
			}
		})
	}
}

// 72: a strategic merge patch of a Deployment's containers (created in 25)
// changes one container by name and adds another.
func TestGoldenStrategicContainers(t *testing.T) {
	for _, r := range golden.Releases {
		t.Run(r.Name, func(t *testing.T) {
			before := loadGolden(t, r, "25-create-deployment").ResponseBody
			x := loadGolden(t, r, "72-patch-strategic-containers")
			got, err := patch.Strategic(before, x.RequestBody, deploymentType)
			if err != nil {
				t.Fatal(err)
			}
			g, want := decode(t, got), decode(t, x.ResponseBody)
			dropServerWritten(g)
			dropServerWritten(want)
			// The server defaults the new container after the patch; the patch does not.
			spec := want["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			side := spec["containers"].([]any)[1].(map[string]any)
			for _, k := range []string{"resources", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy"} {
				delete(side, k)
			}
			if !reflect.DeepEqual(g, want) {
				t.Errorf("got  %s\nwant %s", encode(t, g), encode(t, want))
			}
		})
	}
}
