package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	eventsv1 "github.com/kapi-dev/kapi/api/events/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controller"
	"github.com/kapi-dev/kapi/controllerutil"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	var opts []goleak.Option
	if os.Getenv("KAPI_EXAMPLE_KUBECONFIG") != "" {
		// Against a cluster (TestCluster), an HTTP/2 connection whose
		// last stream (a watch being torn down) was still open when run
		// closed its client's idle connections stays in the pool until
		// the server closes it: a kept-alive connection, not a goroutine
		// of the controller's.
		opts = append(opts, goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"))
	}
	goleak.VerifyTestMain(m, opts...)
}

func configMap(name, mode string, labelled bool) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: map[string]string{"mode": mode}}
	if labelled {
		cm.Labels = map[string]string{MirrorLabel: "true"}
	}
	return cm
}

// TestConverges runs the controller on the fake while it injects faults in
// the requests for ConfigMaps and Secrets (500s, 429s, conflicts, dropped,
// truncated and expired watches), drawn from a few seeds. While the faults
// last, the test updates one mirrored ConfigMap, deletes another, and
// deletes the Secret of a third; once
// they stop, every labelled ConfigMap has a Secret holding its data that it
// controls, the deleted one's Secret was deleted by the finalizer's cleanup
// (and the ConfigMap is gone, its finalizer removed), the unlabelled
// ConfigMap has no Secret, the replica holds the Lease, and events and
// metrics tell what happened.
func TestConverges(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			f := fake.NewWithOptions(t, fake.Options{
				MaxRetries: -1, // 429s reach the controller instead of being retried by the client on the wall clock
				Faults: fake.Faults{
					Seed: seed, InternalError: 0.1, TooManyRequests: 0.1, Conflict: 0.2,
					ExpiredWatch: 0.2, TruncateWatch: 0.2, DropWatch: 0.2,
					Resources: []string{"configmaps", "secrets"}, // the Lease and the events are served faithfully
				},
			}, configMap("a", "fast", true), configMap("b", "slow", true), configMap("c", "safe", true), configMap("plain", "x", false))
			reg := prometheus.NewRegistry()
			m, err := metrics.Register(reg)
			if err != nil {
				t.Fatal(err)
			}
			mirror, err := New(f.Client(), Config{Identity: "test", Metrics: m, MetricsHandler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- mirror.Run(runCtx) }()
			defer func() {
				stop()
				if err := <-done; err != nil {
					t.Errorf("Run: %v", err)
				}
			}()

			want := map[string]string{"a": "fast", "b": "slow", "c": "safe"}
			eventually(ctx, t, mirror, func() error { return mirrored(ctx, f.Client(), want) })
			// Under faults still: the test's own writes are retried.
			cms := client.For[corev1.ConfigMap](f.Client()).Namespace("default")
			retry(ctx, t, func() error {
				_, err := cms.Patch(ctx, "a", client.MergePatchType, []byte(`{"data":{"mode":"faster"}}`), metav1.PatchOptions{})
				return err
			})
			retry(ctx, t, func() error {
				if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); !client.IsNotFound(err) {
					return err
				}
				return nil
			})
			// A Secret deleted behind the controller's back is made again
			// (Owns enqueues its owner).
			retry(ctx, t, func() error {
				if err := client.For[corev1.Secret](f.Client()).Namespace("default").Delete(ctx, "c", metav1.DeleteOptions{}); !client.IsNotFound(err) {
					return err
				}
				return nil
			})
			f.StopFaults()
			want = map[string]string{"a": "faster", "c": "safe"}
			eventually(ctx, t, mirror, func() error {
				if err := mirrored(ctx, f.Client(), want); err != nil {
					return err
				}
				if _, err := cms.Get(ctx, "b", metav1.GetOptions{}); !client.IsNotFound(err) {
					return fmt.Errorf("configmap b still there (%v)", err)
				}
				return recorded(ctx, f.Client(), "default", "Mirrored/a", "Mirrored/b", "Mirrored/c", "CleanedUp/b")
			})

			// The cleanup deleted the Secret itself (the garbage collector,
			// which would too, runs in the server: not an action).
			if !slices.ContainsFunc(f.Actions(), func(a fake.Action) bool { return a.Matches("delete", "secrets") && a.Name == "b" }) {
				t.Error("the finalizer's cleanup did not delete Secret b")
			}
			leases := client.For[coordinationv1.Lease](f.Client()).Namespace("default")
			if l, err := leases.Get(ctx, Name, metav1.GetOptions{}); err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "test" {
				t.Errorf("Lease %s: %v, want it held by the replica", Name, err)
			}
			counts := f.FaultCounts()
			if counts[fake.FaultInternalError]+counts[fake.FaultTooManyRequests]+counts[fake.FaultConflict] == 0 {
				t.Errorf("no request failed: %v", counts)
			}
			if n := reconciles(t, reg); n == 0 {
				t.Error("controller_runtime_reconcile_total is 0")
			}
			// The manager serves the probes and the metrics, with the
			// reflectors' labelled by resource.
			for _, get := range []struct{ path, want string }{
				{"/healthz", "ok"}, {"/readyz", "ok"},
				{"/metrics", "controller_runtime_reconcile_total"},
				{"/metrics", `reflector_lists_total{name="v1/configmaps"}`},
				{"/metrics", `reflector_lists_total{name="v1/secrets"}`},
			} {
				rec := httptest.NewRecorder()
				mirror.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, get.path, nil))
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), get.want) {
					t.Errorf("GET %s: %d %.200q, want 200 with %q", get.path, rec.Code, rec.Body.String(), get.want)
				}
			}
			t.Logf("faults %v", counts)
		})
	}
}

// mirrored checks, on the server, that exactly the ConfigMaps in want (name
// to mode) have a Secret mirroring them, and carry the finalizer.
func mirrored(ctx context.Context, c *client.Client, want map[string]string) error {
	secrets, err := client.For[corev1.Secret](c).Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var names []string
	for _, s := range secrets.Items {
		names = append(names, s.Name)
		cm, err := client.For[corev1.ConfigMap](c).Namespace("default").Get(ctx, s.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("secret %s: its configmap: %w", s.Name, err)
		}
		switch {
		case string(s.Data["mode"]) != want[s.Name] || len(s.Data) != 1:
			return fmt.Errorf("secret %s has %q, want mode=%s", s.Name, s.Data, want[s.Name])
		case !controllerutil.IsControlledBy(&s, cm):
			return fmt.Errorf("secret %s is not controlled by its configmap: %+v", s.Name, s.OwnerReferences)
		case !controllerutil.ContainsFinalizer(cm, Finalizer):
			return fmt.Errorf("configmap %s has no finalizer: %v", cm.Name, cm.Finalizers)
		}
	}
	if len(names) != len(want) {
		return fmt.Errorf("secrets %v, want one per configmap of %v", names, want)
	}
	return nil
}

// recorded checks that there are Events in namespace with each
// reason/name.
func recorded(ctx context.Context, c *client.Client, namespace string, want ...string) error {
	list, err := client.For[eventsv1.Event](c).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var have []string
	for _, ev := range list.Items {
		have = append(have, ev.Reason+"/"+ev.Regarding.Name)
	}
	for _, w := range want {
		if !slices.Contains(have, w) {
			return fmt.Errorf("no event %s among %v", w, have)
		}
	}
	return nil
}

// reconciles sums controller_runtime_reconcile_total.
func reconciles(t *testing.T, reg *prometheus.Registry) float64 {
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() == "controller_runtime_reconcile_total" {
			for _, m := range f.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// eventually waits until the controller is idle and check passes, or fails
// the test with check's last error once ctx is done. The controller going
// idle is not enough alone: a change may still be on its way from the
// server to the informers (a dropped watch is watched again after a
// backoff), so check is tried again at every tick.
func eventually(ctx context.Context, t *testing.T, mirror *Mirror, check func() error) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if err := mirror.ctl.WaitIdle(ctx); errors.Is(err, controller.ErrStopped) && ctx.Err() == nil {
			t.Fatalf("the controller stopped: %v", err)
		} else if err == nil {
			if last = check(); last == nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("did not converge: %v", last)
		case <-tick.C:
		}
	}
}

// retry runs a write until it gets past the injected faults.
func retry(ctx context.Context, t *testing.T, write func() error) {
	t.Helper()
	var err error
	for range 50 {
		if err = write(); err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestDemo(t *testing.T) {
	var out strings.Builder
	if err := demo(t.Context(), &out, "", slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	want := "secret settings mirrors configmap settings: mode=fast, owner=ConfigMap/settings\n" +
		"after the update: mode=safe\n" +
		"after the delete: the finalizer deleted the secret\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
