// Package apiserver is kapi's reference Kubernetes API server: the HTTP protocol
// of ../shared/spec (resource paths, verbs, resourceVersion semantics, chunked
// lists, watches, discovery, Status errors) over the MVCC store of
// apiserver/storage and the resource behaviour of apiserver/registry.
//
// # Use
//
// New builds a server; it is an http.Handler, so it can be mounted on a
// listener (cmd/kapi-apiserver does), on httptest.Server, or called in memory
// through an http.RoundTripper (the fake client does). Close stops its
// background work and ends every watch.
//
// # What it serves
//
// Beyond get, list, watch, create, update and delete:
//
//   - PATCH as JSON patch, merge patch and strategic merge patch (package
//     patch), and server-side apply with metadata.managedFields tracked on
//     every write (package fieldmanager, on structured-merge-diff);
//   - dryRun=All on every write, and fieldValidation (Warn, Strict, Ignore)
//     of unknown fields and repeated names;
//   - object metadata validated on every write as kube-apiserver does
//     (registry.ValidateObjectMeta and the kind's rules, handlers.go), and
//     metadata.generation kept per kind (Resource.GenerationChanged);
//   - Table output on get, list and watch (registry printers, CRD printer
//     columns), and metadata-only answers (PartialObjectMetadata and
//     PartialObjectMetadataList, in JSON, YAML and protobuf, watch events
//     included), negotiated from the Accept header as kube-apiserver does on
//     every verb (negotiate.go, partial.go);
//   - request bodies in JSON, YAML and protobuf, DeleteOptions bodies of
//     deletes included (optionsbody.go), 415 for any other media type;
//   - CustomResourceDefinitions (crd.go): served as soon as they are stored,
//     validated, pruned and defaulted by their schema (package schema);
//   - admission policies (policy.go, policy_mutating.go, policy_status.go):
//     ValidatingAdmissionPolicies and MutatingAdmissionPolicies with their
//     bindings enforced from the next request after they are written, and
//     a ValidatingAdmissionPolicy's status.typeChecking filled in as
//     kube-controller-manager does;
//   - discovery, legacy and aggregated (apidiscovery.k8s.io/v2 at /api and
//     /apis, with ETags), kept current as CRDs come and go (aggregated.go);
//   - the status and scale subresources;
//   - finalizers, graceful deletion of pods, namespace deletion of all
//     content, and a garbage collector for ownerReferences (gc.go) with the
//     three propagation policies;
//   - what kube-apiserver creates for itself (the kubernetes Service, its
//     Endpoints and EndpointSlice) and what kube-controller-manager's
//     serviceaccount and root-ca-certificate-publisher controllers put in
//     every namespace (nsdefaults.go), each of the controllers switchable;
//   - the OpenAPI documents, /openapi/v2 and /openapi/v3 (openapi.go,
//     package openapi), built from the kinds' Go types and the CRDs'
//     schemas, and rebuilt when the served resources change;
//   - the default admission plugins (admission.go) and admission webhooks
//     (webhook.go): the Validating- and MutatingWebhookConfigurations
//     stored are called over HTTPS with admission.k8s.io/v1
//     AdmissionReviews, a service reference at the address
//     Config.WebhookServiceMap gives;
//   - authentication as kube-apiserver's (Config.Authentication, authn.go):
//     client certificates, static tokens (ParseTokenFile reads a
//     --token-auth-file), service account tokens, anonymous requests, 401
//     otherwise; impersonation headers authorized as v1.37 does, constrained
//     and legacy (authn_impersonate.go); TokenReview and SelfSubjectReview
//     (kubectl auth whoami) answered from the same authenticator. Without
//     Config.Authentication every request is AdminUser's.
//
// # Shape
//
// A request is routed (server.go) to a handler (handlers.go for reads,
// handlers_write.go, patch.go, apply.go and scale.go for writes) that
// decodes it (decode.go, negotiate.go), calls the resource's store
// (resourceStore, store.go and store_delete.go) and writes the answer
// (respond.go, partial.go, table.go). The store runs the whole write
// pipeline (defaulting, managed fields, admission, validation, generation,
// finalizers and graceful deletion, dry run) and is also what the server's
// own controllers write through (gc.go, namespace.go, nsdefaults.go,
// kubernetes_service.go), so no path skips a stage. store.go says how to
// add a kind and a subresource. Every storage key is built by keyOf.
//
// # Fidelity
//
// Status codes, reasons and messages follow kube-apiserver; testdata/golden
// holds captures from a real server that the tests compare against.
package apiserver

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// Config configures a Server. The zero value is usable: an in-memory store,
// the built-in resources, Kubernetes' defaults.
type Config struct {
	// Authentication says how the server finds who makes a request (see
	// Authentication). Nil, the default of the in-process server and the
	// fake, authenticates nothing: every request is made by AdminUser.
	Authentication *Authentication
	// AuthorizationMode decides who may make which request, as
	// kube-apiserver's --authorization-mode (default AuthorizationAlwaysAllow).
	AuthorizationMode AuthorizationMode
	// Authorizer, if set, decides instead of AuthorizationMode's authorizer.
	Authorizer Authorizer
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight bound the
	// read-only (get, list) and the other requests served at once, as
	// kube-apiserver's flags of the same names with its max-in-flight
	// filter (default 400 and 200; negative: no bound). Long-running
	// requests (watches, logs, exec, attach, port-forward, proxies) are not
	// counted; a request beyond its bound gets 429 with Retry-After: 1 and
	// the filter's plain-text body, unless its user is in system:masters
	// (inflight.go).
	MaxRequestsInFlight         int
	MaxMutatingRequestsInFlight int
	// ServiceAccountIssuer is the iss of the service account tokens the
	// server issues and the default audience of a TokenRequest (default
	// https://kubernetes.default.svc.cluster.local, kube-apiserver's
	// --service-account-issuer of a kubeadm cluster).
	ServiceAccountIssuer string
	// ServiceAccountKey signs the service account tokens the server issues
	// (default a fresh RSA key, made at the first TokenRequest).
	ServiceAccountKey *rsa.PrivateKey
	// Registry holds the served resources (default registry.Builtin()).
	Registry *registry.Registry
	// Storage is the object store (default an in-memory store built with
	// HistoryWindow, or with DataDir the durable store in that directory).
	Storage storage.Interface
	// DataDir, if set and Storage is not, keeps the objects in a durable
	// store (storage.OpenBolt) in the file DataFile of this directory,
	// created if missing: every write is on disk before its response, and
	// a server started again on the directory goes on with the same
	// objects, resourceVersions and history window (continue tokens and
	// watches from a resourceVersion included). Objects are encoded as
	// kube-apiserver stores them in etcd: protobuf for built-in kinds, JSON
	// for custom resources. A file that cannot be read fails New. Default
	// "": memory only, lost when the server stops.
	DataDir string
	// Etcd, if its Servers are set and Storage is not, keeps the objects in
	// etcd (storage.OpenEtcd) as kube-apiserver does: same keys under
	// /registry (services under /registry/services/specs, custom
	// resources under /registry/GROUP/RESOURCE, …), protobuf for built-in
	// kinds and JSON for custom resources, resourceVersions that are etcd
	// revisions. Several servers on one cluster are one API server: a
	// write through one is seen by the watches of all, and their
	// optimistic concurrency holds across them. A real kube-apiserver on
	// the same etcd and prefix reads what kapi wrote, and the other way
	// round. Unreachable members fail New (after DefaultEtcdDialTimeout).
	Etcd EtcdConfig
	// HistoryWindow is how long the default store keeps old versions and
	// deleted objects readable, for exact reads, continue tokens and watches
	// from an old resourceVersion (default 5 minutes, as etcd's compaction in a
	// typical cluster).
	HistoryWindow time.Duration
	// BookmarkInterval is how often an idle watch that allows bookmarks gets a
	// BOOKMARK event (default 1 minute, as kube-apiserver).
	BookmarkInterval time.Duration
	// MinWatchTimeout is the lower bound of the randomised timeout of a watch
	// that gives no timeoutSeconds; the timeout is drawn from
	// [MinWatchTimeout, 2*MinWatchTimeout) so that clients do not reconnect in
	// lockstep (default 30 minutes, kube-apiserver's --min-request-timeout).
	MinWatchTimeout time.Duration
	// MaxRequestBodyBytes bounds request bodies (default 3 MiB, as
	// kube-apiserver); larger bodies get 413.
	MaxRequestBodyBytes int64
	// Now is the clock (default time.Now).
	Now func() time.Time
	// NewUID makes object UIDs (default random version 4 UUIDs).
	NewUID func() metav1.UID
	// NameSuffix makes the random suffix of generateName (default 5 characters
	// from Kubernetes' alphabet).
	NameSuffix func() string
	// Logger receives request errors (default slog.Default()).
	Logger *slog.Logger
	// Version is served at /version.
	Version VersionInfo
	// SkipSystemNamespaces leaves out the namespaces every cluster has
	// (default, kube-system, kube-public, kube-node-lease), which New
	// otherwise creates.
	SkipSystemNamespaces bool
	// DisableGarbageCollector turns off the collector of objects whose
	// owners are gone (gc.go), as in envtest: dependents are then never
	// deleted for their owners, and a Foreground or Orphan deletion keeps
	// its owner, finalizer and all, until a client removes the finalizer.
	// Tests that seed objects owned by objects they do not create may want
	// it, since the collector deletes such dependents shortly after.
	DisableGarbageCollector bool
	// DisableNamespaceController turns off the cleanup of deleted namespaces
	// (namespace.go, kube-controller-manager's namespace-controller): a
	// deleted namespace then stays Terminating with its content, as on a
	// cluster without a controller manager (envtest).
	DisableNamespaceController bool
	// DisableServiceAccountController turns off what
	// kube-controller-manager's serviceaccount-controller does: give every
	// active namespace a "default" ServiceAccount (nsdefaults.go).
	DisableServiceAccountController bool
	// DisableAdmissionPlugins turns off admission plugins by the names
	// kube-apiserver's --disable-admission-plugins takes (see
	// DefaultAdmissionPlugins and admission.go): "ServiceAccount" leaves
	// pods without a service account and token, "PodSecurity" ignores the
	// namespaces' pod-security.kubernetes.io labels, "NamespaceLifecycle"
	// lets objects be created in missing or terminating namespaces and the
	// system namespaces be deleted, and so on. A name kube-apiserver does
	// not know fails New.
	DisableAdmissionPlugins []string
	// DisableRootCAPublisher turns off what kube-controller-manager's
	// root-ca-certificate-publisher-controller does: give every active
	// namespace the kube-root-ca.crt ConfigMap (nsdefaults.go).
	DisableRootCAPublisher bool
	// DisableLocalAPIServices turns off what kube-apiserver's autoregister
	// controller does: keep one APIService per group version the server
	// serves, custom resources' included (apiservices.go). With
	// SkipSystemNamespaces, as the other objects the server makes for
	// itself, they are not made either.
	DisableLocalAPIServices bool
	// DisableBootstrapPolicy leaves out what kube-apiserver's
	// rbac/bootstrap-roles post-start hook creates: the ClusterRoles,
	// ClusterRoleBindings, Roles and RoleBindings of a v1.37 cluster
	// (cluster-admin, admin, edit, view, system:discovery ...,
	// rbac_bootstrap.go), made by default whatever the authorization mode,
	// as the hook does whenever the RBAC API is served. With
	// SkipSystemNamespaces, as the other objects the server makes for
	// itself, they are not made either. Without them an AuthorizationRBAC
	// server lets only system:masters and what the stored policy grants in.
	DisableBootstrapPolicy bool
	// DisableClusterRoleAggregation turns off what kube-controller-manager's
	// clusterrole-aggregation-controller does: a ClusterRole with an
	// aggregationRule gets the rules of the ClusterRoles its selectors
	// match, kept current (rbac_aggregate.go); the bootstrap admin, edit
	// and view roles get theirs so.
	DisableClusterRoleAggregation bool
	// RootCA is the PEM bundle of the CA that verifies the server's serving
	// certificate, published as ca.crt of every kube-root-ca.crt ConfigMap.
	// A server without TLS has none and publishes an empty ca.crt: there is
	// nothing to verify, and an empty bundle cannot be mistaken for a
	// certificate.
	RootCA []byte

	// ServiceClusterIPRange is the IPv4 range services' cluster IPs come
	// from (default 10.96.0.0/12), kube-apiserver's
	// --service-cluster-ip-range; the kubernetes Service gets its first
	// address. With Registry set, it must be the range that registry was
	// built with (registry.Options.ServiceCIDR).
	ServiceClusterIPRange netip.Prefix
	// ServiceNodePortRange is the range node ports come from (default
	// 30000-32767), kube-apiserver's --service-node-port-range. Ignored when
	// Registry is set (registry.Options.NodePortRange).
	ServiceNodePortRange registry.PortRange
	// AdvertiseAddress and AdvertisePort are where the kubernetes Service's
	// Endpoints and EndpointSlice in the default namespace point, and its
	// target port (default 192.0.2.1, a documentation address, and 6443,
	// kube-apiserver's secure port). It cannot be a loopback address: the
	// Endpoints would be invalid, as kube-apiserver's validation refuses
	// them. cmd/kapi-apiserver sets its listener's, or the host's.
	AdvertiseAddress netip.Addr
	AdvertisePort    int

	// WebhookServiceMap is where the admission webhooks and CRD conversion
	// webhooks configured with a clientConfig.service are reached, as
	// envtest rewrites them: keys are
	// "namespace/name" or "namespace/name:port" (the service's port, 443
	// when the webhook gives none; it wins over the key without one),
	// values host:port addresses. The TLS server name checked is the
	// service's, name.namespace.svc, as kube-apiserver checks it. A
	// webhook whose service is not mapped cannot be called (its
	// failurePolicy decides; a conversion fails). Default none. Webhooks configured with a url
	// are called at it.
	WebhookServiceMap map[string]string
}

// SystemNamespaces are the namespaces kube-apiserver creates at start; New
// creates them too unless Config.SkipSystemNamespaces is set.
var SystemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// VersionInfo is the /version document.
type VersionInfo struct {
	Major string `json:"major"`
	Minor string `json:"minor"`
	// EmulationMajor and EmulationMinor are the version whose APIs and
	// behaviour the server emulates; MinCompatibilityMajor and
	// MinCompatibilityMinor the oldest version it stays compatible with
	// (kube-apiserver 1.31 and later).
	EmulationMajor        string `json:"emulationMajor,omitempty"`
	EmulationMinor        string `json:"emulationMinor,omitempty"`
	MinCompatibilityMajor string `json:"minCompatibilityMajor,omitempty"`
	MinCompatibilityMinor string `json:"minCompatibilityMinor,omitempty"`
	GitVersion            string `json:"gitVersion"`
	GitCommit             string `json:"gitCommit"`
	GitTreeState          string `json:"gitTreeState"`
	BuildDate             string `json:"buildDate"`
	GoVersion             string `json:"goVersion"`
	Compiler              string `json:"compiler"`
	Platform              string `json:"platform"`
}

// Server is the reference API server. It is safe for concurrent use.
type Server struct {
	cfg      Config
	reg      *registry.Registry
	store    storage.Interface
	base     storage.Interface // store without the views of resources stored as others (sharedStorage) and the CRD hooks
	ownStore bool
	// leading counts the elected controllers running on this replica (elect.go).
	leading  atomic.Int32
	copiers  sync.Map // reflect.Type -> func(Object) Object
	encoded  *encodeCache
	managers sync.Map       // managerKey -> *fieldmanager.Manager (managed.go)
	crds     *crdController // serves the resources of CustomResourceDefinitions
	policies *policyIndex   // the ValidatingAdmissionPolicies and bindings (policy.go)

	ctx        context.Context
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	nsCleanups sync.Map // namespace name -> struct{}: its cleanup is running (namespace.go)
	gc         *garbageCollector
	openapi    openAPICache // the documents of /openapi (openapi.go)
	tokenKey   tokenKey     // signs service account tokens (token.go)
	// apiServicesKick asks for a sync of the local APIServices (apiservices.go).
	apiServicesKick chan struct{}
	webhooks        *webhooks  // the admission webhooks configured (webhook.go)
	lastModes       lastModes  // the impersonation mode that last worked, by user (authn_impersonate.go)
	rbac            *rbacIndex // the RBAC policy of AuthorizationRBAC (rbac.go); nil in other modes
	inflight        inFlight   // the in-flight bounds (inflight.go)
}

// New builds a server from cfg.
func New(cfg Config) (*Server, error) {
	if err := checkAdmissionPlugins(cfg.DisableAdmissionPlugins); err != nil {
		return nil, err
	}
	switch cfg.AuthorizationMode {
	case "":
		cfg.AuthorizationMode = AuthorizationAlwaysAllow
	case AuthorizationAlwaysAllow, AuthorizationRBAC:
	default:
		return nil, fmt.Errorf("apiserver: unknown authorization mode %q", cfg.AuthorizationMode)
	}
	if cfg.NameSuffix == nil {
		cfg.NameSuffix = randomSuffix
	}
	if !cfg.ServiceClusterIPRange.IsValid() {
		cfg.ServiceClusterIPRange = netip.MustParsePrefix("10.96.0.0/12")
	}
	if !cfg.AdvertiseAddress.IsValid() {
		cfg.AdvertiseAddress = netip.AddrFrom4([4]byte{192, 0, 2, 1})
	}
	if cfg.AdvertisePort <= 0 {
		cfg.AdvertisePort = 6443
	}
	if cfg.Registry == nil {
		reg, err := registry.BuiltinWith(registry.Options{NameSuffix: cfg.NameSuffix,
			ServiceCIDR: cfg.ServiceClusterIPRange, NodePortRange: cfg.ServiceNodePortRange})
		if err != nil {
			return nil, err
		}
		cfg.Registry = reg
	}
	if cfg.HistoryWindow <= 0 {
		cfg.HistoryWindow = 5 * time.Minute
	}
	if cfg.BookmarkInterval <= 0 {
		cfg.BookmarkInterval = time.Minute
	}
	if cfg.MinWatchTimeout <= 0 {
		cfg.MinWatchTimeout = 30 * time.Minute
	}
	if cfg.MaxRequestBodyBytes <= 0 {
		cfg.MaxRequestBodyBytes = 3 << 20
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewUID == nil {
		cfg.NewUID = randomUID
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Version.GitVersion == "" {
		cfg.Version = defaultVersion()
	}
	s := &Server{cfg: cfg, reg: cfg.Registry, store: cfg.Storage, encoded: newEncodeCache(4096), apiServicesKick: make(chan struct{}, 1),
		inflight: newInFlight(cfg.MaxRequestsInFlight, cfg.MaxMutatingRequestsInFlight)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if s.store == nil && len(cfg.Etcd.Servers) > 0 {
		store, err := s.openEtcd() // etcd.go
		if err != nil {
			return nil, err
		}
		s.store, s.ownStore = store, true
	}
	if s.store == nil && cfg.DataDir != "" {
		store, err := s.openDataDir() // storage_codec.go
		if err != nil {
			return nil, err
		}
		s.store, s.ownStore = store, true
	}
	if s.store == nil {
		s.store = storage.NewMemory(storage.MemoryConfig{
			HistoryWindow: cfg.HistoryWindow,
			Copy:          s.copyObject,
		})
		s.ownStore = true
	}
	s.base = s.store
	s.store = sharedStorage(s.store, s.reg)
	if err := s.startCRDs(); err != nil {
		s.Close()
		return nil, err
	}
	// The policy hooks go on the store before any goroutine reads s.store.
	if err := s.startPolicies(); err != nil {
		s.Close()
		return nil, err
	}
	if cfg.AuthorizationMode == AuthorizationRBAC {
		// Its store hook goes on before any goroutine reads s.store too.
		if err := s.startRBAC(); err != nil { // rbac.go
			s.Close()
			return nil, err
		}
	}
	s.startWebhooks() // stopped by Close (webhook.go)
	if !cfg.SkipSystemNamespaces {
		if err := s.createSystemNamespaces(); err != nil {
			s.Close()
			return nil, err
		}
		if err := s.createKubernetesService(s.ctx); err != nil {
			s.Close()
			return nil, err
		}
		s.startKubernetesServiceController() // stopped by Close
		if err := s.createSystemPriorityClasses(s.ctx); err != nil {
			s.Close()
			return nil, err
		}
	}
	if s.bootstrapPolicyEnabled() {
		if err := s.createBootstrapPolicy(s.ctx); err != nil { // rbac_bootstrap.go
			s.Close()
			return nil, err
		}
	}
	if !cfg.DisableClusterRoleAggregation {
		s.startClusterRoleAggregation() // stopped by Close (rbac_aggregate.go)
	}
	if !cfg.SkipSystemNamespaces && !cfg.DisableLocalAPIServices {
		if err := s.startLocalAPIServices(); err != nil { // apiservices.go
			s.Close()
			return nil, err
		}
	}
	if s.namespaceDefaultsEnabled() {
		s.startNamespaceDefaults() // stopped by Close (nsdefaults.go)
	}
	if s.rbac != nil {
		s.followRBAC() // stopped by Close (rbac.go)
	}
	// Last, once s.store is final: the collector's goroutine reads it.
	if !cfg.DisableGarbageCollector {
		s.startGC() // stopped by Close (gc.go)
	}
	return s, nil
}

// createSystemNamespaces creates SystemNamespaces through the API, so that
// they get the defaulting of any other namespace. Existing ones are kept.
// The server makes these requests itself, as AdminUser: they skip the
// filters.
func (s *Server) createSystemNamespaces() error {
	for _, ns := range SystemNamespaces {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces", strings.NewReader(`{"metadata":{"name":"`+ns+`"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "kube-apiserver") // their field manager in a cluster
		req = req.WithContext(withUser(req.Context(), AdminUser))
		rec := httptest.NewRecorder()
		s.route(rec, req)
		if rec.Code != http.StatusCreated && rec.Code != http.StatusConflict {
			return fmt.Errorf("apiserver: creating namespace %s: %d %s", ns, rec.Code, strings.TrimSpace(rec.Body.String()))
		}
	}
	return nil
}

// Close ends every watch and stops background work. Requests in flight fail.
func (s *Server) Close() error {
	s.cancel()
	s.wg.Wait()
	if s.webhooks != nil {
		s.webhooks.snap.Load().closeIdle()
	}
	if s.crds != nil {
		s.crds.closeConverters() // crd_conversion.go
	}
	if s.ownStore {
		return s.store.Close()
	}
	return nil
}

// Storage returns the server's store (Config.Storage, or the memory store
// it made), objects as stored. Writes of CustomResourceDefinitions made
// through it reach the server's CRD watch, which serves them shortly after
// (the API serves them before it answers).
func (s *Server) Storage() storage.Interface { return s.base }

// Registry returns the server's resources.
func (s *Server) Registry() *registry.Registry { return s.reg }

// copyObject deep-copies any object of a registered kind.
func (s *Server) copyObject(o storage.Object) storage.Object {
	t := reflect.TypeOf(o)
	if f, ok := s.copiers.Load(t); ok {
		return f.(func(storage.Object) storage.Object)(o)
	}
	m := reflect.ValueOf(o).MethodByName("DeepCopy")
	if !m.IsValid() {
		panic(fmt.Sprintf("apiserver: %T cannot be copied", o))
	}
	f := func(o storage.Object) storage.Object {
		return reflect.ValueOf(o).MethodByName("DeepCopy").Call(nil)[0].Interface().(storage.Object)
	}
	s.copiers.Store(t, f)
	return f(o)
}

func randomUID() metav1.UID {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return metav1.UID(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
}

// nameAlphabet is Kubernetes' generateName alphabet: no vowels (no words), no
// look-alike characters.
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func randomSuffix() string {
	b := make([]byte, 5)
	for i := range b {
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(nameAlphabet))))
		b[i] = nameAlphabet[n.Int64()]
	}
	return string(b)
}

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.cfg.Logger.Error("apiserver: panic serving request", "method", r.Method, "path", r.URL.Path, "panic", v)
			s.writeStatus(w, r, metav1.NewInternalError(fmt.Errorf("%v", v)))
		}
	}()
	// Every answer is private and not to be cached unless its handler says
	// otherwise (aggregated discovery does), as kube-apiserver's filter sets.
	w.Header().Set("Cache-Control", "no-cache, private")
	// The filters, in kube-apiserver's order: authentication (with
	// impersonation), the in-flight limit, authorization; then the route.
	r, ok := s.authenticateRequest(w, r)
	if !ok {
		return
	}
	release, ok := s.limitInFlight(w, r)
	if !ok {
		return
	}
	defer release()
	if !s.authorizeRequest(w, r) {
		return
	}
	s.route(w, r)
}

// route answers a request that has passed the filters.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/version", "/version/":
		s.writeRawJSON(w, http.StatusOK, s.cfg.Version)
		return
	case "/healthz", "/livez", "/readyz":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("ok"))
		return
	}
	if s.serveOpenAPI(w, r) {
		return
	}
	if s.serveDiscovery(w, r) {
		return
	}
	ri, ok := parsePath(r.URL.Path)
	group, version, isAPI := apiPathGroupVersion(r.URL.Path)
	if !isAPI {
		s.notFoundPage(w, r)
		return
	}
	// What is not served answers as kube-apiserver's handler of the path
	// would: its mux for unknown groups and for custom resource groups (a
	// plain-text page), a Status for the versions and resources of the
	// built-in groups.
	custom, served := s.groupKind(group)
	if !served && group != "" || custom && (!ok || !s.reg.HasGroupVersion(group, version) || s.reg.Get(group, version, ri.Resource) == nil) {
		s.notFoundPage(w, r)
		return
	}
	var res *registry.Resource
	if ok && s.reg.HasGroupVersion(ri.Group, ri.Version) {
		res = s.reg.Get(ri.Group, ri.Version, ri.Resource)
	}
	ri.setVerb(r)
	acrossNamespaces := ri.Namespace == "" && res != nil && res.Namespaced
	if res != nil && res.Custom && acrossNamespaces && ri.Verb != "list" && ri.Verb != "watch" {
		s.notFoundPage(w, r) // as kube-apiserver's custom resource handler
		return
	}
	if res == nil || (ri.Namespace != "" && !res.Namespaced) || (acrossNamespaces && ri.Name != "") || !validSubresource(res, ri.Sub) {
		s.writeStatus(w, r, resourceNotFound())
		return
	}
	if acrossNamespaces && ri.Verb != "list" && ri.Verb != "watch" {
		// Across namespaces a namespaced resource is only read.
		s.writeStatus(w, r, methodNotAllowed())
		return
	}
	h := &handler{s: s, res: res, ri: ri, w: w, r: r}
	h.serve()
}

// apiPathGroupVersion returns the group and version a path under /api/ or
// /apis/GROUP/ names; isAPI is false for other paths.
func apiPathGroupVersion(path string) (group, version string, isAPI bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		return "", parts[1], true
	case len(parts) >= 3 && parts[0] == "apis" && parts[1] != "":
		return parts[1], parts[2], true
	}
	return "", "", false
}

func validSubresource(res *registry.Resource, sub string) bool {
	switch sub {
	case "":
		return true
	case "status":
		return res.StatusSubresource
	case "scale":
		return hasScale(res)
	}
	return hasVirtualSubresource(res, sub)
}

// resourceNotFound is the body of golden case 58.
func resourceNotFound() *metav1.Status {
	st := metav1.NewGenericServerResponse(http.StatusNotFound, "get", metav1.GroupResource{}, "", "", 0, false)
	return st
}

// notFoundPage answers paths outside the API as kube-apiserver's mux does
// (golden case 59): plain text.
func (s *Server) notFoundPage(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte("404 page not found\n"))
}

func defaultVersion() VersionInfo {
	return VersionInfo{Major: "1", Minor: "37", EmulationMajor: "1", EmulationMinor: "37",
		MinCompatibilityMajor: "1", MinCompatibilityMinor: "36", GitVersion: "v1.37.2-kapi", GitTreeState: "clean",
		BuildDate: "1970-01-01T00:00:00Z", GoVersion: goVersion(), Compiler: "gc", Platform: platform()}
}
