// Package sidekit is what the two side programs of kapi-bench share: their
// flags, the result they print, and the process measurements (heap, peak
// RSS). It imports neither kapi nor client-go, so that each side binary
// links only its own library and neither pays for the other's
// initialisation (client-go's scheme registration alone is ~16 MB of RSS).
package sidekit

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Args are the flags every side program takes. The harness passes the same
// values to both sides.
type Args struct {
	Server            string // base URL of the server (in-process reference server)
	Kubeconfig        string // or a kubeconfig
	Resource          string // "pods" or "configmaps"
	Namespace         string
	Format            string // "json" or "protobuf"
	List              string // "paged" or "stream"
	PageSize          int64
	QPS               float64
	Burst             int
	DropManagedFields bool
	Metadata          bool   // cache metadata only (PartialObjectMetadata)
	Mode              string // "sync" or "watch"
	Expect            int    // objects the initial list holds (sync) / updates to receive (watch)
	Timeout           time.Duration
}

// UserAgentPrefix starts the User-Agent of both sides; the harness's server
// middleware counts requests by it.
const UserAgentPrefix = "kapi-bench-side/"

// MediaType returns the content type the side asks for.
func (a *Args) MediaType() string {
	if a.Format == "protobuf" {
		return "application/vnd.kubernetes.protobuf"
	}
	return "application/json"
}

// Register defines the flags on fs.
func (a *Args) Register(fs *flag.FlagSet) {
	fs.StringVar(&a.Server, "server", "", "server base URL")
	fs.StringVar(&a.Kubeconfig, "kubeconfig", "", "kubeconfig (instead of -server)")
	fs.StringVar(&a.Resource, "resource", "configmaps", "pods or configmaps")
	fs.StringVar(&a.Namespace, "namespace", "", "namespace to inform on")
	fs.StringVar(&a.Format, "format", "json", "json or protobuf")
	fs.StringVar(&a.List, "list", "paged", "paged or stream (sendInitialEvents watch-list)")
	fs.Int64Var(&a.PageSize, "page-size", 500, "list page size")
	fs.Float64Var(&a.QPS, "qps", -1, "client QPS (negative: unlimited)")
	fs.IntVar(&a.Burst, "burst", 100, "client burst")
	fs.BoolVar(&a.DropManagedFields, "drop-managed-fields", false, "transform dropping metadata.managedFields")
	fs.BoolVar(&a.Metadata, "metadata", false, "a metadata-only informer (PartialObjectMetadata) instead of the typed one")
	fs.StringVar(&a.Mode, "mode", "sync", "sync or watch")
	fs.IntVar(&a.Expect, "expect", 0, "objects expected in the cache (sync) or updates expected (watch)")
	fs.DurationVar(&a.Timeout, "timeout", 5*time.Minute, "give up after this long")
}

// Flags renders a as command-line flags for a side program.
func (a *Args) Flags() []string {
	return []string{
		"-server=" + a.Server, "-kubeconfig=" + a.Kubeconfig, "-resource=" + a.Resource,
		"-namespace=" + a.Namespace, "-format=" + a.Format, "-list=" + a.List,
		"-page-size=" + strconv.FormatInt(a.PageSize, 10),
		"-qps=" + strconv.FormatFloat(a.QPS, 'g', -1, 64), "-burst=" + strconv.Itoa(a.Burst),
		"-drop-managed-fields=" + strconv.FormatBool(a.DropManagedFields),
		"-metadata=" + strconv.FormatBool(a.Metadata),
		"-mode=" + a.Mode, "-expect=" + strconv.Itoa(a.Expect), "-timeout=" + a.Timeout.String(),
	}
}

// Event is one update a watch-mode side's handler received.
type Event struct {
	Name string `json:"n"`
	RV   string `json:"rv"`
	At   int64  `json:"t"` // wall clock, Unix nanoseconds
}

// Result is what a side prints (one JSON line after ResultPrefix).
type Result struct {
	Side       string  `json:"side"`
	Library    string  `json:"library"` // module and version
	Objects    int     `json:"objects"`
	SyncMillis float64 `json:"syncMs"`    // Start → informer synced (cache holds the list)
	HandlerMs  float64 `json:"handlerMs"` // Start → handler has seen every initial add
	HeapBase   uint64  `json:"heapBase"`  // live heap before the informer started (after GC)
	HeapAfter  uint64  `json:"heapAfter"` // live heap after sync and a forced GC
	HeapInuse  uint64  `json:"heapInuse"` // runtime HeapInuse after the forced GC
	PeakRSSKiB uint64  `json:"peakRssKiB"`
	TotalAlloc uint64  `json:"totalAlloc"` // bytes allocated from Start to sync
	Mallocs    uint64  `json:"mallocs"`
	GCs        uint32  `json:"gcs"`
	Events     []Event `json:"events,omitempty"`
	Duplicates int     `json:"duplicates"`
	ReadyAt    int64   `json:"readyAt"`
	Error      string  `json:"error,omitempty"`
}

// ResultPrefix starts the result line on a side's stdout; ReadyLine tells
// the harness that a watch-mode side has synced and is waiting for updates.
const (
	ResultPrefix = "RESULT "
	ReadyLine    = "READY"
	StartLine    = "START" // the harness's answer: writes are about to start
	DoneLine     = "DONE"  // the harness's last line: every write was acknowledged
)

// LiveHeap forces two collections and returns the live heap and the heap
// in use.
func LiveHeap() (alloc, inuse uint64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.HeapInuse
}

// Alloc returns the process's cumulative allocation figures.
func Alloc() (total, mallocs uint64, gcs uint32) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc, m.Mallocs, m.NumGC
}

// PeakRSSKiB reads VmHWM, the peak resident set size, from /proc/self/status.
func PeakRSSKiB() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// Emit prints r as the result line.
func Emit(w io.Writer, r *Result) {
	b, _ := json.Marshal(r)
	fmt.Fprintf(w, "%s%s\n", ResultPrefix, b)
}

// Fail prints a result carrying err and exits non-zero.
func Fail(side string, err error) {
	Emit(os.Stdout, &Result{Side: side, Error: err.Error()})
	os.Exit(1)
}

// Recorder collects a watch-mode side's update events. Handlers of both
// libraries call Record from one goroutine each; Wait returns once want
// distinct (name, resourceVersion) pairs have arrived.
type Recorder struct {
	mu     sync.Mutex
	seen   map[string]struct{}
	events []Event
	dups   int
	want   int
	done   chan struct{}
}

// NewRecorder makes a recorder waiting for want events.
func NewRecorder(want int) *Recorder {
	return &Recorder{seen: make(map[string]struct{}, want), events: make([]Event, 0, want), want: want, done: make(chan struct{})}
}

// Record notes that the update of name to resourceVersion rv arrived now.
func (r *Recorder) Record(name, rv string) {
	at := time.Now().UnixNano()
	r.mu.Lock()
	defer r.mu.Unlock()
	k := name + "@" + rv
	if _, dup := r.seen[k]; dup {
		r.dups++
		return
	}
	r.seen[k] = struct{}{}
	r.events = append(r.events, Event{Name: name, RV: rv, At: at})
	if len(r.events) == r.want {
		close(r.done)
	}
}

// Done is closed when every expected event has arrived.
func (r *Recorder) Done() <-chan struct{} { return r.done }

// Events returns what arrived so far and the number of duplicates.
func (r *Recorder) Events() ([]Event, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...), r.dups
}

// WatchProtocol runs the watch-mode conversation with the harness after the
// side's informer has synced: print READY, wait for DONE on stdin (every
// write acknowledged), then wait until rec has every event or grace has
// passed since DONE. It returns the error of a missing event count.
func WatchProtocol(rec *Recorder, grace time.Duration) error {
	fmt.Println(ReadyLine)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == DoneLine {
			break
		}
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-rec.Done():
		return nil
	case <-t.C:
		got, _ := rec.Events()
		return errors.New("watch: " + strconv.Itoa(len(got)) + " of " + strconv.Itoa(rec.want) + " updates arrived within " + grace.String() + " of the last write")
	}
}
