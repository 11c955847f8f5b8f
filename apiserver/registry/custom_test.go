package registry

import (
	"testing"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/internal/kjson"
)

const testCRD = `{"metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","scope":"Namespaced",
 "names":{"plural":"widgets","kind":"Widget","shortNames":["wd"],"categories":["all"]},
 "versions":[
  {"name":"v1beta1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
  {"name":"v1","served":true,"storage":true,
   "subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas","labelSelectorPath":".status.selector"}},
   "additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"}],
   "selectableFields":[{"jsonPath":".spec.color"}],
   "schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{
     "size":{"type":"integer","minimum":1,"default":1},"color":{"type":"string"},"replicas":{"type":"integer"}}},
     "status":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}]}}`

func TestCustomResource(t *testing.T) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := kjson.Unmarshal([]byte(testCRD), &crd); err != nil {
		t.Fatal(err)
	}
	r, err := CustomResource(&crd, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Resource != "widgets" || r.Singular != "widget" || r.ListKind != "WidgetList" || !r.Namespaced || !r.Custom ||
		r.Protobuf || !r.StatusSubresource || !r.Generation || r.Schema == nil || len(r.PrinterColumns) != 1 ||
		r.Scale == nil || r.Scale.LabelSelectorPath != ".status.selector" || r.StorageVersion != "" {
		t.Errorf("v1: %+v", r)
	}
	if _, err := CustomResource(&crd, "v2"); err == nil {
		t.Error("unknown version accepted")
	}
	beta, err := CustomResource(&crd, "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	if beta.StorageVersion != "v1" || beta.StatusSubresource || beta.Scale != nil {
		t.Errorf("v1beta1: %+v", beta)
	}
	if !r.KnownField("spec.color") || r.KnownField("spec.size") {
		t.Error("selectable fields")
	}

	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1beta1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"color": "red", "junk": true}, "status": map[string]any{"x": int64(1)}}}
	r.Default(u)
	if _, ok := u.Object["spec"].(map[string]any)["junk"]; ok {
		t.Error("not pruned")
	}
	if u.Object["spec"].(map[string]any)["size"] != int64(1) {
		t.Error("not defaulted")
	}
	r.PrepareForCreate(u)
	if u.GetAPIVersion() != "example.com/v1" || u.Object["status"] != nil {
		t.Errorf("prepared %v", u.Object)
	}
	if got := r.FieldSet(u)["spec.color"]; got != "red" {
		t.Errorf("spec.color field %q", got)
	}
	if tm := beta.WithTypeMeta(u).(*unstructured.Unstructured); tm.GetAPIVersion() != "example.com/v1beta1" || u.GetAPIVersion() != "example.com/v1" {
		t.Error("WithTypeMeta")
	}
	c := r.Copy(u).(*unstructured.Unstructured)
	if !SpecEqual(u, c) {
		t.Error("copy differs")
	}
	c.Object["spec"].(map[string]any)["size"] = int64(5)
	c.Object["status"] = map[string]any{"ready": true}
	if SpecEqual(u, c) || u.Object["spec"].(map[string]any)["size"] != int64(1) {
		t.Error("SpecEqual or Copy")
	}
	CopyStatus(u, c)
	if u.Object["status"].(map[string]any)["ready"] != true {
		t.Error("CopyStatus")
	}
	CopySpec(u, c)
	if !SpecEqual(u, c) {
		t.Error("CopySpec")
	}
	ResetStatus(u)
	if _, ok := u.Object["status"]; ok {
		t.Error("ResetStatus")
	}
	bad := &unstructured.Unstructured{Object: map[string]any{"kind": "Widget", "spec": map[string]any{"size": int64(0)}}}
	if errs := r.Validate(bad, nil); len(errs) != 1 || errs[0].Field != "spec.size" {
		t.Errorf("Validate: %v", errs)
	}
	if v := r.Verbs; v[5] != "create" {
		t.Errorf("verbs %v", v)
	}

	reg := New()
	if err := reg.Add(r); err != nil {
		t.Fatal(err)
	}
	if err := reg.Put(beta); err != nil || reg.Get("example.com", "v1beta1", "widgets") != beta {
		t.Fatal("Put")
	}
	if !reg.Remove("example.com", "v1", "widgets") || reg.Remove("example.com", "v1", "widgets") {
		t.Error("Remove")
	}
	reg.Remove("example.com", "v1beta1", "widgets")
	if len(reg.GroupOrder()) != 0 || reg.HasGroupVersion("example.com", "v1beta1") {
		t.Errorf("groups left: %v", reg.GroupOrder())
	}
}
