package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/bench/internal/sidekit"
	"github.com/kapi-dev/kapi/client"
	"golang.org/x/sync/errgroup"
)

// watchOutcome is one run of the watch scenario for one side.
type watchOutcome struct {
	Updates      int     `json:"updates"`      // acknowledged writes
	Delivered    int     `json:"delivered"`    // of them, seen by the handler
	Lost         int     `json:"lost"`         // acknowledged, never seen
	Unexpected   int     `json:"unexpected"`   // seen, never acknowledged
	Duplicates   int     `json:"duplicates"`   // seen twice
	EventsPerSec float64 `json:"eventsPerSec"` // delivered / (last delivery − first write sent)
	WriteSecs    float64 `json:"writeSecs"`    // first write sent → last write acknowledged
	P50Ms        float64 `json:"p50Ms"`        // write acknowledged → handler called
	P99Ms        float64 `json:"p99Ms"`
	MaxMs        float64 `json:"maxMs"`
	SentP50Ms    float64 `json:"sentP50Ms"` // write sent → handler called
	SentP99Ms    float64 `json:"sentP99Ms"`
	PeakRSSKiB   uint64  `json:"peakRssKiB"`
	CPUSecs      float64 `json:"cpuSecs"`
}

func (b *bench) watchScenario(ctx context.Context) error {
	for _, resource := range b.o.watchResources {
		ns := fmt.Sprintf("kapi-bench-watch-%s", resource)
		if !b.seeded[ns] {
			b.logf("seeding %d %s into %s …", b.o.watchObjects, resource, ns)
			if err := seed(ctx, b.c, resource, ns, b.o.watchObjects, b.o.seedWorkers, nil); err != nil {
				return err
			}
			b.seeded[ns] = true
		}
		for _, format := range b.o.formats {
			key := watchKey{Resource: resource, Format: format}
			for r := range b.o.runs {
				for _, side := range order(r) {
					out, err := b.runWatch(ctx, side, b.sideArgs("watch", resource, ns, format, "paged", b.o.updates))
					if err != nil {
						b.res.addFailure(key.String(), side, err)
						b.logf("watch %s run %d %s: FAILED: %v", key, r+1, side, err)
						if out == nil {
							continue
						}
					}
					b.res.addWatch(key, side, out)
					b.logf("watch %s run %d %-9s %d/%d delivered (lost %d, dup %d), %6.0f events/s, ack→handler p50 %6.2f ms p99 %6.2f ms",
						key, r+1, side, out.Delivered, out.Updates, out.Lost, out.Duplicates, out.EventsPerSec, out.P50Ms, out.P99Ms)
				}
			}
		}
	}
	return nil
}

// runWatch starts a side in watch mode, waits until its informer has
// synced, makes the updates, tells the side the last write was
// acknowledged, and matches what its handler saw against the writes.
func (b *bench) runWatch(ctx context.Context, side string, args sidekit.Args) (*watchOutcome, error) {
	if b.local != nil {
		b.local.stats.take(side)
	}
	ch, err := startChild(ctx, b.bins[side], side, args)
	if err != nil {
		return nil, err
	}
	l, err := ch.next(ctx)
	if err != nil {
		return nil, err
	}
	if l != sidekit.ReadyLine {
		_, err := ch.finish(ctx)
		return nil, fmt.Errorf("%s side did not get ready: %v", side, err)
	}
	acks, werr := b.write(ctx, args.Resource, args.Namespace)
	fmt.Fprintln(ch.stdin, sidekit.DoneLine)
	res, err := ch.finish(ctx)
	if werr != nil {
		return nil, werr
	}
	if res == nil {
		return nil, err
	}
	if b.local != nil {
		if t := b.local.stats.take(side); len(t.Failures) > 0 {
			b.logf("  %s: server answered errors: %s", side, strings.Join(t.Failures, "; "))
		}
	}
	return matchWatch(acks, res), err
}

// matchWatch compares the acknowledged writes with the events a side saw.
func matchWatch(acks []ack, res *outcome) *watchOutcome {
	w := &watchOutcome{Updates: len(acks), Duplicates: res.Duplicates, PeakRSSKiB: res.PeakRSSKiB, CPUSecs: res.CPUSecs}
	byKey := make(map[string]ack, len(acks))
	var firstSent, lastAck int64
	for _, a := range acks {
		byKey[a.key] = a
		if firstSent == 0 || a.sent < firstSent {
			firstSent = a.sent
		}
		lastAck = max(lastAck, a.at)
	}
	w.WriteSecs = float64(lastAck-firstSent) / 1e9
	lat := make([]float64, 0, len(res.Events))
	sentLat := make([]float64, 0, len(res.Events))
	var lastSeen int64
	for _, e := range res.Events {
		a, ok := byKey[e.Name+"@"+e.RV]
		if !ok {
			w.Unexpected++
			continue
		}
		w.Delivered++
		lat = append(lat, float64(e.At-a.at)/1e6)
		sentLat = append(sentLat, float64(e.At-a.sent)/1e6)
		lastSeen = max(lastSeen, e.At)
	}
	w.Lost = w.Updates - w.Delivered
	if lastSeen > firstSent {
		w.EventsPerSec = float64(w.Delivered) / (float64(lastSeen-firstSent) / 1e9)
	}
	slices.Sort(lat)
	w.P50Ms, w.P99Ms = percentile(lat, 0.50), percentile(lat, 0.99)
	slices.Sort(sentLat)
	w.SentP50Ms, w.SentP99Ms = percentile(sentLat, 0.50), percentile(sentLat, 0.99)
	if len(lat) > 0 {
		w.MaxMs = lat[len(lat)-1]
	}
	return w
}

// percentile of sorted values (nearest rank).
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// write makes the scenario's updates with W concurrent writers, each
// updating its own share of the namespace's objects in turn.
func (b *bench) write(ctx context.Context, resource, ns string) ([]ack, error) {
	switch resource {
	case "pods":
		return writeAll(ctx, client.For[corev1.Pod](b.c).Namespace(ns), b.o.writers, b.o.updates)
	default:
		return writeAll(ctx, client.For[corev1.ConfigMap](b.c).Namespace(ns), b.o.writers, b.o.updates)
	}
}

func writeAll[T any, PT client.ObjectPtr[T]](ctx context.Context, tc client.Resource[T], writers, updates int) ([]ack, error) {
	groups, err := splitObjects[T, PT](ctx, tc, writers)
	if err != nil {
		return nil, err
	}
	var seq atomic.Int64
	seq.Store(time.Now().UnixNano())
	out := make([][]ack, writers)
	g, gctx := errgroup.WithContext(ctx)
	for w := range writers {
		count := updates / writers
		if w < updates%writers {
			count++
		}
		g.Go(func() error {
			var err error
			out[w], err = updateLoop[T, PT](gctx, tc, groups[w], count, &seq)
			return err
		})
	}
	err = g.Wait()
	var all []ack
	for _, a := range out {
		all = append(all, a...)
	}
	return all, err
}

// objectSize is the size of one seeded object as the server stores it.
type objectSize struct {
	JSON                 int `json:"json"`
	Protobuf             int `json:"protobuf"`
	ManagedFieldsEntries int `json:"managedFieldsEntries"`
	ManagedFieldsJSON    int `json:"managedFieldsJson"`
}

// measureSize GETs the first seeded object of ns in JSON and in protobuf.
func measureSize(ctx context.Context, server, resource, ns string) (objectSize, error) {
	var sz objectSize
	name := "cm-000000"
	if resource == "pods" {
		name = "web-0-000000"
	}
	url := server + "/api/v1/namespaces/" + ns + "/" + resource + "/" + name
	get := func(accept string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return body, err
	}
	js, err := get("application/json")
	if err != nil {
		return sz, err
	}
	pb, err := get("application/vnd.kubernetes.protobuf")
	if err != nil {
		return sz, err
	}
	sz.JSON, sz.Protobuf = len(js), len(pb)
	var obj struct {
		Metadata struct {
			ManagedFields []json.RawMessage `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(js, &obj); err != nil {
		return sz, err
	}
	sz.ManagedFieldsEntries = len(obj.Metadata.ManagedFields)
	for _, m := range obj.Metadata.ManagedFields {
		sz.ManagedFieldsJSON += len(m)
	}
	return sz, nil
}

// deleteNamespace deletes a namespace the harness seeded on a real cluster.
func deleteNamespace(ctx context.Context, c *client.Client, ns string) error {
	return client.For[corev1.Namespace](c).Delete(ctx, ns, metav1.DeleteOptions{})
}
