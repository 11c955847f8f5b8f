package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// EventType is the type of a watch event.
type EventType string

// Watch event types.
const (
	// EventAdded: the object was created, or, at the start of a watch
	// without a resourceVersion, exists.
	EventAdded EventType = codec.EventAdded
	// EventModified: the object changed.
	EventModified EventType = codec.EventModified
	// EventDeleted: the object was deleted; Object is its last state.
	EventDeleted EventType = codec.EventDeleted
	// EventBookmark: every change up to Object's resourceVersion has been
	// sent. Object carries only the resourceVersion (and, at the end of the
	// initial events of a streaming list, the annotation
	// metav1.InitialEventsAnnotationKey).
	EventBookmark EventType = codec.EventBookmark
	// EventError: the server reported an error (Err is a *StatusError; an
	// expired resourceVersion is IsResourceExpired), or the stream broke. The
	// watch ends after it.
	EventError EventType = codec.EventError
)

// Event is one watch event.
type Event[T any] struct {
	// Type says what happened.
	Type EventType
	// Object is the object the event is about; nil for EventError, and for
	// an event whose object could not be decoded.
	Object *T
	// Err is the error of an EventError, or a *DecodeError for an event of
	// another type whose object could not be decoded (the watch goes on).
	Err error
}

// Watcher delivers the events of one watch. The client's watches decode
// the response stream frame by frame in one goroutine the Watcher owns; it
// ends, and the channel closes, when the watch's context is done, on Stop,
// or when the stream ends. Reflectors and informers take any Watcher, so a
// test can script a server with NewWatcher.
type Watcher[T any] interface {
	// ResultChan returns the events. It is closed when the watch ends; a
	// clean end (the server's timeout, Stop, the context) sends no event, a
	// broken one sends an EventError first.
	ResultChan() <-chan Event[T]
	// Stop ends the watch and returns once it has ended. It may be called
	// more than once and from any goroutine.
	Stop()
	// Events returns the events as an iterator. Breaking out of the loop
	// stops the watch.
	//
	//	for ev := range w.Events() { … }
	Events() iter.Seq[Event[T]]
}

// NewWatcher returns a Watcher that delivers what is sent on events, for
// tests and adapters. The sender closes events to end the watch; Stop calls
// stop (if not nil) once, which should make the sender close events, and
// then waits for it to be closed (draining what is still sent).
func NewWatcher[T any](events <-chan Event[T], stop func()) Watcher[T] {
	return &chanWatcher[T]{events: events, stop: stop}
}

type chanWatcher[T any] struct {
	events <-chan Event[T]
	stop   func()
	once   sync.Once
}

func (w *chanWatcher[T]) ResultChan() <-chan Event[T] { return w.events }

func (w *chanWatcher[T]) Stop() {
	w.once.Do(func() {
		if w.stop != nil {
			w.stop()
		}
	})
	for range w.events {
	}
}

func (w *chanWatcher[T]) Events() iter.Seq[Event[T]] { return events(w) }

// events iterates over w's events, stopping w when the loop breaks.
func events[T any](w Watcher[T]) iter.Seq[Event[T]] {
	return func(yield func(Event[T]) bool) {
		for ev := range w.ResultChan() {
			if !yield(ev) {
				w.Stop()
				return
			}
		}
	}
}

// streamWatcher is the Watcher of a watch request: one goroutine decodes the
// response stream.
type streamWatcher[T any] struct {
	result chan Event[T]
	cancel context.CancelFunc
	done   chan struct{}
}

func (w *streamWatcher[T]) ResultChan() <-chan Event[T] { return w.result }

// Stop closes the connection at once and returns once the reading goroutine
// has exited.
func (w *streamWatcher[T]) Stop() {
	w.cancel()
	<-w.done
}

// Done is closed when the watch has ended and its goroutine exited.
func (w *streamWatcher[T]) Done() <-chan struct{} { return w.done }

func (w *streamWatcher[T]) Events() iter.Seq[Event[T]] { return events[T](w) }

// startWatch starts the goroutine that decodes the stream body (protobuf
// frames or JSON documents) with decode, until ctx is done or the stream
// ends. cancel cancels ctx.
func startWatch[T any](ctx context.Context, cancel context.CancelFunc, body io.ReadCloser, protobuf bool, decode func([]byte) (*T, error)) *streamWatcher[T] {
	w := &streamWatcher[T]{result: make(chan Event[T]), cancel: cancel, done: make(chan struct{})}
	// Close the body as soon as ctx is done, whatever the transport: a read
	// blocked on the network then returns at once. Closing twice is safe.
	var closeOnce sync.Once
	closeBody := func() { closeOnce.Do(func() { _ = body.Close() }) }
	stopAfter := context.AfterFunc(ctx, closeBody)
	go func() {
		defer close(w.done)
		defer close(w.result)
		defer cancel()
		defer closeBody()
		defer stopAfter()
		w.run(ctx, body, protobuf, decode)
	}()
	return w
}

func (w *streamWatcher[T]) run(ctx context.Context, body io.Reader, protobuf bool, decode func([]byte) (*T, error)) {
	var next func() (string, []byte, error)
	if protobuf {
		next = codec.NewProtobufWatchDecoder(body).Next
	} else {
		next = codec.NewJSONWatchDecoder(body).Next
	}
	for {
		typ, raw, err := next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return
			}
			w.send(ctx, Event[T]{Type: EventError, Err: fmt.Errorf("client: reading watch stream: %w", err)})
			return
		}
		ev := decodeEvent(EventType(typ), raw, protobuf, decode)
		// The server ends a watch after an ERROR event; a frame that does
		// not decode leaves the stream in doubt. Either way the watch is
		// over.
		if !w.send(ctx, ev) || ev.Type == EventError {
			return
		}
	}
}

// send delivers ev unless ctx is done first.
func (w *streamWatcher[T]) send(ctx context.Context, ev Event[T]) bool {
	select {
	case w.result <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

// decodeEvent turns one frame into an event.
func decodeEvent[T any](typ EventType, raw []byte, protobuf bool, decode func([]byte) (*T, error)) Event[T] {
	switch typ {
	case EventAdded, EventModified, EventDeleted, EventBookmark:
		obj, err := decode(raw)
		if err != nil {
			// The frame was read whole, so the stream goes on; the event
			// says which object could not be decoded.
			return Event[T]{Type: typ, Err: newDecodeError(typ, raw, protobuf, err)}
		}
		return Event[T]{Type: typ, Object: obj}
	case EventError:
		return Event[T]{Type: EventError, Err: watchStatusError(raw, protobuf)}
	}
	return Event[T]{Type: EventError, Err: fmt.Errorf("client: unknown watch event type %q", typ)}
}

// DecodeError is the Err of a watch event whose object could not be decoded
// into the client's type (for example a custom resource whose stored data does
// not match the Go struct). The watch goes on after it. The object's metadata
// is decoded on its own when possible, so that a cache can report the object
// and move its resourceVersion past it.
type DecodeError struct {
	Type            EventType
	Namespace, Name string
	ResourceVersion string
	Err             error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("client: decoding the object of a %s watch event (%s/%s at resourceVersion %s): %v",
		e.Type, e.Namespace, e.Name, e.ResourceVersion, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

func newDecodeError(typ EventType, raw []byte, protobuf bool, err error) *DecodeError {
	var meta metav1.PartialObjectMetadata
	if protobuf {
		_, _ = codec.UnmarshalProtobuf(raw, &meta)
	} else {
		_ = kjson.Unmarshal(raw, &meta)
	}
	return &DecodeError{Type: typ, Namespace: meta.Namespace, Name: meta.Name, ResourceVersion: meta.ResourceVersion, Err: err}
}

// watchStatusError decodes the Status of an ERROR event.
func watchStatusError(raw []byte, protobuf bool) error {
	st := &metav1.Status{}
	if protobuf {
		tm, err := codec.UnmarshalProtobuf(raw, st)
		if err != nil || tm.Kind != "Status" {
			return fmt.Errorf("client: watch ERROR event without a Status (%s)", bodySnippet(raw))
		}
		st.TypeMeta = tm
	} else if err := kjson.Unmarshal(raw, st); err != nil || st.Kind != "Status" {
		return fmt.Errorf("client: watch ERROR event without a Status: %s", bodySnippet(raw))
	}
	return &StatusError{ErrStatus: *st}
}
