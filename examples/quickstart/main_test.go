package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestQuickstart(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out bytes.Buffer
	if err := run(context.Background(), "", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	// The live changes arrive in the order they were made.
	want := strings.Join([]string{
		"created 3 ConfigMaps",
		"informer: ADDED    backend (initial list: true)",
		"informer: ADDED    cache (initial list: true)",
		"informer: ADDED    frontend (initial list: true)",
		"informer: MODIFIED backend replicas 1 -> 3",
		"informer: ADDED    worker (initial list: false)",
		"informer: DELETED  cache",
		"lister: tier=api -> backend, worker",
	}, "\n") + "\n"
	got := out.String()
	if _, rest, ok := strings.Cut(got, "\n"); !ok || !strings.HasPrefix(got, "embedded reference server on http://127.0.0.1:") || rest != want {
		t.Errorf("output:\n%s\nwant after the server line:\n%s", got, want)
	}
}
