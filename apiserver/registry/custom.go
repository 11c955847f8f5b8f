package registry

import (
	"fmt"
	"maps"
	"strings"
	"sync"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver/schema"
	"github.com/kapi-dev/kapi/internal/cel"
)

// CustomResource describes one served version of a CustomResourceDefinition
// as a Resource, the way kube-apiserver's apiextensions server serves it:
//
//   - objects are *unstructured.Unstructured, JSON and YAML only (Protobuf is
//     false, Custom true);
//   - names come from the CRD's status.acceptedNames, or from spec.names
//     while none are accepted;
//   - every version stores under the same key prefix, in the storage
//     version: with conversion strategy None, PrepareForCreate and
//     PrepareForUpdate set apiVersion to it and WithTypeMeta rewrites it to
//     the version read; with strategy Webhook they set the version written,
//     and the server converts objects through Resource.Convert, which the
//     caller sets;
//   - Default prunes the fields the version's schema does not know and sets
//     its defaults; Validate checks the object against the schema, the
//     x-kubernetes-list-type sets and maps, then (unless the schema errors
//     block them) the x-kubernetes-validations CEL rules, compiled once on
//     first use;
//   - metadata.generation starts at 1 and moves when anything but metadata
//     and status changes; with subresources.status, status is reset on
//     create and kept by updates of the main resource;
//   - subresources.scale becomes Scale, additionalPrinterColumns
//     PrinterColumns, selectableFields SelectableFields.
//
// It fails when version is not a version of crd.
func CustomResource(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Resource, error) {
	var ver *apiextensionsv1.CustomResourceDefinitionVersion
	storage := ""
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Name == version {
			ver = v
		}
		if v.Storage {
			storage = v.Name
		}
	}
	if ver == nil {
		return nil, fmt.Errorf("registry: %s has no version %q", crd.Name, version)
	}
	if storage == "" {
		storage = version
	}
	names := crd.Status.AcceptedNames
	if names.Plural == "" || names.Kind == "" {
		names = crd.Spec.Names
	}
	if names.Singular == "" {
		names.Singular = strings.ToLower(names.Kind)
	}
	if names.ListKind == "" {
		names.ListKind = names.Kind + "List"
	}
	r := &Resource{
		Group: crd.Spec.Group, Version: version,
		Resource: names.Plural, Singular: names.Singular,
		Kind: names.Kind, ListKind: names.ListKind,
		Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		ShortNames: append([]string(nil), names.ShortNames...),
		Categories: append([]string(nil), names.Categories...),
		Generation: true,
		Custom:     true,
		Meta:       MetaRules{UpdateOnly: true},
	}
	if storage != version {
		r.StorageVersion = storage
	}
	if ver.Schema != nil && ver.Schema.OpenAPIV3Schema != nil {
		r.Schema = ver.Schema.OpenAPIV3Schema.DeepCopy()
	}
	if sub := ver.Subresources; sub != nil {
		r.StatusSubresource = sub.Status != nil
		if sc := sub.Scale; sc != nil {
			r.Scale = &ScaleSubresource{SpecReplicasPath: sc.SpecReplicasPath, StatusReplicasPath: sc.StatusReplicasPath}
			if sc.LabelSelectorPath != nil {
				r.Scale.LabelSelectorPath = *sc.LabelSelectorPath
			}
		}
	}
	r.Verbs, r.Subresources = defaultVerbs(true), defaultSubresources(r)
	r.PrinterColumns = append([]apiextensionsv1.CustomResourceColumnDefinition(nil), ver.AdditionalPrinterColumns...)
	if len(ver.SelectableFields) > 0 {
		paths := make([]string, len(ver.SelectableFields))
		for i, f := range ver.SelectableFields {
			paths[i] = f.JSONPath
		}
		r.SelectableFields = func(o Object) map[string]string {
			u, _ := o.(*unstructured.Unstructured)
			m := make(map[string]string, len(paths))
			for _, p := range paths {
				m[strings.TrimPrefix(p, ".")] = selectableValue(u, p)
			}
			return m
		}
	}

	storageGV := unstructured.JoinAPIVersion(crd.Spec.Group, storage)
	if c := crd.Spec.Conversion; c != nil && c.Strategy == apiextensionsv1.WebhookConverter {
		// Objects stay in the version they are written in until the
		// server converts them for storage (Resource.Convert).
		storageGV = r.GroupVersion()
	}
	kind := names.Kind
	sch := r.Schema
	r.New = func() Object { return &unstructured.Unstructured{Object: map[string]any{}} }
	r.Copy = func(o Object) Object { return o.(*unstructured.Unstructured).DeepCopy() }
	r.WithTypeMeta = func(o Object) Object {
		u := o.(*unstructured.Unstructured)
		m := maps.Clone(u.Object)
		if m == nil {
			m = map[string]any{}
		}
		m["apiVersion"] = r.GroupVersion()
		m["kind"] = kind
		return &unstructured.Unstructured{Object: m}
	}
	r.Default = func(o Object) {
		u := o.(*unstructured.Unstructured)
		if u.Object == nil {
			u.Object = map[string]any{}
		}
		schema.Prune(sch, u.Object)
		schema.Default(sch, u.Object)
	}
	toStorage := func(u *unstructured.Unstructured) {
		if u.Object == nil {
			u.Object = map[string]any{}
		}
		u.Object["apiVersion"] = storageGV
		u.Object["kind"] = kind
	}
	r.PrepareForCreate = func(o Object) {
		u := o.(*unstructured.Unstructured)
		toStorage(u)
		if r.StatusSubresource {
			delete(u.Object, "status")
		}
	}
	r.PrepareForUpdate = func(o, _ Object) { toStorage(o.(*unstructured.Unstructured)) }
	rules := sync.OnceValue(func() *cel.Validator {
		// Compiled once per registration (a new CRD generation registers
		// anew), on first use; the CRD was checked when it was written.
		v, _ := cel.Compile(sch, "")
		return v
	})
	r.Validate = func(o, old Object) metav1.FieldErrors {
		u := o.(*unstructured.Unstructured)
		errs := schema.Validate(sch, u.Object)
		errs = append(errs, schema.ValidateListSetsAndMaps(sch, u.Object)...)
		v := rules()
		if v.Empty() {
			return errs
		}
		if blocksRules(errs) {
			return append(errs, metav1.FieldInvalid("<nil>", nil,
				"some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
		}
		var prev map[string]any
		if ou, ok := old.(*unstructured.Unstructured); ok && ou != nil {
			prev = ou.Object
		}
		return append(errs, v.Validate(u.Object, prev)...)
	}
	return r, nil
}

// blocksRules reports whether schema errors keep the CEL rules from
// running, as kube-apiserver decides: a wrong type, a missing required
// field, a value outside an enum, too long or too many.
func blocksRules(errs metav1.FieldErrors) bool {
	for _, e := range errs {
		switch e.Type {
		case metav1.CauseTypeFieldValueNotSupported, metav1.CauseTypeFieldValueRequired, metav1.CauseTypeTooLong,
			metav1.CauseTypeTooMany, metav1.CauseTypeTypeInvalid:
			return true
		}
	}
	return false
}

// selectableValue is the string form of the field at a simple JSON path
// (".spec.color"), "" when it is missing or not a scalar.
func selectableValue(u *unstructured.Unstructured, path string) string {
	if u == nil {
		return ""
	}
	fields := strings.Split(strings.TrimPrefix(path, "."), ".")
	v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, fields...)
	if !ok {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case bool, int64, float64:
		return fmt.Sprint(x)
	}
	return ""
}

// customStatus and customSpec implement CopyStatus, SpecEqual and friends for
// custom resources, whose status is the "status" member and whose "spec" is
// everything but apiVersion, kind, metadata and status (kube-apiserver bumps a
// custom resource's generation on any such change).
func customSpecEqual(a, b *unstructured.Unstructured) bool {
	for k, x := range a.Object {
		if customNonSpec[k] {
			continue
		}
		y, ok := b.Object[k]
		if !ok || !schema.Equal(x, y) {
			return false
		}
	}
	for k := range b.Object {
		if customNonSpec[k] {
			continue
		}
		if _, ok := a.Object[k]; !ok {
			return false
		}
	}
	return true
}

var customNonSpec = map[string]bool{"apiVersion": true, "kind": true, "metadata": true, "status": true}

func customCopyStatus(dst, src *unstructured.Unstructured) {
	if dst.Object == nil {
		dst.Object = map[string]any{}
	}
	if st, ok := src.Object["status"]; ok {
		dst.Object["status"] = unstructured.DeepCopyJSONValue(st)
	} else {
		delete(dst.Object, "status")
	}
}

func customCopySpec(dst, src *unstructured.Unstructured) {
	if dst.Object == nil {
		dst.Object = map[string]any{}
	}
	for k := range dst.Object {
		if !customNonSpec[k] {
			delete(dst.Object, k)
		}
	}
	for k, x := range src.Object {
		if !customNonSpec[k] {
			dst.Object[k] = unstructured.DeepCopyJSONValue(x)
		}
	}
}
