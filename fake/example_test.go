package fake_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
)

// claim is the code under test in the examples: it records an owner in the
// "settings" ConfigMap, reading it again and retrying when someone else
// changed it in between (a Conflict), as controllers do.
func claim(ctx context.Context, c *client.Client, ns, owner string) error {
	cms := client.For[corev1.ConfigMap](c).Namespace(ns)
	for attempt := 0; ; attempt++ {
		cm, err := cms.Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data["owner"] = owner
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		if !client.IsConflict(err) || attempt == 4 {
			return err
		}
	}
}

// settings is the object the examples seed.
func settings() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "web"},
		Data:       map[string]string{"mode": "fast"},
	}
}

// A unit test seeds the objects the code under test expects, runs it
// against the fake client, and reads the result back. In a test, write
//
//	f := fake.New(t, settings())
//
// which fails the test on a bad seed and closes the Fake when the test
// ends; Start is the same outside of tests. The seed was created through
// the server: its namespace was created for it, and it got a uid (the
// fifth after the four system namespaces and "web") and a resourceVersion.
func Example() {
	ctx := context.Background()
	f, err := fake.Start(ctx, fake.Options{}, settings())
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	if err := claim(ctx, f.Client(), "web", "team-a"); err != nil {
		log.Fatal(err)
	}

	cm, err := client.For[corev1.ConfigMap](f.Client()).Namespace("web").Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("owner:", cm.Data["owner"], "mode:", cm.Data["mode"])
	fmt.Println("uid:", cm.UID)
	// Output:
	// owner: team-a mode: fast
	// uid: 00000000-0000-0000-0000-000000000011
}

// A reactor makes the first update fail with 409 Conflict, as if another
// client had changed the object in between; the recorded actions show that
// the code under test read the object again and retried.
func ExampleFake_PrependReactor() {
	ctx := context.Background()
	f, err := fake.Start(ctx, fake.Options{}, settings())
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	conflicts := 1 // the requests here are sequential; use sync/atomic otherwise
	f.PrependReactor("update", "configmaps", func(a fake.Action) (bool, any, error) {
		if conflicts == 0 {
			return false, nil, nil // on to the server
		}
		conflicts--
		return true, nil, client.NewStatusError(metav1.NewConflict(
			metav1.GroupResource{Resource: "configmaps"}, a.Name, errors.New(metav1.OptimisticLockErrorMsg)))
	})

	if err := claim(ctx, f.Client(), "web", "team-a"); err != nil {
		log.Fatal(err)
	}
	for _, a := range f.Actions() {
		fmt.Println(a)
	}
	// Output:
	// get configmaps web/settings
	// update configmaps web/settings
	// get configmaps web/settings
	// update configmaps web/settings
}

// Actions are the requests the client sent, for assertions on what the
// code under test did: here, the body of its update.
func ExampleFake_Actions() {
	ctx := context.Background()
	f, err := fake.Start(ctx, fake.Options{}, settings())
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	if err := claim(ctx, f.Client(), "web", "team-a"); err != nil {
		log.Fatal(err)
	}
	for _, a := range f.Actions() {
		if !a.Matches("update", "configmaps") {
			continue
		}
		var sent corev1.ConfigMap
		if err := a.Into(&sent); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: owner=%s resourceVersion=%s\n", a, sent.Data["owner"], sent.ResourceVersion)
	}
	f.ClearActions()
	fmt.Println("after ClearActions:", len(f.Actions()))
	// Output:
	// update configmaps web/settings: owner=team-a resourceVersion=11
	// after ClearActions: 0
}

// reconcileAll is a controller's reconcile in miniature: every ConfigMap of
// the namespace gets the label reconciled=true. It stops at the first error,
// which the controller would retry (a work queue requeues the key).
func reconcileAll(ctx context.Context, cms client.Resource[corev1.ConfigMap]) error {
	opts := metav1.ListOptions{Limit: 2}
	for {
		page, err := cms.List(ctx, opts)
		if err != nil {
			return err
		}
		for _, cm := range page.Items {
			if cm.Labels["reconciled"] == "true" {
				continue
			}
			if cm.Labels == nil {
				cm.Labels = map[string]string{}
			}
			cm.Labels["reconciled"] = "true"
			if _, err := cms.Update(ctx, &cm, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
		if page.Continue == "" {
			return nil
		}
		opts.Continue = page.Continue
	}
}

// A controller-style test with faults: the server answers conflicts, 500s,
// 429s and expired continue tokens, drawn from a seed, and the test proves
// that retrying the reconcile converges. The same seed gives the same faults
// on every run; log it, and replay a failure by setting it again.
func ExampleFaults() {
	ctx := context.Background()
	f, err := fake.Start(ctx, fake.Options{
		Namespace:  "web",
		MaxRetries: -1, // the client's own retries would hide the 429s
		Faults: fake.Faults{
			Seed:            1,
			Conflict:        0.3,
			InternalError:   0.1,
			TooManyRequests: 0.1,
			ExpiredContinue: 0.3,
		},
	},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "web"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "web"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "web"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "web"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "web"}},
	)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")

	attempts := 1
	for ; reconcileAll(ctx, cms) != nil; attempts++ {
		if attempts == 100 {
			log.Fatal("no convergence")
		}
	}
	f.StopFaults() // check the outcome without faults
	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "reconciled=true"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d of 5 reconciled after %d attempts\n", len(list.Items), attempts)
	counts := f.FaultCounts()
	for _, k := range []fake.FaultKind{fake.FaultConflict, fake.FaultInternalError, fake.FaultTooManyRequests, fake.FaultExpiredContinue} {
		fmt.Printf("%s: %d\n", k, counts[k])
	}
	// Output:
	// 5 of 5 reconciled after 9 attempts
	// Conflict: 2
	// InternalError: 2
	// TooManyRequests: 2
	// ExpiredContinue: 2
}
