package main

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
)

// The chart is written by hand as SVG: three panels (sync time, live heap,
// peak RSS) against N, one line per library. No plotting dependency.

var seriesColor = map[string]string{"kapi": "#1f6feb", "client-go": "#d1495b"}

type panel struct {
	title string
	unit  string
	f     func(*outcome) float64
}

func (r *results) chartSVG(o *options) string {
	entries := slices.Clone(r.Chart)
	slices.SortFunc(entries, func(a, b *syncEntry) int { return a.Key.N - b.Key.N })
	panels := []panel{
		{"time to synced", "ms", syncMetrics[0].f},
		{"live heap after sync", "MB", syncMetrics[2].f},
		{"peak RSS", "MB", syncMetrics[4].f},
	}
	const (
		pw, ph        = 340.0, 260.0 // panel plot area
		left, top     = 60.0, 125.0
		gap           = 70.0
		width, height = left + 3*pw + 2*gap + 30, top + ph + 70
	)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	format := o.chartFormat
	title := fmt.Sprintf("Shared informer initial sync of %s (%s, paged lists of 500): kapi vs client-go", o.chartRes, format)
	fmt.Fprintf(&b, `<text x="%.0f" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))
	fmt.Fprintf(&b, `<text x="%.0f" y="44" fill="#555">medians of %d run(s) per point; each library in its own child process; kapi reference server on loopback; %s</text>`+"\n", left, o.chartRuns, html.EscapeString(r.Settings["cpu"]))
	// legend
	for i, side := range sides {
		lx, y := left+float64(i)*380, 70.0
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="3"/><text x="%.0f" y="%.0f">%s</text>`+"\n", lx, y, lx+24, y, seriesColor[side], lx+30, y+4, html.EscapeString(side+": "+r.Libraries[side]))
	}
	maxN := 0
	for _, e := range entries {
		maxN = max(maxN, e.Key.N)
	}
	for pi, p := range panels {
		x0 := left + float64(pi)*(pw+gap)
		y0 := top + ph
		maxV := 0.0
		for _, e := range entries {
			for _, side := range sides {
				maxV = max(maxV, median(e.Runs[side], p.f))
			}
		}
		yMax, step := niceScale(maxV)
		xs := func(n int) float64 { return x0 + float64(n)/float64(max(maxN, 1))*pw }
		ys := func(v float64) float64 { return y0 - v/yMax*ph }
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="14" font-weight="bold">%s (%s)</text>`+"\n", x0, top-30, p.title, p.unit)
		for v := 0.0; v <= yMax+step/2; v += step {
			y := ys(v)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/><text x="%.1f" y="%.1f" text-anchor="end" fill="#444">%s</text>`+"\n", x0, y, x0+pw, y, x0-6, y+4, num(v, decimals(step)))
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x0, y0, x0+pw, y0, x0, top, x0, y0)
		for _, e := range entries {
			x := xs(e.Key.N)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/><text x="%.1f" y="%.1f" text-anchor="middle" fill="#444">%s</text>`+"\n", x, y0, x, y0+5, x, y0+18, num(float64(e.Key.N), 0))
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#444">objects (N)</text>`+"\n", x0+pw/2, y0+38)
		for _, side := range sides {
			var pts []string
			for _, e := range entries {
				if len(e.Runs[side]) == 0 {
					continue
				}
				v := median(e.Runs[side], p.f)
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", xs(e.Key.N), ys(v)))
			}
			if len(pts) == 0 {
				continue
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2.5" points="%s"/>`+"\n", seriesColor[side], strings.Join(pts, " "))
			for _, e := range entries {
				if len(e.Runs[side]) == 0 {
					continue
				}
				v := median(e.Runs[side], p.f)
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s N=%d: %s %s</title></circle>`+"\n", xs(e.Key.N), ys(v), seriesColor[side], side, e.Key.N, num(v, 1), p.unit)
			}
		}
		// ratio at the largest N, under the panel title
		if len(entries) > 0 {
			last := entries[len(entries)-1]
			k, c := median(last.Runs["kapi"], p.f), median(last.Runs["client-go"], p.f)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#555">kapi/client-go at N=%s: %s</text>`+"\n", x0, top-12, num(float64(last.Key.N), 0), ratio(k, c))
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// niceScale returns an axis maximum ≥ v and a tick step (1, 2 or 5 × 10^k,
// about five ticks).
func niceScale(v float64) (float64, float64) {
	if v <= 0 {
		return 1, 0.2
	}
	raw := v / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	return math.Ceil(v/step) * step, step
}

func decimals(step float64) int {
	if step >= 1 {
		return 0
	}
	return int(math.Ceil(-math.Log10(step)))
}
