package selector

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// LabelRequirement is one condition of a [LabelSelector]: a label key, an
// [Operator] and the operator's values.
//
// Obtain requirements from [NewLabelRequirement] or
// [LabelSelector.Requirements]; the zero LabelRequirement is invalid and
// matches nothing. A LabelRequirement is immutable and safe for concurrent
// use.
type LabelRequirement struct {
	key string
	op  Operator
	// values holds no value for Exists and DoesNotExist, exactly one for
	// the comparison operators, and one or more, sorted and de-duplicated,
	// for In and NotIn. It is never modified after construction.
	values []string
	// num is the single value parsed as an integer, for GreaterThan and
	// LessThan.
	num int64
}

// NewLabelRequirement returns a validated requirement. It checks that key
// is a valid label key, that op is a declared [Operator], that the number of
// values suits op (none for [Exists] and [DoesNotExist], one for [Equals],
// [DoubleEquals], [NotEquals], [GreaterThan] and [LessThan], at least one
// for [In] and [NotIn]), that every value is a valid label value, and that
// the value of [GreaterThan] and [LessThan] is a decimal integer that fits
// in an int64. The empty string is a valid value.
//
// Invalid keys and values are reported as a *[ValidationError]. The values
// are copied; those of In and NotIn are sorted and de-duplicated.
func NewLabelRequirement(key string, op Operator, values ...string) (LabelRequirement, error) {
	if err := ValidateLabelKey(key); err != nil {
		return LabelRequirement{}, err
	}
	switch op {
	case Exists, DoesNotExist:
		if len(values) != 0 {
			return LabelRequirement{}, errors.New("selector: operator " + op.String() + " takes no values, got " + strconv.Itoa(len(values)))
		}
	case Equals, DoubleEquals, NotEquals, GreaterThan, LessThan:
		if len(values) != 1 {
			return LabelRequirement{}, errors.New("selector: operator " + op.String() + " takes exactly one value, got " + strconv.Itoa(len(values)))
		}
	case In, NotIn:
		if len(values) == 0 {
			return LabelRequirement{}, errors.New("selector: operator " + op.String() + " needs at least one value")
		}
	default:
		return LabelRequirement{}, errors.New("selector: invalid operator " + strconv.Itoa(int(op)))
	}
	for _, v := range values {
		if err := ValidateLabelValue(v); err != nil {
			return LabelRequirement{}, err
		}
	}
	return makeLabelRequirement(key, op, slices.Clone(values))
}

// makeLabelRequirement builds a requirement from a key and values that have
// already been validated, taking ownership of values. It only fails when
// the value of GreaterThan or LessThan is not an integer.
func makeLabelRequirement(key string, op Operator, values []string) (LabelRequirement, error) {
	r := LabelRequirement{key: key, op: op, values: values}
	switch op {
	case In, NotIn:
		if len(values) > 1 {
			slices.Sort(values)
			r.values = slices.Clip(slices.Compact(values))
		}
	case GreaterThan, LessThan:
		n, err := strconv.ParseInt(values[0], 10, 64)
		if err != nil {
			return LabelRequirement{}, &ValidationError{What: "label value", Value: values[0], Problems: []string{integerProblem}}
		}
		r.num = n
	}
	return r, nil
}

// Key returns the label key the requirement is about.
func (r LabelRequirement) Key() string { return r.key }

// Operator returns the requirement's operator.
func (r LabelRequirement) Operator() Operator { return r.op }

// Values returns a copy of the requirement's values: none for [Exists] and
// [DoesNotExist], one for the comparison operators, and the sorted,
// de-duplicated set for [In] and [NotIn].
func (r LabelRequirement) Values() []string { return slices.Clone(r.values) }

// Matches reports whether labels satisfy the requirement:
//
//   - Exists: the key is present.
//   - DoesNotExist: the key is absent.
//   - Equals, DoubleEquals, In: the key is present and its value is one of
//     the values.
//   - NotEquals, NotIn: the key is absent, or its value is none of the
//     values.
//   - GreaterThan, LessThan: the key is present, its value is a decimal
//     int64, and it compares as required with the requirement's integer.
//
// A nil Labels has no labels.
func (r LabelRequirement) Matches(labels Labels) bool { return r.matches(labels) }

// matches implements Matches without copying the requirement.
func (r *LabelRequirement) matches(labels Labels) bool {
	switch r.op {
	case Exists:
		return hasLabel(labels, r.key)
	case DoesNotExist:
		return !hasLabel(labels, r.key)
	case Equals, DoubleEquals, In:
		v, ok := lookupLabel(labels, r.key)
		return ok && r.hasValue(v)
	case NotEquals, NotIn:
		v, ok := lookupLabel(labels, r.key)
		return !ok || !r.hasValue(v)
	case GreaterThan, LessThan:
		v, ok := lookupLabel(labels, r.key)
		if !ok {
			return false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		if r.op == GreaterThan {
			return n > r.num
		}
		return n < r.num
	}
	return false
}

// hasValue reports whether v is one of the requirement's values.
func (r *LabelRequirement) hasValue(v string) bool {
	if len(r.values) <= 8 {
		for _, x := range r.values {
			if x == v {
				return true
			}
		}
		return false
	}
	_, found := slices.BinarySearch(r.values, v)
	return found
}

// hasLabel reports whether key is present in labels; a nil labels is empty.
func hasLabel(labels Labels, key string) bool {
	switch l := labels.(type) {
	case Set:
		_, ok := l[key]
		return ok
	case nil:
		return false
	}
	return labels.Has(key)
}

// String returns the requirement in selector syntax, for example "a",
// "!a", "a=b", "a==b", "a!=b", "a in (x,y)", "a notin (x,y)", "a>5" or
// "a<5". The zero LabelRequirement yields "".
func (r LabelRequirement) String() string {
	var b strings.Builder
	b.Grow(r.stringLen())
	r.writeTo(&b)
	return b.String()
}

// stringLen returns the length of the requirement's string form.
func (r *LabelRequirement) stringLen() int {
	n := len(r.key) + len("notin") + 4
	for _, v := range r.values {
		n += len(v) + 1
	}
	return n
}

// writeTo appends the requirement's string form to b.
func (r *LabelRequirement) writeTo(b *strings.Builder) {
	var sep string
	switch r.op {
	case Exists:
	case DoesNotExist:
		b.WriteByte('!')
	case Equals:
		sep = "="
	case DoubleEquals:
		sep = "=="
	case NotEquals:
		sep = "!="
	case GreaterThan:
		sep = ">"
	case LessThan:
		sep = "<"
	case In:
		sep = " in ("
	case NotIn:
		sep = " notin ("
	default:
		return
	}
	b.WriteString(r.key)
	if sep == "" {
		return
	}
	b.WriteString(sep)
	for i, v := range r.values {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(v)
	}
	if r.op == In || r.op == NotIn {
		b.WriteByte(')')
	}
}

// compareLabelRequirements orders requirements by key, then operator, then
// values. It is the order of the canonical string form.
func compareLabelRequirements(a, b LabelRequirement) int {
	if c := strings.Compare(a.key, b.key); c != 0 {
		return c
	}
	if c := cmp.Compare(a.op, b.op); c != 0 {
		return c
	}
	return slices.Compare(a.values, b.values)
}

// LabelSelector selects objects by their labels: it matches when all of its
// requirements match (logical AND).
//
// The zero LabelSelector has no requirements and matches everything. A
// LabelSelector is immutable and safe for concurrent use; copying one is
// cheap.
type LabelSelector struct {
	// reqs is sorted with compareLabelRequirements and never modified.
	reqs []LabelRequirement
}

// Everything returns a label selector that matches all objects. It is the
// zero LabelSelector, and what ParseLabels("") returns.
func Everything() LabelSelector { return LabelSelector{} }

// SelectorFromSet returns a label selector that requires every key of set to
// have the corresponding value ("k1=v1,k2=v2"). An empty or nil set yields
// [Everything].
//
// Like its Kubernetes namesake it does not validate the set: if a key or
// value is not valid, the selector still matches as described, but its
// string form is not a parsable selector. Use [ValidatedSelectorFromSet] to
// check the set first.
func SelectorFromSet(set Set) LabelSelector {
	if len(set) == 0 {
		return LabelSelector{}
	}
	reqs := make([]LabelRequirement, 0, len(set))
	for k, v := range set {
		reqs = append(reqs, LabelRequirement{key: k, op: Equals, values: []string{v}})
	}
	slices.SortFunc(reqs, compareLabelRequirements)
	return LabelSelector{reqs: reqs}
}

// ValidatedSelectorFromSet is like [SelectorFromSet] but first checks that
// every key and value of set is valid. On failure it returns a
// *[ValidationError] for the first offending entry in key order.
func ValidatedSelectorFromSet(set Set) (LabelSelector, error) {
	s := SelectorFromSet(set)
	for _, r := range s.reqs {
		if err := ValidateLabelKey(r.key); err != nil {
			return LabelSelector{}, err
		}
		if err := ValidateLabelValue(r.values[0]); err != nil {
			return LabelSelector{}, err
		}
	}
	return s, nil
}

// Add returns a selector with the requirements of s and reqs. It does not
// modify s. Add panics if a requirement is the zero LabelRequirement, which
// is a programming error.
func (s LabelSelector) Add(reqs ...LabelRequirement) LabelSelector {
	if len(reqs) == 0 {
		return s
	}
	all := make([]LabelRequirement, 0, len(s.reqs)+len(reqs))
	all = append(all, s.reqs...)
	for _, r := range reqs {
		if !r.op.valid() {
			panic("selector: LabelSelector.Add called with an invalid LabelRequirement; use NewLabelRequirement")
		}
		all = append(all, r)
	}
	slices.SortFunc(all, compareLabelRequirements)
	return LabelSelector{reqs: all}
}

// Matches reports whether labels satisfy every requirement of the selector.
// A nil Labels has no labels.
func (s LabelSelector) Matches(labels Labels) bool {
	for i := range s.reqs {
		if !s.reqs[i].matches(labels) {
			return false
		}
	}
	return true
}

// Empty reports whether the selector has no requirements, and so matches
// everything.
func (s LabelSelector) Empty() bool { return len(s.reqs) == 0 }

// Requirements returns a copy of the selector's requirements in canonical
// order: by key, then operator (in the declaration order of the [Operator]
// constants), then values.
func (s LabelSelector) Requirements() []LabelRequirement { return slices.Clone(s.reqs) }

// RequiresExactMatch reports whether the selector only matches objects whose
// label key has one specific value, and returns that value. That is the
// case when some requirement on key is "key=value", "key==value" or
// "key in (value)". It is meant for index lookups: the objects indexed
// under key=value are a superset of the matches, still to be filtered with
// Matches.
func (s LabelSelector) RequiresExactMatch(key string) (value string, ok bool) {
	i, _ := slices.BinarySearchFunc(s.reqs, key, func(r LabelRequirement, k string) int {
		return strings.Compare(r.key, k)
	})
	for ; i < len(s.reqs) && s.reqs[i].key == key; i++ {
		switch r := &s.reqs[i]; r.op {
		case Equals, DoubleEquals, In:
			if len(r.values) == 1 {
				return r.values[0], true
			}
		}
	}
	return "", false
}

// String returns the canonical form of the selector: its requirements in
// canonical order, separated by commas, with the values of "in" and
// "notin" sorted and de-duplicated, for example "a in (x,y),b!=c,!d".
// Everything yields "". For a selector made by [ParseLabels] the result
// parses back to an identical selector.
func (s LabelSelector) String() string {
	n := 0
	for i := range s.reqs {
		n += s.reqs[i].stringLen() + 1
	}
	var b strings.Builder
	b.Grow(n)
	for i := range s.reqs {
		if i > 0 {
			b.WriteByte(',')
		}
		s.reqs[i].writeTo(&b)
	}
	return b.String()
}
