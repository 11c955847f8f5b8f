package unstructured

import (
	"errors"
	"reflect"
	"testing"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// checkMetaEqual checks every metav1.Object getter of u against the typed
// metadata m decoded from the same JSON.
func checkMetaEqual(t *testing.T, u *Unstructured, m *metav1.ObjectMeta) {
	t.Helper()
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"Name", u.GetName(), m.Name},
		{"GenerateName", u.GetGenerateName(), m.GenerateName},
		{"Namespace", u.GetNamespace(), m.Namespace},
		{"SelfLink", u.GetSelfLink(), m.SelfLink},
		{"UID", u.GetUID(), m.UID},
		{"ResourceVersion", u.GetResourceVersion(), m.ResourceVersion},
		{"Generation", u.GetGeneration(), m.Generation},
		{"DeletionGracePeriodSeconds", u.GetDeletionGracePeriodSeconds(), m.DeletionGracePeriodSeconds},
		{"Labels", u.GetLabels(), m.Labels},
		{"Annotations", u.GetAnnotations(), m.Annotations},
		{"Finalizers", u.GetFinalizers(), m.Finalizers},
		{"OwnerReferences", u.GetOwnerReferences(), m.OwnerReferences},
	} {
		if !reflect.DeepEqual(f.got, f.want) {
			t.Errorf("%s: Get%s() = %#v, typed %#v", u.GetName(), f.name, f.got, f.want)
		}
	}
	if ct := u.GetCreationTimestamp(); !ct.Equal(&m.CreationTimestamp) {
		t.Errorf("GetCreationTimestamp() = %v, typed %v", ct, m.CreationTimestamp)
	}
	if dt := u.GetDeletionTimestamp(); !dt.Equal(m.DeletionTimestamp) || (dt == nil) != (m.DeletionTimestamp == nil) {
		t.Errorf("GetDeletionTimestamp() = %v, typed %v", dt, m.DeletionTimestamp)
	}
	checkManagedFieldsEqual(t, u.GetManagedFields(), m.ManagedFields)
}

func checkManagedFieldsEqual(t *testing.T, got, want []metav1.ManagedFieldsEntry) {
	t.Helper()
	if len(got) != len(want) || (got == nil) != (want == nil) {
		t.Fatalf("managedFields: %d entries (nil %v), want %d (nil %v)", len(got), got == nil, len(want), want == nil)
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.Time.Equal(w.Time) || (g.Time == nil) != (w.Time == nil) {
			t.Errorf("managedFields[%d].Time = %v, want %v", i, g.Time, w.Time)
		}
		if (g.FieldsV1 == nil) != (w.FieldsV1 == nil) {
			t.Fatalf("managedFields[%d].FieldsV1 = %v, want %v", i, g.FieldsV1, w.FieldsV1)
		}
		if w.FieldsV1 != nil {
			gv, err1 := refDecode(g.FieldsV1.Raw)
			wv, err2 := refDecode(w.FieldsV1.Raw)
			if err1 != nil || err2 != nil {
				t.Fatalf("managedFields[%d].FieldsV1: %v %v", i, err1, err2)
			}
			if d := diffJSON("", gv, wv); d != "" {
				t.Errorf("managedFields[%d].FieldsV1: %s", i, d)
			}
		}
		g.Time, w.Time, g.FieldsV1, w.FieldsV1 = nil, nil, nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("managedFields[%d] = %+v, want %+v", i, g, w)
		}
	}
}

// TestGettersGolden compares the getters with typed decoding of real objects.
func TestGettersGolden(t *testing.T) {
	for _, name := range []string{
		"07-get-configmap-json.txt", "13-get-pod-json.txt", "85-get-crd.txt",
		"79-get-terminating.txt", "11-create-pod-rich.txt", "53-create-generatename.txt",
	} {
		t.Run(name, func(t *testing.T) {
			body := goldenBody(t, name)
			var u Unstructured
			if err := u.UnmarshalJSON(body); err != nil {
				t.Fatal(err)
			}
			var typed struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			if err := kjson.Unmarshal(body, &typed); err != nil {
				t.Fatal(err)
			}
			if typed.Metadata.Name == "" && typed.Metadata.GenerateName == "" {
				t.Fatal("no metadata in the golden object")
			}
			checkMetaEqual(t, &u, &typed.Metadata)
		})
	}
}

// TestSettersTyped sets every field through the setters and decodes the
// resulting metadata into the typed ObjectMeta.
func TestSettersTyped(t *testing.T) {
	yes, no := true, false
	grace, remaining := int64(30), int64(7)
	created := metav1.NewTime(time.Date(2026, 11, 21, 19, 1, 2, 0, time.UTC))
	deleted := metav1.NewTime(time.Date(2026, 11, 22, 1, 2, 3, 0, time.FixedZone("X", 3600)))
	want := metav1.ObjectMeta{
		Name:                       "n",
		GenerateName:               "g-",
		Namespace:                  "ns",
		SelfLink:                   "/api/v1/x",
		UID:                        "uid-1",
		ResourceVersion:            "42",
		Generation:                 3,
		CreationTimestamp:          created,
		DeletionTimestamp:          &deleted,
		DeletionGracePeriodSeconds: &grace,
		Labels:                     map[string]string{"app": "web", "empty": ""},
		Annotations:                map[string]string{"note": "<&>"},
		OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u1", Controller: &yes, BlockOwnerDeletion: &no},
			{APIVersion: "v1", Kind: "Node", Name: "node", UID: "u2"},
		},
		Finalizers: []string{"a/b", "c"},
		ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager:    "m",
			Operation:  "Apply",
			APIVersion: "v1",
			Time:       &created,
			FieldsType: "FieldsV1",
			FieldsV1:   &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:n":{"n":1}}`)},
		}, {
			Manager:     "kubelet",
			Operation:   "Update",
			Subresource: "status",
		}},
	}
	var u Unstructured
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetName(want.Name)
	u.SetGenerateName(want.GenerateName)
	u.SetNamespace(want.Namespace)
	u.SetSelfLink(want.SelfLink)
	u.SetUID(want.UID)
	u.SetResourceVersion(want.ResourceVersion)
	u.SetGeneration(want.Generation)
	u.SetCreationTimestamp(want.CreationTimestamp)
	u.SetDeletionTimestamp(want.DeletionTimestamp)
	u.SetDeletionGracePeriodSeconds(want.DeletionGracePeriodSeconds)
	u.SetLabels(want.Labels)
	u.SetAnnotations(want.Annotations)
	u.SetOwnerReferences(want.OwnerReferences)
	u.SetFinalizers(want.Finalizers)
	u.SetManagedFields(want.ManagedFields)
	u.SetContinue("c")
	u.SetRemainingItemCount(&remaining)

	if u.GetAPIVersion() != "v1" || u.GetKind() != "Pod" || u.GetContinue() != "c" || *u.GetRemainingItemCount() != 7 {
		t.Errorf("apiVersion %q kind %q continue %q", u.GetAPIVersion(), u.GetKind(), u.GetContinue())
	}
	if ts := u.Object["metadata"].(map[string]any)["deletionTimestamp"]; ts != "2026-11-22T00:02:03Z" {
		t.Errorf("deletionTimestamp stored as %v, want UTC RFC 3339", ts)
	}
	if g := u.Object["metadata"].(map[string]any)["generation"]; g != int64(3) {
		t.Errorf("generation stored as %T", g)
	}

	b, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var typed struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := kjson.Unmarshal(b, &typed); err != nil {
		t.Fatal(err)
	}
	checkMetaEqual(t, &u, &typed.Metadata)
	checkMetaEqual(t, &u, &want)

	// Setters store copies.
	want.Labels["later"] = "x"
	*want.DeletionGracePeriodSeconds = 31
	want.Finalizers[0] = "z"
	want.OwnerReferences[0].Name = "z"
	if _, ok := u.GetLabels()["later"]; ok || *u.GetDeletionGracePeriodSeconds() != 30 ||
		u.GetFinalizers()[0] != "a/b" || u.GetOwnerReferences()[0].Name != "rs" {
		t.Error("setters share their arguments")
	}
}

func TestGettersTolerateBadValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  map[string]any
		get  func(*Unstructured) any
		want any
	}{
		{"nil object", nil, func(u *Unstructured) any { return u.GetName() }, ""},
		{"metadata not a map", map[string]any{"metadata": "x"}, func(u *Unstructured) any { return u.GetName() }, ""},
		{"name not a string", meta("name", int64(1)), func(u *Unstructured) any { return u.GetName() }, ""},
		{"kind not a string", map[string]any{"kind": true}, func(u *Unstructured) any { return u.GetKind() }, ""},
		{"generation float", meta("generation", 1.5), func(u *Unstructured) any { return u.GetGeneration() }, int64(0)},
		{"generation string", meta("generation", "1"), func(u *Unstructured) any { return u.GetGeneration() }, int64(0)},
		{"grace string", meta("deletionGracePeriodSeconds", "30"), func(u *Unstructured) any { return u.GetDeletionGracePeriodSeconds() }, (*int64)(nil)},
		{"remaining float", meta("remainingItemCount", 1.0), func(u *Unstructured) any { return u.GetRemainingItemCount() }, (*int64)(nil)},
		{"created garbage", meta("creationTimestamp", "yesterday"), func(u *Unstructured) any { return u.GetCreationTimestamp() }, metav1.Time{}},
		{"created number", meta("creationTimestamp", int64(5)), func(u *Unstructured) any { return u.GetCreationTimestamp() }, metav1.Time{}},
		{"deleted garbage", meta("deletionTimestamp", "x"), func(u *Unstructured) any { return u.GetDeletionTimestamp() }, (*metav1.Time)(nil)},
		{"labels null", meta("labels", nil), func(u *Unstructured) any { return u.GetLabels() }, map[string]string(nil)},
		{"labels null value", meta("labels", map[string]any{"a": nil, "b": "c"}), func(u *Unstructured) any { return u.GetLabels() }, map[string]string{"a": "", "b": "c"}},
		{"labels number value", meta("labels", map[string]any{"a": int64(1)}), func(u *Unstructured) any { return u.GetLabels() }, map[string]string(nil)},
		{"annotations list", meta("annotations", []any{"a"}), func(u *Unstructured) any { return u.GetAnnotations() }, map[string]string(nil)},
		{"finalizers mixed", meta("finalizers", []any{"a", int64(1)}), func(u *Unstructured) any { return u.GetFinalizers() }, []string(nil)},
		{"finalizers string", meta("finalizers", "a"), func(u *Unstructured) any { return u.GetFinalizers() }, []string(nil)},
		{"finalizers empty", meta("finalizers", []any{}), func(u *Unstructured) any { return u.GetFinalizers() }, []string{}},
		{"owners not a list", meta("ownerReferences", map[string]any{}), func(u *Unstructured) any { return u.GetOwnerReferences() }, []metav1.OwnerReference(nil)},
		{"owner not an object", meta("ownerReferences", []any{map[string]any{}, "x"}), func(u *Unstructured) any { return u.GetOwnerReferences() }, []metav1.OwnerReference(nil)},
		{"owner fields mistyped", meta("ownerReferences", []any{map[string]any{"name": "a", "kind": int64(1), "controller": "yes", "blockOwnerDeletion": false}}),
			func(u *Unstructured) any { return u.GetOwnerReferences() }, []metav1.OwnerReference{{Name: "a", BlockOwnerDeletion: new(bool)}}},
		{"owners empty", meta("ownerReferences", []any{}), func(u *Unstructured) any { return u.GetOwnerReferences() }, []metav1.OwnerReference{}},
		{"managed not an object", meta("managedFields", []any{"x"}), func(u *Unstructured) any { return u.GetManagedFields() }, []metav1.ManagedFieldsEntry(nil)},
		{"managed field mistyped", meta("managedFields", []any{map[string]any{"manager": int64(1)}}), func(u *Unstructured) any { return u.GetManagedFields() }, []metav1.ManagedFieldsEntry(nil)},
		{"managed bad time", meta("managedFields", []any{map[string]any{"time": "x"}}), func(u *Unstructured) any { return u.GetManagedFields() }, []metav1.ManagedFieldsEntry(nil)},
		{"managed time number", meta("managedFields", []any{map[string]any{"time": int64(1)}}), func(u *Unstructured) any { return u.GetManagedFields() }, []metav1.ManagedFieldsEntry(nil)},
		{"managed nulls and unknowns", meta("managedFields", []any{map[string]any{"manager": nil, "time": nil, "fieldsV1": nil, "x": int64(1), "operation": "Apply"}}),
			func(u *Unstructured) any { return u.GetManagedFields() }, []metav1.ManagedFieldsEntry{{Operation: "Apply"}}},
		{"managed empty", meta("managedFields", []any{}), func(u *Unstructured) any { return u.GetManagedFields() }, []metav1.ManagedFieldsEntry{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &Unstructured{Object: tc.obj}
			if got := tc.get(u); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func meta(field string, value any) map[string]any {
	return map[string]any{"metadata": map[string]any{field: value}}
}

func TestSettersRemove(t *testing.T) {
	full := func() *Unstructured {
		return &Unstructured{Object: map[string]any{"metadata": map[string]any{
			"name": "n", "generateName": "g", "namespace": "ns", "uid": "u", "resourceVersion": "1",
			"selfLink": "s", "generation": int64(1), "continue": "c", "remainingItemCount": int64(1),
			"creationTimestamp": "2026-01-01T00:00:00Z", "deletionTimestamp": "2026-01-01T00:00:00Z",
			"deletionGracePeriodSeconds": int64(1), "labels": map[string]any{}, "annotations": map[string]any{},
			"finalizers": []any{}, "ownerReferences": []any{}, "managedFields": []any{},
		}}}
	}
	for _, tc := range []struct {
		field string
		set   func(*Unstructured)
	}{
		{"name", func(u *Unstructured) { u.SetName("") }},
		{"generateName", func(u *Unstructured) { u.SetGenerateName("") }},
		{"namespace", func(u *Unstructured) { u.SetNamespace("") }},
		{"uid", func(u *Unstructured) { u.SetUID("") }},
		{"resourceVersion", func(u *Unstructured) { u.SetResourceVersion("") }},
		{"selfLink", func(u *Unstructured) { u.SetSelfLink("") }},
		{"generation", func(u *Unstructured) { u.SetGeneration(0) }},
		{"continue", func(u *Unstructured) { u.SetContinue("") }},
		{"remainingItemCount", func(u *Unstructured) { u.SetRemainingItemCount(nil) }},
		{"creationTimestamp", func(u *Unstructured) { u.SetCreationTimestamp(metav1.Time{}) }},
		{"deletionTimestamp", func(u *Unstructured) { u.SetDeletionTimestamp(nil) }},
		{"deletionTimestamp", func(u *Unstructured) { u.SetDeletionTimestamp(&metav1.Time{}) }},
		{"deletionGracePeriodSeconds", func(u *Unstructured) { u.SetDeletionGracePeriodSeconds(nil) }},
		{"labels", func(u *Unstructured) { u.SetLabels(nil) }},
		{"annotations", func(u *Unstructured) { u.SetAnnotations(nil) }},
		{"finalizers", func(u *Unstructured) { u.SetFinalizers(nil) }},
		{"ownerReferences", func(u *Unstructured) { u.SetOwnerReferences(nil) }},
		{"managedFields", func(u *Unstructured) { u.SetManagedFields(nil) }},
	} {
		u := full()
		tc.set(u)
		md := u.Object["metadata"].(map[string]any)
		if _, ok := md[tc.field]; ok || len(md) != 16 {
			t.Errorf("%s: not removed alone: %v", tc.field, md)
		}
	}

	// Empty but non-nil maps and slices are stored, as in Kubernetes.
	u := &Unstructured{}
	u.SetLabels(map[string]string{})
	u.SetFinalizers([]string{})
	u.SetOwnerReferences([]metav1.OwnerReference{})
	u.SetManagedFields([]metav1.ManagedFieldsEntry{})
	want := map[string]any{"metadata": map[string]any{
		"labels": map[string]any{}, "finalizers": []any{}, "ownerReferences": []any{}, "managedFields": []any{},
	}}
	if !reflect.DeepEqual(u.Object, want) {
		t.Errorf("got %v, want %v", u.Object, want)
	}

	// Removing from a nil or metadata-less object does nothing.
	var empty Unstructured
	empty.SetName("")
	empty.SetLabels(nil)
	if empty.Object != nil {
		t.Errorf("object created: %v", empty.Object)
	}
}

func TestSettersKeepBadMetadata(t *testing.T) {
	// As in Kubernetes, a metadata that is not a map is left alone.
	u := &Unstructured{Object: map[string]any{"metadata": "x"}}
	u.SetName("n")
	u.SetLabels(map[string]string{"a": "b"})
	u.SetGeneration(2)
	if !reflect.DeepEqual(u.Object, map[string]any{"metadata": "x"}) {
		t.Errorf("got %v", u.Object)
	}
}

func TestSetManagedFieldsInvalidRaw(t *testing.T) {
	u := &Unstructured{Object: meta("managedFields", []any{"keep"})}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "m", FieldsV1: &metav1.FieldsV1{Raw: []byte("{")}}})
	if !reflect.DeepEqual(u.Object, meta("managedFields", []any{"keep"})) {
		t.Errorf("changed despite invalid FieldsV1: %v", u.Object)
	}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Time: &metav1.Time{}, FieldsV1: &metav1.FieldsV1{}}})
	if want := meta("managedFields", []any{map[string]any{"time": nil, "fieldsV1": nil}}); !reflect.DeepEqual(u.Object, want) {
		t.Errorf("got %v, want %v", u.Object, want)
	}
}

func TestSplitAPIVersion(t *testing.T) {
	for _, tc := range []struct {
		in, group, version string
		err                bool
	}{
		{"", "", "", false},
		{"v1", "", "v1", false},
		{"apps/v1", "apps", "v1", false},
		{"example.com/v1beta1", "example.com", "v1beta1", false},
		{"/v1", "", "v1", false},
		{"apps/", "apps", "", false},
		{"/", "", "", false},
		{"a/b/c", "", "", true},
	} {
		g, v, err := SplitAPIVersion(tc.in)
		if g != tc.group || v != tc.version || (err != nil) != tc.err {
			t.Errorf("SplitAPIVersion(%q) = %q, %q, %v", tc.in, g, v, err)
		}
		if !tc.err && tc.in != "/" && tc.in != "/v1" {
			if j := JoinAPIVersion(g, v); j != tc.in {
				t.Errorf("JoinAPIVersion(%q, %q) = %q, want %q", g, v, j, tc.in)
			}
		}
	}
}

func TestEachListItem(t *testing.T) {
	u := &Unstructured{Object: map[string]any{"items": []any{map[string]any{"a": int64(1)}, map[string]any{"a": int64(2)}}}}
	var sum int64
	err := u.EachListItem(func(item *Unstructured) error {
		sum += item.Object["a"].(int64)
		item.Object["seen"] = true // shares the map
		return nil
	})
	if err != nil || sum != 3 || u.Object["items"].([]any)[0].(map[string]any)["seen"] != true {
		t.Errorf("sum %d, err %v", sum, err)
	}
	stop := errors.New("stop")
	n := 0
	if err := u.EachListItem(func(*Unstructured) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("error not returned at once: %v after %d", err, n)
	}
	for _, obj := range []map[string]any{nil, {"items": "x"}, {"items": []any{map[string]any{}, int64(1)}}} {
		if err := (&Unstructured{Object: obj}).EachListItem(func(*Unstructured) error { return nil }); err == nil {
			t.Errorf("%v: no error", obj)
		}
	}
	if l, err := (&Unstructured{Object: map[string]any{"kind": "Pod"}}).ToList(); err != nil || len(l.Items) != 0 {
		t.Errorf("ToList of an object: %v, %v", l, err)
	}
	if _, err := (&Unstructured{Object: map[string]any{"items": []any{"x"}}}).ToList(); err == nil {
		t.Error("ToList with a bad item: no error")
	}

	list := &UnstructuredList{Items: []Unstructured{{Object: map[string]any{}}, {Object: map[string]any{}}}}
	i := 0
	_ = list.EachListItem(func(item *Unstructured) error {
		item.SetName("x")
		i++
		return nil
	})
	if i != 2 || list.Items[1].GetName() != "x" || !list.IsList() {
		t.Errorf("UnstructuredList.EachListItem: %d calls, %v", i, list.Items)
	}
	if err := list.EachListItem(func(*Unstructured) error { return stop }); err != stop {
		t.Errorf("err = %v", err)
	}
}

func TestListAccessors(t *testing.T) {
	var l UnstructuredList
	l.SetAPIVersion("v1")
	l.SetKind("PodList")
	l.SetResourceVersion("5")
	l.SetContinue("tok")
	l.SetSelfLink("/x")
	n := int64(9)
	l.SetRemainingItemCount(&n)
	n = 10
	if l.GetAPIVersion() != "v1" || l.GetKind() != "PodList" || l.GetResourceVersion() != "5" ||
		l.GetContinue() != "tok" || l.GetSelfLink() != "/x" || *l.GetRemainingItemCount() != 9 {
		t.Errorf("got %v", l.Object)
	}
	// As in Kubernetes, list setters store "" rather than remove.
	l.SetContinue("")
	l.SetResourceVersion("")
	l.SetRemainingItemCount(nil)
	if want := map[string]any{"continue": "", "resourceVersion": "", "selfLink": "/x"}; !reflect.DeepEqual(l.Object["metadata"], want) {
		t.Errorf("metadata %v, want %v", l.Object["metadata"], want)
	}

	l.Items = []Unstructured{{Object: map[string]any{"kind": "Pod"}}}
	c := l.UnstructuredContent()
	if items := c["items"].([]any); len(items) != 1 || items[0].(map[string]any)["kind"] != "Pod" {
		t.Errorf("UnstructuredContent items %v", c["items"])
	}
	if _, ok := l.Object["items"]; ok {
		t.Error("UnstructuredContent changed Object")
	}

	var l2 UnstructuredList
	content := map[string]any{"kind": "PodList", "items": []any{map[string]any{"kind": "Pod"}, "junk", map[string]any{}}}
	l2.SetUnstructuredContent(content)
	if len(l2.Items) != 2 || len(content["items"].([]any)) != 2 || l2.GetKind() != "PodList" {
		t.Errorf("SetUnstructuredContent: %+v", l2)
	}
	l2.SetUnstructuredContent(map[string]any{})
	if len(l2.Items) != 0 || l2.Object["items"] == nil {
		t.Errorf("SetUnstructuredContent without items: %+v", l2)
	}
	l2.SetUnstructuredContent(nil)
	if l2.Items != nil || l2.Object != nil {
		t.Errorf("SetUnstructuredContent(nil): %+v", l2)
	}

	var u Unstructured
	if u.UnstructuredContent() == nil || u.Object != nil {
		t.Error("UnstructuredContent of a zero Unstructured")
	}
	m := map[string]any{"kind": "K"}
	u.SetUnstructuredContent(m)
	if u.UnstructuredContent()["kind"] != "K" {
		t.Error("SetUnstructuredContent")
	}
}

func TestDeepCopy(t *testing.T) {
	var u Unstructured
	if err := u.UnmarshalJSON(goldenBody(t, "13-get-pod-json.txt")); err != nil {
		t.Fatal(err)
	}
	c := u.DeepCopy()
	if !reflect.DeepEqual(c, &u) {
		t.Fatal("copy differs")
	}
	c.SetLabels(map[string]string{"changed": "yes"})
	_ = SetNestedField(c.Object, "changed", "spec", "containers")
	if u.GetLabels()["changed"] != "" {
		t.Error("labels shared")
	}
	if _, ok := u.Object["spec"].(map[string]any)["containers"].([]any); !ok {
		t.Error("spec shared")
	}
	if (*Unstructured)(nil).DeepCopy() != nil || (*UnstructuredList)(nil).DeepCopy() != nil {
		t.Error("nil copies")
	}

	var l UnstructuredList
	if err := l.UnmarshalJSON(goldenBody(t, "33-list-pods-json.txt")); err != nil {
		t.Fatal(err)
	}
	lc := l.DeepCopy()
	if !reflect.DeepEqual(lc, &l) {
		t.Fatal("list copy differs")
	}
	lc.Items[0].SetName("other")
	lc.SetResourceVersion("other")
	if l.Items[0].GetName() == "other" || l.GetResourceVersion() == "other" {
		t.Error("list shared")
	}
	if c := (&UnstructuredList{}).DeepCopy(); c.Items != nil || c.Object != nil {
		t.Errorf("empty list copy: %+v", c)
	}
}
