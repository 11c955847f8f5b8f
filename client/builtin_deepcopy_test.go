package client

import (
	"reflect"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/resource"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// TestBuiltinKindsDeepCopy copies the object of every create-*, full-* and review-*
// capture of kube-apiserver v1.37.2 with its DeepCopy method: the copy is
// equal to the original and shares no memory with it.
func TestBuiltinKindsDeepCopy(t *testing.T) {
	for _, c := range builtinKindCaptures(t) {
		t.Run(c.name, func(t *testing.T) {
			obj := reflect.New(c.typ)
			if err := kjson.Unmarshal(c.body, obj.Interface()); err != nil {
				t.Fatal(err)
			}
			dc := obj.MethodByName("DeepCopy")
			if !dc.IsValid() {
				t.Fatalf("%v has no DeepCopy", c.typ)
			}
			cp := dc.Call(nil)[0]
			if !reflect.DeepEqual(obj.Interface(), cp.Interface()) {
				t.Fatal("the copy differs from the original")
			}
			if path, shared := sharedMemory(obj.Elem(), cp.Elem(), c.typ.Name()); shared {
				t.Errorf("the copy shares %s with the original", path)
			}
		})
	}
}

// TestBuiltinKindsHaveDeepCopy checks that every registered built-in type
// and its list has DeepCopy and DeepCopyInto, as informers' callers expect.
func TestBuiltinKindsHaveDeepCopy(t *testing.T) {
	s := NewBuiltinScheme()
	for _, typ := range s.byGVK {
		p := reflect.PointerTo(typ)
		m, ok := p.MethodByName("DeepCopy")
		if !ok || m.Type.NumOut() != 1 || m.Type.Out(0) != p {
			t.Errorf("%v: no DeepCopy() %v", typ, p)
		}
		if _, ok := p.MethodByName("DeepCopyInto"); !ok {
			t.Errorf("%v: no DeepCopyInto", typ)
		}
	}
}

var quantityType = reflect.TypeFor[resource.Quantity]()

// sharedMemory walks a and b, values of one type, and returns the path of
// the first pointer, slice or map they both refer to. Quantities are
// immutable values that may share their big.Int.
func sharedMemory(a, b reflect.Value, path string) (string, bool) {
	if a.Type() == quantityType {
		return "", false
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return "", false
		}
		if a.Pointer() == b.Pointer() {
			return path, true
		}
		return sharedMemory(a.Elem(), b.Elem(), path)
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return "", false
		}
		return sharedMemory(a.Elem(), b.Elem(), path)
	case reflect.Slice:
		if a.Len() == 0 || b.Len() == 0 {
			return "", false
		}
		if a.Pointer() == b.Pointer() {
			return path, true
		}
		for i := 0; i < a.Len() && i < b.Len(); i++ {
			if p, ok := sharedMemory(a.Index(i), b.Index(i), path+"[]"); ok {
				return p, true
			}
		}
	case reflect.Map:
		if a.IsNil() || b.IsNil() {
			return "", false
		}
		if a.Pointer() == b.Pointer() {
			return path, true
		}
		for _, k := range a.MapKeys() {
			if bv := b.MapIndex(k); bv.IsValid() {
				if p, ok := sharedMemory(a.MapIndex(k), bv, path+"[k]"); ok {
					return p, true
				}
			}
		}
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !a.Type().Field(i).IsExported() {
				continue
			}
			if p, ok := sharedMemory(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); ok {
				return p, true
			}
		}
	}
	return "", false
}

// sharedMemory finds what a shallow copy shares.
func TestSharedMemoryFindsShallowCopies(t *testing.T) {
	pod := corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Args: []string{"x"}}}}}
	shallow := pod
	shallow.Spec.Containers = append([]corev1.Container(nil), pod.Spec.Containers...)
	if path, shared := sharedMemory(reflect.ValueOf(pod), reflect.ValueOf(shallow), "Pod"); !shared || path != "Pod.Spec.Containers[].Args" {
		t.Errorf("sharedMemory = %q, %v; want Pod.Spec.Containers[].Args", path, shared)
	}
	if path, shared := sharedMemory(reflect.ValueOf(pod), reflect.ValueOf(*pod.DeepCopy()), "Pod"); shared {
		t.Errorf("a deep copy shares %s", path)
	}
}
