package events

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/workqueue"
)

// The recorder's timing and sizes. See the package documentation for how
// series are written.
const (
	// DefaultBufferSize is the number of events Eventf queues for the
	// writer before it drops them (client-go's tools/events queues 1000).
	DefaultBufferSize = 1000
	// DefaultFlushTimeout is how long Run, once its context is done, keeps
	// writing the events still queued and the series not yet written.
	DefaultFlushTimeout = 10 * time.Second
	// SeriesHeartbeat is how often, at most, the recorder writes the count
	// of a series that keeps growing: repeats between two writes are
	// counted in memory and written together.
	SeriesHeartbeat = 30 * time.Second
	// IsomorphismWindow is how long after its last observation a repeat
	// still joins an Event's series (client-go's finishTime, 6 minutes).
	// A repeat later than that creates a new Event.
	IsomorphismWindow = 6 * time.Minute
	// DefaultMaxRetries is the default of Config.MaxRetries.
	DefaultMaxRetries = 5
	// RetryBackoff is the wait before the first retry of a failed write;
	// each later retry of the same write waits twice as long as the one
	// before, up to MaxRetryBackoff: with the default MaxRetries, a write
	// is given up 31 seconds after it first failed.
	RetryBackoff = time.Second
	// MaxRetryBackoff caps the wait between two attempts of a write.
	MaxRetryBackoff = 30 * time.Second
	// maxSeries bounds the events remembered for aggregation; events past
	// it are still written, each as an Event of its own.
	maxSeries = 4096
)

// The limits kube-apiserver applies to new-style Events.
const (
	// MaxNoteLength is the longest note, in bytes, the server accepts;
	// Eventf truncates longer notes to it.
	MaxNoteLength = 1024
	// maxFieldLength is the longest reason, action or reportingInstance.
	maxFieldLength = 128
)

// Config configures a Recorder. Its zero value is not usable:
// ReportingController is required; every other field has a default.
type Config struct {
	// ReportingController names the controller that emits the events, as
	// a qualified name such as "example.com/my-controller" (required). It
	// is the Event's reportingController, and the source component of
	// core/v1 Events.
	ReportingController string
	// ReportingInstance names this replica of the controller (default:
	// the host name, or ReportingController if it cannot be read). At
	// most 128 bytes.
	ReportingInstance string
	// BufferSize is how many events may wait for the writer (default
	// DefaultBufferSize). Eventf drops an event rather than wait when the
	// buffer is full, and counts it in Counters.Dropped.
	BufferSize int
	// FlushTimeout is how long Run keeps writing once its context is done:
	// the write in flight, the queued events and the series counts not yet
	// written (default DefaultFlushTimeout; negative: drop the queue at
	// once). The queued events it could not write are counted in
	// Counters.Dropped.
	FlushTimeout time.Duration
	// MaxRetries is how many times a write (the create of an Event, the
	// update of a series) that failed with an error that may pass (429,
	// 500, 503, 504, a server timeout, a failed connection) is made again,
	// after RetryBackoff doubling up to MaxRetryBackoff (default 0:
	// DefaultMaxRetries, 5; negative: never). client-go tries an event 12
	// times, 10 seconds apart; kapi gives up sooner, as the writer retries
	// in line and the events queued meanwhile wait (or, when the buffer is
	// full, are dropped, as Eventf never waits). Retries are counted in
	// Counters.Retried, writes given up in Counters.Failed.
	MaxRetries int
	// Clock is the source of event times, of the series heartbeat and of
	// the retries' backoff (default workqueue.RealClock). Tests inject a
	// clocktest.FakeClock.
	Clock workqueue.Clock
	// Logger receives the recorder's logs: invalid events, failed writes,
	// the switch to core/v1 (default nil: slog.Default()).
	Logger *slog.Logger
}

// withDefaults returns cfg with its defaults filled in, or an error for a
// setting the server would refuse.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.ReportingController == "" {
		return cfg, errors.New("events: Config.ReportingController is required")
	}
	if !isQualifiedName(cfg.ReportingController) {
		return cfg, fmt.Errorf("events: Config.ReportingController %q is not a qualified name (such as example.com/my-controller)", cfg.ReportingController)
	}
	if cfg.ReportingInstance == "" {
		cfg.ReportingInstance = cfg.ReportingController
		if h, err := os.Hostname(); err == nil && h != "" {
			cfg.ReportingInstance = h
		}
	}
	if len(cfg.ReportingInstance) > maxFieldLength {
		return cfg, fmt.Errorf("events: Config.ReportingInstance is longer than %d bytes", maxFieldLength)
	}
	if cfg.BufferSize <= 0 {
		cfg.BufferSize = DefaultBufferSize
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	} else if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.FlushTimeout == 0 {
		cfg.FlushTimeout = DefaultFlushTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = workqueue.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg, nil
}

var (
	qualifiedNamePart = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	dnsSubdomain      = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// isQualifiedName reports whether s is a Kubernetes qualified name: an
// optional DNS subdomain prefix and a slash, then a name of at most 63
// characters, as the server requires of reportingController.
func isQualifiedName(s string) bool {
	name := s
	if prefix, rest, ok := strings.Cut(s, "/"); ok {
		if prefix == "" || len(prefix) > 253 || !dnsSubdomain.MatchString(prefix) {
			return false
		}
		name = rest
	}
	return name != "" && len(name) <= 63 && qualifiedNamePart.MatchString(name)
}
