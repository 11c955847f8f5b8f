package fieldmanager

import (
	"encoding/json"
	"github.com/kapi-dev/kapi/internal/golden"
	"reflect"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
)

// benchPod returns the rich pod of golden 11 (about 8 KB of JSON with its
// managedFields) and a manager for pods.
func benchPod(b *testing.B) (*Manager, map[string]any) {
	b.Helper()
	s, err := ForType(reflect.TypeFor[corev1.Pod]())
	if err != nil {
		b.Fatal(err)
	}
	pod := goldenObject(b, golden.V137, "11-create-pod-rich")
	raw, _ := json.Marshal(pod)
	b.SetBytes(int64(len(raw)))
	return New(s, "v1", newClock().now), pod
}

// BenchmarkUpdate measures an update of one label of a tracked ~8 KB pod.
func BenchmarkUpdate(b *testing.B) {
	m, live := benchPod(b)
	b.ReportAllocs()
	for b.Loop() {
		o := deepCopy(live).(map[string]any)
		o["metadata"].(map[string]any)["labels"].(map[string]any)["x"] = "y"
		if _, err := m.Update(live, o, "bench", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApply measures an apply of one container image to a tracked
// ~8 KB pod.
func BenchmarkApply(b *testing.B) {
	m, live := benchPod(b)
	applied := obj(b, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"rich"},"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Apply(live, applied, "bench", "", true); err != nil {
			b.Fatal(err)
		}
	}
}
