// Command kapi-bench measures what a shared informer costs with kapi and
// with client-go, doing the same work against the same server, and prints
// one table with both figures and their ratio.
//
// It starts kapi's reference server in-process on a loopback port (or uses
// the cluster of -kubeconfig), seeds it through the API, and for every
// scenario runs each library's side program as a child process, so that
// each side's heap and peak RSS are its own:
//
//   - sync: an informer's initial sync of N objects (ConfigMaps with 1 KiB
//     of data, or pods of ~8 KB as stored, with managedFields), with paged
//     lists (limit 500) or a streaming list (sendInitialEvents watch-list),
//     in JSON or protobuf: time to synced, time until the handler saw every
//     add, live heap after a forced GC, bytes per cached object, peak RSS,
//     CPU time;
//   - watch: M updates from W concurrent writers to objects the informer
//     watches: events/s and write-ack → handler latency (p50, p99), every
//     acknowledged write checked to reach the handler exactly once.
//
// Run it from the bench module:
//
//	cd bench && go run ./cmd/kapi-bench -n 10000 -runs 3 -o results/results.md
//
// See bench/README.md for every flag and the latest results.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/bench/internal/sidekit"
	"github.com/kapi-dev/kapi/client"
)

type options struct {
	kubeconfig     string
	n              int
	runs           int
	scenarios      []string
	resources      []string
	watchResources []string
	formats        []string
	lists          []string
	pageSize       int64
	qps            float64
	burst          int
	dropMF         bool
	metadata       bool
	updates        int
	writers        int
	watchObjects   int
	out            string
	raw            string
	chart          string
	chartN         []int
	chartRes       string
	chartFormat    string
	chartRuns      int
	sideDir        string
	fromRaw        string
	seedWorkers    int
	keep           bool
	verbose        bool
}

func main() {
	var o options
	var scen, res, watchRes, formats, lists, chartN string
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "benchmark against this cluster instead of an in-process kapi reference server")
	flag.IntVar(&o.n, "n", 10000, "objects to seed and sync")
	flag.IntVar(&o.runs, "runs", 1, "runs of every scenario; the table shows medians")
	flag.StringVar(&scen, "scenarios", "sync,watch", "scenarios to run: sync, watch")
	flag.StringVar(&res, "resources", "pods,configmaps", "resources: pods, configmaps")
	flag.StringVar(&watchRes, "watch-resources", "configmaps", "resources of the watch scenario (pod updates are ~20× slower on the reference server: its managedFields work)")
	flag.StringVar(&formats, "formats", "json,protobuf", "content types: json, protobuf")
	flag.StringVar(&lists, "lists", "paged,stream", "initial list: paged (limit/continue) and/or stream (sendInitialEvents watch-list)")
	flag.Int64Var(&o.pageSize, "page-size", 500, "list page size (client-go's informers list in pages of 500; kapi's take FactoryConfig.PageSize)")
	flag.Float64Var(&o.qps, "qps", -1, "client QPS of both sides (negative: no client-side rate limit)")
	flag.IntVar(&o.burst, "burst", 100, "client burst of both sides")
	flag.BoolVar(&o.dropMF, "drop-managed-fields", false, "both sides drop metadata.managedFields (kapi while decoding, client-go with a transform)")
	flag.BoolVar(&o.metadata, "metadata", false, "both sides cache metadata only: kapi's informer.ForMetadata, client-go's metadatainformer (which speaks protobuf only: use with -formats protobuf)")
	flag.IntVar(&o.updates, "watch-updates", 10000, "watch scenario: updates to make (M)")
	flag.IntVar(&o.writers, "watch-writers", 8, "watch scenario: concurrent writers (W)")
	flag.IntVar(&o.watchObjects, "watch-objects", 100, "watch scenario: objects the writers update")
	flag.StringVar(&o.out, "o", "", "write the markdown table to this file")
	flag.StringVar(&o.raw, "raw", "", "write every run's raw results (JSON) to this file")
	flag.StringVar(&o.chart, "chart", "", "write an SVG chart of sync time and memory against N to this file")
	flag.StringVar(&chartN, "chart-n", "1000,5000,10000", "N values of the chart")
	flag.StringVar(&o.chartRes, "chart-resource", "pods", "resource of the chart")
	flag.StringVar(&o.chartFormat, "chart-format", "json", "content type of the chart")
	flag.IntVar(&o.chartRuns, "chart-runs", 1, "runs per point of the chart (medians)")
	flag.StringVar(&o.sideDir, "side-dir", "", "directory of prebuilt side programs (default: build them into a temporary directory)")
	flag.StringVar(&o.fromRaw, "from-raw", "", "measure nothing: render the table (-o) and chart (-chart) from a -raw file of an earlier invocation")
	flag.IntVar(&o.seedWorkers, "seed-workers", 8, "concurrent writers seeding objects")
	flag.BoolVar(&o.keep, "keep", false, "with -kubeconfig: keep the seeded namespaces")
	flag.BoolVar(&o.verbose, "v", false, "print every run")
	flag.Parse()
	o.scenarios, o.resources, o.watchResources, o.formats, o.lists = split(scen), split(res), split(watchRes), split(formats), split(lists)
	for _, s := range split(chartN) {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			fatal(fmt.Errorf("-chart-n: bad value %q", s))
		}
		o.chartN = append(o.chartN, v)
	}
	if err := validate(&o); err != nil {
		fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.fromRaw != "" {
		if err := render(&o); err != nil {
			fatal(err)
		}
		return
	}
	if err := run(ctx, &o); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "kapi-bench:", err)
	os.Exit(1)
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func validate(o *options) error {
	check := func(flagName string, vals, allowed []string) error {
		for _, v := range vals {
			if !slices.Contains(allowed, v) {
				return fmt.Errorf("-%s: unknown %q (want %s)", flagName, v, strings.Join(allowed, ", "))
			}
		}
		return nil
	}
	for _, c := range []struct {
		name          string
		vals, allowed []string
	}{
		{"scenarios", o.scenarios, []string{"sync", "watch"}},
		{"resources", o.resources, []string{"pods", "configmaps"}},
		{"watch-resources", o.watchResources, []string{"pods", "configmaps"}},
		{"formats", o.formats, []string{"json", "protobuf"}},
		{"lists", o.lists, []string{"paged", "stream"}},
		{"chart-resource", []string{o.chartRes}, []string{"pods", "configmaps"}},
		{"chart-format", []string{o.chartFormat}, []string{"json", "protobuf"}},
	} {
		if err := check(c.name, c.vals, c.allowed); err != nil {
			return err
		}
	}
	if o.metadata && slices.Contains(o.formats, "json") {
		return fmt.Errorf("-metadata: client-go's metadata client always asks for protobuf; use -formats protobuf")
	}
	if o.pageSize != 500 {
		return fmt.Errorf("-page-size: only 500 is supported: client-go's informer factory sets no other page size")
	}
	if o.runs < 1 || o.n < 1 || o.chartRuns < 1 {
		return fmt.Errorf("-runs, -n and -chart-runs must be positive")
	}
	if o.writers < 1 || o.watchObjects < o.writers || o.updates < o.writers {
		return fmt.Errorf("watch: need -watch-writers ≥ 1, -watch-objects ≥ writers, -watch-updates ≥ writers")
	}
	return nil
}

// bench is one invocation: the server, the harness's own client, the side
// programs, and the results so far.
type bench struct {
	o      *options
	server string // base URL of the in-process server ("" with -kubeconfig)
	local  *localServer
	c      *client.Client // the harness's client (seeding, writes): kapi, JSON
	bins   map[string]string
	seeded map[string]bool // namespaces seeded
	sizes  map[string]objectSize
	res    results
	log    io.Writer
}

func run(ctx context.Context, o *options) error {
	b := &bench{o: o, seeded: map[string]bool{}, sizes: map[string]objectSize{}, log: os.Stderr}
	b.res.Started = time.Now().UTC()
	var cfg *client.Config
	if o.kubeconfig != "" {
		var err error
		if cfg, err = client.Load(client.LoadOptions{Kubeconfig: o.kubeconfig}); err != nil {
			return err
		}
		b.res.Server = "cluster of -kubeconfig (" + cfg.Host + ")"
	} else {
		ls, err := startLocalServer()
		if err != nil {
			return err
		}
		defer ls.Close()
		b.local, b.server = ls, ls.url
		cfg = &client.Config{Host: ls.url}
		b.res.Server = "kapi reference server, in-process in the harness, HTTP on loopback"
	}
	cfg.QPS, cfg.Burst = -1, 1000
	cfg.UserAgent = "kapi-bench-harness"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := client.New(cfg)
	if err != nil {
		return err
	}
	b.c = c

	dir := o.sideDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "kapi-bench-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		b.logf("building the side programs …")
	}
	if b.bins, err = sideBinaries(ctx, dir); err != nil {
		return err
	}
	defer b.cleanup()

	b.res.fill(o)
	if slices.Contains(o.scenarios, "sync") {
		if err := b.syncScenario(ctx); err != nil {
			return err
		}
	}
	if slices.Contains(o.scenarios, "watch") {
		if err := b.watchScenario(ctx); err != nil {
			return err
		}
	}
	if o.chart != "" {
		if err := b.chartScenario(ctx); err != nil {
			return err
		}
	}
	b.res.Finished = time.Now().UTC()
	b.res.Settings["loadEnd"] = loadAvg()
	b.res.Sizes = b.sizes

	return b.res.write(o)
}

// render writes the table and chart of an earlier invocation's raw results.
func render(o *options) error {
	raw, err := os.ReadFile(o.fromRaw)
	if err != nil {
		return err
	}
	var r results
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("%s: %w", o.fromRaw, err)
	}
	if len(r.Chart) > 0 {
		o.chartRes, o.chartFormat = r.Chart[0].Key.Resource, r.Chart[0].Key.Format
		o.chartRuns = len(r.Chart[0].Runs["kapi"])
	}
	o.raw = "" // already there
	return r.write(o)
}

// write prints the table and writes the files the options ask for.
func (r *results) write(o *options) error {
	md := r.markdown(o)
	fmt.Print(md)
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(md), 0o644); err != nil {
			return err
		}
	}
	if o.raw != "" {
		raw, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(o.raw, raw, 0o644); err != nil {
			return err
		}
	}
	if o.chart != "" {
		if len(r.Chart) == 0 {
			return fmt.Errorf("-chart: no chart data")
		}
		if err := os.WriteFile(o.chart, []byte(r.chartSVG(o)), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "chart written to %s\n", o.chart)
	}
	return nil
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// namespace returns the namespace holding n seeded objects of resource,
// seeding it on first use.
func (b *bench) namespace(ctx context.Context, resource string, n int) (string, error) {
	ns := fmt.Sprintf("kapi-bench-%s-%d", resource, n)
	if b.seeded[ns] {
		return ns, nil
	}
	start := time.Now()
	b.logf("seeding %d %s into %s …", n, resource, ns)
	err := seed(ctx, b.c, resource, ns, n, b.o.seedWorkers, func(d int) {
		if d%10000 == 0 {
			b.logf("  %d/%d", d, n)
		}
	})
	if err != nil {
		return "", err
	}
	b.seeded[ns] = true
	b.logf("seeded %d %s in %s", n, resource, time.Since(start).Round(time.Millisecond))
	if _, ok := b.sizes[resource]; !ok && b.server != "" {
		if sz, err := measureSize(ctx, b.server, resource, ns); err == nil {
			b.sizes[resource] = sz
			b.logf("  one %s as stored: %d bytes JSON, %d bytes protobuf (managedFields: %d entries, %d bytes of JSON)", resource, sz.JSON, sz.Protobuf, sz.ManagedFieldsEntries, sz.ManagedFieldsJSON)
		} else {
			b.logf("  measuring object size: %v", err)
		}
	}
	return ns, nil
}

// cleanup deletes the seeded namespaces on a real cluster.
func (b *bench) cleanup() {
	if b.o.kubeconfig == "" || b.o.keep {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for ns := range b.seeded {
		if err := deleteNamespace(ctx, b.c, ns); err != nil {
			b.logf("deleting namespace %s: %v", ns, err)
		}
	}
}

// sideArgs are the flags both sides get for a run.
func (b *bench) sideArgs(mode, resource, ns, format, list string, expect int) sidekit.Args {
	return sidekit.Args{
		Server: b.server, Kubeconfig: b.o.kubeconfig, Resource: resource, Namespace: ns,
		Format: format, List: list, PageSize: b.o.pageSize, QPS: b.o.qps, Burst: b.o.burst,
		DropManagedFields: b.o.dropMF, Metadata: b.o.metadata, Mode: mode, Expect: expect, Timeout: 10 * time.Minute,
	}
}

// order returns the sides in the order of run r: alternating, so that
// neither always runs first (on a warmer or colder server).
func order(r int) []string {
	if r%2 == 0 {
		return sides
	}
	return []string{sides[1], sides[0]}
}

// runSync runs the sync scenario once for one side.
func (b *bench) runSync(ctx context.Context, side string, args sidekit.Args) (*outcome, error) {
	if b.local != nil {
		b.local.stats.take(side)
	}
	ch, err := startChild(ctx, b.bins[side], side, args)
	if err != nil {
		return nil, err
	}
	out, err := ch.finish(ctx)
	if b.local != nil && out != nil {
		out.Traffic = b.local.stats.take(side)
		if b.o.verbose {
			for _, r := range out.Traffic.Requests {
				b.logf("  %s: %s", side, r)
			}
		}
		if len(out.Traffic.Failures) > 0 {
			b.logf("  %s: server answered errors: %s", side, strings.Join(out.Traffic.Failures, "; "))
		}
	}
	if err != nil {
		return out, err
	}
	if out.Objects != args.Expect {
		return out, fmt.Errorf("%s side cached %d objects, want %d", side, out.Objects, args.Expect)
	}
	return out, nil
}

func (b *bench) syncScenario(ctx context.Context) error {
	for _, resource := range b.o.resources {
		if _, err := b.namespace(ctx, resource, b.o.n); err != nil {
			return err
		}
	}
	for r := range b.o.runs {
		for _, resource := range b.o.resources {
			ns, _ := b.namespace(ctx, resource, b.o.n)
			for _, format := range b.o.formats {
				for _, list := range b.o.lists {
					key := syncKey{Resource: resource, Format: format, List: list, N: b.o.n}
					for _, side := range order(r) {
						out, err := b.runSync(ctx, side, b.sideArgs("sync", resource, ns, format, list, b.o.n))
						if err != nil {
							b.res.addFailure(key.String(), side, err)
							b.logf("sync %s run %d %s: FAILED: %v", key, r+1, side, err)
							continue
						}
						b.res.addSync(key, side, out)
						b.logf("sync %s run %d %-9s synced in %7.0f ms, heap %6.1f MB (%5.0f B/object), peak RSS %6.1f MB, CPU %5.2f s",
							key, r+1, side, out.SyncMillis, mb(out.HeapAfter), perObject(out), float64(out.PeakRSSKiB)/1024, out.CPUSecs)
					}
				}
			}
		}
	}
	return nil
}

func (b *bench) chartScenario(ctx context.Context) error {
	for _, n := range b.o.chartN {
		ns, err := b.namespace(ctx, b.o.chartRes, n)
		if err != nil {
			return err
		}
		key := syncKey{Resource: b.o.chartRes, Format: b.o.chartFormat, List: "paged", N: n}
		for r := range b.o.chartRuns {
			for _, side := range order(r) {
				out, err := b.runSync(ctx, side, b.sideArgs("sync", b.o.chartRes, ns, b.o.chartFormat, "paged", n))
				if err != nil {
					b.res.addFailure("chart "+key.String(), side, err)
					b.logf("chart %s %s: FAILED: %v", key, side, err)
					continue
				}
				b.res.addChart(key, side, out)
				b.logf("chart %s run %d %-9s synced in %7.0f ms, heap %6.1f MB, peak RSS %6.1f MB", key, r+1, side, out.SyncMillis, mb(out.HeapAfter), float64(out.PeakRSSKiB)/1024)
			}
		}
	}
	return nil
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

func perObject(o *outcome) float64 {
	if o.Objects == 0 || o.HeapAfter < o.HeapBase {
		return 0
	}
	return float64(o.HeapAfter-o.HeapBase) / float64(o.Objects)
}

func init() {
	if runtime.GOOS != "linux" {
		fmt.Fprintln(os.Stderr, "kapi-bench: peak RSS is read from /proc and rusage; figures may be missing on", runtime.GOOS)
	}
}
