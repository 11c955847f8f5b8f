package leaderelection_test

import (
	"context"
	"fmt"
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
