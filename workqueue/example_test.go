package workqueue_test

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/workqueue"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

// A controller loop: event handlers add object keys; workers take a key,
// reconcile it, and on failure requeue it with backoff until it succeeds or
// has failed too often.
func Example() {
	queue := workqueue.NewRateLimiting(
		workqueue.NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second),
		workqueue.Config{})

	// reconcile fails twice for default/web, then succeeds; converged is
	// closed once it does.
	var (
		attempts  = map[string]int{} // used by the single worker only
		converged = make(chan struct{})
	)
	reconcile := func(key string) error {
		attempts[key]++
		if key != "default/web" {
			return nil
		}
		if attempts[key] <= 2 {
			return errors.New("service not ready")
		}
		close(converged)
		return nil
	}

	const maxRetries = 5
	// processNext handles one key; it returns false when the queue is shut
	// down and the worker should stop.
	processNext := func() bool {
		key, shutdown := queue.Get()
		if shutdown {
			return false
		}
		defer queue.Done(key)
		switch err := reconcile(key); {
		case err == nil:
			queue.Forget(key)
			fmt.Println("synced", key)
		case queue.NumRequeues(key) < maxRetries:
			fmt.Printf("retrying %s: %v\n", key, err)
			queue.AddRateLimited(key)
		default:
			queue.Forget(key)
			fmt.Printf("dropping %s: %v\n", key, err)
		}
		return true
	}

	// What an informer's event handlers would do.
	queue.Add("default/db")
	queue.Add("default/web")
	queue.Add("default/db") // already queued: processed once

	var workers sync.WaitGroup
	workers.Go(func() { // one worker keeps the output in order
		for processNext() {
		}
	})

	select {
	case <-converged:
	case <-time.After(10 * time.Second):
		fmt.Println("default/web has not converged")
	}
	queue.ShutDownWithDrain() // let the in-flight reconcile finish
	workers.Wait()
	// Output:
	// synced default/db
	// retrying default/web: service not ready
	// retrying default/web: service not ready
	// synced default/web
}

// Items added while being processed are processed again once Done is
// called, never by two workers at once.
func ExampleNew() {
	q := workqueue.New[string](workqueue.Config{})
	defer q.ShutDown()

	q.Add("a")
	q.Add("b")
	q.Add("a") // still pending: ignored

	item, _ := q.Get() // a, now being processed
	q.Add(item)        // marked pending, but not handed out yet
	fmt.Println("got", item, "queued", q.Len())

	q.Done(item) // a is queued again, behind b
	for q.Len() > 0 {
		item, _ := q.Get()
		fmt.Println("got", item)
		q.Done(item)
	}
	// Output:
	// got a queued 1
	// got b
	// got a
}

// A fake clock makes delays elapse on command, so tests of retry timing need
// no sleeps.
func ExampleNewDelaying() {
	clock := clocktest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	q := workqueue.NewDelaying[string](workqueue.Config{Clock: clock})
	defer q.ShutDown()

	q.AddAfter("later", 2*time.Second)
	q.AddAfter("sooner", time.Second)
	q.AddAfter("later", time.Minute) // the earlier time is kept

	// Should an item never come, ShutDown makes Get return rather than
	// block forever.
	guard := time.AfterFunc(10*time.Second, q.ShutDown)
	defer guard.Stop()

	clock.Step(2 * time.Second) // both are due now
	for range 2 {
		item, shutdown := q.Get()
		if shutdown {
			fmt.Println("no item after 10s")
			break
		}
		fmt.Println(item)
		q.Done(item)
	}
	// Output:
	// sooner
	// later
}

func ExampleNewItemExponentialFailureRateLimiter() {
	r := workqueue.NewItemExponentialFailureRateLimiter[string](5*time.Millisecond, 30*time.Millisecond)
	for range 5 {
		fmt.Print(r.When("default/web"), " ")
	}
	fmt.Println("failures:", r.NumRequeues("default/web"))

	r.Forget("default/web")
	fmt.Println(r.When("default/web"))
	// Output:
	// 5ms 10ms 20ms 30ms 30ms failures: 5
	// 5ms
}

// The defaults of client-go controllers, with a custom per-item backoff:
// the larger delay of the two limiters wins.
func ExampleNewMaxOfRateLimiter() {
	r := workqueue.NewMaxOfRateLimiter(
		workqueue.NewItemExponentialFailureRateLimiter[string](100*time.Millisecond, time.Minute),
		workqueue.DefaultControllerRateLimiter[string](),
	)
	fmt.Println(r.When("default/web"), r.When("default/web"))
	// Output:
	// 100ms 200ms
}
