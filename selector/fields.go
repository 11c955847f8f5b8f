package selector

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"
)

// FieldRequirement is one condition of a [FieldSelector]: a field name, the
// operator [Equals] or [NotEquals], and a value.
//
// Obtain requirements from [NewFieldRequirement] or
// [FieldSelector.Requirements]; the zero FieldRequirement is invalid and
// matches nothing. A FieldRequirement is immutable and safe for concurrent
// use.
type FieldRequirement struct {
	field string
	op    Operator
	value string
}

// NewFieldRequirement returns a requirement that the field equals value
// (op [Equals] or [DoubleEquals], which is recorded as Equals) or differs
// from it (op [NotEquals]). Other operators are rejected.
//
// As in Kubernetes, the field name is not validated: which fields are
// selectable depends on the resource and is checked by the API server. A
// field name containing ',', '=' or "!=", or ending in '!', cannot be
// written in selector syntax, so the String of such a requirement does not
// parse back to it. The value may be any string; String escapes it.
func NewFieldRequirement(field string, op Operator, value string) (FieldRequirement, error) {
	switch op {
	case Equals, DoubleEquals:
		op = Equals
	case NotEquals:
	default:
		return FieldRequirement{}, errors.New("selector: field selectors only support the =, == and != operators, not " + op.String())
	}
	return FieldRequirement{field: field, op: op, value: value}, nil
}

// Field returns the field name the requirement is about.
func (r FieldRequirement) Field() string { return r.field }

// Operator returns [Equals] or [NotEquals].
func (r FieldRequirement) Operator() Operator { return r.op }

// Value returns the (unescaped) value the field is compared with.
func (r FieldRequirement) Value() string { return r.value }

// Matches reports whether fields satisfy the requirement: for [Equals],
// whether fields.Get(field) equals the value; for [NotEquals], whether it
// differs. As in Kubernetes an absent field reads as "", so "f=" matches
// objects without f. A nil Fields has no fields.
func (r FieldRequirement) Matches(fields Fields) bool { return r.matches(fields) }

// matches implements Matches without copying the requirement.
func (r *FieldRequirement) matches(fields Fields) bool {
	var v string
	switch f := fields.(type) {
	case Set:
		v = f[r.field]
	case nil:
	default:
		v = f.Get(r.field)
	}
	switch r.op {
	case Equals:
		return v == r.value
	case NotEquals:
		return v != r.value
	}
	return false
}

// String returns the requirement in selector syntax, "field=value" or
// "field!=value", with the value escaped by [EscapeFieldValue]. The zero
// FieldRequirement yields "".
func (r FieldRequirement) String() string {
	var b strings.Builder
	b.Grow(len(r.field) + len(r.value) + 4)
	r.writeTo(&b)
	return b.String()
}

// writeTo appends the requirement's string form to b.
func (r *FieldRequirement) writeTo(b *strings.Builder) {
	switch r.op {
	case Equals:
		b.WriteString(r.field)
		b.WriteByte('=')
	case NotEquals:
		b.WriteString(r.field)
		b.WriteString("!=")
	default:
		return
	}
	writeEscaped(b, r.value)
}

// compareFieldRequirements orders requirements by field, then operator,
// then value. It is the order of the canonical string form.
func compareFieldRequirements(a, b FieldRequirement) int {
	if c := strings.Compare(a.field, b.field); c != 0 {
		return c
	}
	if c := cmp.Compare(a.op, b.op); c != 0 {
		return c
	}
	return strings.Compare(a.value, b.value)
}

// FieldSelector selects objects by field values, such as
// "metadata.name=web,status.phase!=Running": it matches when all of its
// requirements match (logical AND).
//
// The zero FieldSelector has no requirements and matches everything. A
// FieldSelector is immutable and safe for concurrent use; copying one is
// cheap.
type FieldSelector struct {
	// reqs is sorted with compareFieldRequirements and never modified.
	reqs []FieldRequirement
}

// EverythingFields returns a field selector that matches all objects. It is
// the zero FieldSelector, and what ParseFields("") returns.
func EverythingFields() FieldSelector { return FieldSelector{} }

// FieldsFromSet returns a field selector that requires every field of set to
// have the corresponding value. An empty or nil set yields
// [EverythingFields].
func FieldsFromSet(set Set) FieldSelector {
	if len(set) == 0 {
		return FieldSelector{}
	}
	reqs := make([]FieldRequirement, 0, len(set))
	for f, v := range set {
		reqs = append(reqs, FieldRequirement{field: f, op: Equals, value: v})
	}
	slices.SortFunc(reqs, compareFieldRequirements)
	return FieldSelector{reqs: reqs}
}

// ParseFields parses a field selector in the Kubernetes syntax: terms
// separated by commas, each "field=value", "field==value" or
// "field!=value". Empty terms are ignored, and so is a term whose field and
// value are both empty ("=" or "!="), as in Kubernetes.
//
// The field name is everything before the first operator, taken verbatim:
// blanks are significant, as they are to the Kubernetes API server. In the
// value, the characters '\', ',' and '=' must be escaped with a backslash
// ("\\", "\,", "\="); any other escape sequence is an error. A backslash
// anywhere in the input also keeps the next character from separating
// terms. See [EscapeFieldValue].
//
// The empty string yields [EverythingFields]. On failure the error is a
// *[ParseError].
func ParseFields(s string) (FieldSelector, error) {
	if s == "" {
		return FieldSelector{}, nil
	}
	reqs := make([]FieldRequirement, 0, capacityHint(s))
	start, escaped := 0, false
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch c := s[i]; {
			case escaped:
				escaped = false
				continue
			case c == '\\':
				escaped = true
				continue
			case c != ',':
				continue
			}
		}
		if i > start {
			r, err := parseFieldTerm(s, start, i)
			if err != nil {
				return FieldSelector{}, err
			}
			if r.field != "" || r.value != "" {
				reqs = append(reqs, r)
			}
		}
		start = i + 1
	}
	slices.SortFunc(reqs, compareFieldRequirements)
	return FieldSelector{reqs: reqs}, nil
}

// MustParseFields is like [ParseFields] but panics if s cannot be parsed.
// It is meant for selectors written in source code.
func MustParseFields(s string) FieldSelector {
	sel, err := ParseFields(s)
	if err != nil {
		panic("selector: MustParseFields: " + err.Error())
	}
	return sel
}

// parseFieldTerm parses the term input[start:end]. The field is the text
// before the first "!=", "==" or "=", and the value, unescaped, the text
// after it.
func parseFieldTerm(input string, start, end int) (FieldRequirement, error) {
	term := input[start:end]
	for i := 0; i < len(term); i++ {
		var op Operator
		width := 1
		switch term[i] {
		case '=':
			op = Equals
			if i+1 < len(term) && term[i+1] == '=' {
				width = 2
			}
		case '!':
			if i+1 < len(term) && term[i+1] == '=' {
				op, width = NotEquals, 2
			}
		}
		if op == 0 {
			continue
		}
		value, err := unescapeFieldValue(input, start+i+width, end)
		if err != nil {
			return FieldRequirement{}, err
		}
		return FieldRequirement{field: term[:i], op: op, value: value}, nil
	}
	return FieldRequirement{}, &ParseError{
		Input:  input,
		Offset: start,
		Token:  term,
		Msg:    "invalid field selector: can't understand '" + term + "'; expected <field>=<value>, <field>==<value> or <field>!=<value>",
	}
}

// EscapeFieldValue escapes s for use as a value in a field selector: it
// puts a backslash before every '\', ',' and '='. ParseFields and
// [UnescapeFieldValue] undo it.
func EscapeFieldValue(s string) string {
	if strings.IndexAny(s, `\,=`) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	writeEscaped(&b, s)
	return b.String()
}

// writeEscaped appends the escaped form of s to b.
func writeEscaped(b *strings.Builder, s string) {
	for {
		i := strings.IndexAny(s, `\,=`)
		if i < 0 {
			b.WriteString(s)
			return
		}
		b.WriteString(s[:i])
		b.WriteByte('\\')
		b.WriteByte(s[i])
		s = s[i+1:]
	}
}

// UnescapeFieldValue reverses [EscapeFieldValue]. It fails with a
// *[ParseError] if s contains an unescaped ',' or '=', or a backslash that
// is not followed by '\', ',' or '='.
func UnescapeFieldValue(s string) (string, error) {
	return unescapeFieldValue(s, 0, len(s))
}

// unescapeFieldValue unescapes input[start:end]; errors are located in
// input.
func unescapeFieldValue(input string, start, end int) (string, error) {
	s := input[start:end]
	if strings.IndexAny(s, `\,=`) < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 < len(s) {
				switch s[i+1] {
				case '\\', ',', '=':
					b.WriteByte(s[i+1])
					i++
					continue
				}
			}
			_, n := utf8.DecodeRuneInString(s[i+1:])
			seq := s[i : i+1+n]
			return "", &ParseError{
				Input:  input,
				Offset: start + i,
				Token:  seq,
				Msg:    "invalid field selector: invalid escape sequence: " + seq,
			}
		case ',', '=':
			return "", &ParseError{
				Input:  input,
				Offset: start + i,
				Token:  string(c),
				Msg:    "invalid field selector: unescaped character in value: '" + string(c) + "' (escape it as '\\" + string(c) + "')",
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// Add returns a selector with the requirements of s and reqs. It does not
// modify s. Add panics if a requirement is the zero FieldRequirement, which
// is a programming error.
func (s FieldSelector) Add(reqs ...FieldRequirement) FieldSelector {
	if len(reqs) == 0 {
		return s
	}
	all := make([]FieldRequirement, 0, len(s.reqs)+len(reqs))
	all = append(all, s.reqs...)
	for _, r := range reqs {
		if r.op != Equals && r.op != NotEquals {
			panic("selector: FieldSelector.Add called with an invalid FieldRequirement; use NewFieldRequirement")
		}
		all = append(all, r)
	}
	slices.SortFunc(all, compareFieldRequirements)
	return FieldSelector{reqs: all}
}

// Matches reports whether fields satisfy every requirement of the selector.
// A nil Fields has no fields.
func (s FieldSelector) Matches(fields Fields) bool {
	for i := range s.reqs {
		if !s.reqs[i].matches(fields) {
			return false
		}
	}
	return true
}

// Empty reports whether the selector has no requirements, and so matches
// everything.
func (s FieldSelector) Empty() bool { return len(s.reqs) == 0 }

// Requirements returns a copy of the selector's requirements in canonical
// order: by field, then operator ([Equals] before [NotEquals]), then value.
func (s FieldSelector) Requirements() []FieldRequirement { return slices.Clone(s.reqs) }

// RequiresExactMatch reports whether the selector only matches objects whose
// field has one specific value, because it has a requirement "field=value",
// and returns that value. It is meant for index lookups.
func (s FieldSelector) RequiresExactMatch(field string) (value string, ok bool) {
	i, _ := slices.BinarySearchFunc(s.reqs, field, func(r FieldRequirement, f string) int {
		return strings.Compare(r.field, f)
	})
	for ; i < len(s.reqs) && s.reqs[i].field == field; i++ {
		if s.reqs[i].op == Equals {
			return s.reqs[i].value, true
		}
	}
	return "", false
}

// String returns the canonical form of the selector: its requirements in
// canonical order, separated by commas, with "==" written as "=" and values
// escaped by [EscapeFieldValue]. EverythingFields yields "". For a selector
// made by [ParseFields] the result parses back to an identical selector.
func (s FieldSelector) String() string {
	n := 0
	for i := range s.reqs {
		n += len(s.reqs[i].field) + len(s.reqs[i].value) + 3
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
