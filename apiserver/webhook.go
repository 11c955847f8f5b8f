package apiserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	celgo "github.com/google/cel-go/cel"

	admissionregistrationv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/internal/cel"
	"github.com/kapi-dev/kapi/selector"
)

// # Admission webhooks
//
// The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins call
// the webhooks of the stored MutatingWebhookConfigurations and
// ValidatingWebhookConfigurations with an admission.k8s.io/v1
// AdmissionReview (webhook_call.go): the mutating ones one after another,
// after the built-in mutating plugins, each seeing the object as the ones
// before left it (a JSON patch in its answer changes it); the validating
// ones at once, after the built-in validating plugins (PodSecurity ...)
// and the ValidatingAdmissionPolicies and before ResourceQuota
// (admitValidating). A webhook is called
// for a write its rules, namespaceSelector, objectSelector and
// matchConditions select; a failure to call it (unreachable, timeout,
// answer that does not decode) refuses the write unless its failurePolicy
// is Ignore.
//
// The configurations are read from the store into a snapshot, built again
// on the first request after one is written (webhookStore sees the writes
// of every path of the API; a watch sees those made through
// Server.Storage), so a change takes effect on the next request and a
// request with no webhook configured costs one atomic load.
//
// A webhook's clientConfig.url is called as is; a clientConfig.service is
// reached at the address Config.WebhookServiceMap gives for it, with the
// TLS server name kube-apiserver uses (name.namespace.svc), as envtest
// rewrites service references to a local address.

const (
	admissionRegistrationGroup = "admissionregistration.k8s.io"
	mutatingWebhookResource    = "mutatingwebhookconfigurations"
	validatingWebhookResource  = "validatingwebhookconfigurations"
	// defaultWebhookTimeout is a webhook's timeoutSeconds when it gives none.
	defaultWebhookTimeout = 10 * time.Second
)

var (
	mutatingWebhookPrefix   = keyOf(admissionRegistrationGroup, mutatingWebhookResource, "", "")
	validatingWebhookPrefix = keyOf(admissionRegistrationGroup, validatingWebhookResource, "", "")
)

func isWebhookConfigKey(key string) bool {
	return strings.HasPrefix(key, mutatingWebhookPrefix) || strings.HasPrefix(key, validatingWebhookPrefix)
}

// webhooks holds the snapshot of the configured webhooks.
type webhooks struct {
	s    *Server
	gen  atomic.Uint64 // moves with every write of a configuration
	snap atomic.Pointer[webhookSnapshot]
	mu   sync.Mutex // one rebuild at a time
}

// webhookSnapshot is the webhooks configured at generation gen, mutating
// and validating, each in kube-apiserver's order (by configuration name,
// then as listed).
type webhookSnapshot struct {
	gen                  uint64
	mutating, validating []*webhook
}

// webhook is one configured webhook, ready to match and call.
type webhook struct {
	name     string
	mutating bool
	rules    []admissionregistrationv1.RuleWithOperations
	exact    bool // matchPolicy Exact
	nsSel    *selector.LabelSelector
	objSel   *selector.LabelSelector
	// conditions are the compiled matchConditions, by name.
	conditions []webhookCondition
	failOpen   bool // failurePolicy Ignore
	// dryRunOK: sideEffects None or NoneOnDryRun.
	dryRunOK bool
	timeout  time.Duration
	reinvoke bool // reinvocationPolicy IfNeeded
	// endpoint is the URL called; client calls it; setupErr, when set, is
	// why the webhook cannot be called (a bad caBundle, url or condition).
	endpoint string
	client   *http.Client
	setupErr error
}

// webhookCondition is a compiled matchCondition.
type webhookCondition struct {
	expr string
	prg  celgo.Program
}

// startWebhooks makes the server call the webhooks of the stored
// configurations: the store is wrapped so that writes of a configuration
// mark the snapshot stale at once, and a watch does the same for writes
// made around the API.
func (s *Server) startWebhooks() {
	wh := &webhooks{s: s}
	s.webhooks = wh
	s.store = &webhookStore{Interface: s.store, wh: wh}
	stale := func(context.Context) { wh.gen.Add(1) }
	// One watch per resource: a store on etcd has kube-apiserver's layout,
	// where a group's resources share no prefix.
	rev := s.store.Revision()
	for _, r := range []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"} {
		s.followStore(keyOf(admissionRegistrationGroup, r, "", ""), rev, 100*time.Millisecond, stale, func(ctx context.Context, ev storage.Event) {
			switch ev.Object.(type) {
			case *admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration:
				stale(ctx)
			}
		})
	}
}

// webhookStore is the server's store with the configurations' writes
// marking the webhook snapshot stale.
type webhookStore struct {
	storage.Interface
	wh *webhooks
}

func (w *webhookStore) Create(ctx context.Context, key string, obj storage.Object) (storage.Object, error) {
	out, err := w.Interface.Create(ctx, key, obj)
	if isWebhookConfigKey(key) {
		w.wh.gen.Add(1)
	}
	return out, err
}

func (w *webhookStore) GuaranteedUpdate(ctx context.Context, key string, allowCreate bool, pre *storage.Preconditions,
	tryUpdate func(storage.Object) (storage.Object, error)) (storage.Object, error) {
	out, err := w.Interface.GuaranteedUpdate(ctx, key, allowCreate, pre, tryUpdate)
	if isWebhookConfigKey(key) {
		w.wh.gen.Add(1)
	}
	return out, err
}

func (w *webhookStore) Delete(ctx context.Context, key string, pre *storage.Preconditions, validate func(storage.Object) error) (storage.Object, error) {
	out, err := w.Interface.Delete(ctx, key, pre, validate)
	if isWebhookConfigKey(key) {
		w.wh.gen.Add(1)
	}
	return out, err
}

// current is the snapshot of the configured webhooks, built again when a
// configuration was written since the last one.
func (wh *webhooks) current(ctx context.Context) *webhookSnapshot {
	gen := wh.gen.Load()
	if snap := wh.snap.Load(); snap != nil && snap.gen == gen {
		return snap
	}
	wh.mu.Lock()
	defer wh.mu.Unlock()
	gen = wh.gen.Load()
	if snap := wh.snap.Load(); snap != nil && snap.gen == gen {
		return snap
	}
	snap := &webhookSnapshot{gen: gen}
	for _, c := range readObjects[*admissionregistrationv1.MutatingWebhookConfiguration](ctx, wh.s, admissionRegistrationGroup, mutatingWebhookResource, "") {
		for i := range c.Webhooks {
			h := &c.Webhooks[i]
			w := wh.s.newWebhook(h.Name, true, h.Rules, h.MatchPolicy, h.NamespaceSelector, h.ObjectSelector, h.MatchConditions,
				h.FailurePolicy, h.SideEffects, h.TimeoutSeconds, h.ClientConfig)
			w.reinvoke = h.ReinvocationPolicy != nil && *h.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy
			snap.mutating = append(snap.mutating, w)
		}
	}
	for _, c := range readObjects[*admissionregistrationv1.ValidatingWebhookConfiguration](ctx, wh.s, admissionRegistrationGroup, validatingWebhookResource, "") {
		for i := range c.Webhooks {
			h := &c.Webhooks[i]
			snap.validating = append(snap.validating, wh.s.newWebhook(h.Name, false, h.Rules, h.MatchPolicy, h.NamespaceSelector, h.ObjectSelector,
				h.MatchConditions, h.FailurePolicy, h.SideEffects, h.TimeoutSeconds, h.ClientConfig))
		}
	}
	if ctx.Err() == nil { // a list cut short is not the state to keep
		wh.snap.Swap(snap).closeIdle()
	}
	return snap
}

// closeIdle closes the idle connections of the snapshot's webhooks (nil
// safe): it is replaced, or the server closes.
func (snap *webhookSnapshot) closeIdle() {
	if snap == nil {
		return
	}
	for _, list := range [][]*webhook{snap.mutating, snap.validating} {
		for _, w := range list {
			if w.client != nil {
				w.client.CloseIdleConnections()
			}
		}
	}
}

// newWebhook prepares a configured webhook (the fields the mutating and
// validating kinds share).
func (s *Server) newWebhook(name string, mutating bool, rules []admissionregistrationv1.RuleWithOperations,
	matchPolicy *admissionregistrationv1.MatchPolicyType, nsSel, objSel *metav1.LabelSelector,
	conditions []admissionregistrationv1.MatchCondition, failurePolicy *admissionregistrationv1.FailurePolicyType,
	sideEffects *admissionregistrationv1.SideEffectClass, timeoutSeconds *int32, cc admissionregistrationv1.WebhookClientConfig) *webhook {
	w := &webhook{
		name: name, mutating: mutating, rules: rules,
		exact:    matchPolicy != nil && *matchPolicy == admissionregistrationv1.Exact,
		failOpen: failurePolicy != nil && *failurePolicy == admissionregistrationv1.Ignore,
		dryRunOK: sideEffects != nil && (*sideEffects == admissionregistrationv1.SideEffectClassNone ||
			*sideEffects == admissionregistrationv1.SideEffectClassNoneOnDryRun),
		timeout: defaultWebhookTimeout,
	}
	if timeoutSeconds != nil && *timeoutSeconds > 0 {
		w.timeout = time.Duration(*timeoutSeconds) * time.Second
	}
	var errs []error
	compileSel := func(ls *metav1.LabelSelector) *selector.LabelSelector {
		if ls == nil {
			return nil
		}
		sel, err := selector.FromLabelSelector(ls)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		return &sel
	}
	w.nsSel, w.objSel = compileSel(nsSel), compileSel(objSel)
	for _, c := range conditions {
		prg, err := compileMatchCondition(c.Expression)
		if err != nil {
			errs = append(errs, fmt.Errorf("compilation failed for match condition %q: %w", c.Name, err))
			continue
		}
		w.conditions = append(w.conditions, webhookCondition{expr: c.Expression, prg: prg})
	}
	var err error
	w.endpoint, w.client, err = s.webhookClient(cc)
	if err != nil {
		errs = append(errs, err)
	}
	w.setupErr = errors.Join(errs...)
	return w
}

// webhookClient is the URL a webhook is called at and the client that
// trusts its caBundle (the system's roots without one).
func (s *Server) webhookClient(cc admissionregistrationv1.WebhookClientConfig) (string, *http.Client, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(cc.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cc.CABundle) {
			return "", nil, errors.New("unable to load root certificates: unable to parse bytes as PEM block")
		}
		tlsCfg.RootCAs = pool
	}
	var endpoint string
	dialAddr := ""
	switch {
	case cc.URL != nil:
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return "", nil, err
		}
		endpoint = u.String()
	case cc.Service != nil:
		svc := cc.Service
		port := int32(443)
		if svc.Port != nil {
			port = *svc.Port
		}
		host := svc.Name + "." + svc.Namespace + ".svc"
		tlsCfg.ServerName = host
		path := ""
		if svc.Path != nil {
			path = *svc.Path
		}
		endpoint = "https://" + net.JoinHostPort(host, strconv.Itoa(int(port))) + path
		dialAddr = s.cfg.WebhookServiceMap[svc.Namespace+"/"+svc.Name+":"+strconv.Itoa(int(port))]
		if dialAddr == "" {
			dialAddr = s.cfg.WebhookServiceMap[svc.Namespace+"/"+svc.Name]
		}
		if dialAddr == "" {
			// kube-apiserver resolves the service through its endpoints;
			// kapi has no pods behind services to reach.
			return endpoint, nil, fmt.Errorf("service \"%s/%s\" has no address: give one with the webhook service map", svc.Namespace, svc.Name)
		}
	default:
		return "", nil, errors.New("the webhook has neither a url nor a service")
	}
	tr := &http.Transport{TLSClientConfig: tlsCfg, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}
	if dialAddr != "" {
		d := &net.Dialer{}
		tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, dialAddr)
		}
	}
	return endpoint, &http.Client{Transport: tr}, nil
}

// webhookRequest is what the webhooks are asked to admit.
type webhookRequest struct {
	res         *registry.Resource
	subresource string
	// kind, when set, is the kind of obj and old when it is not res's (a
	// Scale written through the scale subresource).
	kind      *metav1.GroupVersionKind
	operation admissionOperation
	name, ns  string
	obj, old  registry.Object // obj nil on delete, old nil on create
	dryRun    bool
	options   any // the request's CreateOptions, UpdateOptions or DeleteOptions
}

// admissionOperation is CREATE, UPDATE, DELETE or CONNECT.
type admissionOperation = admissionregistrationv1.OperationType

// matchedResource is the resource whose version w's rules select for r:
// r's own, or with matchPolicy Equivalent another version of it
// (admission_equivalent.go); nil when they do not select r.
func (s *Server) matchedResource(w *webhook, r *webhookRequest) *registry.Resource {
	resource := r.res.Resource
	if r.subresource != "" {
		resource += "/" + r.subresource
	}
	return s.equivalentMatch(r.res, w.exact, func(res *registry.Resource, anyVersion bool) bool {
		return slices.ContainsFunc(w.rules, func(rule admissionregistrationv1.RuleWithOperations) bool {
			return ruleMatches(rule, r, res, anyVersion, resource)
		})
	})
}

// ruleMatches is one rule of a webhook against a request of res (r's
// resource or an equivalent one): its operations, group, version (any
// with anyVersion), resource (with "*", "*/*", "pods/*", "*/status") and
// scope.
func ruleMatches(rule admissionregistrationv1.RuleWithOperations, r *webhookRequest, res *registry.Resource, anyVersion bool, resource string) bool {
	if !slices.Contains(rule.Operations, admissionregistrationv1.OperationAll) && !slices.Contains(rule.Operations, r.operation) {
		return false
	}
	if !slices.Contains(rule.APIGroups, "*") && !slices.Contains(rule.APIGroups, res.Group) {
		return false
	}
	if !anyVersion && !slices.Contains(rule.APIVersions, "*") && !slices.Contains(rule.APIVersions, res.Version) {
		return false
	}
	if !slices.ContainsFunc(rule.Resources, func(pattern string) bool { return resourceMatches(pattern, resource) }) {
		return false
	}
	if rule.Scope == nil || *rule.Scope == admissionregistrationv1.AllScopes {
		return true
	}
	isNamespace := r.res.Group == "" && r.res.Resource == "namespaces"
	switch *rule.Scope {
	case admissionregistrationv1.NamespacedScope:
		return !isNamespace && r.ns != ""
	case admissionregistrationv1.ClusterScope:
		return isNamespace || r.ns == ""
	}
	return false
}

// resourceMatches matches a rule's resource pattern against
// "resource[/subresource]".
func resourceMatches(pattern, resource string) bool {
	pr, psub, _ := strings.Cut(pattern, "/")
	rr, rsub, _ := strings.Cut(resource, "/")
	if psub == "" { // "pods", "*": the resource itself only
		return rsub == "" && (pr == "*" || pr == rr)
	}
	return (pr == "*" || pr == rr) && (psub == "*" || psub == rsub)
}

// namespaceLabels are the labels a namespaceSelector is matched against:
// a namespace's own, those of the namespace of a namespaced object; none
// apply to another cluster-scoped object.
func (s *Server) namespaceLabels(ctx context.Context, r *webhookRequest) (map[string]string, bool) {
	switch {
	case r.res.Group == "" && r.res.Resource == "namespaces":
		switch {
		case r.obj != nil:
			return r.obj.GetLabels(), true
		case r.old != nil:
			return r.old.GetLabels(), true
		}
		if n, ok := s.readObject(ctx, "", "namespaces", "", r.name).(*corev1.Namespace); ok {
			return n.Labels, true
		}
		return nil, true
	case r.ns != "":
		if n, ok := s.readObject(ctx, "", "namespaces", "", r.ns).(*corev1.Namespace); ok {
			return n.Labels, true
		}
		return nil, true
	}
	return nil, false
}

// webhookSelects is the resource (r's, or an equivalent one) as which w
// is sent r when its rules and namespace and object selectors select it;
// nil when they do not (its matchConditions are evaluated on the review).
func (s *Server) webhookSelects(ctx context.Context, w *webhook, r *webhookRequest) *registry.Resource {
	matched := s.matchedResource(w, r)
	if matched == nil {
		return nil
	}
	if w.nsSel != nil && !w.nsSel.Empty() {
		if labels, applies := s.namespaceLabels(ctx, r); applies && !w.nsSel.Matches(selector.Set(labels)) {
			return nil
		}
	}
	if w.objSel != nil && !w.objSel.Empty() {
		for _, o := range []registry.Object{r.obj, r.old} {
			if o != nil && w.objSel.Matches(selector.Set(o.GetLabels())) {
				return matched
			}
		}
		return nil
	}
	return matched
}

// evalMatchConditions is true when every condition is; a false one wins
// over errors of others, as in kube-apiserver. The error is the first
// condition that could not be evaluated, worded as kube-apiserver does.
func evalMatchConditions(conds []webhookCondition, vars map[string]any) (bool, error) {
	var first error
	for _, c := range conds {
		out, _, err := c.prg.Eval(vars)
		if err == nil {
			b, ok := out.Value().(bool)
			if ok && !b {
				return false, nil
			}
			if !ok {
				err = errors.New("no such overload")
			}
		}
		if err != nil && first == nil {
			first = fmt.Errorf("expression '%s' resulted in error: %w", c.expr, err)
		}
	}
	return first == nil, first
}

var (
	matchEnvOnce sync.Once
	matchEnv     *celgo.Env
	matchEnvErr  error
)

// compileMatchCondition compiles a matchCondition's expression in
// kube-apiserver's environment for them: object, oldObject, request and
// the authorizer library (policy_authz.go).
func compileMatchCondition(expr string) (celgo.Program, error) {
	matchEnvOnce.Do(func() {
		base, err := cel.BaseEnv()
		if err != nil {
			matchEnvErr = err
			return
		}
		matchEnv, matchEnvErr = base.Extend(append([]celgo.EnvOption{
			celgo.Variable("object", celgo.DynType),
			celgo.Variable("oldObject", celgo.DynType),
			celgo.Variable("request", celgo.DynType),
		}, cel.AuthorizerLibrary()...)...)
	})
	if matchEnvErr != nil {
		return nil, matchEnvErr
	}
	ast, iss := matchEnv.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if t := ast.OutputType(); t != celgo.BoolType && t != celgo.DynType {
		return nil, fmt.Errorf("must evaluate to bool")
	}
	return matchEnv.Program(ast, celgo.CostLimit(1000000), celgo.InterruptCheckFrequency(100))
}
