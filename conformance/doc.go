// Package conformance is the Kubernetes API protocol (../shared/spec, the
// "API Concepts" page) written as tests, runnable against kapi's reference
// server or any Kubernetes API server.
//
// The package has no API: everything is in its _test.go files. The cases
// speak plain net/http and decode JSON and protobuf themselves, never through
// kapi's client, so that a client bug cannot hide a server bug. Where a real
// kube-apiserver exchange was captured (testdata/golden-1.37 from v1.37.2,
// the reference; testdata/golden from v1.32.2, normalized to v1.37.2 by
// internal/golden's Differences), a case compares the server's answer with
// both, field by field; only what legitimately varies is ignored (uids,
// timestamps, resourceVersion values, generated names, continue tokens).
//
// # Running against the in-process server
//
//	go test ./conformance
//	go test -race ./conformance
//
// TestMain starts one reference server (apiserver.New) behind
// httptest.NewServer on loopback, with a BookmarkInterval of 100ms so that
// bookmark cases take milliseconds. Cases that change server-wide state
// (forcing compaction of the store through its Compact hook) get a server of
// their own, so that they cannot disturb cases running in parallel. After the
// cases, TestMain fails the run if any goroutine is left behind (goleak):
// every watch a case opens, and every goroutine of the server, must be gone.
// The whole package takes a few seconds; the longest cases wait the 3 seconds
// a server blocks a read at a resourceVersion it has not reached.
//
// # Running against a real cluster
//
//	go test ./conformance -args -kubeconfig $HOME/.kube/config
//	go test ./conformance -run 'TestWatch|TestList' -args -kubeconfig ./kind.yaml
//
// The kubeconfig is read minimally, by the tests themselves: the current
// context's cluster (server, certificate-authority or -data,
// insecure-skip-tls-verify, tls-server-name) and user (client-certificate and
// client-key, or their -data forms, token or tokenFile). Exec and
// auth-provider plugins are refused with an error: give a kubeconfig with a
// token or a client certificate. The user needs rights to create and delete
// namespaces, and within them configmaps, secrets, serviceaccounts, pods and
// deployments; the URI case also creates and deletes one node.
//
// Every case works in a namespace of its own, named kapi-conformance-*,
// created at its start and deleted at its end, so the suite can run against a
// shared cluster. A new namespace may get objects of its own from the
// cluster's controllers (the "default" ServiceAccount, kube-root-ca.crt, in
// the in-process server too): namespace waits for kube-root-ca.crt where it
// is published, and cases that list configmaps count it in with baseline.
// Pods are bound to nodes that do not exist, so that no scheduler or kubelet
// acts on them (their graceful deletion stays pending, as the cases expect).
// Deadlines are four times longer than in-process: a real cluster's
// namespace controller takes seconds to empty a namespace.
//
// Cases that cannot apply to the server say why and skip: those that force
// the store to compact (an expired continue token, an Exact list or a watch
// at a compacted resourceVersion) need the in-process server. Cases that
// need a controller skip when the cluster shows none: the namespace deletion
// case when no namespace controller reports on the deleted namespace within
// 20 seconds, the namespace defaults case when kube-system lacks the
// ServiceAccount or ConfigMap the controller would have made.
//
// # Known server gaps
//
// A case that fails on kapi's reference server because of a known server bug
// is skipped in-process only, with a message starting "known server gap:"
// that says what kube-apiserver does and what kapi does instead (see
// knownGap). It still runs against real servers. To see which known gaps are
// still open, run them in-process too:
//
//	go test ./conformance -args -known-gaps
//
// Remove the knownGap call when the server is fixed.
//
// # Writing a case
//
// Create a namespace with env.namespace; send requests with env.do (or its
// get, post, put, del forms) and check them with expect, checkStatus or
// checkGoldenStatus; open watches with env.watch and read them with next;
// wait for a condition with env.waitCollection, which lists and then watches:
// never sleep. Run independent cases with t.Parallel.
package conformance
