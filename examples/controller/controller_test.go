package main

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestMirror runs the controller on the fake client, with a reactor failing
// the first Secret apply as a server would (500): the controller retries and
// the Secret ends up mirroring the ConfigMap, owned by it, with the status
// annotation set.
func TestMirror(t *testing.T) {
	f := fake.New(t, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default", Labels: map[string]string{MirrorLabel: "true"}},
		Data:       map[string]string{"mode": "fast"},
	})
	var failed atomic.Bool
	f.PrependReactor("patch", "secrets", func(a fake.Action) (bool, any, error) {
		if failed.Swap(true) {
			return false, nil, nil // fall through to the server
		}
		return true, nil, client.NewStatusError(metav1.NewInternalError(io.ErrUnexpectedEOF))
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, err := start(ctx, f.Client(), "default", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	secrets := client.For[corev1.Secret](f.Client()).Namespace("default")
	s, err := waitForSecret(ctx, secrets, "settings", "fast")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Name != "settings" || s.OwnerReferences[0].Kind != "ConfigMap" {
		t.Errorf("owner references %+v", s.OwnerReferences)
	}
	applies := 0
	for _, a := range f.Actions() {
		if a.Matches("patch", "secrets") {
			applies++
		}
	}
	// The first apply failed; the controller retried. (A later reconcile may
	// apply again before its informer sees the Secret.)
	if !failed.Load() || applies < 2 {
		t.Errorf("%d secret applies, want the failed one and a retry", applies)
	}
}

func TestDemo(t *testing.T) {
	var out stringsBuilder
	if err := demo(context.Background(), &out, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	want := "secret settings mirrors configmap settings: mode=fast, owner=ConfigMap/settings\nafter the update: mode=safe\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

type stringsBuilder struct{ b []byte }

func (s *stringsBuilder) Write(p []byte) (int, error) { s.b = append(s.b, p...); return len(p), nil }
func (s *stringsBuilder) String() string              { return string(s.b) }
