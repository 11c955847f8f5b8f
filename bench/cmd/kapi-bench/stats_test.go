package main

import (
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/bench/internal/sidekit"
)

func TestMedian(t *testing.T) {
	id := func(v float64) float64 { return v }
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(c.in, id); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	v := make([]float64, 100)
	for i := range v {
		v[i] = float64(i + 1)
	}
	for _, c := range []struct{ p, want float64 }{{0.5, 50}, {0.99, 99}, {1, 100}, {0, 1}} {
		if got := percentile(v, c.p); got != c.want {
			t.Errorf("percentile(1..100, %v) = %v, want %v", c.p, got, c.want)
		}
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile(nil) = %v", got)
	}
}

func TestMatchWatch(t *testing.T) {
	acks := []ack{
		{key: "a@1", sent: 1_000_000, at: 2_000_000},
		{key: "a@2", sent: 3_000_000, at: 4_000_000},
		{key: "b@3", sent: 5_000_000, at: 6_000_000},
	}
	res := &outcome{Result: sidekit.Result{
		Duplicates: 1,
		Events: []sidekit.Event{
			{Name: "a", RV: "1", At: 3_000_000}, // 1 ms after its ack
			{Name: "b", RV: "3", At: 9_000_000}, // 3 ms after
			{Name: "c", RV: "9", At: 9_500_000}, // never written
		},
	}}
	w := matchWatch(acks, res)
	if w.Updates != 3 || w.Delivered != 2 || w.Lost != 1 || w.Unexpected != 1 || w.Duplicates != 1 {
		t.Errorf("counts = %+v", w)
	}
	if w.P50Ms != 1 || w.P99Ms != 3 || w.MaxMs != 3 {
		t.Errorf("latencies p50 %v p99 %v max %v, want 1, 3, 3", w.P50Ms, w.P99Ms, w.MaxMs)
	}
	// 2 delivered over 8 ms (first sent at 1 ms, last delivery at 9 ms).
	if w.EventsPerSec != 250 {
		t.Errorf("events/s = %v, want 250", w.EventsPerSec)
	}
}

func TestNiceScale(t *testing.T) {
	for _, c := range []struct{ v, max, step float64 }{
		{0, 1, 0.2}, {4374, 5000, 1000}, {164.8, 200, 50}, {268, 300, 100}, {7, 8, 2},
	} {
		if m, s := niceScale(c.v); m != c.max || s != c.step {
			t.Errorf("niceScale(%v) = %v, %v; want %v, %v", c.v, m, s, c.max, c.step)
		}
	}
}

func TestNum(t *testing.T) {
	for _, c := range []struct {
		v      float64
		digits int
		want   string
	}{{1234567, 0, "1,234,567"}, {-1234.5, 1, "-1,234.5"}, {12, 2, "12.00"}, {999, 0, "999"}} {
		if got := num(c.v, c.digits); got != c.want {
			t.Errorf("num(%v, %d) = %q, want %q", c.v, c.digits, got, c.want)
		}
	}
}

func TestChartSVG(t *testing.T) {
	r := results{Libraries: map[string]string{"kapi": "kapi", "client-go": "client-go vX"}, Settings: map[string]string{}}
	for _, n := range []int{1000, 5000} {
		for _, side := range sides {
			r.addChart(syncKey{Resource: "pods", Format: "json", List: "paged", N: n}, side,
				&outcome{Result: sidekit.Result{Objects: n, SyncMillis: float64(n) / 10, HeapAfter: uint64(n) << 10, PeakRSSKiB: uint64(n)}})
		}
	}
	svg := r.chartSVG(&options{chartRes: "pods", chartFormat: "json", chartRuns: 1})
	if !strings.HasPrefix(svg, "<svg") || !strings.HasSuffix(svg, "</svg>\n") || strings.Count(svg, "<polyline") != 6 {
		t.Errorf("chart: want an SVG with 6 lines (3 panels × 2 libraries), got:\n%s", svg)
	}
}
