// Package events records Kubernetes Events about objects, as client-go's
// k8s.io/client-go/tools/events does: events.k8s.io/v1 Events, repeats
// folded into series, and core/v1 Events on servers without
// events.k8s.io/v1.
//
// # Recording
//
// A [Recorder] is made by [New] from a client and a [Config], whose only
// required field is ReportingController. [Recorder.Run] owns the one
// goroutine that writes Events; [Recorder.Eventf] may be called from any
// goroutine, before or while Run runs:
//
//	rec, err := events.New(c, events.Config{ReportingController: "example.com/my-controller"})
//	…
//	go rec.Run(ctx)
//	rec.Eventf(pod, nil, events.Warning, "FailedMount", "Mount", "volume %s not found", name)
//
// An Event is created in the namespace of the object it is about (regarding),
// or in "default" for a cluster-scoped object, and named as client-go names
// them: the object's name, a dot, and the event time in hexadecimal
// nanoseconds (made unique: with a clock that has not moved since the last
// Event, the recorder counts on from the last name). regarding and related are referred to by kind, apiVersion,
// namespace, name, uid and resourceVersion; the kind and apiVersion come
// from the object's TypeMeta, or from the client's scheme when it is empty
// (as it is on objects read with a typed client).
//
// # Never blocking
//
// Eventf builds the Event and puts it in a buffer of Config.BufferSize
// (default [DefaultBufferSize]) for Run; when the buffer is full it drops the
// event rather than wait or grow. [Recorder.Counters] counts what was
// emitted, aggregated, dropped, refused as invalid and failed, for logs or a
// metrics adapter.
//
// Eventf refuses, counts and logs what the server would refuse: a type other
// than [Normal] or [Warning], an empty or longer than 128 bytes reason or
// action, a regarding object without name or known kind. A note longer
// than [MaxNoteLength] bytes is cut.
//
// # Retries
//
// A write (an Event's create, a series' update) that fails with an error
// that may pass, a 429, 500, 503 or 504 answer, a server timeout or a
// failed connection, is made again up to Config.MaxRetries times (default
// 5), after a backoff on Config.Clock of [RetryBackoff] (1s) doubling up to
// [MaxRetryBackoff] (30s): a write is given up 31 seconds after it first
// failed. The kapi client never repeats a POST or a PATCH itself; the
// recorder may, as an Event's name is unique (AlreadyExists on a retry means
// an earlier attempt landed) and a series' update is idempotent. What the
// server refuses (invalid, forbidden, a missing namespace) is not retried.
// Retries are counted in Counters.Retried; writes that failed, after their
// retries, in Counters.Failed, and logged. The writer retries in line:
// events queued meanwhile wait, and Eventf, which never waits, drops those
// that do not fit the buffer. Once Run's context is done, a failed write is
// retried once more, at once, within FlushTimeout.
//
// # Series
//
// Events with the same regarding and related objects (whatever their
// resourceVersion), type, reason and action are repeats. A repeat within
// [IsomorphismWindow] (6 minutes, client-go's) of the last one does not
// create an Event: it is added to the series of the first. The first repeat
// is written at once (series.count 2 and lastObservedTime); later repeats
// are counted in memory and written together at the next heartbeat, every
// [SeriesHeartbeat] (30 seconds), so a hot loop emitting an event costs at
// most one write per series every 30 seconds. client-go writes a growing
// series every 30 minutes and when it ends (6 minutes idle); kapi's counts
// are at most 30 seconds old. The series keeps its first note. If the Event
// is gone (Events expire on the server), it is created again with its
// series. Up to 4096 series are remembered; events past that are written
// each as an Event of their own.
//
// # core/v1 fallback
//
// When a create through events.k8s.io/v1 answers 404 (and not because the
// namespace is missing), the server does not serve the API: the recorder
// writes this and every later Event as an old-style core/v1 Event, with
// involvedObject, source (ReportingController and ReportingInstance), count,
// firstTimestamp and lastTimestamp, and writes series as count and
// lastTimestamp.
//
// # Stopping
//
// When Run's context is done, Eventf stops queuing (later calls are counted
// as dropped) and Run writes what is still queued and the series counts not
// yet written, for at most Config.FlushTimeout, counts what it could not
// write as dropped, logs the counters and returns.
//
// # Time and testing
//
// Event times and the heartbeat come from Config.Clock, a workqueue.Clock;
// tests pass a clocktest.FakeClock and step it to cross the heartbeat and
// the window. The fake package serves both Event APIs; a reactor that
// answers 404 for events.k8s.io simulates an old server.
package events
