package apiserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"

	admissionv1 "github.com/kapi-dev/kapi/api/admission/v1"
	admissionregistrationv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/patch"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/internal/cel"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// maxWebhookResponseBytes bounds what is read of a webhook's answer.
const maxWebhookResponseBytes = 3 << 20

// webhookCallError is a webhook that could not be called or whose answer
// is not an AdmissionReview kube-apiserver accepts: its failurePolicy
// decides.
type webhookCallError struct {
	name string
	err  error
}

func (e *webhookCallError) Error() string {
	return fmt.Sprintf("failed calling webhook %q: %v", e.name, e.err)
}

// reviewVars are the variables of the matchConditions: the request's
// object, oldObject and the request itself, as JSON values.
func reviewVars(req *admissionv1.AdmissionRequest) map[string]any {
	vars := map[string]any{"object": celValue(req.Object.Raw), "oldObject": celValue(req.OldObject.Raw), "request": nil}
	if b, err := kjson.Marshal(req); err == nil {
		vars["request"] = celValue(b)
	}
	return vars
}

// celValue is an encoded object as CEL sees it: null when there is none.
func celValue(raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if kjson.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

// admissionRequest is the AdmissionReview request for r with uid, sent
// as a request of matched (r's resource or an equivalent one, to which
// the objects are converted).
func (s *Server) admissionRequest(ctx context.Context, r *webhookRequest, matched *registry.Resource, uid metav1.UID) (*admissionv1.AdmissionRequest, error) {
	gvk := metav1.GroupVersionKind{Group: matched.Group, Version: matched.Version, Kind: matched.Kind}
	gvr := metav1.GroupVersionResource{Group: matched.Group, Version: matched.Version, Resource: matched.Resource}
	reqGVK := metav1.GroupVersionKind{Group: r.res.Group, Version: r.res.Version, Kind: r.res.Kind}
	reqGVR := metav1.GroupVersionResource{Group: r.res.Group, Version: r.res.Version, Resource: r.res.Resource}
	if r.kind != nil {
		gvk, reqGVK = *r.kind, *r.kind
	}
	dry := r.dryRun
	req := &admissionv1.AdmissionRequest{
		UID: uid, Kind: gvk, Resource: gvr, SubResource: r.subresource,
		RequestKind: &reqGVK, RequestResource: &reqGVR, RequestSubResource: r.subresource,
		Name: r.name, Namespace: r.ns, Operation: admissionv1.Operation(r.operation),
		UserInfo: userInfo(contextUser(ctx)),
		DryRun:   &dry,
	}
	if r.res.Group == "" && r.res.Resource == "namespaces" {
		req.Namespace = r.name // as kube-apiserver: a namespace is in itself
	}
	var err error
	encode := func(o registry.Object) []byte {
		if o == nil || reflect.ValueOf(o).IsNil() || err != nil {
			return nil
		}
		if o, err = inVersion(ctx, r.res, matched, o); err != nil {
			return nil
		}
		var b []byte
		b, err = kjson.Marshal(matched.WithTypeMeta(o))
		return b
	}
	req.Object.Raw = encode(r.obj)
	req.OldObject.Raw = encode(r.old)
	if r.options != nil && err == nil {
		req.Options.Raw, err = kjson.Marshal(r.options)
	}
	return req, err
}

// callWebhook sends w the review of req and returns its checked answer.
func (s *Server) callWebhook(ctx context.Context, w *webhook, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	if w.setupErr != nil {
		return nil, &webhookCallError{w.name, w.setupErr}
	}
	body, err := kjson.Marshal(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req})
	if err != nil {
		return nil, &webhookCallError{w.name, err}
	}
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	u, err := url.Parse(w.endpoint)
	if err != nil {
		return nil, &webhookCallError{w.name, err}
	}
	q := u.Query()
	q.Set("timeout", w.timeout.String())
	u.RawQuery = q.Encode()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, &webhookCallError{w.name, err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json, */*")
	resp, err := w.client.Do(hreq)
	if err != nil {
		return nil, &webhookCallError{w.name, fmt.Errorf("failed to call webhook: %w", err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxWebhookResponseBytes))
	if err != nil {
		return nil, &webhookCallError{w.name, fmt.Errorf("failed to call webhook: %w", err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &webhookCallError{w.name, fmt.Errorf("failed to call webhook: an error on the server (%q) has prevented the request from succeeding", truncate(data, 100))}
	}
	out, err := parseAdmissionResponse(data, req.UID, w.mutating)
	if err != nil {
		return nil, &webhookCallError{w.name, err}
	}
	return out, nil
}

// parseAdmissionResponse decodes and checks a webhook's answer as
// kube-apiserver does, with its words: a JSON object, of
// admission.k8s.io/v1 AdmissionReview when it says what it is, whose
// response carries the request's uid, and a patch (from a mutating webhook
// only) with patchType JSONPatch. A body that does not decode fails the
// call ("failed to call webhook: ..."); a review that fails a check is an
// invalid response ("received invalid webhook response: ...").
func parseAdmissionResponse(data []byte, uid metav1.UID, mutating bool) (*admissionv1.AdmissionResponse, error) {
	var head any
	if err := kjson.Unmarshal(data, &head); err != nil {
		head = "" // kube-apiserver reads what is not JSON as YAML: a bare string
	}
	m, ok := head.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("failed to call webhook: couldn't get version/kind; json parse error: json: cannot unmarshal %s into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }", jsonTypeName(head))
	}
	gv, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	if (gv != "" || kind != "") && (gv != "admission.k8s.io/v1" || kind != "AdmissionReview") {
		version := gv[strings.LastIndex(gv, "/")+1:]
		return nil, fmt.Errorf("failed to call webhook: converting (%s.%s) to (v1.AdmissionReview): unknown conversion", version, kind)
	}
	var review admissionv1.AdmissionReview
	if err := kjson.Unmarshal(data, &review); err != nil {
		return nil, fmt.Errorf("failed to call webhook: %w", err)
	}
	invalid := func(format string, a ...any) error {
		return fmt.Errorf("received invalid webhook response: "+format, a...)
	}
	resp := review.Response
	switch {
	case resp == nil:
		return nil, invalid("webhook response was absent")
	case resp.UID != uid:
		return nil, invalid("expected response.uid=%q, got %q", uid, resp.UID)
	case len(resp.Patch) > 0 && !mutating:
		return nil, invalid("validating webhooks may not return patches")
	case len(resp.Patch) > 0 && resp.PatchType == nil:
		return nil, invalid("webhook returned response.patch but not response.patchType")
	case resp.PatchType != nil && *resp.PatchType != admissionv1.PatchTypeJSONPatch:
		return nil, invalid("webhook returned invalid response.patchType of %q", *resp.PatchType)
	case resp.PatchType != nil && len(resp.Patch) == 0 && mutating:
		return nil, invalid("webhook returned response.patchType but not response.patch")
	}
	return resp, nil
}

// jsonTypeName is the name Go's encoding/json gives the JSON type of v in
// its errors.
func jsonTypeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case []any:
		return "array"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return "number"
}

// deniedStatus is the Status of a webhook's refusal, as kube-apiserver
// words it: the webhook's status with its code (400 when it gives none
// below 400) and its message (or reason) after the webhook's name.
func deniedStatus(name string, result *metav1.Status) *metav1.Status {
	st := &metav1.Status{}
	if result != nil {
		st = result.DeepCopy()
	}
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	if st.Code < http.StatusBadRequest {
		st.Code = http.StatusBadRequest
	}
	if st.Status == "" || st.Status == metav1.StatusSuccess {
		st.Status = metav1.StatusFailure
	}
	denied := fmt.Sprintf("admission webhook %q denied the request", name)
	switch {
	case st.Message != "":
		st.Message = denied + ": " + st.Message
	case st.Reason != "":
		st.Message = denied + ": " + string(st.Reason)
	default:
		st.Message = denied + " without explanation"
	}
	return st
}

// webhookFailure is the Status of a webhook that failed with failurePolicy
// Fail.
func webhookFailure(err error) *metav1.Status {
	return metav1.NewInternalError(err)
}

// runMutatingWebhooks calls the mutating webhooks that select r, in
// order, applying their patches to r.obj; a webhook with
// reinvocationPolicy IfNeeded is called once more when a later one changed
// the object.
func (s *Server) runMutatingWebhooks(ctx context.Context, hooks []*webhook, r *webhookRequest, o *writeOptions) *metav1.Status {
	if len(hooks) == 0 {
		return nil
	}
	changes := 0               // how many times a webhook changed the object
	seen := map[*webhook]int{} // invoked webhooks that may be invoked again: the changes when they last ran
	var reinvoke []*webhook
	run := func(w *webhook) *metav1.Status {
		changed, st := s.callMutatingWebhook(ctx, w, r, o)
		if st != nil {
			return st
		}
		if changed {
			changes++
		}
		if w.reinvoke {
			seen[w] = changes
		}
		return nil
	}
	for _, w := range hooks {
		if st := run(w); st != nil {
			return st
		}
	}
	for _, w := range hooks {
		if at, ok := seen[w]; ok && at < changes {
			reinvoke = append(reinvoke, w)
		}
	}
	for _, w := range reinvoke {
		if st := run(w); st != nil {
			return st
		}
	}
	return nil
}

// callMutatingWebhook calls w if it selects r and applies its patch;
// changed says whether the object changed.
func (s *Server) callMutatingWebhook(ctx context.Context, w *webhook, r *webhookRequest, o *writeOptions) (changed bool, _ *metav1.Status) {
	resp, matched, st := s.callIfSelected(ctx, w, r, o.warn)
	if st != nil || resp == nil {
		return false, st
	}
	if len(resp.Patch) == 0 || r.obj == nil { // a delete has no object to patch
		return false, nil
	}
	// The patch is of the object as the webhook was sent it, in the
	// version its rules matched; what it gives is converted back.
	in, err := inVersion(ctx, r.res, matched, r.obj)
	if err != nil {
		return false, metav1.NewInternalError(err)
	}
	doc, err := kjson.Marshal(matched.WithTypeMeta(in))
	if err != nil {
		return false, metav1.NewInternalError(err)
	}
	patched, err := patch.JSONPatch(doc, resp.Patch)
	if err != nil {
		return false, metav1.NewInternalError(err)
	}
	next := r.res.New()
	if err := kjson.Unmarshal(patched, next); err != nil {
		return false, metav1.NewInternalError(err)
	}
	if matched != r.res {
		if next, err = backFrom(ctx, r.res, next, r.obj); err != nil {
			return false, metav1.NewInternalError(err)
		}
	}
	s.storeOf(r.res).asDecoded(next)
	if sameObject(next, r.obj) {
		return false, nil
	}
	reflect.ValueOf(r.obj).Elem().Set(reflect.ValueOf(next).Elem())
	return true, nil
}

// callIfSelected calls w when it selects r, as a request of the matched
// resource (r's or an equivalent one): nil, nil when it does not or when
// its failure is ignored; a Status when it refuses r or fails. The
// webhook's warnings go to warn.
func (s *Server) callIfSelected(ctx context.Context, w *webhook, r *webhookRequest, warn func(string)) (_ *admissionv1.AdmissionResponse, matched *registry.Resource, _ *metav1.Status) {
	matched = s.webhookSelects(ctx, w, r)
	if matched == nil {
		return nil, nil, nil
	}
	req, err := s.admissionRequest(ctx, r, matched, s.cfg.NewUID())
	if err != nil {
		return nil, nil, metav1.NewInternalError(err)
	}
	if len(w.conditions) > 0 {
		vars := reviewVars(req)
		maps.Copy(vars, cel.AuthorizerVars(s.policyAuthz(ctx, contextUser(ctx)), cel.AuthzCheck{
			Group: r.res.Group, Resource: r.res.Resource, Subresource: r.subresource, Namespace: r.ns, Name: r.name}))
		selected, err := evalMatchConditions(w.conditions, vars)
		if err != nil {
			if w.failOpen {
				return nil, nil, nil
			}
			return nil, nil, metav1.NewForbidden(r.res.GroupResource(), r.name, err)
		}
		if !selected {
			return nil, nil, nil
		}
	}
	if r.dryRun && !w.dryRunOK {
		return nil, nil, metav1.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", w.name))
	}
	resp, err := s.callWebhook(ctx, w, req)
	if err != nil {
		if w.failOpen {
			return nil, nil, nil
		}
		return nil, nil, webhookFailure(err)
	}
	for _, msg := range resp.Warnings {
		warn(msg)
	}
	if !resp.Allowed {
		return nil, nil, deniedStatus(w.name, resp.Result)
	}
	return resp, matched, nil
}

// runValidatingWebhooks calls the validating webhooks that select r, at
// once; the first refusal in their order is the answer.
func (s *Server) runValidatingWebhooks(ctx context.Context, hooks []*webhook, r *webhookRequest, o *writeOptions) *metav1.Status {
	if len(hooks) == 0 {
		return nil
	}
	results := make([]*metav1.Status, len(hooks))
	warnings := make([][]string, len(hooks))
	var wg sync.WaitGroup
	for i, w := range hooks {
		wg.Go(func() {
			_, _, results[i] = s.callIfSelected(ctx, w, r, func(msg string) { warnings[i] = append(warnings[i], msg) })
		})
	}
	wg.Wait()
	for _, ws := range warnings {
		for _, msg := range ws {
			o.warn(msg)
		}
	}
	for _, st := range results {
		if st != nil {
			return st
		}
	}
	return nil
}

// webhookRequest is a create (old nil) or update of rs as the webhooks
// see it.
func (rs resourceStore) webhookRequest(o *writeOptions, obj, old registry.Object) *webhookRequest {
	r := &webhookRequest{res: rs.res, subresource: o.Subresource, name: obj.GetName(), obj: obj, old: old, dryRun: o.DryRun}
	if rs.res.Namespaced {
		r.ns = obj.GetNamespace()
	}
	kind := "UpdateOptions"
	r.operation = admissionregistrationv1.OperationType(admissionv1.Update)
	if old == nil {
		kind = "CreateOptions"
		r.operation = admissionregistrationv1.OperationType(admissionv1.Create)
	}
	opts := map[string]any{"kind": kind, "apiVersion": "meta.k8s.io/v1"}
	if o.DryRun {
		opts["dryRun"] = []string{"All"}
	}
	r.options = opts
	return r
}

// webhooksOf are the configured mutating or validating webhooks, none
// when their plugin is off.
func (s *Server) webhooksOf(ctx context.Context, mutating bool) []*webhook {
	if mutating {
		if s.admissionOn("MutatingAdmissionWebhook") {
			return s.webhooks.current(ctx).mutating
		}
		return nil
	}
	if s.admissionOn("ValidatingAdmissionWebhook") {
		return s.webhooks.current(ctx).validating
	}
	return nil
}

// admitMutatingWebhooks runs the mutating webhooks on a create (old nil)
// or update of rs, which change obj. The name of a create the server
// names from generateName is not drawn yet, as in kube-apiserver.
func (rs resourceStore) admitMutatingWebhooks(ctx context.Context, o *writeOptions, obj, old registry.Object) *metav1.Status {
	hooks := rs.s.webhooksOf(ctx, true)
	if len(hooks) == 0 {
		return nil
	}
	r := rs.webhookRequest(o, obj, old)
	if old == nil && o.nameGenerated {
		drawn := obj.GetName()
		obj.SetName("")
		r.name = ""
		defer func() {
			if obj.GetName() == "" {
				obj.SetName(drawn)
			}
		}()
	}
	return rs.s.runMutatingWebhooks(ctx, hooks, r, o)
}

// admitValidatingWebhooks runs the validating webhooks on a create (old
// nil) or update of rs.
func (rs resourceStore) admitValidatingWebhooks(ctx context.Context, o *writeOptions, obj, old registry.Object) *metav1.Status {
	hooks := rs.s.webhooksOf(ctx, false)
	if len(hooks) == 0 {
		return nil
	}
	return rs.s.runValidatingWebhooks(ctx, hooks, rs.webhookRequest(o, obj, old), o)
}

// admitDelete is the admission of a delete of cur, of res, as
// kube-apiserver's: the mutating webhooks, the ValidatingAdmissionPolicies,
// then the validating webhooks; the webhooks are sent cur as oldObject and
// no object. The warnings of the policies and webhooks go to o.
func (s *Server) admitDelete(ctx context.Context, res *registry.Resource, cur registry.Object, opts *metav1.DeleteOptions, o *writeOptions) *metav1.Status {
	mutating, validating := s.webhooksOf(ctx, true), s.webhooksOf(ctx, false)
	if len(mutating) == 0 && len(validating) == 0 {
		return s.admitPolicies(ctx, res, "", nil, cur, o)
	}
	options := *opts
	options.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "meta.k8s.io/v1"}
	r := &webhookRequest{res: res, name: cur.GetName(), operation: admissionregistrationv1.OperationType(admissionv1.Delete),
		old: cur, dryRun: len(opts.DryRun) > 0, options: &options}
	if res.Namespaced {
		r.ns = cur.GetNamespace()
	}
	if st := s.runMutatingWebhooks(ctx, mutating, r, o); st != nil {
		return st
	}
	if st := s.admitPolicies(ctx, res, "", nil, cur, o); st != nil {
		return st
	}
	return s.runValidatingWebhooks(ctx, validating, r, o)
}
