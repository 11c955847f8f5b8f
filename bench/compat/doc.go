// Package compat checks that client-go (v0.37) and controller-runtime (v0.25),
// with their default settings, work against kapi-apiserver.
//
// It holds only tests. By default they build kapi-apiserver from the
// enclosing module (go build ./cmd/kapi-apiserver), start it on loopback with
// --write-kubeconfig, and run every client against it:
//
//	cd bench && go test ./compat
//
// The same tests run against any cluster given a kubeconfig, which is how
// they are checked to be right (everything passes on a real kube-apiserver):
//
//	cd bench && go test ./compat -args -kubeconfig $HOME/.kube/config
//	KUBECONFIG=/path/to/kubeconfig go test ./compat
//
// -kapi-apiserver PATH uses an already built binary instead of building one.
// On a cluster the tests create namespaces named compat-*, and
// CustomResourceDefinitions in groups of their own (compat<random>.kapi.dev,
// envtest<random>.kapi.dev), and delete them at the end.
package compat
