package apiserver

import (
	"io"
	"log/slog"
	"testing"
)

// BenchmarkNew measures the start of a server with the default
// configuration (system namespaces, the kubernetes Service, priority
// classes, APIServices, the bootstrap RBAC policy) and its Close.
func BenchmarkNew(b *testing.B) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.ReportAllocs()
	for b.Loop() {
		srv, err := New(Config{Logger: logger})
		if err != nil {
			b.Fatal(err)
		}
		srv.Close()
	}
}
