// Package gen_test checks that the generated files in the repository are what
// the generators produce now.
package gen_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestProtogenOutputIsCommitted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.Command("go", "run", "-tags", "kapi_protogen", "./internal/gen/protogen", "-root", out)
	cmd.Dir = repo
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protogen: %v\n%s", err, b)
	}
	generated, err := filepath.Glob(filepath.Join(out, "api", "*", "*", "zz_generated.*.go"))
	if err != nil || len(generated) < 8 {
		t.Fatalf("protogen wrote %d files (%v)", len(generated), err)
	}
	for _, g := range generated {
		rel, _ := filepath.Rel(out, g)
		want, _ := os.ReadFile(g)
		got, err := os.ReadFile(filepath.Join(repo, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go run -tags kapi_protogen ./internal/gen/protogen", rel)
		}
	}
}
