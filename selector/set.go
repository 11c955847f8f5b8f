package selector

import (
	"slices"
	"strings"
)

// Labels is a read-only view of an object's labels, whatever their storage.
// [Set] is the ready-made implementation.
//
// Implementations that can answer both questions in one step may also
// provide a method
//
//	Lookup(key string) (value string, ok bool)
//
// which [LabelSelector.Matches] then prefers to a Has/Get pair.
type Labels interface {
	// Has reports whether the label key is present.
	Has(key string) bool
	// Get returns the value of the label key, or "" if it is absent.
	Get(key string) string
}

// Fields is a read-only view of the selectable fields of an object, such as
// "metadata.name" or "status.phase". [Set] implements it.
//
// Like Kubernetes, field selectors consult only Get: an absent field reads
// as the empty string.
type Fields interface {
	// Has reports whether the field is present.
	Has(field string) bool
	// Get returns the value of the field, or "" if it is absent.
	Get(field string) string
}

// Set is a map from label key (or field name) to value. It implements both
// [Labels] and [Fields]; a nil Set is empty.
type Set map[string]string

// Has reports whether key is present in the set.
func (s Set) Has(key string) bool {
	_, ok := s[key]
	return ok
}

// Get returns the value of key, or "" if it is absent.
func (s Set) Get(key string) string { return s[key] }

// Lookup returns the value of key and whether it is present.
func (s Set) Lookup(key string) (string, bool) {
	v, ok := s[key]
	return v, ok
}

// String returns the set as "k1=v1,k2=v2" with keys in ascending order, the
// form Kubernetes uses (for example in kubectl output). Values are written
// verbatim, so for a valid label set the result is also a label selector
// that matches exactly the set's entries.
func (s Set) String() string {
	keys := make([]string, 0, len(s))
	n := 0
	for k, v := range s {
		keys = append(keys, k)
		n += len(k) + len(v) + 2
	}
	slices.Sort(keys)
	var b strings.Builder
	b.Grow(n)
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(s[k])
	}
	return b.String()
}

// lookupLabel returns the value of key in l and whether it is present, using
// the fastest access l offers. A nil l has no labels.
func lookupLabel(l Labels, key string) (string, bool) {
	switch l := l.(type) {
	case Set:
		v, ok := l[key]
		return v, ok
	case nil:
		return "", false
	case interface {
		Lookup(key string) (string, bool)
	}:
		return l.Lookup(key)
	}
	if !l.Has(key) {
		return "", false
	}
	return l.Get(key), true
}
