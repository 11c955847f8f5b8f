package leaderelection_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/leaderelection"
)

// One candidate acquires the Lease, works until its context is cancelled,
// and releases the Lease on the way out.
func Example() {
	f, err := fake.Start(context.Background(), fake.Options{})
	if err != nil {
		panic(err)
	}
	defer f.Close()

	ctx, cancel := context.WithCancel(context.Background())
	le, err := leaderelection.New(f.Client(), leaderelection.Config{
		Namespace:       "kube-system",
		Name:            "my-controller",
		Identity:        "replica-1",
		ReleaseOnCancel: true,
		OnStartedLeading: func(ctx context.Context) {
			fmt.Println("leading")
			cancel() // in a controller: run until ctx is cancelled
			<-ctx.Done()
		},
		OnStoppedLeading: func() { fmt.Println("stopped leading") },
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("Run:", le.Run(ctx))
	// Output:
	// leading
	// stopped leading
	// Run: <nil>
}

// New names every invalid setting.
func ExampleNew_invalid() {
	f, err := fake.Start(context.Background(), fake.Options{})
	if err != nil {
		panic(err)
	}
	defer f.Close()
	_, err = leaderelection.New(f.Client(), leaderelection.Config{
		Name:             "my-controller",
		Identity:         "replica-1",
		RenewDeadline:    20 * time.Second, // not less than the 15s LeaseDuration
		OnStartedLeading: func(context.Context) {},
	})
	fmt.Println(err)
	// Output:
	// leaderelection: invalid Config: RenewDeadline 20s must be less than LeaseDuration 15s, or a lost leader may still work when another starts
}

// Check is the election's health check: serve it as a liveness probe, as
// the manager's /healthz does. It passes while the leader renews (and
// while a candidate does not lead).
func ExampleLeaderElector_Check() {
	f, err := fake.Start(context.Background(), fake.Options{})
	if err != nil {
		panic(err)
	}
	defer f.Close()

	ctx, cancel := context.WithCancel(context.Background())
	var le *leaderelection.LeaderElector
	le, err = leaderelection.New(f.Client(), leaderelection.Config{
		Namespace: "kube-system",
		Name:      "my-controller",
		Identity:  "replica-1",
		OnStartedLeading: func(ctx context.Context) {
			probe := httptest.NewRecorder()
			healthz(le).ServeHTTP(probe, httptest.NewRequest("GET", "/healthz", nil))
			fmt.Println("leading, /healthz:", probe.Code)
			cancel()
		},
	})
	if err != nil {
		panic(err)
	}
	_ = le.Run(ctx)
	// Output:
	// leading, /healthz: 200
}

// healthz answers 500 with Check's error when it fails.
func healthz(le *leaderelection.LeaderElector) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if err := le.Check(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
}
