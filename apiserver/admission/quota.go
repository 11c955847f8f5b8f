package admission

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/resource"
)

// Resource quotas: what an object uses (QuotaUsage), which quotas cover it
// (QuotaMatches), and the check of a write against a namespace's quotas
// (QuotaAdmit), as kube-apiserver's ResourceQuota plugin and
// kube-controller-manager's resourcequota controller compute them.

// legacyCounts are the object counts quotas name without "count/".
var legacyCounts = map[string]corev1.ResourceName{
	"pods": "pods", "services": "services", "replicationcontrollers": "replicationcontrollers",
	"resourcequotas": "resourcequotas", "secrets": "secrets", "configmaps": "configmaps",
	"persistentvolumeclaims": "persistentvolumeclaims",
}

// CountResource is the quota resource that counts objects of
// group/resource: count/<resource>[.<group>].
func CountResource(group, resource string) corev1.ResourceName {
	if group == "" {
		return corev1.ResourceName("count/" + resource)
	}
	return corev1.ResourceName("count/" + resource + "." + group)
}

// QuotaCountedResource parses a quota resource that counts objects
// ("pods", "count/deployments.apps") into the group and resource it counts.
func QuotaCountedResource(name corev1.ResourceName) (group, res string, ok bool) {
	for r, n := range legacyCounts {
		if n == name {
			return "", r, true
		}
	}
	rest, found := strings.CutPrefix(string(name), "count/")
	if !found || rest == "" {
		return "", "", false
	}
	res, group, _ = strings.Cut(rest, ".")
	return group, res, true
}

func addTo(l corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	cur := l[name]
	cur.Add(q)
	l[name] = cur
}

func one() resource.Quantity { return *resource.NewQuantity(1, resource.DecimalSI) }

// PodTerminal reports whether a pod no longer uses its quota (it has
// succeeded or failed).
func PodTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// QuotaUsage is what obj, an object of group/resource, uses of quota
// resources: its count (legacy name and count/ name) and, for pods,
// services and persistent volume claims, what the quota system charges
// them. A terminal pod uses nothing.
func QuotaUsage(group, res string, obj any) corev1.ResourceList {
	u := corev1.ResourceList{}
	if p, ok := obj.(*corev1.Pod); ok && PodTerminal(p) {
		return u
	}
	u[CountResource(group, res)] = one()
	if group == "" {
		if n, ok := legacyCounts[res]; ok {
			u[n] = one()
		}
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		req, lim := podTotals(o, requestsOf), podTotals(o, limitsOf)
		if o.Spec.Overhead != nil {
			for k, v := range o.Spec.Overhead {
				if _, ok := req[k]; ok {
					addTo(req, k, v)
				}
				if _, ok := lim[k]; ok {
					addTo(lim, k, v)
				}
			}
		}
		for k, v := range req {
			switch k {
			case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
				u[k] = v
				u["requests."+k] = v
			default:
				if strings.Contains(string(k), "/") && !strings.HasPrefix(string(k), "kubernetes.io/") {
					u["requests."+k] = v // an extended resource
				}
			}
		}
		for k, v := range lim {
			switch k {
			case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
				u["limits."+k] = v
			}
		}
	case *corev1.Service:
		switch o.Spec.Type {
		case corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
			ports := int64(len(o.Spec.Ports))
			if o.Spec.Type == corev1.ServiceTypeLoadBalancer {
				u["services.loadbalancers"] = one()
				if o.Spec.AllocateLoadBalancerNodePorts != nil && !*o.Spec.AllocateLoadBalancerNodePorts {
					ports = 0
				}
			}
			u["services.nodeports"] = *resource.NewQuantity(ports, resource.DecimalSI)
		}
	case *corev1.PersistentVolumeClaim:
		if st, ok := o.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
			u["requests.storage"] = st
			if o.Spec.StorageClassName != nil {
				u[corev1.ResourceName(*o.Spec.StorageClassName+".storageclass.storage.k8s.io/requests.storage")] = st
			}
		}
		if o.Spec.StorageClassName != nil {
			u[corev1.ResourceName(*o.Spec.StorageClassName+".storageclass.storage.k8s.io/persistentvolumeclaims")] = one()
		}
	}
	return u
}

// podBestEffort reports whether no container of the pod requests or limits
// anything.
func podBestEffort(p *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range cs {
			if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
				return false
			}
		}
	}
	return true
}

// scopeMatches reports whether a pod falls in a quota scope (an object
// that is not a pod falls in none).
func scopeMatches(s corev1.ScopedResourceSelectorRequirement, obj any) bool {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return false
	}
	switch s.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return p.Spec.ActiveDeadlineSeconds != nil && *p.Spec.ActiveDeadlineSeconds >= 0
	case corev1.ResourceQuotaScopeNotTerminating:
		return p.Spec.ActiveDeadlineSeconds == nil || *p.Spec.ActiveDeadlineSeconds < 0
	case corev1.ResourceQuotaScopeBestEffort:
		return podBestEffort(p)
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !podBestEffort(p)
	case corev1.ResourceQuotaScopePriorityClass:
		name := p.Spec.PriorityClassName
		switch s.Operator {
		case corev1.ScopeSelectorOpExists:
			return name != ""
		case corev1.ScopeSelectorOpDoesNotExist:
			return name == ""
		case corev1.ScopeSelectorOpIn:
			return slices.Contains(s.Values, name)
		case corev1.ScopeSelectorOpNotIn:
			return !slices.Contains(s.Values, name)
		}
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return crossNamespaceAffinity(p)
	}
	return false
}

func crossNamespaceAffinity(p *corev1.Pod) bool {
	a := p.Spec.Affinity
	if a == nil {
		return false
	}
	var terms []corev1.PodAffinityTerm
	if a.PodAffinity != nil {
		terms = append(terms, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	if a.PodAntiAffinity != nil {
		terms = append(terms, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	for _, t := range terms {
		if len(t.Namespaces) > 0 || t.NamespaceSelector != nil {
			return true
		}
	}
	return false
}

// quotaScopes are a quota's scopes and scope selector, as requirements.
func quotaScopes(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		out = append(out, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}

// QuotaMatches reports whether q covers obj, of group/resource: obj falls
// in every scope of q, and q limits something obj can use.
func QuotaMatches(q *corev1.ResourceQuota, group, res string, obj any) bool {
	for _, s := range quotaScopes(q) {
		if !scopeMatches(s, obj) {
			return false
		}
	}
	return len(matchingResources(q, group, res)) > 0
}

// podQuotaResources are the resources a pod's quota can limit beyond
// counts.
func podQuotaResource(name corev1.ResourceName) bool {
	switch name {
	case "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
		"limits.cpu", "limits.memory", "limits.ephemeral-storage":
		return true
	}
	return strings.HasPrefix(string(name), "requests.") && strings.Contains(string(name), "/")
}

// matchingResources are the resources of q's hard that objects of
// group/resource can use.
func matchingResources(q *corev1.ResourceQuota, group, res string) []corev1.ResourceName {
	var out []corev1.ResourceName
	for name := range q.Spec.Hard {
		if g, r, ok := QuotaCountedResource(name); ok && g == group && r == res {
			out = append(out, name)
			continue
		}
		if group != "" {
			continue
		}
		n := string(name)
		switch res {
		case "pods":
			if podQuotaResource(name) {
				out = append(out, name)
			}
		case "services":
			if n == "services.nodeports" || n == "services.loadbalancers" {
				out = append(out, name)
			}
		case "persistentvolumeclaims":
			if n == "requests.storage" || strings.HasSuffix(n, ".storageclass.storage.k8s.io/requests.storage") ||
				strings.HasSuffix(n, ".storageclass.storage.k8s.io/persistentvolumeclaims") {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// podConstraints is the plugin's historical rule: when a quota limits cpu
// or memory, every container must state the request or limit it limits.
func podConstraints(required []corev1.ResourceName, p *corev1.Pod) error {
	checked := map[corev1.ResourceName]bool{"requests.cpu": true, "requests.memory": true, "limits.cpu": true,
		"limits.memory": true, "cpu": true, "memory": true}
	missing := map[corev1.ResourceName][]string{}
	for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for _, c := range cs {
			for _, r := range required {
				if !checked[r] {
					continue
				}
				base, list := r, c.Resources.Requests
				if s, ok := strings.CutPrefix(string(r), "limits."); ok {
					base, list = corev1.ResourceName(s), c.Resources.Limits
				} else if s, ok := strings.CutPrefix(string(r), "requests."); ok {
					base = corev1.ResourceName(s)
				}
				if _, ok := list[base]; !ok {
					missing[r] = append(missing[r], c.Name)
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var msgs []string
	for _, r := range slices.Sorted(maps.Keys(missing)) {
		msgs = append(msgs, fmt.Sprintf("%s for: %s", r, strings.Join(sortedSet(missing[r]), ",")))
	}
	return fmt.Errorf("must specify %s", strings.Join(msgs, "; "))
}

// QuotaCharge is the new usage of a quota that a write charges.
type QuotaCharge struct {
	Quota *corev1.ResourceQuota
	Used  corev1.ResourceList
}

// QuotaAdmit checks a create (old nil) or update of obj, of
// group/resource, against quotas (the ResourceQuotas of its namespace, as
// stored) as the ResourceQuota plugin does, and returns the new usage of
// every quota the write charges. A quota whose usage is not known yet
// (its status has no used) refuses, as in kube-apiserver.
func QuotaAdmit(quotas []*corev1.ResourceQuota, group, res string, obj, old any) ([]QuotaCharge, error) {
	var charges []QuotaCharge
	for _, q := range quotas {
		if !QuotaMatches(q, group, res, obj) {
			continue
		}
		required := matchingResources(q, group, res)
		if p, ok := obj.(*corev1.Pod); ok && group == "" && res == "pods" {
			if err := podConstraints(required, p); err != nil {
				return nil, fmt.Errorf("failed quota: %s: %w", q.Name, err)
			}
		}
		delta := QuotaUsage(group, res, obj)
		if old != nil && QuotaMatches(q, group, res, old) {
			for k, v := range QuotaUsage(group, res, old) {
				cur := delta[k]
				cur.Sub(v)
				delta[k] = cur
			}
		}
		masked := corev1.ResourceList{}
		for _, k := range required {
			if v, ok := delta[k]; ok && !v.IsZero() {
				masked[k] = v
			}
		}
		if len(masked) == 0 {
			continue
		}
		var unknown []string
		for k := range masked {
			if _, ok := q.Status.Used[k]; !ok {
				unknown = append(unknown, string(k))
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return nil, fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, strings.Join(unknown, ","))
		}
		used := maps.Clone(q.Status.Used)
		var exceeded []corev1.ResourceName
		for k, v := range masked {
			n := used[k]
			n.Add(v)
			used[k] = n
			if hard, ok := q.Spec.Hard[k]; ok && v.Sign() > 0 && n.Cmp(hard) > 0 {
				exceeded = append(exceeded, k)
			}
		}
		if len(exceeded) > 0 {
			slices.Sort(exceeded)
			return nil, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s", q.Name,
				printList(masked, exceeded), printList(q.Status.Used, exceeded), printList(q.Spec.Hard, exceeded))
		}
		charges = append(charges, QuotaCharge{Quota: q, Used: used})
	}
	return charges, nil
}

func printList(l corev1.ResourceList, names []corev1.ResourceName) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = string(n) + "=" + l[n].String()
	}
	return strings.Join(parts, ",")
}

// QuotaRecount is a quota's usage from scratch, as the resourcequota
// controller computes it: for each resource of its hard, the sum over
// objects (each given as its group, resource and object) it covers; 0 for
// what nothing uses.
func QuotaRecount(q *corev1.ResourceQuota, objects func(group, res string) []any) corev1.ResourceList {
	used := corev1.ResourceList{}
	kinds := map[[2]string]bool{}
	for name := range q.Spec.Hard {
		used[name] = *resource.NewQuantity(0, resource.DecimalSI)
		if g, r, ok := QuotaCountedResource(name); ok {
			kinds[[2]string{g, r}] = true
			continue
		}
		switch {
		case podQuotaResource(name):
			kinds[[2]string{"", "pods"}] = true
		case name == "services.nodeports" || name == "services.loadbalancers":
			kinds[[2]string{"", "services"}] = true
		case name == "requests.storage" || strings.Contains(string(name), ".storageclass.storage.k8s.io/"):
			kinds[[2]string{"", "persistentvolumeclaims"}] = true
		}
	}
	for k := range kinds {
		for _, obj := range objects(k[0], k[1]) {
			if !scopesMatch(q, obj) {
				continue
			}
			for name, v := range QuotaUsage(k[0], k[1], obj) {
				if _, ok := used[name]; ok {
					addTo(used, name, v)
				}
			}
		}
	}
	return used
}

func scopesMatch(q *corev1.ResourceQuota, obj any) bool {
	for _, s := range quotaScopes(q) {
		if !scopeMatches(s, obj) {
			return false
		}
	}
	return true
}
