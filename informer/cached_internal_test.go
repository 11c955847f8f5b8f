package informer

import (
	"testing"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// TestDeepCopierJSON: a type without DeepCopyInto (a custom resource
// struct without generated code) is copied through JSON, and a value JSON
// cannot carry is an error, not a panic.
func TestDeepCopierJSON(t *testing.T) {
	type plain struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
		Data              map[string]string `json:"data,omitempty"`
	}
	src := &plain{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"}}, Data: map[string]string{"v": "1"}}
	dst := &plain{Data: map[string]string{"stale": "x"}}
	if err := deepCopier[plain]()(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Data["v"], dst.Labels["k"] = "changed", "changed"
	if src.Data["v"] != "1" || src.Labels["k"] != "v" || dst.Name != "a" || dst.Data["stale"] != "" {
		t.Errorf("copy shares with its source or keeps stale fields: src %+v, dst %+v", src, dst)
	}

	type bad struct {
		metav1.ObjectMeta
		F func() `json:"f"`
	}
	if err := deepCopier[bad]()(&bad{}, &bad{F: func() {}}); err == nil {
		t.Error("copying a value JSON cannot encode succeeded")
	}
}
