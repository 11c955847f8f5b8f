package fake_test

import (
	"context"
	"log/slog"
	"reflect"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/internal/kjson"
	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: every Fake
// is closed by t.Cleanup, which must end its handlers, watches and server.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitLimit bounds how long a test waits for something that should happen
// at once, so that a bug fails the test instead of hanging it.
const waitLimit = 10 * time.Second

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// pod is a valid pod in namespace ns with labels "k=v" pairs.
func pod(ns, name string, labels ...string) *corev1.Pod {
	l := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		l[labels[i]] = labels[i+1]
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: l},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
	}
}

func configMap(ns, name string, data ...string) *corev1.ConfigMap {
	d := map[string]string{}
	for i := 0; i+1 < len(data); i += 2 {
		d[data[i]] = data[i+1]
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: d}
}

// next returns the next event of w, failing the test if none comes.
func next[T any](t *testing.T, w client.Watcher[T]) client.Event[T] {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch ended")
		}
		return ev
	case <-time.After(waitLimit):
		t.Fatal("no watch event")
	}
	panic("unreachable")
}

// waitClosed fails the test unless w's channel closes (after draining
// events).
func waitClosed[T any](t *testing.T, w client.Watcher[T]) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("watch did not end")
		}
	}
}

// quietLogger discards logs, for Fakes made with Start in tests that expect
// errors.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// mustUnstructured converts a typed object of kind Kind (in the core group)
// to its unstructured form.
func mustUnstructured(t testing.TB, obj any) *unstructured.Unstructured {
	t.Helper()
	b, err := kjson.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	_ = u.UnmarshalJSON(b) // no kind yet
	if u.Object == nil {
		t.Fatalf("%T did not convert", obj)
	}
	if u.GetKind() == "" {
		u.SetAPIVersion("v1")
		u.SetKind(reflectName(obj))
	}
	return u
}

// reflectName is the name of obj's type, without the pointer.
func reflectName(obj any) string {
	t := reflect.TypeOf(obj)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}
