package main

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestKubectlClientSideToServerSideApply moves a ConfigMap between kubectl's
// client-side and server-side apply, each step as on a kube-apiserver
// v1.37.2 (the outputs and states below were taken from one with kubectl
// 1.32): server-side apply takes over the fields client-side apply
// recorded, without conflicts, and keeps the last-applied annotation
// current; diff --server-side shows the same changes; client-side apply
// works after it. apply validates by default, as against a cluster.
func TestKubectlClientSideToServerSideApply(t *testing.T) {
	kubectlBinary(t)
	if _, err := exec.LookPath("diff"); err != nil {
		t.Skipf("kubectl diff needs diff: %v", err)
	}
	t.Parallel()
	s := startServer(t)
	const ns = "default"
	manifest := func(label string, data map[string]string) string {
		return configMapManifest(ns, "cm", map[string]string{"a": label}, data)
	}
	first := manifest("1", map[string]string{"k1": "v1", "k2": "v2"})
	second := manifest("2", map[string]string{"k1": "v1changed", "k3": "v3"})
	third := manifest("3", map[string]string{"k1": "v1changed", "k4": "v4"})
	// record is the annotation kube-apiserver writes for a server-side
	// apply of a manifest: the manifest as sent, keys sorted.
	record := func(label, data string) string {
		return `{"apiVersion":"v1","data":` + data + `,"kind":"ConfigMap","metadata":{"labels":{"a":"` + label + `"},"name":"cm","namespace":"default"}}` + "\n"
	}
	type state struct{ data, labels, managers, annotation string }
	get := func(t *testing.T) state {
		t.Helper()
		out := s.mustKubectl(t, "", "get", "configmap", "cm", "-n", ns, "-o",
			`jsonpath={.data}{"\n"}{.metadata.labels}{"\n"}{.metadata.managedFields[*].manager}{"\n"}{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`)
		parts := strings.SplitN(out, "\n", 4)
		for len(parts) < 4 {
			parts = append(parts, "")
		}
		return state{parts[0], parts[1], parts[2], parts[3]}
	}
	check := func(t *testing.T, got, want state) {
		t.Helper()
		if got != want {
			t.Errorf("object:\n got %+v\nwant %+v", got, want)
		}
	}
	// diff runs kubectl diff --server-side and returns the changed lines;
	// kubectl exits with 1 when there are some, 0 when there are none.
	diff := func(t *testing.T, manifest string) []string {
		t.Helper()
		out, err := s.kubectl(t, manifest, "diff", "--server-side", "-f", "-")
		var ke *kubectlError
		var ee *exec.ExitError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &ke) && errors.As(ke.err, &ee) && ee.ExitCode() == 1:
		default:
			t.Fatalf("%v\nserver log:\n%s", err, s.stderr)
		}
		var changed []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "+ ") {
				changed = append(changed, l)
			}
		}
		return changed
	}
	wantLines := func(t *testing.T, got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("diff lines:\n got %q\nwant %q", got, want)
		}
	}

	wantOutput(t, s.mustKubectl(t, first, "apply", "-f", "-"), "configmap/cm created")
	clientSideRecord := `{"apiVersion":"v1","data":{"k1":"v1","k2":"v2"},"kind":"ConfigMap","metadata":{"annotations":{},"labels":{"a":"1"},"name":"cm","namespace":"default"}}` + "\n"
	check(t, get(t), state{`{"k1":"v1","k2":"v2"}`, `{"a":"1"}`, "kubectl-client-side-apply", clientSideRecord})

	t.Run("diff --server-side after client-side apply", func(t *testing.T) {
		wantLines(t, diff(t, second),
			"-  k1: v1",
			"+  k1: v1changed",
			"+  k3: v3",
			"-      "+strings.TrimSuffix(clientSideRecord, "\n"),
			"+      "+strings.TrimSuffix(record("2", `{"k1":"v1changed","k3":"v3"}`), "\n"),
			`-    a: "1"`,
			`+    a: "2"`)
	})
	t.Run("apply --server-side after client-side apply", func(t *testing.T) {
		// No conflict with kubectl-client-side-apply; kubectl then moves
		// that manager's fields to its own and applies again, which drops k2.
		wantOutput(t, s.mustKubectl(t, second, "apply", "--server-side", "-f", "-"), "configmap/cm serverside-applied")
		check(t, get(t), state{`{"k1":"v1changed","k3":"v3"}`, `{"a":"2"}`, "kubectl-last-applied kubectl", record("2", `{"k1":"v1changed","k3":"v3"}`)})
		wantLines(t, diff(t, second))
	})
	t.Run("diff --server-side after server-side apply", func(t *testing.T) {
		wantLines(t, diff(t, third),
			"-  k3: v3",
			"+  k4: v4",
			"-      "+strings.TrimSuffix(record("2", `{"k1":"v1changed","k3":"v3"}`), "\n"),
			"+      "+strings.TrimSuffix(record("3", `{"k1":"v1changed","k4":"v4"}`), "\n"),
			`-    a: "2"`,
			`+    a: "3"`)
	})
	t.Run("apply after server-side apply", func(t *testing.T) {
		wantOutput(t, s.mustKubectl(t, third, "apply", "-f", "-"), "configmap/cm configured")
		check(t, get(t), state{`{"k1":"v1changed","k4":"v4"}`, `{"a":"3"}`, "kubectl kubectl-client-side-apply",
			`{"apiVersion":"v1","data":{"k1":"v1changed","k4":"v4"},"kind":"ConfigMap","metadata":{"annotations":{},"labels":{"a":"3"},"name":"cm","namespace":"default"}}` + "\n"})
	})
	t.Run("apply --server-side again", func(t *testing.T) {
		wantOutput(t, s.mustKubectl(t, third, "apply", "--server-side", "-f", "-"), "configmap/cm serverside-applied")
		check(t, get(t), state{`{"k1":"v1changed","k4":"v4"}`, `{"a":"3"}`, "kubectl-last-applied kubectl", record("3", `{"k1":"v1changed","k4":"v4"}`)})
		wantLines(t, diff(t, third))
	})
}
