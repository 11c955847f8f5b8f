package selector_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/selector"
)

var labelBenchInputs = []struct{ name, in string }{
	{"single", "app=web"},
	{"typical", "app=web,tier in (frontend,cache),!canary,env!=dev"},
	{"prefixed", "app.kubernetes.io/name=web,app.kubernetes.io/instance in (web-1,web-2,web-3),example.com/team"},
	{"large", func() string {
		var parts []string
		for i := range 20 {
			parts = append(parts, "key"+strconv.Itoa(i)+" in (a,b,c,d)")
		}
		return strings.Join(parts, ",")
	}()},
}

func BenchmarkParseLabels(b *testing.B) {
	for _, bm := range labelBenchInputs {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := selector.ParseLabels(bm.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLabelSelectorString(b *testing.B) {
	sel := selector.MustParseLabels(labelBenchInputs[1].in)
	b.ReportAllocs()
	for b.Loop() {
		_ = sel.String()
	}
}

func BenchmarkLabelMatches(b *testing.B) {
	sel := selector.MustParseLabels("app=web,tier in (frontend,cache),!canary,env!=dev")
	labels := selector.Set{
		"app": "web", "tier": "cache", "env": "prod", "pod-template-hash": "5d8f7c9b6",
		"app.kubernetes.io/name": "web", "app.kubernetes.io/version": "1.2.3",
	}
	b.Run("Set", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !sel.Matches(labels) {
				b.Fatal("no match")
			}
		}
	})
	b.Run("HasGet", func(b *testing.B) {
		custom := hasGetLabels(labels)
		b.ReportAllocs()
		for b.Loop() {
			if !sel.Matches(custom) {
				b.Fatal("no match")
			}
		}
	})
	b.Run("SelectorFromSet", func(b *testing.B) {
		sel := selector.SelectorFromSet(selector.Set{"app": "web", "env": "prod"})
		b.ReportAllocs()
		for b.Loop() {
			if !sel.Matches(labels) {
				b.Fatal("no match")
			}
		}
	})
}

func BenchmarkLabelRequiresExactMatch(b *testing.B) {
	sel := selector.MustParseLabels(labelBenchInputs[3].in + ",key7=x")
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := sel.RequiresExactMatch("key7"); !ok {
			b.Fatal("no exact match")
		}
	}
}

var fieldBenchInputs = []struct{ name, in string }{
	{"single", "metadata.name=web-0"},
	{"typical", "metadata.namespace=default,status.phase!=Running,spec.nodeName=node-1"},
	{"escaped", `metadata.name=a\,b\=c\\d,spec.nodeName=node-1`},
}

func BenchmarkParseFields(b *testing.B) {
	for _, bm := range fieldBenchInputs {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := selector.ParseFields(bm.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFieldMatches(b *testing.B) {
	sel := selector.MustParseFields(fieldBenchInputs[1].in)
	fields := selector.Set{"metadata.name": "web-0", "metadata.namespace": "default", "status.phase": "Pending", "spec.nodeName": "node-1"}
	b.ReportAllocs()
	for b.Loop() {
		if !sel.Matches(fields) {
			b.Fatal("no match")
		}
	}
}
