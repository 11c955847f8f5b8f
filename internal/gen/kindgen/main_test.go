package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestOutputIsCommitted(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "internal", "builtin", "zz_generated.resources.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("internal/builtin/zz_generated.resources.go is stale: run go run ./internal/gen/kindgen")
	}
}
