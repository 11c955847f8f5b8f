package controllerutil_test

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind (a Fake not
// closed, a retry still waiting).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func configMap(ns, name string, data ...string) *corev1.ConfigMap {
	d := map[string]string{}
	for i := 0; i+1 < len(data); i += 2 {
		d[data[i]] = data[i+1]
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: d}
}

// conflict is the error a reactor returns to fail a write with a Conflict.
func conflict(a fake.Action) error {
	return client.NewStatusError(metav1.NewConflict(
		metav1.GroupResource{Resource: a.Resource.Resource}, a.Name, errors.New("injected")))
}

// verbs returns the verbs of f's recorded actions, with their subresource.
func verbs(f *fake.Fake) []string {
	var out []string
	for _, a := range f.Actions() {
		v := a.Verb
		if a.Subresource != "" {
			v += "/" + a.Subresource
		}
		out = append(out, v)
	}
	return out
}
