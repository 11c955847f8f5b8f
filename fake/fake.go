package fake

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/client"
)

// Host is the base URL of every fake client. The .invalid top-level domain
// is reserved (RFC 2606), so a request that somehow left the process could
// not reach anything; fake clients never make one.
const Host = "https://kapi-fake.invalid"

// Options configure a Fake. The zero value is what New uses: sequential
// UIDs and generated names, the wall clock, the built-in resources, the
// server's and the client's defaults otherwise. Each default is explained
// on its field.
type Options struct {
	// Now is the server's clock: creation and deletion timestamps. Default
	// time.Now, because the code under test usually compares timestamps
	// with its own clock (an age, a requeue delay); inject a fixed or
	// stepped clock for timestamps that do not change between runs.
	Now func() time.Time
	// NewUID makes object UIDs. Default: sequential,
	// 00000000-0000-0000-0000-000000000001, …-000000000002, … counted per
	// Fake, so that the same test gets the same UIDs on every run (the
	// objects every server creates at start take the first ones).
	NewUID func() metav1.UID
	// NameSuffix makes the suffix of names made from generateName (and of
	// names the server makes up itself, such as a pod's token volume).
	// Default: sequential, counting in base 27 over Kubernetes' five-letter
	// alphabet (bbbbb, bbbbc, …), per Fake, for the same reason.
	NameSuffix func() string

	// Registry holds the resources the server serves (default the
	// built-in ones, registry.BuiltinWith with NameSuffix).
	Registry *registry.Registry
	// HistoryWindow is how long old resourceVersions stay readable (default
	// the server's, 5 minutes).
	HistoryWindow time.Duration
	// DisableGarbageCollector turns off the server's garbage collector
	// (apiserver.Config.DisableGarbageCollector). By default it runs as in
	// a cluster, so an object seeded with an ownerReference to an object
	// the test does not create is deleted shortly after; disable it to keep
	// such objects.
	DisableGarbageCollector bool
	// ServiceAccountController and RootCAPublisher turn on what
	// kube-controller-manager's serviceaccount and
	// root-ca-certificate-publisher controllers do on a cluster (and the
	// reference server by default): every namespace gets a "default"
	// ServiceAccount and a kube-root-ca.crt ConfigMap. They are off by
	// default, as in envtest (which runs no controller manager): a unit test
	// sees the objects it creates and nothing else, and the objects' UIDs
	// and names stay the same from run to run, which asynchronous writers
	// would change. Without the serviceaccount controller the server's
	// ServiceAccount admission plugin is off too, as envtest turns it off
	// (--disable-admission-plugins=ServiceAccount): pods get no service
	// account and no token volume, instead of being refused for want of
	// the "default" ServiceAccount.
	ServiceAccountController, RootCAPublisher bool
	// LocalAPIServices turns on the APIServices the server keeps for the
	// group versions it serves (apiserver.Config.DisableLocalAPIServices):
	// off by default for the same reasons, the ones of custom resources'
	// group versions being written as CRDs come and go.
	LocalAPIServices bool
	// DisableNamespaceController keeps deleted namespaces Terminating with
	// their content, as in envtest, instead of emptying and removing them
	// (apiserver.Config.DisableNamespaceController).
	DisableNamespaceController bool
	// RBAC makes the server authorize every request with RBAC
	// (apiserver.AuthorizationRBAC) as a cluster does, with a cluster's
	// bootstrap policy (cluster-admin, admin, edit, view, discovery for
	// every authenticated user ...) and ClusterRole aggregation, so that
	// a test can check that a controller's Role grants what it needs: the
	// client acting as User (a service account, say) gets 403 Forbidden
	// for what its bindings do not allow. Seeding (New's objects, Seed) is
	// done as the admin, in system:masters: seed the Roles and bindings
	// under test. Off by default: everything is allowed, as in envtest,
	// and the server makes none of the bootstrap policy's objects.
	RBAC bool
	// User is who the client acts as (default apiserver.AdminUser, in
	// system:masters: allowed everything whatever RBAC says). It is what
	// the server authenticates every request of the client (and of
	// clients made from Config) as; its groups are the user's own, with
	// system:authenticated added as kube-apiserver's authenticator does.
	User *apiserver.User

	// BookmarkInterval is how often an idle watch that allows bookmarks gets
	// one (default the server's, 1 minute; tests of bookmarks set a few
	// milliseconds).
	BookmarkInterval time.Duration

	// Namespace is the client's default namespace (default "default").
	Namespace string
	// ContentType is the client's preferred encoding: "application/json"
	// (default) or "application/vnd.kubernetes.protobuf".
	ContentType string
	// MaxRetries bounds the client's retries of a request that is safe to
	// repeat when it gets 429, 503 or 504 (default the client's, 5, with
	// its real backoff delays; negative disables retries, so that an error
	// a reactor injects reaches the caller at once).
	MaxRetries int

	// Faults are the faults injected into the clients' requests (see
	// Faults; default none).
	Faults Faults

	// Logger receives the server's error logs and the client's debug logs.
	// Default: for New and NewWithOptions, warnings and errors to the
	// test's output (shown with -v or when the test fails); for Start,
	// slog.Default().
	Logger *slog.Logger
}

// Fake is a client wired in-process to kapi's reference API server: every
// request goes through the real client (encoding, retries, errors) and is
// served by the real server (storage, validation, resourceVersions,
// selectors, watches), with reactors that may answer first and a record of
// every request. It is safe for concurrent use.
type Fake struct {
	server  *apiserver.Server
	handler http.Handler // the server; tests of the transport put their own
	client  *client.Client
	logger  *slog.Logger
	config  client.Config

	mu        sync.Mutex
	closed    bool
	active    map[*exchange]struct{}
	wg        sync.WaitGroup // handler goroutines
	closeOnce sync.Once
	closeErr  error

	faults  *injector     // nil: no faults
	closing chan struct{} // closed by Close
	// authenticates is set when the server authenticates requests
	// (Options.User): seeding requests then carry the admin's token.
	authenticates bool

	reactorMu sync.RWMutex
	reactors  []reactor // replaced, never modified in place

	actionMu sync.Mutex
	actions  []Action
}

// New returns a Fake for a test, with the default Options, seeded with
// objects (see Fake.Seed). A seed the server refuses fails the test with a
// message naming the object. The Fake is closed when the test ends, which
// ends every watch and leaves no goroutine behind.
//
//	f := fake.New(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "web"}})
//	cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
func New(t testing.TB, objects ...any) *Fake {
	t.Helper()
	return NewWithOptions(t, Options{}, objects...)
}

// NewWithOptions is New with Options.
func NewWithOptions(t testing.TB, opts Options, objects ...any) *Fake {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	f, err := start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("fake: closing: %v", err)
		}
	})
	if err := f.Seed(t.Context(), objects...); err != nil {
		t.Fatal(err)
	}
	return f
}

// NewClient returns the client of a Fake made by New, for tests that need
// neither reactors nor recorded actions.
func NewClient(t testing.TB, objects ...any) *client.Client {
	t.Helper()
	return New(t, objects...).Client()
}

// Start returns a Fake outside of a test, seeded with objects (see
// Fake.Seed). The caller must Close it. A seed the server refuses is an
// error naming the object; the Fake is then closed.
func Start(ctx context.Context, opts Options, objects ...any) (*Fake, error) {
	f, err := start(opts)
	if err != nil {
		return nil, err
	}
	if err := f.Seed(ctx, objects...); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// start builds the server and the client.
func start(opts Options) (*Fake, error) {
	if opts.NewUID == nil {
		opts.NewUID = sequentialUIDs()
	}
	if opts.NameSuffix == nil {
		opts.NameSuffix = sequentialNameSuffixes()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := opts.Faults.validate(); err != nil {
		return nil, err
	}
	var disabledPlugins []string
	if !opts.ServiceAccountController {
		disabledPlugins = []string{"ServiceAccount"}
	}
	var auth *apiserver.Authentication
	if opts.User != nil {
		auth = &apiserver.Authentication{Tokens: map[string]apiserver.User{
			adminToken: apiserver.AdminUser,
			userToken:  *opts.User,
		}}
	}
	mode := apiserver.AuthorizationAlwaysAllow
	if opts.RBAC {
		mode = apiserver.AuthorizationRBAC
	}
	srv, err := apiserver.New(apiserver.Config{
		Authentication:    auth,
		AuthorizationMode: mode,
		Registry:          opts.Registry,
		HistoryWindow:     opts.HistoryWindow,
		BookmarkInterval:  opts.BookmarkInterval,
		Now:               opts.Now,
		NewUID:            opts.NewUID,
		NameSuffix:        opts.NameSuffix,
		Logger:            opts.Logger,

		DisableGarbageCollector:         opts.DisableGarbageCollector,
		DisableNamespaceController:      opts.DisableNamespaceController,
		DisableServiceAccountController: !opts.ServiceAccountController,
		DisableRootCAPublisher:          !opts.RootCAPublisher,
		DisableAdmissionPlugins:         disabledPlugins,
		DisableLocalAPIServices:         !opts.LocalAPIServices,
		DisableBootstrapPolicy:          !opts.RBAC,
		DisableClusterRoleAggregation:   !opts.RBAC,
	})
	if err != nil {
		return nil, fmt.Errorf("fake: starting the server: %w", err)
	}
	f := &Fake{server: srv, handler: srv, logger: opts.Logger, active: map[*exchange]struct{}{},
		faults: newInjector(opts.Faults), closing: make(chan struct{}), authenticates: auth != nil}
	f.config = client.Config{
		Host:        Host,
		Transport:   &transport{f: f},
		QPS:         -1, // in memory: nothing to protect, and benchmarks must not be throttled
		Namespace:   opts.Namespace,
		ContentType: opts.ContentType,
		MaxRetries:  opts.MaxRetries,
		Logger:      opts.Logger,
	}
	if auth != nil {
		f.config.BearerToken = userToken
	}
	f.client, err = client.New(f.Config())
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("fake: %w", err)
	}
	return f, nil
}

// The bearer tokens of a Fake whose client acts as Options.User: the
// client's, and the admin's that seeding uses. They never leave the
// process.
const (
	userToken  = "kapi-fake-user"
	adminToken = "kapi-fake-admin"
)

// Client returns the Fake's client: the same *client.Client type
// client.New returns, for client.For (typed), client.Dynamic and
// Discovery.
func (f *Fake) Client() *client.Client { return f.client }

// Config returns a copy of the configuration of the Fake's client, whose
// Transport is the Fake's in-memory one. Change it and pass it to
// client.New for a second client on the same Fake (another namespace,
// protobuf, a user agent); its requests go through the same reactors and
// are recorded in the same Actions.
func (f *Fake) Config() *client.Config {
	cfg := f.config
	return &cfg
}

// Close stops the server: requests in flight fail, watches end, every
// goroutine the Fake started has returned when Close returns, and later
// requests fail. It may be called more than once. New and NewWithOptions
// close their Fake when the test ends.
func (f *Fake) Close() error {
	f.closeOnce.Do(func() {
		f.mu.Lock()
		f.closed = true
		close(f.closing)
		active := make([]*exchange, 0, len(f.active))
		for ex := range f.active {
			active = append(active, ex)
		}
		f.mu.Unlock()
		for _, ex := range active {
			ex.abort(errClosed)
		}
		f.closeErr = f.server.Close()
		f.wg.Wait()
	})
	return f.closeErr
}

// record appends a to the recorded actions.
func (f *Fake) record(a Action) {
	f.actionMu.Lock()
	f.actions = append(f.actions, a)
	f.actionMu.Unlock()
}

// Actions returns the requests the client has made so far, in the order
// they were sent (requests sent concurrently are in the order they reached
// the Fake), including those reactors answered and each retry of a retried
// request. Requests that are not about a resource (discovery, /version) are
// not recorded, nor are the Fake's own (seeding).
func (f *Fake) Actions() []Action {
	f.actionMu.Lock()
	defer f.actionMu.Unlock()
	out := make([]Action, len(f.actions))
	copy(out, f.actions)
	return out
}

// ClearActions forgets the recorded actions, typically between subtests.
func (f *Fake) ClearActions() {
	f.actionMu.Lock()
	f.actions = nil
	f.actionMu.Unlock()
}
