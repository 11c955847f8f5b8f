// Package jsonpath evaluates the JSONPath expressions of a
// CustomResourceDefinition's additionalPrinterColumns (".spec.size",
// `.status.conditions[?(@.type=="Ready")].status`) against a custom resource
// held as JSON values (map[string]any, []any, string, int64, float64, bool,
// nil), for the server's Table responses.
//
// # Why it is hand-written
//
// Kubernetes evaluates these columns with the JSONPath template engine of
// k8s.io/client-go/util/jsonpath, which would pull client-go and its
// dependency tree into the reference server for one feature, and which works
// by reflection over template syntax ("{.spec.size}") kapi has no other use
// for. The Go JSONPath libraries that exist implement the IETF RFC 9535
// dialect, whose filter and missing-key semantics differ from Kubernetes'.
// Printer columns use a small, stable subset, which this package implements
// with Kubernetes' semantics: missing keys yield no result instead of an
// error, a filter skips elements whose left operand is missing, and only the
// first result of a column is printed.
//
// # Syntax
//
// A path is a sequence of steps, optionally wrapped in "{" and "}":
//
//	.name  or  ['name'] or ["name"]   a field of an object
//	.*  or  [*]                       every member of an object or array
//	[n]                               the n-th element of an array (n < 0 counts from the end)
//	[a:b] [a:] [:b] [a:b:s]           a slice of an array
//	[n,m] ['a','b']                   several indices or fields
//	..name                            recursive descent: name at any depth
//	[?(@.x == "v")]                   the array elements (or object members)
//	                                  whose relative path compares so; the
//	                                  operators are == != < <= > >=, and a
//	                                  bare [?(@.x)] tests that @.x exists
//
// Literals in filters are quoted strings, numbers, true, false and null.
package jsonpath

import (
	"cmp"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Path is a parsed expression. A Path is immutable and safe for concurrent
// use.
type Path struct {
	src   string
	steps []step
}

// String returns the expression as it was given to Parse.
func (p *Path) String() string { return p.src }

type stepKind int

const (
	stepField     stepKind = iota // names
	stepWildcard                  // * / [*]
	stepIndex                     // indices
	stepSlice                     // start:end:step
	stepRecursive                 // ..name or ..*
	stepFilter                    // [?(...)]
)

type step struct {
	kind    stepKind
	names   []string
	indices []int
	// slice bounds; hasStart/hasEnd say whether they were written.
	start, end, stride int
	hasStart, hasEnd   bool
	// recursive descent target: a field name, or "" for ..*
	filter *filter
}

type filter struct {
	left   *Path // relative to @
	op     string
	right  any // literal, or *Path relative to @
	exists bool
}

// SyntaxError reports an expression that cannot be parsed.
type SyntaxError struct {
	Expr   string
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("jsonpath: %s at offset %d in %q", e.Msg, e.Offset, e.Expr)
}

// Parse parses an expression. An empty expression (or "{}") selects the
// value itself.
func Parse(expr string) (*Path, error) {
	s := strings.TrimSpace(expr)
	if strings.HasPrefix(s, "{") {
		if !strings.HasSuffix(s, "}") {
			return nil, &SyntaxError{Expr: expr, Offset: len(expr), Msg: "unclosed {"}
		}
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	p := &parser{in: s, expr: expr}
	s2 := strings.TrimPrefix(s, "$")
	p.pos = len(s) - len(s2)
	steps, err := p.steps(false)
	if err != nil {
		return nil, err
	}
	return &Path{src: expr, steps: steps}, nil
}

type parser struct {
	in   string
	expr string
	pos  int
}

func (p *parser) fail(format string, args ...any) error {
	return &SyntaxError{Expr: p.expr, Offset: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.in) && (p.in[p.pos] == ' ' || p.in[p.pos] == '\t') {
		p.pos++
	}
}

func isNameChar(c byte) bool {
	return c == '_' || c == '-' || c == '/' || c == '$' || c >= 0x80 ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// steps parses steps until the end, or (inFilter) until an operator or ")".
func (p *parser) steps(inFilter bool) ([]step, error) {
	var out []step
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		switch {
		case c == '.' && p.pos+1 < len(p.in) && p.in[p.pos+1] == '.':
			p.pos += 2
			if p.pos < len(p.in) && p.in[p.pos] == '*' {
				p.pos++
				out = append(out, step{kind: stepRecursive})
				continue
			}
			name := p.name()
			if name == "" {
				return nil, p.fail("missing field name after ..")
			}
			out = append(out, step{kind: stepRecursive, names: []string{name}})
		case c == '.':
			p.pos++
			if p.pos < len(p.in) && p.in[p.pos] == '*' {
				p.pos++
				out = append(out, step{kind: stepWildcard})
				continue
			}
			if p.pos < len(p.in) && p.in[p.pos] == '[' {
				continue // ".[0]" as kubectl accepts it
			}
			name := p.name()
			if name == "" {
				if p.pos == len(p.in) && len(out) == 0 {
					return out, nil // "." alone: the value itself
				}
				return nil, p.fail("missing field name after .")
			}
			out = append(out, step{kind: stepField, names: []string{name}})
		case c == '[':
			st, err := p.bracket()
			if err != nil {
				return nil, err
			}
			out = append(out, st)
		case inFilter:
			return out, nil
		default:
			return nil, p.fail("unexpected character %q", c)
		}
	}
	return out, nil
}

// name parses a field name; a backslash escapes the next character, so that
// ".labels.app\.kubernetes\.io/name" names one field, as in kubectl.
func (p *parser) name() string {
	var b strings.Builder
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		switch {
		case c == '\\' && p.pos+1 < len(p.in):
			b.WriteByte(p.in[p.pos+1])
			p.pos += 2
		case isNameChar(c):
			b.WriteByte(c)
			p.pos++
		default:
			return b.String()
		}
	}
	return b.String()
}

// bracket parses a [...] step; p.pos is at "[".
func (p *parser) bracket() (step, error) {
	p.pos++
	p.skipSpace()
	if p.pos >= len(p.in) {
		return step{}, p.fail("unclosed [")
	}
	var st step
	switch c := p.in[p.pos]; {
	case c == '*':
		p.pos++
		st = step{kind: stepWildcard}
	case c == '?':
		p.pos++
		f, err := p.filter()
		if err != nil {
			return step{}, err
		}
		st = step{kind: stepFilter, filter: f}
	case c == '\'' || c == '"':
		for {
			if p.pos >= len(p.in) || (p.in[p.pos] != '\'' && p.in[p.pos] != '"') {
				return step{}, p.fail("expected a quoted name")
			}
			s, err := p.quoted()
			if err != nil {
				return step{}, err
			}
			st.names = append(st.names, s)
			p.skipSpace()
			if p.pos < len(p.in) && p.in[p.pos] == ',' {
				p.pos++
				p.skipSpace()
				continue
			}
			break
		}
		st.kind = stepField
	default:
		var err error
		if st, err = p.indexOrSlice(); err != nil {
			return step{}, err
		}
	}
	p.skipSpace()
	if p.pos >= len(p.in) || p.in[p.pos] != ']' {
		return step{}, p.fail("expected ]")
	}
	p.pos++
	return st, nil
}

func (p *parser) int() (int, bool, error) {
	p.skipSpace()
	start := p.pos
	if p.pos < len(p.in) && (p.in[p.pos] == '-' || p.in[p.pos] == '+') {
		p.pos++
	}
	for p.pos < len(p.in) && '0' <= p.in[p.pos] && p.in[p.pos] <= '9' {
		p.pos++
	}
	if start == p.pos {
		return 0, false, nil
	}
	n, err := strconv.Atoi(p.in[start:p.pos])
	if err != nil {
		p.pos = start
		return 0, false, p.fail("invalid number %q", p.in[start:p.pos])
	}
	p.skipSpace()
	return n, true, nil
}

func (p *parser) indexOrSlice() (step, error) {
	first, ok, err := p.int()
	if err != nil {
		return step{}, err
	}
	if p.pos < len(p.in) && p.in[p.pos] == ':' {
		st := step{kind: stepSlice, start: first, hasStart: ok, stride: 1}
		p.pos++
		if st.end, st.hasEnd, err = p.int(); err != nil {
			return step{}, err
		}
		if p.pos < len(p.in) && p.in[p.pos] == ':' {
			p.pos++
			s, has, err := p.int()
			if err != nil {
				return step{}, err
			}
			if has {
				if s == 0 {
					return step{}, p.fail("slice step must not be 0")
				}
				st.stride = s
			}
		}
		return st, nil
	}
	if !ok {
		return step{}, p.fail("expected an index, a slice, a quoted name, * or a filter")
	}
	st := step{kind: stepIndex, indices: []int{first}}
	for p.pos < len(p.in) && p.in[p.pos] == ',' {
		p.pos++
		n, ok, err := p.int()
		if err != nil {
			return step{}, err
		}
		if !ok {
			return step{}, p.fail("expected an index")
		}
		st.indices = append(st.indices, n)
	}
	return st, nil
}

// quoted parses a '...' or "..." string with backslash escapes.
func (p *parser) quoted() (string, error) {
	q := p.in[p.pos]
	p.pos++
	var b strings.Builder
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		switch {
		case c == q:
			p.pos++
			return b.String(), nil
		case c == '\\' && p.pos+1 < len(p.in):
			b.WriteByte(p.in[p.pos+1])
			p.pos += 2
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	return "", p.fail("unterminated string")
}

// filter parses "(@.x op literal)" after "?".
func (p *parser) filter() (*filter, error) {
	p.skipSpace()
	if p.pos >= len(p.in) || p.in[p.pos] != '(' {
		return nil, p.fail("expected ( after ?")
	}
	p.pos++
	p.skipSpace()
	left, err := p.operandPath()
	if err != nil {
		return nil, err
	}
	f := &filter{left: left}
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == ')' {
		p.pos++
		f.exists = true
		return f, nil
	}
	for _, op := range []string{"==", "!=", "<=", ">=", "<", ">"} {
		if strings.HasPrefix(p.in[p.pos:], op) {
			f.op = op
			p.pos += len(op)
			break
		}
	}
	if f.op == "" {
		return nil, p.fail("expected a comparison operator or )")
	}
	p.skipSpace()
	if f.right, err = p.literal(); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos >= len(p.in) || p.in[p.pos] != ')' {
		return nil, p.fail("expected )")
	}
	p.pos++
	return f, nil
}

// operandPath parses "@" followed by steps.
func (p *parser) operandPath() (*Path, error) {
	if p.pos >= len(p.in) || p.in[p.pos] != '@' {
		return nil, p.fail("expected @")
	}
	start := p.pos
	p.pos++
	steps, err := p.steps(true)
	if err != nil {
		return nil, err
	}
	return &Path{src: p.in[start:p.pos], steps: steps}, nil
}

func (p *parser) literal() (any, error) {
	if p.pos >= len(p.in) {
		return nil, p.fail("expected a value")
	}
	switch c := p.in[p.pos]; {
	case c == '\'' || c == '"':
		return p.quoted()
	case c == '@':
		return p.operandPath()
	case c == '-' || c == '+' || c == '.' || '0' <= c && c <= '9':
		start := p.pos
		for p.pos < len(p.in) && strings.IndexByte("+-.0123456789eE", p.in[p.pos]) >= 0 {
			p.pos++
		}
		f, err := strconv.ParseFloat(p.in[start:p.pos], 64)
		if err != nil {
			p.pos = start
			return nil, p.fail("invalid number")
		}
		return f, nil
	}
	for _, kw := range []struct {
		s string
		v any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if strings.HasPrefix(p.in[p.pos:], kw.s) {
			p.pos += len(kw.s)
			return kw.v, nil
		}
	}
	return nil, p.fail("expected a value")
}

// Eval returns the values the path selects in v, in document order (object
// members in key order). Missing fields and out-of-range indices select
// nothing; they are not errors.
func (p *Path) Eval(v any) []any {
	cur := []any{v}
	for i := range p.steps {
		cur = p.steps[i].apply(cur)
		if len(cur) == 0 {
			return nil
		}
	}
	return cur
}

// First returns the first value Eval would return, and whether there is one.
func (p *Path) First(v any) (any, bool) {
	r := p.Eval(v)
	if len(r) == 0 {
		return nil, false
	}
	return r[0], true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// members returns the values of an object (key order) or array.
func members(v any) []any {
	switch v := v.(type) {
	case map[string]any:
		out := make([]any, 0, len(v))
		for _, k := range sortedKeys(v) {
			out = append(out, v[k])
		}
		return out
	case []any:
		return v
	}
	return nil
}

func (s *step) apply(in []any) []any {
	var out []any
	for _, v := range in {
		switch s.kind {
		case stepField:
			if m, ok := v.(map[string]any); ok {
				for _, n := range s.names {
					if x, ok := m[n]; ok {
						out = append(out, x)
					}
				}
			}
		case stepWildcard:
			out = append(out, members(v)...)
		case stepIndex:
			if a, ok := v.([]any); ok {
				for _, i := range s.indices {
					if i < 0 {
						i += len(a)
					}
					if i >= 0 && i < len(a) {
						out = append(out, a[i])
					}
				}
			}
		case stepSlice:
			if a, ok := v.([]any); ok {
				out = append(out, s.slice(a)...)
			}
		case stepRecursive:
			out = s.descend(v, out)
		case stepFilter:
			for _, m := range members(v) {
				if s.filter.match(m) {
					out = append(out, m)
				}
			}
		}
	}
	return out
}

func (s *step) slice(a []any) []any {
	n := len(a)
	norm := func(i, def int, has bool) int {
		if !has {
			return def
		}
		if i < 0 {
			i += n
		}
		return max(-1, min(i, n))
	}
	var out []any
	if s.stride > 0 {
		start, end := max(0, norm(s.start, 0, s.hasStart)), norm(s.end, n, s.hasEnd)
		for i := start; i < end; i += s.stride {
			out = append(out, a[i])
		}
		return out
	}
	start, end := min(n-1, norm(s.start, n-1, s.hasStart)), norm(s.end, -1, s.hasEnd)
	for i := start; i > end && i >= 0; i += s.stride {
		out = append(out, a[i])
	}
	return out
}

// descend appends, depth first, every value under v (v included) that has
// the step's field, or every value below v for "..*".
func (s *step) descend(v any, out []any) []any {
	if len(s.names) > 0 {
		if m, ok := v.(map[string]any); ok {
			if x, ok := m[s.names[0]]; ok {
				out = append(out, x)
			}
		}
	}
	for _, m := range members(v) {
		if len(s.names) == 0 {
			out = append(out, m)
		}
		out = s.descend(m, out)
	}
	return out
}

func (f *filter) match(v any) bool {
	lefts := f.left.Eval(v)
	if f.exists {
		return len(lefts) > 0
	}
	if len(lefts) == 0 {
		return false
	}
	right := f.right
	if rp, ok := right.(*Path); ok {
		r := rp.Eval(v)
		if len(r) == 0 {
			return false
		}
		right = r[0]
	}
	return compare(lefts[0], f.op, right)
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	case int:
		return float64(v), true
	}
	return 0, false
}

// compare applies op to two JSON values: numbers compare numerically,
// strings lexically; other values only compare for (in)equality.
func compare(a any, op string, b any) bool {
	if x, ok := number(a); ok {
		if y, ok := number(b); ok {
			return compareOrdered(x, y, op)
		}
	}
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			return compareOrdered(x, y, op)
		}
	}
	eq := scalarEqual(a, b)
	switch op {
	case "==":
		return eq
	case "!=":
		return !eq
	}
	return false
}

func scalarEqual(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && a == y
	}
	return false
}

// compareOrdered applies a filter's comparison operator to two ordered values.
func compareOrdered[T cmp.Ordered](x, y T, op string) bool {
	c := cmp.Compare(x, y)
	switch op {
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}
