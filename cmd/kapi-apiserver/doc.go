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
//	--tls-cert-file FILE, --tls-private-key-file FILE
//	    Serve HTTPS with this certificate (PEM, followed by its chain) and
//	    key instead of --tls's generated one, as kube-apiserver's flags. Every
//	    new connection gets the files' current certificate: rewrite them (a
//	    certificate manager's renewal) and the next handshake serves the new
//	    pair; a pair that does not load yet (the certificate written, not its
//	    key) leaves the last good one in service and is logged. The
//	    kubeconfig trusts the certificates of the file after the first (its
//	    chain), or the serving certificate itself when the file has no chain.
//	    Clients need TLS 1.2 or later, with either kind of certificate.
//	--client-ca-file FILE
//	    CA certificates (PEM) that verify client certificates, as
//	    kube-apiserver's flag: the server asks each client for a certificate
//	    (without requiring one); a certificate this CA verifies makes its
//	    common name the user and its organizations the groups.
//	--token-auth-file FILE
//	    Static bearer tokens in kube-apiserver's CSV format:
//	    token,user,uid[,"group1,group2"].
//	--anonymous-auth BOOL
//	    With --token-auth-file or --client-ca-file: whether requests without
//	    credentials are served as system:anonymous in system:unauthenticated
//	    (default true, as kube-apiserver; RBAC's bootstrap policy lets it read
//	    /healthz, /livez, /readyz and /version) or get 401.
//	--authorization-mode LIST
//	    AlwaysAllow or RBAC (kube-apiserver's comma-separated list; Node is
//	    accepted and ignored, so kubeadm's Node,RBAC decides as RBAC: kapi has
//	    no kubelets). The default is RBAC when the server authenticates (a
//	    token file or a client CA), AlwaysAllow otherwise. RBAC starts with
//	    kube-apiserver v1.37's bootstrap roles and bindings; system:masters
//	    may do everything.
//	--service-account-issuer URL
//	    The iss of the service account tokens the server signs (TokenRequest,
//	    kubectl create token) and accepts (default
//	    https://kubernetes.default.svc.cluster.local).
//	--service-account-key-file FILE
//	    PEM public keys (or private keys, or certificates) that verify
//	    service account tokens besides the signing key (repeatable, or
//	    comma-separated), as kube-apiserver's flag.
//	--service-account-signing-key-file FILE
//	    The PEM RSA private key that signs service account tokens (default a
//	    key generated at start: tokens do not outlive the process).
//	--max-requests-inflight N, --max-mutating-requests-inflight N
//	    Bounds on the read-only (get, list) and the other requests served at
//	    once (default 400 and 200; 0: no bound), as kube-apiserver's
//	    max-in-flight filter, the one it runs with
//	    --enable-priority-and-fairness=false: beyond its bound a request gets
//	    429 with Retry-After: 1, unless its user is in system:masters.
//	    Watches, logs, exec, attach, port-forward and proxies are not counted.
//
// With --token-auth-file or --client-ca-file the written kubeconfig's user
// is kapi's admin (admin, in system:masters): its token is --token when
// given, else one drawn at start. Without them the server authenticates
// nobody and every request is the admin's, as before.
//
//	--etcd-servers URL,...
//	    Keep the objects in etcd, as kube-apiserver does: its key layout under
//	    --etcd-prefix (default /registry), protobuf for built-in kinds and JSON
//	    for custom resources, resourceVersions that are etcd revisions. Several
//	    kapi-apiservers on one etcd are one API server (a write through one is
//	    seen by the watches of all; optimistic concurrency holds across them),
//	    and a kube-apiserver on the same etcd reads what kapi wrote. The
//	    --etcd-cafile, --etcd-certfile and --etcd-keyfile flags (PEM) set up
//	    TLS; --etcd-compaction-interval (default 5m, 0: never) how often the
//	    history is compacted. Not with --data-dir.
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
