package main

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/kapi-dev/kapi/fake"
	"go.uber.org/goleak"
)

// TestMain checks no goroutine outlives the tests (the fake stops its
// server in a Cleanup, after the test function returns). The client of a
// real cluster keeps its idle keep-alive connections, which are not leaks.
func TestMain(m *testing.M) {
	var opts []goleak.Option
	if os.Getenv("KAPI_EXAMPLE_KUBECONFIG") != "" {
		opts = append(opts, goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
			goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"))
	}
	goleak.VerifyTestMain(m, opts...)
}

// The expected output was printed by the example against kube-apiserver
// v1.37.2 (go run ./examples/webhook -kubeconfig …): the fake must answer
// every step as that server did, word for word.
const captured = "testdata/kube-apiserver-v1.37.2.txt"

// TestWebhookExample runs the example on the fake: the reference server
// calls the webhooks over HTTPS, evaluates the CRD's CEL rules and enforces
// the policy.
func TestWebhookExample(t *testing.T) {
	want, err := os.ReadFile(captured)
	if err != nil {
		t.Fatal(err)
	}
	f := fake.New(t)
	var out bytes.Buffer
	if err := demo(context.Background(), f.Client(), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if out.String() != string(want) {
		t.Errorf("output:\n%s\nwant (%s):\n%s", out.String(), captured, want)
	}
}

// TestWebhookExampleCluster runs the example against the cluster of
// KAPI_EXAMPLE_KUBECONFIG, whose kube-apiserver must reach 127.0.0.1 of this
// machine; skipped without it.
func TestWebhookExampleCluster(t *testing.T) {
	kubeconfig := os.Getenv("KAPI_EXAMPLE_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("KAPI_EXAMPLE_KUBECONFIG is not set")
	}
	want, err := os.ReadFile(captured)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), kubeconfig, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if out.String() != string(want) {
		t.Errorf("output:\n%s\nwant (%s):\n%s", out.String(), captured, want)
	}
}
