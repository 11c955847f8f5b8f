package unstructured

import (
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi/internal/kjson"
)

// BenchmarkDecodePodList decodes the PodList a real server sent
// (33-list-pods-json) with this package and, for comparison, with
// encoding/json into map[string]any: plain (numbers as float64), and as
// Kubernetes does (UseNumber, then integers converted to int64), and with
// go-json-experiment's reflection-based decoder under kapi's options.
func BenchmarkDecodePodList(b *testing.B) {
	body := goldenBody(b, "33-list-pods-json.txt")
	b.Run("kapi/UnstructuredList", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var l UnstructuredList
			if err := l.UnmarshalJSON(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kapi/Unstructured", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var u Unstructured
			if err := u.UnmarshalJSON(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json/map", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json/map-int64", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := refDecode(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-json-experiment/map", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := kjson.Unmarshal(body, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEncodePodList encodes the decoded PodList with this package and
// with encoding/json, which also sorts map keys.
func BenchmarkEncodePodList(b *testing.B) {
	body := goldenBody(b, "33-list-pods-json.txt")
	var l UnstructuredList
	if err := l.UnmarshalJSON(body); err != nil {
		b.Fatal(err)
	}
	content := l.UnstructuredContent()
	b.Run("kapi/UnstructuredList", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := l.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json/map", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(content); err != nil {
				b.Fatal(err)
			}
		}
	})
}
