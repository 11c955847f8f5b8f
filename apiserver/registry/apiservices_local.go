package registry

import (
	"sort"

	apiregistrationv1 "github.com/kapi-dev/kapi/api/apiregistration/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// The APIServices kube-apiserver keeps for the group versions it serves
// itself: one per group version, named <version>.<group> ("v1." for the
// legacy group), without a service (local, always Available), labelled
// kube-aggregator.kubernetes.io/automanaged "onstart" for its built-in
// groups and "true" for a custom resource's group.

// AutomanagedLabel is the label of the APIServices the server manages.
const AutomanagedLabel = "kube-aggregator.kubernetes.io/automanaged"

// apiServicePriorities are kube-apiserver v1.37.2's groupPriorityMinimum
// and versionPriority of its built-in group versions (read from a real
// server's APIServices).
var apiServicePriorities = map[string][2]int32{
	"/v1":                             {18000, 1},
	"admissionregistration.k8s.io/v1": {16700, 15},
	"apiextensions.k8s.io/v1":         {16700, 15},
	"apps/v1":                         {17800, 15},
	"authentication.k8s.io/v1":        {17700, 15},
	"authorization.k8s.io/v1":         {17600, 15},
	"autoscaling/v1":                  {17500, 15},
	"batch/v1":                        {17400, 15},
	"certificates.k8s.io/v1":          {17300, 15},
	"coordination.k8s.io/v1":          {16500, 15},
	"discovery.k8s.io/v1":             {16200, 15},
	"events.k8s.io/v1":                {17750, 15},
	"flowcontrol.apiserver.k8s.io/v1": {16100, 21},
	"networking.k8s.io/v1":            {17200, 15},
	"node.k8s.io/v1":                  {16300, 15},
	"policy/v1":                       {17100, 15},
	"rbac.authorization.k8s.io/v1":    {17000, 15},
	"resource.k8s.io/v1":              {16200, 21},
	"scheduling.k8s.io/v1":            {16600, 15},
	"storage.k8s.io/v1":               {16800, 15},
	"storagemigration.k8s.io/v1":      {15800, 15},
	"autoscaling/v2":                  {17500, 30},
}

// LocalAPIServices returns the APIService of each group version g serves
// (but apiregistration.k8s.io's), as kube-apiserver's aggregator creates
// them: a built-in group version
// with its priorities, any other (a custom resource's) with 1000 and 100,
// sorted by name.
// Their status is Available (Local) since now; a server stores them as its
// own objects and follows the registry (custom resources come and go).
func LocalAPIServices(g *Registry, now metav1.Time) []*apiregistrationv1.APIService {
	var out []*apiregistrationv1.APIService
	for _, group := range g.GroupOrder() {
		if group == "apiregistration.k8s.io" {
			continue // the aggregator's own group has none
		}
		for _, version := range g.Groups()[group] {
			prio, builtin := apiServicePriorities[group+"/"+version]
			label := "onstart"
			if !builtin {
				prio, label = [2]int32{1000, 100}, "true"
			}
			out = append(out, &apiregistrationv1.APIService{
				ObjectMeta: metav1.ObjectMeta{Name: version + "." + group, Labels: map[string]string{AutomanagedLabel: label}},
				Spec:       apiregistrationv1.APIServiceSpec{Group: group, Version: version, GroupPriorityMinimum: prio[0], VersionPriority: prio[1]},
				Status:     apiregistrationv1.APIServiceStatus{Conditions: []apiregistrationv1.APIServiceCondition{LocalAPIServiceCondition(now)}},
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
