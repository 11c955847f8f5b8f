package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/golden"
	"go.uber.org/goleak"
)

// waitLimit bounds how long a test waits for something that should happen
// at once, so that a bug fails the test instead of hanging it.
const waitLimit = 10 * time.Second

// next returns the next event, failing the test if none comes.
func next[T any](t *testing.T, w Watcher[T]) Event[T] {
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

// waitClosed fails the test unless the watch's channel closes (after
// draining events).
func waitClosed[T any](t *testing.T, w Watcher[T]) {
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

func TestTypedWatch(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			s := newTestServer(t)
			ctx := testContext(t)
			pods := For[corev1.Pod](s.client(t, enc.contentType))
			list, err := pods.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
			if err != nil {
				t.Fatalf("Watch: %v", err)
			}
			defer w.Stop()
			if x := s.last(http.MethodGet); !strings.HasPrefix(x.RespContentType, enc.contentType) {
				t.Errorf("watch answered in %q", x.RespContentType)
			}

			created, err := pods.Create(ctx, newPod("w"), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			created.Labels["v"] = "2"
			updated, err := pods.Update(ctx, created, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := pods.Delete(ctx, "w", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			want := []struct {
				typ EventType
				rv  string
			}{{EventAdded, created.ResourceVersion}, {EventModified, updated.ResourceVersion},
				{EventModified, ""}, // marked for deletion: kube-apiserver writes a pod's deletionTimestamp first
				{EventDeleted, ""}}
			for _, w2 := range want {
				ev := next(t, w)
				if ev.Type != w2.typ || ev.Object == nil || ev.Object.Name != "w" || ev.Object.Kind != "Pod" {
					t.Fatalf("event %s %+v, want %s of pod w", ev.Type, ev.Object, w2.typ)
				}
				if w2.rv != "" && ev.Object.ResourceVersion != w2.rv {
					t.Errorf("%s at rv %s, want %s", ev.Type, ev.Object.ResourceVersion, w2.rv)
				}
				if ev.Object.Spec.Containers[0].Image != "nginx:1.27" {
					t.Errorf("%s object lost its spec: %+v", ev.Type, ev.Object.Spec)
				}
			}
		})
	}
}

// A streaming list (sendInitialEvents) ends its initial events with a
// bookmark annotated k8s.io/initial-events-end; idle watches get periodic
// bookmarks.
func TestWatchBookmarks(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			s := newTestServerWith(t, apiserver.Config{BookmarkInterval: 20 * time.Millisecond})
			ctx := testContext(t)
			pods := For[corev1.Pod](s.client(t, enc.contentType))
			for _, name := range []string{"a", "b"} {
				if _, err := pods.Create(ctx, newPod(name), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			w, err := pods.Watch(ctx, metav1.ListOptions{SendInitialEvents: new(true),
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
			if err != nil {
				t.Fatalf("Watch: %v", err)
			}
			defer w.Stop()
			var added []string
			for {
				ev := next(t, w)
				if ev.Type == EventAdded {
					added = append(added, ev.Object.Name)
					continue
				}
				if ev.Type != EventBookmark {
					t.Fatalf("event %s %v", ev.Type, ev.Err)
				}
				if ev.Object.Annotations[metav1.InitialEventsAnnotationKey] != "true" || ev.Object.ResourceVersion == "" {
					t.Errorf("initial-events-end bookmark %+v", ev.Object.ObjectMeta)
				}
				if ev.Object.Kind != "Pod" {
					t.Errorf("bookmark kind %q", ev.Object.Kind)
				}
				break
			}
			if !reflect.DeepEqual(added, []string{"a", "b"}) {
				t.Errorf("initial events %v", added)
			}
			// The next bookmark is a periodic one, once a write elsewhere
			// gives it a resourceVersion past what the watch has seen (as
			// kube-apiserver's).
			other, err := For[corev1.ConfigMap](s.client(t, enc.contentType)).Namespace("default").Create(ctx,
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if ev := next(t, w); ev.Type != EventBookmark || ev.Object.ResourceVersion != other.ResourceVersion {
				t.Errorf("periodic bookmark: %s %+v, want one at %s", ev.Type, ev.Object, other.ResourceVersion)
			}
		})
	}
}

// An ERROR event (golden 104: the watch's resourceVersion was compacted)
// becomes an EventError holding the Status, and the watch ends.
func TestWatchErrorEvent(t *testing.T) {
	x, err := golden.Load("104-watch-compacted-rv")
	if err != nil {
		t.Fatal(err)
	}
	rec := replay(t, x)
	c := newTestClient(t, &Config{Host: rec.srv.URL})
	w, err := For[corev1.ConfigMap](c).Namespace("").Watch(testContext(t), metav1.ListOptions{ResourceVersion: "5", TimeoutSeconds: new(int64(2))})
	if err != nil {
		t.Fatal(err)
	}
	ev := next(t, w)
	if ev.Type != EventError || !IsResourceExpired(ev.Err) || ev.Object != nil {
		t.Fatalf("event %s %v", ev.Type, ev.Err)
	}
	if ev.Err.Error() != "The resourceVersion for the provided watch is too old." {
		t.Errorf("message %q", ev.Err)
	}
	waitClosed(t, w)
	if got := rec.all()[0]; got.Path != "/api/v1/configmaps" || got.RawQuery != "resourceVersion=5&timeoutSeconds=2&watch=true" {
		t.Errorf("request %s?%s", got.Path, got.RawQuery)
	}
}

// The same in protobuf: the ERROR event's object is a Status envelope.
func TestWatchErrorEventProtobuf(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.Header().Set("Content-Type", codec.MediaTypeProtobufWatch)
		st := metav1.NewWatchExpired()
		b, _ := codec.MarshalProtobuf(metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, st)
		_ = codec.NewProtobufWatchEncoder(w).Encode(codec.EventError, b)
	})
	c := newTestClient(t, &Config{Host: rec.srv.URL, ContentType: codec.MediaTypeProtobuf})
	w, err := For[corev1.Pod](c).Watch(testContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != EventError || !IsResourceExpired(ev.Err) {
		t.Fatalf("event %s %v", ev.Type, ev.Err)
	}
	waitClosed(t, w)
}

// A stream that breaks inside an event is reported, then the watch ends; a
// frame that does not decode is reported the same way.
func TestWatchBrokenStream(t *testing.T) {
	cases := map[string]string{
		"truncated":      `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}}` + "\n" + `{"type":"ADDED","obj`,
		"bad object":     `{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":7}}}`,
		"unknown type":   `{"type":"SURPRISE","object":{"kind":"Pod"}}`,
		"not a Status":   `{"type":"ERROR","object":{"kind":"Pod"}}`,
		"not an event":   `[1,2,3]`,
		"clean end":      `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}}` + "\n",
		"empty response": ``,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, body)
			})
			c := newTestClient(t, &Config{Host: rec.srv.URL})
			w, err := For[corev1.Pod](c).Watch(testContext(t), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var evs []Event[corev1.Pod]
			for ev := range w.Events() {
				evs = append(evs, ev)
			}
			clean := name == "clean end" || name == "empty response"
			if clean {
				for _, ev := range evs {
					if ev.Type == EventError {
						t.Errorf("error on a clean end: %v", ev.Err)
					}
				}
				return
			}
			if name == "bad object" {
				// The frame is whole: the event reports the object, and the
				// watch is not ended by it.
				var de *DecodeError
				if len(evs) == 0 || evs[0].Type != EventAdded || evs[0].Object != nil || !errors.As(evs[0].Err, &de) {
					t.Fatalf("events %+v, want an ADDED event carrying a *DecodeError", evs)
				}
				return
			}
			if len(evs) == 0 || evs[len(evs)-1].Type != EventError || evs[len(evs)-1].Err == nil {
				t.Fatalf("events %+v, want an EventError last", evs)
			}
			var se *StatusError
			if errors.As(evs[len(evs)-1].Err, &se) {
				t.Errorf("a client-side failure reported as a server Status: %v", se)
			}
		})
	}
}

// watchConnServer is the reference server on a listener that reports when a
// connection closes.
type watchConnServer struct {
	*testServer
	closed chan net.Conn
}

func newWatchConnServer(t *testing.T) *watchConnServer {
	api, err := apiserver.New(apiserver.Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	s := &watchConnServer{testServer: &testServer{api: api}, closed: make(chan net.Conn, 64)}
	hs := httptest.NewUnstartedServer(api)
	hs.Config.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateClosed || st == http.StateHijacked {
			s.closed <- c
		}
	}
	hs.Start()
	s.http = hs
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		api.Close()
	})
	c := s.client(t, codec.MediaTypeJSON)
	if _, err := For[corev1.Namespace](c).Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "test"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return s
}

// Cancelling a watch's context, or stopping it, closes its connection at once
// and leaves no goroutine behind, on either side, even when nobody reads the
// events.
func TestWatchCancellationClosesConnection(t *testing.T) {
	stops := map[string]func(cancel context.CancelFunc, w Watcher[corev1.Pod]){
		"context": func(cancel context.CancelFunc, _ Watcher[corev1.Pod]) { cancel() },
		"Stop":    func(_ context.CancelFunc, w Watcher[corev1.Pod]) { w.Stop() },
	}
	for _, enc := range encodings {
		for how, stop := range stops {
			t.Run(enc.name+"/"+how, func(t *testing.T) {
				s := newWatchConnServer(t)
				// A fresh transport, so the watch has a connection of its own.
				tr := &http.Transport{}
				c := newTestClient(t, &Config{Host: s.http.URL, ContentType: enc.contentType, Transport: tr})
				pods := For[corev1.Pod](c)
				if _, err := pods.Create(testContext(t), newPod("a"), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				drainClosed(s.closed)
				baseline := goleak.IgnoreCurrent()

				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				w, err := pods.Watch(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if ev := next(t, w); ev.Type != EventAdded { // the stream is live
					t.Fatalf("first event %s", ev.Type)
				}
				// Events nobody reads: the watch goroutine blocks sending.
				if _, err := pods.Create(testContext(t), newPod("b"), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				stop(cancel, w)

				select {
				case <-w.(*streamWatcher[corev1.Pod]).Done():
				case <-time.After(waitLimit):
					t.Fatal("the watch goroutine did not exit")
				}
				if _, ok := <-w.ResultChan(); ok {
					// One event may have been sent before the stop; the
					// channel must be closed after it.
					if _, ok := <-w.ResultChan(); ok {
						t.Error("events after the stop")
					}
				}
				select {
				case <-s.closed:
				case <-time.After(waitLimit):
					t.Fatal("the server did not see the watch connection close")
				}
				// The create made while the watch held its connection left
				// another one idle in the pool; that is not the watch's.
				tr.CloseIdleConnections()
				// Retries with backoff for about a second: goroutines of
				// both ends (client reader, server handler, store watcher)
				// must be gone.
				goleak.VerifyNone(t, baseline)
			})
		}
	}
}

// drainClosed empties the channel of closed connections.
func drainClosed(ch chan net.Conn) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// Breaking out of Events stops the watch.
func TestWatchEventsIteratorStops(t *testing.T) {
	s := newTestServer(t)
	ctx := testContext(t)
	pods := For[corev1.Pod](s.client(t, codec.MediaTypeJSON))
	for _, name := range []string{"a", "b", "c"} {
		if _, err := pods.Create(ctx, newPod(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ev := range w.Events() {
		if ev.Type != EventAdded {
			t.Fatalf("event %s", ev.Type)
		}
		n++
		if n == 2 {
			break
		}
	}
	select {
	case <-w.(*streamWatcher[corev1.Pod]).Done():
	case <-time.After(waitLimit):
		t.Fatal("breaking out of Events did not stop the watch")
	}
}

// Stop may be called concurrently and repeatedly.
func TestWatchStopIdempotent(t *testing.T) {
	s := newTestServer(t)
	w, err := For[corev1.Pod](s.client(t, codec.MediaTypeJSON)).Watch(testContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(w.Stop)
	}
	wg.Wait()
	w.Stop()
	waitClosed(t, w)
}
