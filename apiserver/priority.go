package apiserver

import (
	"cmp"
	"slices"
)

// groupPriority is the place of an API group version in discovery, as
// kube-apiserver's aggregator orders them: groups by Group (higher first,
// then by name), the versions of a group by Version (higher first, then
// by compareVersions).
type groupPriority struct{ Group, Version int }

// crdPriority is what kube-apiserver gives the group versions of custom
// resources: after every built-in group, versions in Kubernetes order.
var crdPriority = groupPriority{Group: 1000, Version: 100}

// builtinPriorities are the priorities kube-apiserver v1.37 registers for
// its own group versions (the APIServices of its aggregator). Group
// versions kapi does not serve yet are listed too, so that adding them
// (issue 13) keeps the real order.
var builtinPriorities = map[string]groupPriority{
	"v1":                                    {18000, 1},
	"apiregistration.k8s.io/v1":             {18000, 15},
	"apps/v1":                               {17800, 15},
	"events.k8s.io/v1":                      {17750, 15},
	"events.k8s.io/v1beta1":                 {17750, 5},
	"authentication.k8s.io/v1":              {17700, 15},
	"authentication.k8s.io/v1beta1":         {17700, 9},
	"authentication.k8s.io/v1alpha1":        {17700, 1},
	"authorization.k8s.io/v1":               {17600, 15},
	"autoscaling/v1":                        {17500, 15},
	"autoscaling/v2":                        {17500, 30},
	"autoscaling/v2beta1":                   {17500, 9},
	"autoscaling/v2beta2":                   {17500, 1},
	"batch/v1":                              {17400, 15},
	"batch/v1beta1":                         {17400, 9},
	"batch/v2alpha1":                        {17400, 9},
	"certificates.k8s.io/v1":                {17300, 15},
	"certificates.k8s.io/v1beta1":           {17300, 9},
	"certificates.k8s.io/v1alpha1":          {17300, 1},
	"networking.k8s.io/v1":                  {17200, 15},
	"networking.k8s.io/v1beta1":             {17200, 9},
	"policy/v1":                             {17100, 15},
	"policy/v1beta1":                        {17100, 9},
	"rbac.authorization.k8s.io/v1":          {17000, 15},
	"storage.k8s.io/v1":                     {16800, 15},
	"storage.k8s.io/v1beta1":                {16800, 9},
	"storage.k8s.io/v1alpha1":               {16800, 1},
	"apiextensions.k8s.io/v1":               {16700, 15},
	"admissionregistration.k8s.io/v1":       {16700, 15},
	"admissionregistration.k8s.io/v1beta1":  {16700, 12},
	"admissionregistration.k8s.io/v1alpha1": {16700, 9},
	"scheduling.k8s.io/v1":                  {16600, 15},
	"scheduling.k8s.io/v1beta1":             {16600, 9},
	"scheduling.k8s.io/v1alpha3":            {16600, 3},
	"coordination.k8s.io/v1":                {16500, 15},
	"coordination.k8s.io/v1beta1":           {16500, 13},
	"coordination.k8s.io/v1alpha2":          {16500, 12},
	"node.k8s.io/v1":                        {16300, 15},
	"node.k8s.io/v1beta1":                   {16300, 9},
	"node.k8s.io/v1alpha1":                  {16300, 1},
	"discovery.k8s.io/v1":                   {16200, 15},
	"discovery.k8s.io/v1beta1":              {16200, 12},
	"resource.k8s.io/v1":                    {16200, 21},
	"resource.k8s.io/v1beta2":               {16200, 15},
	"resource.k8s.io/v1beta1":               {16200, 9},
	"resource.k8s.io/v1alpha3":              {16200, 1},
	"flowcontrol.apiserver.k8s.io/v1":       {16100, 21},
	"flowcontrol.apiserver.k8s.io/v1beta3":  {16100, 18},
	"flowcontrol.apiserver.k8s.io/v1beta2":  {16100, 15},
	"flowcontrol.apiserver.k8s.io/v1beta1":  {16100, 12},
	"flowcontrol.apiserver.k8s.io/v1alpha1": {16100, 9},
	"internal.apiserver.k8s.io/v1alpha1":    {16000, 9},
	"storagemigration.k8s.io/v1":            {15800, 15},
	"storagemigration.k8s.io/v1beta1":       {15800, 9},
	"lifecycle.k8s.io/v1alpha1":             {15700, 1},
}

// priorityOf is the priority of group/version; custom is true for a group
// version served from CustomResourceDefinitions.
func priorityOf(group, version string, custom bool) groupPriority {
	if custom {
		return crdPriority
	}
	gv := version
	if group != "" {
		gv = group + "/" + version
	}
	if p, ok := builtinPriorities[gv]; ok {
		return p
	}
	return groupPriority{Group: 1000, Version: 15} // the aggregator's default
}

// orderedGroups returns the served API groups (the core group "" among
// them) with their versions, in discovery order: groups by priority then
// name, versions preferred first.
func (s *Server) orderedGroups() []servedGroup {
	byGroup := map[string]*servedGroup{}
	for group, versions := range s.reg.Groups() {
		g := &servedGroup{name: group}
		for _, v := range versions {
			custom := false
			if rs := s.reg.ForGroupVersion(group, v); len(rs) > 0 {
				custom = rs[0].Custom
			}
			p := priorityOf(group, v, custom)
			g.versions = append(g.versions, servedVersion{name: v, priority: p.Version})
			g.priority = max(g.priority, p.Group)
		}
		slices.SortStableFunc(g.versions, func(a, b servedVersion) int {
			if c := cmp.Compare(b.priority, a.priority); c != 0 {
				return c
			}
			return compareVersions(a.name, b.name)
		})
		byGroup[group] = g
	}
	out := make([]servedGroup, 0, len(byGroup))
	for _, g := range byGroup {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b servedGroup) int {
		if c := cmp.Compare(b.priority, a.priority); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	return out
}

type servedGroup struct {
	name     string
	priority int
	versions []servedVersion
}

type servedVersion struct {
	name     string
	priority int
}
