package informer

import (
	"fmt"
	"slices"

	"github.com/kapi-dev/kapi/selector"
)

// cacheScope is what an informer of a factory caches, as cached clients
// check their reads against it.
type cacheScope struct {
	sc     scope
	labels selector.LabelSelector
	fields selector.FieldSelector
	// lw, if set, resolves the namespace of a resource whose scope is
	// looked up (a cluster-scoped one has none).
	lw namespaceResolver
}

// namespaceResolver is a client that learns its resource's scope (lazyLW).
type namespaceResolver interface{ scopeNamespace() string }

func newCacheScope(sc scope, lw namespaceResolver) cacheScope {
	// A selector that does not parse fails the informer's lists, so that
	// its cache never syncs; reads fail waiting for it.
	labels, _ := selector.ParseLabels(sc.labelSelector)
	fields, _ := selector.ParseFields(sc.fieldSelector)
	return cacheScope{sc: sc, labels: labels, fields: fields, lw: lw}
}

// namespace is the namespace the informer caches, "" for all (or a
// cluster-scoped resource).
func (s cacheScope) namespace() string {
	if s.lw != nil {
		return s.lw.scopeNamespace()
	}
	return s.sc.namespace
}

// selective reports whether the informer's selectors leave objects of its
// namespace out.
func (s cacheScope) selective() bool { return !s.labels.Empty() || !s.fields.Empty() }

// covers returns why a list with the given selectors may select objects
// the cache does not hold, or "" if it cannot: when the list's selectors
// include every requirement of the informer's, each list item is one the
// informer's watch sends.
func (s cacheScope) covers(labels selector.LabelSelector, fields selector.FieldSelector) string {
	have := labels.Requirements()
	for _, want := range s.labels.Requirements() {
		if !slices.ContainsFunc(have, func(r selector.LabelRequirement) bool { return sameLabelRequirement(r, want) }) {
			return fmt.Sprintf("it holds only the objects with labels %s, and the list's label selector does not require %s", s.labels, want)
		}
	}
	haveFields := fields.Requirements()
	for _, want := range s.fields.Requirements() {
		if !slices.Contains(haveFields, want) {
			return fmt.Sprintf("it holds only the objects with fields %s, and the list's field selector does not require %s", s.fields, want)
		}
	}
	return ""
}

// sameLabelRequirement compares requirements, "=" and "==" alike.
func sameLabelRequirement(a, b selector.LabelRequirement) bool {
	norm := func(op selector.Operator) selector.Operator {
		if op == selector.DoubleEquals {
			return selector.Equals
		}
		return op
	}
	return a.Key() == b.Key() && norm(a.Operator()) == norm(b.Operator()) && slices.Equal(a.Values(), b.Values())
}

// excludes returns why the informer's selectors exclude obj, or "" if they
// may not: its labels, metadata.name and metadata.namespace are checked;
// other fields are the server's to evaluate.
func (s cacheScope) excludes(obj interface {
	GetName() string
	GetNamespace() string
	GetLabels() map[string]string
}) string {
	if !s.labels.Matches(selector.Set(obj.GetLabels())) {
		return fmt.Sprintf("the object exists, but its labels do not match the cache's selector %s", s.labels)
	}
	for _, req := range s.fields.Requirements() {
		var v string
		switch req.Field() {
		case "metadata.name":
			v = obj.GetName()
		case "metadata.namespace":
			v = obj.GetNamespace()
		default:
			continue
		}
		if !req.Matches(selector.Set{req.Field(): v}) {
			return fmt.Sprintf("the object exists, but the cache's field selector %s excludes it", s.fields)
		}
	}
	return ""
}
