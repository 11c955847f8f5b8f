// Command kapi-apiserver runs kapi's reference Kubernetes API server
// (package github.com/kapi-dev/kapi/apiserver) on a TCP listener, with an
// in-memory store, so that kubectl, client-go, kapi's own client or any other
// Kubernetes client can talk to it.
//
// # Usage
//
//	kapi-apiserver [flags]
//
// Once it serves, it prints one line on standard output,
//
//	kapi-apiserver listening on http://127.0.0.1:41327
//
// which scripts and tests can wait for (the kubeconfig is written before it).
// The store is in memory (or durable, with --data-dir) and starts with what
// every cluster has: the
// namespaces default, kube-system, kube-public and kube-node-lease, and the
// kubernetes Service with its Endpoints and EndpointSlice pointing at the
// server. Controllers do what kube-controller-manager's would: delete the
// content of deleted namespaces, collect garbage, and give every namespace
// its "default" ServiceAccount and kube-root-ca.crt ConfigMap (holding the
// --tls CA; empty without TLS). Logs go to standard error (log/slog, text
// format).
//
// SIGINT or SIGTERM shut it down gracefully: it stops accepting connections,
// ends open watches (clients re-watch, as after any kube-apiserver restart),
// lets other requests in flight finish for up to --shutdown-timeout, then
// stops the server and exits with status 0. A second signal kills it at
// once. A bad command line exits with status 2, a failure to start with 1.
//
// # Flags
//
//	--listen ADDR
//	    TCP address to listen on (default 127.0.0.1:0: loopback only, a port
//	    chosen by the system; the ready line and the kubeconfig give the
//	    address). Listening beyond loopback without --token gives everyone who
//	    can reach the port full access; the server warns.
//	--write-kubeconfig PATH
//	    Write a kubeconfig (mode 0600, replaced atomically) with a cluster, a
//	    user and a current context, all named "kapi", pointing at the server,
//	    so that `kubectl --kubeconfig PATH get pods -w` works. It carries the
//	    CA with --tls and the token with --token. With --tls and no --token the
//	    user's token is "unchecked": the server ignores it, but kubectl would
//	    otherwise prompt for a user name and password.
//	--tls
//	    Serve HTTPS (HTTP/2 and HTTP/1.1) with a certificate generated at start:
//	    an ephemeral CA (its key is never stored) signs a serving certificate
//	    for localhost, 127.0.0.1, ::1 and the listen address. The CA goes into
//	    the kubeconfig as certificate-authority-data. Without --tls the server
//	    speaks plain HTTP, which kubectl accepts for an http:// server URL.
//	--token TOKEN
//	    Require "Authorization: Bearer TOKEN" on every request; others get 401
//	    with a Kubernetes Status body (reason Unauthorized), as kube-apiserver
//	    sends. As on a default kube-apiserver, requests without credentials may
//	    still read /healthz, /livez, /readyz and /version; a wrong token is
//	    refused everywhere. Needs --tls: kubectl and client-go send a
//	    kubeconfig's credentials only to an https:// server. The token is
//	    visible to other local users in the process list.
//	--data-dir DIR
//	    Keep the objects in DIR/kapi.db (go.etcd.io/bbolt) instead of in
//	    memory only: every write is on disk before its response, and a server
//	    started again on DIR goes on with the same objects, resourceVersions
//	    and history window. A file it cannot read (damaged, of another
//	    format, or held by another process) fails the start.
//	--history-window DURATION
//	    How long old versions and deleted objects stay readable, for exact
//	    reads, continue tokens and watches from an old resourceVersion
//	    (default 5m, as etcd's compaction in a typical cluster).
//	--bookmark-interval DURATION
//	    How often an idle watch that allows bookmarks gets a BOOKMARK event
//	    (default 1m, as kube-apiserver).
//	--min-watch-timeout DURATION
//	    Lower bound of the randomised timeout of a watch that gives no
//	    timeoutSeconds; the timeout is drawn from [d, 2d) (default 30m,
//	    kube-apiserver's --min-request-timeout).
//	--shutdown-timeout DURATION
//	    How long a graceful shutdown waits for requests in flight before closing
//	    their connections (default 10s).
//	--log-level LEVEL
//	    debug, info, warn or error (default info); debug also logs every
//	    request with its status and duration.
//	--controllers LIST
//	    The controllers to run, as kube-controller-manager's flag: "*" for
//	    all (the default), "name" to add one, "-name" to leave one out. kapi
//	    has garbage-collector-controller, namespace-controller (without it a
//	    deleted namespace stays Terminating with its content, as in envtest),
//	    serviceaccount-controller and root-ca-certificate-publisher-controller.
//	    For example --controllers=*,-garbage-collector-controller.
//	--service-cluster-ip-range CIDR
//	    The IPv4 range services' cluster IPs come from (default 10.96.0.0/12);
//	    the kubernetes Service gets its first address.
//	--service-node-port-range RANGE
//	    The node ports of NodePort and LoadBalancer services, first-last or
//	    first+offset (default 30000-32767).
//	--advertise-address IP
//	    The address the kubernetes Service's Endpoints and EndpointSlice give
//	    (default the listen address, or 127.0.0.1 when that is unspecified);
//	    their port is the listener's.
//
// Flags take one or two leading dashes; -h prints a summary. The kubeconfig
// is left in place at exit.
package main
