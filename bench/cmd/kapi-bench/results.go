package main

import (
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

type syncKey struct {
	Resource string `json:"resource"`
	Format   string `json:"format"`
	List     string `json:"list"`
	N        int    `json:"n"`
}

func (k syncKey) String() string {
	return fmt.Sprintf("%s/%s/%s/n=%d", k.Resource, k.Format, k.List, k.N)
}

type watchKey struct {
	Resource string `json:"resource"`
	Format   string `json:"format"`
}

func (k watchKey) String() string { return k.Resource + "/" + k.Format }

type syncEntry struct {
	Key  syncKey               `json:"key"`
	Runs map[string][]*outcome `json:"runs"` // by side
}

type watchEntry struct {
	Key  watchKey                   `json:"key"`
	Runs map[string][]*watchOutcome `json:"runs"`
}

type failure struct {
	What, Side, Error string
}

// results are everything one invocation measured.
type results struct {
	Started, Finished time.Time
	Server            string
	Settings          map[string]string
	Libraries         map[string]string
	Sizes             map[string]objectSize
	Sync              []*syncEntry
	Watch             []*watchEntry
	Chart             []*syncEntry
	Failures          []failure
}

func (r *results) fill(o *options) {
	r.Settings = map[string]string{
		"go":          runtime.Version(),
		"cpu":         cpuModel(),
		"cores":       fmt.Sprint(runtime.NumCPU()),
		"n":           fmt.Sprint(o.n),
		"runs":        fmt.Sprint(o.runs),
		"pageSize":    fmt.Sprint(o.pageSize),
		"qps":         fmt.Sprint(o.qps),
		"burst":       fmt.Sprint(o.burst),
		"dropMF":      fmt.Sprint(o.dropMF),
		"metadata":    fmt.Sprint(o.metadata),
		"updates":     fmt.Sprint(o.updates),
		"writers":     fmt.Sprint(o.writers),
		"watchObjs":   fmt.Sprint(o.watchObjects),
		"watchRes":    strings.Join(o.watchResources, ","),
		"commandLine": "go run ./cmd/kapi-bench " + strings.Join(os.Args[1:], " "),
		"loadStart":   loadAvg(),
	}
	r.Libraries = map[string]string{}
}

// loadAvg is the 1, 5 and 15 minute load averages: other work on the
// machine makes wall-clock figures noisy (heap figures are not affected).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return runtime.GOARCH
}

func entry(list *[]*syncEntry, key syncKey) *syncEntry {
	for _, e := range *list {
		if e.Key == key {
			return e
		}
	}
	e := &syncEntry{Key: key, Runs: map[string][]*outcome{}}
	*list = append(*list, e)
	return e
}

func (r *results) addSync(key syncKey, side string, o *outcome) {
	e := entry(&r.Sync, key)
	e.Runs[side] = append(e.Runs[side], o)
	r.Libraries[side] = o.Library
}

func (r *results) addChart(key syncKey, side string, o *outcome) {
	e := entry(&r.Chart, key)
	e.Runs[side] = append(e.Runs[side], o)
	r.Libraries[side] = o.Library
}

func (r *results) addWatch(key watchKey, side string, o *watchOutcome) {
	for _, e := range r.Watch {
		if e.Key == key {
			e.Runs[side] = append(e.Runs[side], o)
			return
		}
	}
	r.Watch = append(r.Watch, &watchEntry{Key: key, Runs: map[string][]*watchOutcome{side: {o}}})
}

func (r *results) addFailure(what, side string, err error) {
	r.Failures = append(r.Failures, failure{What: what, Side: side, Error: err.Error()})
}

// median of the values f takes over runs (NaN-free; 0 for no runs).
func median[T any](runs []T, f func(T) float64) float64 {
	if len(runs) == 0 {
		return 0
	}
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = f(r)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// syncMetric is one row of the sync table.
type syncMetric struct {
	name   string
	unit   string
	f      func(*outcome) float64
	digits int
}

var syncMetrics = []syncMetric{
	{"time to synced (cache holds the list)", "ms", func(o *outcome) float64 { return o.SyncMillis }, 0},
	{"time until the handler saw every add", "ms", func(o *outcome) float64 { return o.HandlerMs }, 0},
	{"live heap after sync and forced GC", "MB", func(o *outcome) float64 { return mb(o.HeapAfter) }, 1},
	{"heap per cached object", "B", perObject, 0},
	{"peak RSS of the process", "MB", func(o *outcome) float64 { return float64(o.PeakRSSKiB) / 1024 }, 1},
	{"CPU time of the process (user+sys)", "s", func(o *outcome) float64 { return o.CPUSecs }, 2},
	{"allocated from start to synced", "MB", func(o *outcome) float64 { return mb(o.TotalAlloc) }, 0},
	{"GC cycles from start to synced", "", func(o *outcome) float64 { return float64(o.GCs) }, 0},
}

type watchMetric struct {
	name   string
	unit   string
	f      func(*watchOutcome) float64
	digits int
}

var watchMetrics = []watchMetric{
	{"events delivered per second", "/s", func(w *watchOutcome) float64 { return w.EventsPerSec }, 0},
	{"write ack → handler p50", "ms", func(w *watchOutcome) float64 { return w.P50Ms }, 2},
	{"write ack → handler p99", "ms", func(w *watchOutcome) float64 { return w.P99Ms }, 2},
	{"write ack → handler max", "ms", func(w *watchOutcome) float64 { return w.MaxMs }, 2},
	{"write sent → handler p50", "ms", func(w *watchOutcome) float64 { return w.SentP50Ms }, 2},
	{"write sent → handler p99", "ms", func(w *watchOutcome) float64 { return w.SentP99Ms }, 2},
	{"lost events (acknowledged, never delivered)", "", func(w *watchOutcome) float64 { return float64(w.Lost) }, 0},
	{"duplicate or unexpected events", "", func(w *watchOutcome) float64 { return float64(w.Duplicates + w.Unexpected) }, 0},
	{"peak RSS of the process", "MB", func(w *watchOutcome) float64 { return float64(w.PeakRSSKiB) / 1024 }, 1},
	{"CPU time of the process (user+sys)", "s", func(w *watchOutcome) float64 { return w.CPUSecs }, 2},
}

func num(v float64, digits int) string {
	s := fmt.Sprintf("%.*f", digits, v)
	// thousands separators for the integer part
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	out := b.String()
	if hasFrac {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

func ratio(k, c float64) string {
	if k < 0 || c < 0 {
		return "–" // latencies below zero (see the watch section): no meaningful ratio
	}
	if c == 0 {
		if k == 0 {
			return "–"
		}
		return "∞"
	}
	return fmt.Sprintf("%.2f", k/c)
}

// target is a goal on a ratio kapi/client-go.
type target struct {
	what  string
	limit float64
}

func syncTarget(key syncKey, metric string) (target, bool) {
	switch metric {
	case syncMetrics[0].name:
		if key.Format == "json" {
			return target{"≤ 0.50", 0.5}, true
		}
		return target{"≤ 0.80", 0.8}, true
	case syncMetrics[3].name, syncMetrics[4].name:
		return target{"≤ 0.60", 0.6}, true
	case syncMetrics[5].name: // not a target itself: the sync-time target measured in CPU, which other load on the machine hardly moves
		if key.Format == "json" {
			return target{"≤ 0.50 (proxy for sync time)", 0.5}, true
		}
		return target{"≤ 0.80 (proxy for sync time)", 0.8}, true
	}
	return target{}, false
}

func (r *results) markdown(o *options) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	s := r.Settings
	w("# kapi vs client-go: shared informer benchmark\n\n")
	w("Produced by `%s` (from `bench/`), %s, in %s.\n\n", s["commandLine"], r.Started.Format("2006-01-02 15:04 UTC"), r.Finished.Sub(r.Started).Round(time.Second))
	w("| setting | value |\n|---|---|\n")
	w("| server | %s |\n", r.Server)
	w("| machine | %s cores, %s; %s |\n", s["cores"], s["cpu"], s["go"])
	w("| load average (1, 5, 15 min) | %s at the start, %s at the end: other work on the machine makes wall-clock times noisy; heap and RSS figures are not affected, CPU times little |\n", s["loadStart"], s["loadEnd"])
	libs := slices.Sorted(maps.Keys(r.Libraries))
	for _, l := range libs {
		w("| library (%s) | %s |\n", l, r.Libraries[l])
	}
	w("| how each side runs | a child process of the harness per run and per library, linking only that library (so heap and peak RSS are its own); one shared informer of the typed kind from the library's informer factory, all namespaces of the seeded namespace only, resync off, one event handler |\n")
	w("| content type | the same on both sides per row: `application/json`, or `application/vnd.kubernetes.protobuf` (Accept: protobuf, then JSON) |\n")
	w("| compression | both sides use Go's default transport, which offers `Accept-Encoding: gzip`; %s |\n", r.compression())
	w("| initial list | paged: limit=%s with continue, resourceVersion=0, on both sides; stream: a watch with sendInitialEvents=true (kapi: `informer.FactoryConfig{StreamingList: true}`; client-go: `KUBE_FEATURE_WatchListClient=true`, and `=false` for paged, since the gate is on by default in client-go 1.35+) |\n", s["pageSize"])
	w("| client rate limit | QPS %s, burst %s on both sides (negative QPS: none) |\n", s["qps"], s["burst"])
	if s["metadata"] == "true" {
		w("| cache | metadata only, PartialObjectMetadata (kapi: `informer.ForMetadata[corev1.Pod]`; client-go: `metadatainformer.NewFilteredSharedInformerFactory(...).ForResource(gvr)`) |\n")
	}
	w("| managedFields | %s |\n", map[string]string{"true": "dropped on both sides (kapi: `informer.FactoryConfig{DropManagedFields: true}`, skipped while decoding; client-go: a transform, `informers.WithTransform`)", "false": "kept (the objects are cached as the server sends them)"}[s["dropMF"]])
	for _, res := range slices.Sorted(maps.Keys(r.Sizes)) {
		sz := r.Sizes[res]
		w("| one %s as stored | %s bytes JSON, %s bytes protobuf, %d managedFields entries (%s bytes of JSON) |\n", strings.TrimSuffix(res, "s"), num(float64(sz.JSON), 0), num(float64(sz.Protobuf), 0), sz.ManagedFieldsEntries, num(float64(sz.ManagedFieldsJSON), 0))
	}
	w("| runs | %s per scenario; figures are medians, ratios are median(kapi) / median(client-go); the sides run alternately first |\n", s["runs"])
	w("\n")

	if len(r.Sync) > 0 || len(r.Watch) > 0 {
		w("## Targets\n\n| scenario | measure | kapi/client-go | target | met |\n|---|---|---|---|---|\n")
		for _, e := range r.Sync {
			for _, m := range syncMetrics {
				t, ok := syncTarget(e.Key, m.name)
				if !ok {
					continue
				}
				k, c := median(e.Runs["kapi"], m.f), median(e.Runs["client-go"], m.f)
				met := "–"
				if c > 0 && k > 0 {
					met = map[bool]string{true: "yes", false: "**no**"}[k/c <= t.limit]
				}
				w("| sync %s, %s, %s, N=%s | %s | %s | %s | %s |\n", e.Key.Resource, e.Key.Format, e.Key.List, num(float64(e.Key.N), 0), m.name, ratio(k, c), t.what, met)
			}
		}
		for _, e := range r.Watch {
			lost := 0
			for _, runs := range e.Runs["kapi"] {
				lost += runs.Lost + runs.Duplicates + runs.Unexpected
			}
			w("| watch %s, %s | kapi lost, duplicate or unexpected events (all runs) | %d | 0 | %s |\n", e.Key.Resource, e.Key.Format, lost, map[bool]string{true: "yes", false: "**no**"}[lost == 0])
			k, c := median(e.Runs["kapi"], watchMetrics[2].f), median(e.Runs["client-go"], watchMetrics[2].f)
			met := "–"
			if c > 0 {
				met = map[bool]string{true: "yes", false: "**no**"}[k <= c]
			}
			w("| watch %s, %s | write ack → handler p99 | %s | ≤ 1.00 | %s |\n", e.Key.Resource, e.Key.Format, ratio(k, c), met)
		}
		w("\n")
	}

	if len(r.Sync) > 0 {
		w("## Initial sync\n\nN objects in one namespace; the informer watches that namespace. Time is from starting the informer factory to the informer's synced signal (kapi: `WaitForCacheSync`, channels; client-go: `HasSyncedChecker().Done()`, a channel, not the 100 ms poll of `WaitForCacheSync`). Heap is the live heap (`HeapAlloc`) after two forced GCs once the handler has seen every add; per object it is (heap after − heap before the informer started) / N.\n\n")
		w("| resource | content type | initial list | N | measure | kapi | client-go | kapi/client-go |\n|---|---|---|---|---|---|---|---|\n")
		for _, e := range r.Sync {
			for _, m := range syncMetrics {
				k, c := median(e.Runs["kapi"], m.f), median(e.Runs["client-go"], m.f)
				unit := ""
				if m.unit != "" {
					unit = " " + m.unit
				}
				w("| %s | %s | %s | %s | %s | %s%s | %s%s | %s |\n", e.Key.Resource, e.Key.Format, e.Key.List, num(float64(e.Key.N), 0), m.name, num(k, m.digits), unit, num(c, m.digits), unit, ratio(k, c))
			}
		}
		w("\n### Requests the server saw (last run)\n\n| resource | content type | initial list | side | lists (pages) | watches | response bytes | response content types | statuses |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, e := range r.Sync {
			for _, side := range sides {
				runs := e.Runs[side]
				if len(runs) == 0 || runs[len(runs)-1].Traffic == nil {
					continue
				}
				t := runs[len(runs)-1].Traffic
				w("| %s | %s | %s | %s | %d | %d | %s | %s | %s |\n", e.Key.Resource, e.Key.Format, e.Key.List, side, t.Lists, t.Watches, num(float64(t.Bytes), 0), counts(t.ContentTypes), countsInt(t.Statuses))
			}
		}
		w("\n")
	}

	if len(r.Watch) > 0 {
		w("## Watch delivery\n\n%s updates by %s concurrent writers (the harness, kapi client, JSON; each writer updates its own objects in turn, one annotation per update) to %s objects the informer watches, after its initial sync. Latency is from the writer receiving the server's acknowledgement to the handler being called for that resourceVersion (wall clocks of two processes on one machine; the event can reach the handler before the writer has read its response, so small values can be negative). Events/s: events delivered / (last delivery − first write sent); the writers set the pace, so this is mostly the server's write throughput. Every acknowledged (name, resourceVersion) is checked to reach the handler exactly once.\n\n", s["updates"], s["writers"], s["watchObjs"])
		w("| resource | content type | measure | kapi | client-go | kapi/client-go |\n|---|---|---|---|---|---|\n")
		for _, e := range r.Watch {
			for _, m := range watchMetrics {
				k, c := median(e.Runs["kapi"], m.f), median(e.Runs["client-go"], m.f)
				unit := ""
				if m.unit != "" {
					unit = " " + m.unit
				}
				w("| %s | %s | %s | %s%s | %s%s | %s |\n", e.Key.Resource, e.Key.Format, m.name, num(k, m.digits), unit, num(c, m.digits), unit, ratio(k, c))
			}
		}
		w("\n")
	}

	if len(r.Chart) > 0 {
		w("## Against N (chart data)\n\n| resource | content type | N | kapi sync ms | client-go sync ms | kapi heap MB | client-go heap MB | kapi peak RSS MB | client-go peak RSS MB |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, e := range r.Chart {
			k, c := e.Runs["kapi"], e.Runs["client-go"]
			w("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", e.Key.Resource, e.Key.Format, num(float64(e.Key.N), 0),
				num(median(k, syncMetrics[0].f), 0), num(median(c, syncMetrics[0].f), 0),
				num(median(k, syncMetrics[2].f), 1), num(median(c, syncMetrics[2].f), 1),
				num(median(k, syncMetrics[4].f), 1), num(median(c, syncMetrics[4].f), 1))
		}
		w("\n")
	}

	if len(r.Failures) > 0 {
		w("## Failures\n\n| run | side | error |\n|---|---|---|\n")
		for _, f := range r.Failures {
			w("| %s | %s | %s |\n", f.What, f.Side, strings.ReplaceAll(strings.ReplaceAll(f.Error, "\n", " "), "|", "\\|"))
		}
		w("\n")
	}
	return b.String()
}

// compression says what the server answered, from the traffic counted.
func (r *results) compression() string {
	enc := map[string]int{}
	for _, e := range r.Sync {
		for _, runs := range e.Runs {
			for _, o := range runs {
				if o.Traffic != nil {
					for k, v := range o.Traffic.Encodings {
						enc[k] += v
					}
				}
			}
		}
	}
	if len(enc) == 0 {
		return "the server decides"
	}
	return "the server's responses were Content-Encoding " + counts(enc)
}

func counts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("`%s` ×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func countsInt(m map[int]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d ×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
