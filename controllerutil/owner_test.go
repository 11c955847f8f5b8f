package controllerutil_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controllerutil"
)

// owner is a ConfigMap as read from the server: with a uid, without
// TypeMeta.
func owner(ns, name, uid string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: metav1.UID(uid)}}
}

func secret(ns, name string, refs ...metav1.OwnerReference) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: refs}}
}

func ref(kind, name, uid string, controller bool) metav1.OwnerReference {
	r := metav1.OwnerReference{APIVersion: "v1", Kind: kind, Name: name, UID: metav1.UID(uid)}
	if controller {
		r.Controller = new(true)
	}
	return r
}

// widget is a Go type no scheme holds: its kind can only come from its
// TypeMeta.
type widget struct {
	metav1.TypeMeta
	metav1.ObjectMeta
}

func TestSetControllerReference(t *testing.T) {
	cm := owner("web", "settings", "u1")
	tests := []struct {
		name     string
		obj      *corev1.Secret
		opts     controllerutil.OwnerOptions
		want     []metav1.OwnerReference
		wantOwnd bool // an *AlreadyOwnedError
	}{
		{
			name: "new reference, kind from the scheme not the empty TypeMeta",
			obj:  secret("web", "s"),
			want: []metav1.OwnerReference{ref("ConfigMap", "settings", "u1", true)},
		},
		{
			name: "again is a no-op",
			obj:  secret("web", "s", ref("ConfigMap", "settings", "u1", true)),
			want: []metav1.OwnerReference{ref("ConfigMap", "settings", "u1", true)},
		},
		{
			name: "an owner reference becomes the controller reference, others kept",
			obj:  secret("web", "s", ref("Pod", "p", "u9", false), ref("ConfigMap", "settings", "u1", false)),
			want: []metav1.OwnerReference{ref("Pod", "p", "u9", false), ref("ConfigMap", "settings", "u1", true)},
		},
		{
			name: "a re-created owner of the same name replaces the stale reference",
			obj:  secret("web", "s", ref("ConfigMap", "settings", "old", true)),
			want: []metav1.OwnerReference{ref("ConfigMap", "settings", "u1", true)},
		},
		{
			name: "blockOwnerDeletion when asked",
			obj:  secret("web", "s"),
			opts: controllerutil.OwnerOptions{BlockOwnerDeletion: true},
			want: []metav1.OwnerReference{func() metav1.OwnerReference {
				r := ref("ConfigMap", "settings", "u1", true)
				r.BlockOwnerDeletion = new(true)
				return r
			}()},
		},
		{
			name:     "another controller is refused",
			obj:      secret("web", "s", ref("ConfigMap", "other", "u2", true)),
			want:     []metav1.OwnerReference{ref("ConfigMap", "other", "u2", true)},
			wantOwnd: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := controllerutil.SetControllerReference(cm, tt.obj, tt.opts)
			var owned *controllerutil.AlreadyOwnedError
			if got := errors.As(err, &owned); got != tt.wantOwnd {
				t.Fatalf("err = %v, want AlreadyOwnedError: %v", err, tt.wantOwnd)
			}
			if tt.wantOwnd {
				if owned.Owner.Name != "other" || owned.Object != "web/s" {
					t.Errorf("AlreadyOwnedError = %+v", owned)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tt.obj.OwnerReferences, tt.want) {
				t.Errorf("ownerReferences = %+v, want %+v", tt.obj.OwnerReferences, tt.want)
			}
		})
	}
}

func TestOwnerRefused(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetName("w")
	u.SetNamespace("web")
	u.SetUID("u3")
	tests := []struct {
		name   string
		set    func() error
		reason string
	}{
		{"owner in another namespace", func() error {
			return controllerutil.SetControllerReference(owner("db", "settings", "u1"), secret("web", "s"), controllerutil.OwnerOptions{})
		}, "another namespace"},
		{"cluster-scoped object, namespaced owner", func() error {
			return controllerutil.SetOwnerReference(owner("web", "settings", "u1"),
				&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r"}}, controllerutil.OwnerOptions{})
		}, "cluster-scoped object"},
		{"namespaced owner without a namespace", func() error {
			return controllerutil.SetControllerReference(owner("", "settings", "u1"), secret("web", "s"), controllerutil.OwnerOptions{})
		}, "has no namespace"},
		{"owner not read from the server", func() error {
			return controllerutil.SetControllerReference(owner("web", "settings", ""), secret("web", "s"), controllerutil.OwnerOptions{})
		}, "no uid"},
		{"owner kind unknown: unstructured without apiVersion", func() error {
			return controllerutil.SetControllerReference(u, secret("web", "s"), controllerutil.OwnerOptions{})
		}, "kind is unknown"},
		{"owner kind unknown: a scheme without the type", func() error {
			return controllerutil.SetControllerReference(owner("web", "settings", "u1"), secret("web", "s"),
				controllerutil.OwnerOptions{Scheme: client.NewScheme()})
		}, "kind is unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.set()
			var oe *controllerutil.OwnerError
			if !errors.As(err, &oe) || !strings.Contains(oe.Reason, tt.reason) {
				t.Fatalf("err = %v, want an OwnerError saying %q", err, tt.reason)
			}
		})
	}
}

func TestOwnerKinds(t *testing.T) {
	// A cluster-scoped owner of a namespaced object is fine.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "n1"}}
	s := secret("web", "s")
	if err := controllerutil.SetControllerReference(ns, s, controllerutil.OwnerOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := s.OwnerReferences, []metav1.OwnerReference{ref("Namespace", "web", "n1", true)}; !reflect.DeepEqual(got, want) {
		t.Errorf("namespace owner: %+v, want %+v", got, want)
	}

	// Unstructured owners and unregistered types carry their kind.
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Widget")
	u.SetName("w")
	u.SetNamespace("web")
	u.SetUID("u3")
	s = secret("web", "s")
	if err := controllerutil.SetOwnerReference(u, s, controllerutil.OwnerOptions{}); err != nil {
		t.Fatal(err)
	}
	w := &widget{TypeMeta: metav1.TypeMeta{APIVersion: "example.com/v2", Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "w", UID: "u3"}}
	if err := controllerutil.SetControllerReference(w, s, controllerutil.OwnerOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []metav1.OwnerReference{{APIVersion: "example.com/v2", Kind: "Widget", Name: "w", UID: "u3", Controller: new(true)}}
	if !reflect.DeepEqual(s.OwnerReferences, want) {
		t.Errorf("widget owner (same group, other version): %+v, want %+v", s.OwnerReferences, want)
	}
}

func TestSetOwnerReference(t *testing.T) {
	cm := owner("web", "settings", "u1")
	tests := []struct {
		name string
		obj  *corev1.Secret
		want []metav1.OwnerReference
	}{
		{"new, not a controller", secret("web", "s"),
			[]metav1.OwnerReference{ref("ConfigMap", "settings", "u1", false)}},
		{"beside another controller", secret("web", "s", ref("ConfigMap", "other", "u2", true)),
			[]metav1.OwnerReference{ref("ConfigMap", "other", "u2", true), ref("ConfigMap", "settings", "u1", false)}},
		{"a controller reference stays one", secret("web", "s", ref("ConfigMap", "settings", "u1", true)),
			[]metav1.OwnerReference{ref("ConfigMap", "settings", "u1", true)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := controllerutil.SetOwnerReference(cm, tt.obj, controllerutil.OwnerOptions{}); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tt.obj.OwnerReferences, tt.want) {
				t.Errorf("ownerReferences = %+v, want %+v", tt.obj.OwnerReferences, tt.want)
			}
		})
	}
}

func TestRemoveOwnerReference(t *testing.T) {
	cm := owner("web", "settings", "u1")
	tests := []struct {
		name        string
		obj         *corev1.Secret
		wantRemoved bool
		want        []metav1.OwnerReference
	}{
		{"the controller reference", secret("web", "s", ref("Pod", "p", "u9", false), ref("ConfigMap", "settings", "u1", true)),
			true, []metav1.OwnerReference{ref("Pod", "p", "u9", false)}},
		{"a stale reference of the same name", secret("web", "s", ref("ConfigMap", "settings", "old", false)),
			true, []metav1.OwnerReference{}},
		{"not owned", secret("web", "s", ref("ConfigMap", "other", "u2", true)),
			false, []metav1.OwnerReference{ref("ConfigMap", "other", "u2", true)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			removed, err := controllerutil.RemoveOwnerReference(cm, tt.obj, controllerutil.OwnerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if removed != tt.wantRemoved {
				t.Errorf("removed = %v, want %v", removed, tt.wantRemoved)
			}
			if !reflect.DeepEqual(tt.obj.OwnerReferences, tt.want) {
				t.Errorf("ownerReferences = %+v, want %+v", tt.obj.OwnerReferences, tt.want)
			}
		})
	}
}

func TestControllerOf(t *testing.T) {
	cm := owner("web", "settings", "u1")
	tests := []struct {
		name       string
		obj        *corev1.Secret
		controller string // "" for none
		controlled bool   // by cm
	}{
		{"none", secret("web", "s", ref("ConfigMap", "settings", "u1", false)), "", false},
		{"cm", secret("web", "s", ref("Pod", "p", "u9", false), ref("ConfigMap", "settings", "u1", true)), "settings", true},
		{"a re-created cm is another owner", secret("web", "s", ref("ConfigMap", "settings", "old", true)), "settings", false},
		{"another", secret("web", "s", ref("Pod", "p", "u9", true)), "p", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := controllerutil.GetControllerOf(tt.obj)
			if got := ""; c != nil {
				got = c.Name
				if got != tt.controller {
					t.Errorf("GetControllerOf = %q, want %q", got, tt.controller)
				}
				c.Name = "changed"
				if controllerutil.GetControllerOf(tt.obj).Name == "changed" {
					t.Error("GetControllerOf returned the object's own reference")
				}
			} else if tt.controller != "" {
				t.Errorf("GetControllerOf = nil, want %q", tt.controller)
			}
			if got := controllerutil.HasControllerReference(tt.obj); got != (tt.controller != "") {
				t.Errorf("HasControllerReference = %v", got)
			}
			if got := controllerutil.IsControlledBy(tt.obj, cm); got != tt.controlled {
				t.Errorf("IsControlledBy = %v, want %v", got, tt.controlled)
			}
		})
	}
}
