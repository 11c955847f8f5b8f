package events_test

import (
	"context"
	"fmt"
	"log"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	eventsv1 "github.com/kapi-dev/kapi/api/events/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/events"
	"github.com/kapi-dev/kapi/fake"
)

// A controller makes one Recorder, runs it for as long as it runs, and
// records events about the objects it handles. Here the same event three
// times becomes one Event with a series of 3: the first repeat starts the
// series, the last is written when Run ends (else at the heartbeat).
func Example() {
	ctx := context.Background()
	web := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
	}
	f, err := fake.Start(ctx, fake.Options{}, web)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	c := f.Client()

	rec, err := events.New(c, events.Config{
		ReportingController: "example.com/web-controller",
		ReportingInstance:   "web-controller-0",
	})
	if err != nil {
		log.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- rec.Run(runCtx) }()

	for i := range 3 {
		rec.Eventf(web, nil, events.Warning, "BackOff", "Restart", "back-off restarting container %s (try %d)", "app", i+1)
	}
	stop()
	if err := <-done; err != nil {
		log.Fatal(err)
	}

	list, err := client.For[eventsv1.Event](c).Namespace("demo").List(ctx, metav1.ListOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, ev := range list.Items {
		fmt.Println(ev.Type, ev.Reason, ev.Action, ev.Regarding.Kind, ev.Regarding.Name)
		fmt.Println(ev.Note)
		fmt.Println("series:", ev.Series.Count)
	}
	fmt.Printf("%+v\n", rec.Counters())
	// Output:
	// Warning BackOff Restart Pod web
	// back-off restarting container app (try 1)
	// series: 3
	// {Emitted:1 Aggregated:2 SeriesUpdates:2 Dropped:0 Invalid:0 Failed:0 Retried:0}
}
