package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	policyv1 "github.com/kapi-dev/kapi/api/policy/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/selector"
)

// The subresources of pods that are not the pod itself: binding (assign a
// node), eviction (a delete that honours PodDisruptionBudgets), and the
// connections to the pod's kubelet (log, exec, attach, portforward,
// proxy), which a server without kubelets answers as kube-apiserver does
// for a pod on no node or on a node it cannot reach.

// created is the 201 Success Status of a binding or an eviction.
func created() *metav1.Status {
	return &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated}
}

// serveBinding answers POST pods/NAME/binding.
func (h *handler) serveBinding() {
	opts, st := queryOptions(h, metav1.DecodeCreateOptions, metav1.ValidateCreateOptions, "CreateOptions")
	if st != nil {
		h.fail(st)
		return
	}
	obj, st := h.decodeAs(h.s.reg.Get("", "v1", "bindings"))
	if st != nil {
		h.fail(st)
		return
	}
	if st := h.checkNamespace(obj); st != nil {
		h.fail(st)
		return
	}
	if obj.GetName() != h.ri.Name {
		h.fail(metav1.NewBadRequest("name in URL does not match name in Binding object"))
		return
	}
	h.manager = managerName(opts.FieldManager, h.r.UserAgent())
	h.createBinding(obj, h.dryRun(opts.DryRun))
}

// createBinding assigns the pod a Binding names to its target node, as
// kube-apiserver's binding storage: the pod must exist, be unassigned and
// not being deleted; its spec.nodeName is set, the Binding's annotations
// are added to it and its PodScheduled condition turns True.
func (h *handler) createBinding(obj registry.Object, dryRun bool) {
	b := obj.(*corev1.Binding)
	var errs metav1.FieldErrors
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, metav1.FieldNotSupported("target.kind", b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if b.Target.Name == "" {
		errs = append(errs, metav1.FieldRequired("target.name", ""))
	}
	if len(errs) > 0 {
		h.fail(metav1.NewInvalid(metav1.GroupKind{Kind: "Binding"}, b.Name, errs))
		return
	}
	pods := h.s.reg.Get("", "v1", "pods")
	rs := h.s.storeOf(pods)
	gr := metav1.GroupResource{Resource: "pods/binding"}
	o := &writeOptions{Manager: h.manager, Subresource: "binding", DryRun: dryRun}
	try := func(cur storage.Object) (storage.Object, error) {
		if cur == nil {
			return nil, storage.ErrNotFound
		}
		pod := cur.(*corev1.Pod)
		if pod.DeletionTimestamp != nil {
			return nil, asError(metav1.NewConflict(gr, b.Name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", b.Name)))
		}
		if pod.Spec.NodeName != "" {
			return nil, asError(metav1.NewConflict(gr, b.Name, fmt.Errorf("pod %s is already assigned to node %q", b.Name, pod.Spec.NodeName)))
		}
		if b.UID != "" && b.UID != pod.UID {
			return nil, asError(metav1.NewConflict(gr, b.Name, fmt.Errorf("Precondition failed: UID in precondition: %s, UID in object meta: %s", b.UID, pod.UID)))
		}
		next := pod.DeepCopy()
		next.Spec.NodeName = b.Target.Name
		for k, v := range b.Annotations {
			if next.Annotations == nil {
				next.Annotations = map[string]string{}
			}
			next.Annotations[k] = v
		}
		setPodScheduled(next, h.s.cfg.Now())
		return next, nil
	}
	if _, _, err := rs.update(h.r.Context(), b.Namespace, b.Name, false, nil, o, try); err != nil {
		h.failErr(err)
		return
	}
	h.fail(created())
}

// setPodScheduled sets the pod's PodScheduled condition to True.
func setPodScheduled(p *corev1.Pod, now time.Time) {
	for i, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			if c.Status != corev1.ConditionTrue {
				p.Status.Conditions[i].Status = corev1.ConditionTrue
				p.Status.Conditions[i].LastTransitionTime = metav1.NewTime(now.UTC().Truncate(time.Second))
				p.Status.Conditions[i].Reason, p.Status.Conditions[i].Message = "", ""
			}
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(now.UTC().Truncate(time.Second))})
}

// evictionResource describes policy/v1 Eviction, for decoding it.
var evictionResource = func() func() *registry.Resource {
	var res *registry.Resource
	return func() *registry.Resource {
		if res == nil {
			res = registry.Typed[policyv1.Eviction](&registry.Resource{Group: "policy", Version: "v1", Resource: "evictions", Kind: "Eviction", NotStored: true})
		}
		return res
	}
}()

// serveEviction answers POST pods/NAME/eviction as kube-apiserver's
// eviction storage: a pod that is Pending, terminated or already being
// deleted is deleted at once; another is deleted only if the one
// PodDisruptionBudget selecting it (none is fine, two are refused) allows
// a disruption, else 429 with a DisruptionBudget cause.
func (h *handler) serveEviction() {
	obj, st := h.decodeAs(evictionResource())
	if st != nil {
		h.fail(st)
		return
	}
	ev := obj.(*policyv1.Eviction)
	if ev.Name != h.ri.Name {
		h.fail(metav1.NewBadRequest("name in URL does not match name in Eviction object"))
		return
	}
	ctx := h.r.Context()
	pods := h.s.storeOf(h.res)
	cur, err := pods.Get(ctx, h.ri.Namespace, h.ri.Name, storage.ReadOptions{})
	if err != nil {
		h.failErr(err)
		return
	}
	pod := cur.(*corev1.Pod)
	opts := &metav1.DeleteOptions{}
	if ev.DeleteOptions != nil {
		opts = ev.DeleteOptions.DeepCopy()
	}
	if opts.Preconditions == nil || opts.Preconditions.UID == nil {
		if opts.Preconditions == nil {
			opts.Preconditions = &metav1.Preconditions{}
		}
		uid := pod.UID
		opts.Preconditions.UID = &uid
	}
	if !canIgnoreBudgets(pod) {
		if st := h.checkBudgets(ctx, pod); st != nil {
			h.fail(st)
			return
		}
	}
	if _, _, err := pods.Delete(ctx, h.ri.Namespace, h.ri.Name, opts); err != nil {
		h.failErr(err)
		return
	}
	h.fail(created())
}

// canIgnoreBudgets: a pod that is not running, or already being deleted,
// is evicted without looking at budgets.
func canIgnoreBudgets(p *corev1.Pod) bool {
	switch p.Status.Phase {
	case corev1.PodPending, corev1.PodSucceeded, corev1.PodFailed:
		return true
	}
	return p.DeletionTimestamp != nil
}

// checkBudgets refuses the eviction of pod when a PodDisruptionBudget does
// not allow it.
func (h *handler) checkBudgets(ctx context.Context, pod *corev1.Pod) *metav1.Status {
	pdbRes := h.s.reg.Get("policy", "v1", "poddisruptionbudgets")
	if pdbRes == nil {
		return nil // no budgets are served
	}
	list, err := h.s.storeOf(pdbRes).List(ctx, pod.Namespace, storage.ListOptions{})
	if err != nil {
		return errorStatus(err)
	}
	var budgets []*policyv1.PodDisruptionBudget
	for _, it := range list.Items {
		pdb := it.(*policyv1.PodDisruptionBudget)
		if pdb.Spec.Selector == nil {
			continue
		}
		sel, err := selector.FromLabelSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(selector.Set(pod.Labels)) {
			continue
		}
		budgets = append(budgets, pdb)
	}
	switch len(budgets) {
	case 0:
		return nil
	case 1:
	default:
		return metav1.NewInternalError(errors.New("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."))
	}
	pdb := budgets[0]
	desired, healthy, st := h.budgetHealth(ctx, pdb)
	if st != nil {
		return st
	}
	if !podReady(pod) {
		// An unhealthy pod may go when the budget is met, or always.
		if p := pdb.Spec.UnhealthyPodEvictionPolicy; (p != nil && *p == policyv1.AlwaysAllow) || healthy >= desired {
			return nil
		}
	} else if healthy-desired > 0 {
		return nil
	}
	st = metav1.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	st.Details = &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "DisruptionBudget",
		Message: fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, desired, healthy)}}}
	return st
}

// budgetHealth computes what kube-controller-manager's disruption
// controller writes in a budget's status: the healthy pods it needs and
// those it has (kapi runs no such controller). The pods it counts are
// those its selector matches; a percentage is of their number.
func (h *handler) budgetHealth(ctx context.Context, pdb *policyv1.PodDisruptionBudget) (desired, healthy int, st *metav1.Status) {
	list, err := h.s.storeOf(h.res).List(ctx, pdb.Namespace, storage.ListOptions{})
	if err != nil {
		return 0, 0, errorStatus(err)
	}
	sel, err := selector.FromLabelSelector(pdb.Spec.Selector)
	if err != nil {
		return 0, 0, metav1.NewInternalError(err)
	}
	expected := 0
	for _, it := range list.Items {
		p := it.(*corev1.Pod)
		if !sel.Matches(selector.Set(p.Labels)) {
			continue
		}
		expected++
		if p.DeletionTimestamp == nil && podReady(p) {
			healthy++
		}
	}
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		n, err := pdb.Spec.MaxUnavailable.ScaledValue(expected, true)
		if err != nil {
			return 0, 0, metav1.NewInternalError(err)
		}
		desired = max(expected-n, 0)
	case pdb.Spec.MinAvailable != nil:
		n, err := pdb.Spec.MinAvailable.ScaledValue(expected, true)
		if err != nil {
			return 0, 0, metav1.NewInternalError(err)
		}
		desired = n
	}
	return desired, healthy, nil
}

// podReady reports whether a pod runs and is Ready.
func podReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// serveConnect answers the subresources that connect to a kubelet (pods'
// log, exec, attach, portforward, proxy; services' and nodes' proxy). kapi
// has no kubelets: a pod on no node has nothing to show (an empty log,
// 204) or cannot be reached (400); a node without addresses cannot be
// reached (500, as kube-apiserver says it); one with addresses has no
// kubelet listening (503).
func (h *handler) serveConnect() {
	ctx := h.r.Context()
	if st := h.store().admitConnect(ctx, h.ri.Namespace, h.ri.Name, h.ri.Sub, h.r.URL.Query(), &writeOptions{Warnings: h}); st != nil {
		h.fail(st)
		return
	}
	obj, err := h.store().Get(ctx, h.ri.Namespace, h.ri.Name, storage.ReadOptions{})
	if err != nil {
		h.failErr(err)
		return
	}
	var nodeName string
	switch o := obj.(type) {
	case *corev1.Pod:
		nodeName = o.Spec.NodeName
		if nodeName == "" {
			if h.ri.Sub == "log" {
				h.w.WriteHeader(http.StatusNoContent)
				return
			}
			if h.ri.Sub != "proxy" {
				h.fail(metav1.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", o.Name)))
				return
			}
		}
	case *corev1.Node:
		nodeName = o.Name
	}
	if nodeName == "" {
		h.fail(metav1.NewServiceUnavailable(fmt.Sprintf("no endpoints available for %s %q", h.res.Singular, h.ri.Name)))
		return
	}
	node, err := h.s.storeOf(h.s.reg.Get("", "v1", "nodes")).Get(ctx, "", nodeName, storage.ReadOptions{})
	if err != nil {
		h.failErr(err)
		return
	}
	addrs := node.(*corev1.Node).Status.Addresses
	if len(addrs) == 0 {
		h.fail(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Message: "no preferred addresses found; known addresses: []", Code: http.StatusInternalServerError})
		return
	}
	h.fail(metav1.NewServiceUnavailable(fmt.Sprintf("error dialing backend: no kubelet is running on node %q", nodeName)))
}

// takeEphemeralContainers is what pods/ephemeralcontainers takes from the
// body: spec.ephemeralContainers; the rest is the stored pod's.
func takeEphemeralContainers(res *registry.Resource, cur, in registry.Object, _ time.Time) registry.Object {
	next := res.Copy(cur).(*corev1.Pod)
	next.Spec.EphemeralContainers = in.(*corev1.Pod).Spec.EphemeralContainers
	return next
}

// takeResize is what pods/resize takes from the body: the resources and
// resize policies of the containers (by name); any other change is
// dropped, as kube-apiserver drops it.
func takeResize(res *registry.Resource, cur, in registry.Object, _ time.Time) registry.Object {
	next := res.Copy(cur).(*corev1.Pod)
	want := in.(*corev1.Pod)
	for _, lists := range [][2][]corev1.Container{{next.Spec.Containers, want.Spec.Containers}, {next.Spec.InitContainers, want.Spec.InitContainers}} {
		for i := range lists[0] {
			for _, w := range lists[1] {
				if w.Name == lists[0][i].Name {
					lists[0][i].Resources = w.Resources
					lists[0][i].ResizePolicy = w.ResizePolicy
				}
			}
		}
	}
	return next
}

// subresourceValidates are the subresources of a kind that kube-apiserver
// validates by rules of their own on update, instead of the kind's.
var subresourceValidates = map[string]func(obj, old registry.Object) metav1.FieldErrors{
	"ephemeralcontainers": validateEphemeralContainersUpdate,
	"resize":              validateResize,
	"approval":            validateApproval,
}

// validateEphemeralContainersUpdate checks pods/ephemeralcontainers as
// kube-apiserver does: the containers added are valid ephemeral containers
// (no ports, probes or lifecycle), and those already there stay as they
// are.
func validateEphemeralContainersUpdate(obj, old registry.Object) metav1.FieldErrors {
	p, prev := obj.(*corev1.Pod), old.(*corev1.Pod)
	var errs metav1.FieldErrors
	names := map[string]bool{}
	for _, c := range p.Spec.Containers {
		names[c.Name] = true
	}
	for _, c := range p.Spec.InitContainers {
		names[c.Name] = true
	}
	for i, c := range p.Spec.EphemeralContainers {
		path := fmt.Sprintf("spec.ephemeralContainers[%d]", i)
		switch {
		case c.Name == "":
			errs = append(errs, metav1.FieldRequired(path+".name", ""))
		case names[c.Name]:
			errs = append(errs, metav1.FieldDuplicate(path+".name", c.Name))
		}
		names[c.Name] = true
		if c.Image == "" {
			errs = append(errs, metav1.FieldRequired(path+".image", ""))
		}
		forbidden := []struct {
			field string
			set   bool
		}{
			{"ports", len(c.Ports) > 0}, {"livenessProbe", c.LivenessProbe != nil}, {"readinessProbe", c.ReadinessProbe != nil},
			{"startupProbe", c.StartupProbe != nil}, {"lifecycle", c.Lifecycle != nil},
		}
		for _, f := range forbidden {
			if f.set {
				errs = append(errs, metav1.FieldForbidden(path+"."+f.field, "cannot be set for an Ephemeral Container"))
			}
		}
	}
	for _, was := range prev.Spec.EphemeralContainers {
		found := false
		for _, c := range p.Spec.EphemeralContainers {
			if c.Name != was.Name {
				continue
			}
			found = true
			if !reflect.DeepEqual(c, was) {
				errs = append(errs, metav1.FieldForbidden("spec.ephemeralContainers", fmt.Sprintf("existing ephemeral containers %q may not be changed", was.Name)))
			}
		}
		if !found {
			errs = append(errs, metav1.FieldForbidden("spec.ephemeralContainers", fmt.Sprintf("existing ephemeral containers %q may not be removed", was.Name)))
		}
	}
	return errs
}

// validateResize checks pods/resize as kube-apiserver does: requests at
// most the limits, and the pod's QoS class unchanged.
func validateResize(obj, old registry.Object) metav1.FieldErrors {
	p, prev := obj.(*corev1.Pod), old.(*corev1.Pod)
	var errs metav1.FieldErrors
	for i, c := range p.Spec.Containers {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[r]
			lim, hasLim := c.Resources.Limits[r]
			if hasReq && hasLim && req.Cmp(lim) > 0 {
				errs = append(errs, metav1.FieldInvalid(fmt.Sprintf("spec.containers[%d].resources.requests", i), req.String(),
					fmt.Sprintf("must be less than or equal to %s limit of %s", r, lim.String())))
			}
		}
	}
	if len(errs) == 0 && registry.QOSClass(&p.Spec) != registry.QOSClass(&prev.Spec) {
		errs = append(errs, metav1.FieldInvalid("spec", string(prev.Status.QOSClass), "Pod QOS Class may not change as a result of resizing"))
	}
	return errs
}
