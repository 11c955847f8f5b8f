package selector_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/selector"
)

func TestParseLabelsCanonical(t *testing.T) {
	long63 := strings.Repeat("a", 63)
	prefix253 := strings.Repeat(strings.Repeat("p", 62)+".", 4) + "p"
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{" \t\r\n ", ""},
		{"a", "a"},
		{"!a", "!a"},
		{" ! a ", "!a"},
		{"a=b", "a=b"},
		{"a==b", "a==b"},
		{"a!=b", "a!=b"},
		{" a = b ", "a=b"},
		{"a\t==\nb", "a==b"},
		{"a=", "a="},
		{"a= ,b= ", "a=,b="},
		{"a!=,b", "a!=,b"},
		{"a>5", "a>5"},
		{"a < 10", "a<10"},
		{"a>007", "a>007"},
		{"a in (x,y)", "a in (x,y)"},
		{"a in (y,x,y)", "a in (x,y)"},
		{"a in(x)", "a in (x)"},
		{"a notin ( y , x )", "a notin (x,y)"},
		{"a in ()", "a in ()"},
		{"a in (,)", "a in ()"},
		{"a in (x,)", "a in (,x)"},
		{"a in (,x)", "a in (,x)"},
		{"a in (x,,y)", "a in (,x,y)"},
		{"in in (in)", "in in (in)"},
		{"notin notin (notin,in)", "notin notin (in,notin)"},
		{"in,notin,!in", "in,!in,notin"},
		{"a=in,b!=notin", "a=in,b!=notin"},
		{"z,y=1,x", "x,y=1,z"},
		{"b!=c,!d,a in (y,x)", "a in (x,y),b!=c,!d"},
		{"x=a,y=b,z=c", "x=a,y=b,z=c"},
		{"x!=a,y=b", "x!=a,y=b"},
		{"x>1,z<5", "x>1,z<5"},
		// Requirements on one key are ordered by operator, then values.
		{"a<9,a>1,a notin (r),a in (q),a!=y,a==w,a=x,!a,a", "a,!a,a=x,a==w,a!=y,a in (q),a notin (r),a>1,a<9"},
		{"a=y,a=x", "a=x,a=y"},
		{"a in (y),a in (x,z),a in (x)", "a in (x),a in (x,z),a in (y)"},
		// Duplicates are kept, as in Kubernetes.
		{"a=x,a=x", "a=x,a=x"},
		{"example.com/app=web", "example.com/app=web"},
		{"k8s.io/a-b.c_d=X.y-Z_1", "k8s.io/a-b.c_d=X.y-Z_1"},
		{"A.b_c-D=E.f_g-H", "A.b_c-D=E.f_g-H"},
		{long63 + "=" + long63, long63 + "=" + long63},
		{prefix253 + "/" + long63, prefix253 + "/" + long63},
		{"1.2.3.4/5678", "1.2.3.4/5678"},
		{"a>9223372036854775807", "a>9223372036854775807"},
		{" a in (b,a,,b) , !c,a==x, d>4 ,e<3,f!=g,h notin (z)", "a==x,a in (,a,b),!c,d>4,e<3,f!=g,h notin (z)"},
	}
	if len(prefix253) != 253 {
		t.Fatalf("test setup: prefix has %d bytes", len(prefix253))
	}
	for _, tt := range tests {
		sel, err := selector.ParseLabels(tt.in)
		if err != nil {
			t.Errorf("ParseLabels(%q): %v", tt.in, err)
			continue
		}
		if got := sel.String(); got != tt.want {
			t.Errorf("ParseLabels(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
		if sel.Empty() != (tt.want == "") {
			t.Errorf("ParseLabels(%q).Empty() = %v", tt.in, sel.Empty())
		}
		again, err := selector.ParseLabels(tt.want)
		if err != nil {
			t.Errorf("re-parsing %q: %v", tt.want, err)
			continue
		}
		if got := again.String(); got != tt.want {
			t.Errorf("re-parsing %q gave %q", tt.want, got)
		}
	}
}

func TestParseLabelsErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		token  string
		msg    string
	}{
		// Structure.
		{"a,=b", 2, "=", "unable to parse requirement: found '=', expected: identifier"},
		{"=a", 0, "=", "found '=', expected: !, identifier, or 'end of string'"},
		{"!=a", 0, "!=", "found '!=', expected: !, identifier, or 'end of string'"},
		{",a", 0, ",", "found ',', expected: !, identifier, or 'end of string'"},
		{"a,", 2, "", "unable to parse requirement: found '', expected: identifier"},
		{"a,,b", 2, ",", "unable to parse requirement: found ',', expected: identifier"},
		{"!", 1, "", "unable to parse requirement: found '', expected: identifier"},
		{"!!a", 1, "!", "unable to parse requirement: found '!', expected: identifier"},
		{"!a=b", 2, "=", "found '=', expected: ',' or 'end of string'"},
		{"!a in (x)", 3, "in", "found 'in', expected: ',' or 'end of string'"},
		{"a b", 2, "b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, >, <"},
		{"a (x)", 2, "(", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, >, <"},
		{"a=b c", 4, "c", "found 'c', expected: ',' or 'end of string'"},
		{"a=b=c", 3, "=", "found '=', expected: ',' or 'end of string'"},
		{"x==a==b", 4, "==", "found '==', expected: ',' or 'end of string'"},
		{"a!==b", 3, "=", "unable to parse requirement: found '=', expected: identifier"},
		{"a=)", 2, ")", "unable to parse requirement: found ')', expected: identifier"},
		{"a>=5", 2, "=", "unable to parse requirement: found '=', expected: identifier"},
		{"a in x", 5, "x", "unable to parse requirement: found 'x', expected: '('"},
		{"a in", 4, "", "unable to parse requirement: found '', expected: '('"},
		{"a in (", 6, "", "unable to parse requirement: found '', expected: ',', ')' or identifier"},
		{"a in (x", 7, "", "unable to parse requirement: found '', expected: ',' or ')'"},
		{"a in (x,", 8, "", "unable to parse requirement: found '', expected: ',', ')' or identifier"},
		{"a in (x y)", 8, "y", "unable to parse requirement: found 'y', expected: ',' or ')'"},
		{"a in (x,=)", 8, "=", "unable to parse requirement: found '=', expected: ',', ')' or identifier"},
		{"a in (x)(", 8, "(", "found '(', expected: ',' or 'end of string'"},
		{"a notin ((x))", 9, "(", "unable to parse requirement: found '(', expected: ',', ')' or identifier"},
		// Syntax errors in a value list win over invalid values, as in Kubernetes.
		{"a in (-x,y z)", 11, "z", "unable to parse requirement: found 'z', expected: ',' or ')'"},

		// Invalid keys.
		{"-a=b", 0, "-a", `unable to parse requirement: invalid label key "-a": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')`},
		{"x,a b-", 4, "b-", "unable to parse requirement: found 'b-', expected: in, notin, =, ==, !=, >, <"},
		{"a/b/c", 0, "a/b/c", `unable to parse requirement: invalid label key "a/b/c": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc'), with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`},
		{"/a", 0, "/a", `unable to parse requirement: invalid label key "/a": prefix part must be non-empty`},
		{"a/", 0, "a/", `unable to parse requirement: invalid label key "a/": name part must be non-empty`},
		{"Example.com/a", 0, "Example.com/a", `unable to parse requirement: invalid label key "Example.com/a": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')`},
		{"x=y, " + strings.Repeat("a", 64), 5, strings.Repeat("a", 64), `unable to parse requirement: invalid label key "` + strings.Repeat("a", 64) + `": name part must be no more than 63 bytes`},
		{"!a.", 1, "a.", ""},
		{"a\x00b", 0, "a\x00b", ""},
		{"ä=b", 0, "ä", ""},
		{"a|b", 0, "a|b", ""},

		// Invalid values.
		{"a=-b", 2, "-b", `unable to parse requirement: invalid label value "-b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', 'my_value' or '12345')`},
		{"a=" + strings.Repeat("v", 64), 2, strings.Repeat("v", 64), `unable to parse requirement: invalid label value "` + strings.Repeat("v", 64) + `": must be no more than 63 bytes`},
		{"x=a||y=b", 2, "a||y", ""},
		{"a in (x, y., z)", 9, "y.", ""},
		{"a notin (x,y_)", 11, "y_", ""},
		{"a!=b/c", 3, "b/c", ""},
		{"a>x", 2, "x", `unable to parse requirement: invalid label value "x": for '>' and '<' operators, the value must be an integer`},
		{"x<a", 2, "a", ""},
		{"a>", 2, "", `unable to parse requirement: invalid label value "": for '>' and '<' operators, the value must be an integer`},
		{"a<,b", 2, "", ""},
		{"a>-1", 2, "-1", ""},
		{"a>9223372036854775808", 2, "9223372036854775808", ""},
	}
	for _, tt := range tests {
		sel, err := selector.ParseLabels(tt.in)
		if err == nil {
			t.Errorf("ParseLabels(%q) = %q, want an error", tt.in, sel)
			continue
		}
		var pe *selector.ParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParseLabels(%q) error %T is not a *ParseError", tt.in, err)
			continue
		}
		if pe.Input != tt.in || pe.Offset != tt.offset || pe.Token != tt.token {
			t.Errorf("ParseLabels(%q): Input %q, Offset %d, Token %q; want Offset %d, Token %q",
				tt.in, pe.Input, pe.Offset, pe.Token, tt.offset, tt.token)
		}
		if pe.Offset+len(pe.Token) > len(tt.in) || tt.in[pe.Offset:pe.Offset+len(pe.Token)] != pe.Token {
			t.Errorf("ParseLabels(%q): Token %q is not at Offset %d", tt.in, pe.Token, pe.Offset)
		}
		if tt.msg != "" && pe.Msg != tt.msg {
			t.Errorf("ParseLabels(%q) message\n got: %s\nwant: %s", tt.in, pe.Msg, tt.msg)
		}
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, err := selector.ParseLabels("a,=b")
	const want = `unable to parse requirement: found '=', expected: identifier at position 3 in "a,=b"`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
}

func TestParseLabelsValidationCause(t *testing.T) {
	tests := []struct {
		in, what, value string
	}{
		{"-a", "label key", "-a"},
		{"a=b,c in (x,-y)", "label value", "-y"},
		{"a>x", "label value", "x"},
	}
	for _, tt := range tests {
		_, err := selector.ParseLabels(tt.in)
		var ve *selector.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("ParseLabels(%q) error %v does not wrap a *ValidationError", tt.in, err)
			continue
		}
		if ve.What != tt.what || ve.Value != tt.value || len(ve.Problems) == 0 {
			t.Errorf("ParseLabels(%q): ValidationError %+v", tt.in, ve)
		}
	}
	// Syntax errors have no cause.
	_, err := selector.ParseLabels("a b")
	if errors.Unwrap(err) != nil {
		t.Errorf("syntax error unexpectedly wraps %v", errors.Unwrap(err))
	}
}

func TestLabelMatches(t *testing.T) {
	type set = selector.Set
	tests := []struct {
		sel    string
		labels set
		want   bool
	}{
		{"", nil, true},
		{"", set{"a": "b"}, true},
		{"a", set{"a": ""}, true},
		{"a", set{"b": "x"}, false},
		{"!a", set{"b": "x"}, true},
		{"!a", set{"a": ""}, false},
		{"a=b", set{"a": "b"}, true},
		{"a=b", set{"a": "c"}, false},
		{"a=b", set{}, false},
		{"a==b", set{"a": "b"}, true},
		{"a=", set{"a": ""}, true},
		{"a=", set{}, false},
		{"a!=b", set{"a": "c"}, true},
		{"a!=b", set{"a": "b"}, false},
		{"a!=b", set{}, true},
		{"a!=", set{}, true},
		{"a!=", set{"a": ""}, false},
		{"a in (x,y)", set{"a": "y"}, true},
		{"a in (x,y)", set{"a": "z"}, false},
		{"a in (x,y)", set{}, false},
		{"a in ()", set{"a": ""}, true},
		{"a in (x,)", set{"a": ""}, true},
		{"a notin (x,y)", set{"a": "z"}, true},
		{"a notin (x,y)", set{"a": "x"}, false},
		{"a notin (x,y)", set{}, true},
		{"a notin ()", set{"a": ""}, false},
		{"a in (v0,v1,v2,v3,v4,v5,v6,v7,v8,v9,v10,v11)", set{"a": "v10"}, true},
		{"a in (v0,v1,v2,v3,v4,v5,v6,v7,v8,v9,v10,v11)", set{"a": "v12"}, false},
		{"a notin (v0,v1,v2,v3,v4,v5,v6,v7,v8,v9,v10,v11)", set{"a": "v5"}, false},
		{"a>5", set{"a": "6"}, true},
		{"a>5", set{"a": "5"}, false},
		{"a>5", set{"a": "06"}, true},
		{"a>5", set{"a": "x"}, false},
		{"a>5", set{}, false},
		{"a<5", set{"a": "-7"}, true},
		{"a<5", set{"a": "5"}, false},
		{"a<5", set{"a": "99999999999999999999"}, false},
		{"a,b=c", set{"a": "", "b": "c"}, true},
		{"a,b=c", set{"b": "c"}, false},
		{"x=a,y=b,z=c", set{"x": "a", "y": "b", "z": "c", "w": "d"}, true},
		{"a=x,a=y", set{"a": "x"}, false},
		{"example.com/app=web", set{"example.com/app": "web"}, true},
		{"example.com/app=web", set{"app": "web"}, false},
		{"in in (in)", set{"in": "in"}, true},
	}
	for _, tt := range tests {
		sel, err := selector.ParseLabels(tt.sel)
		if err != nil {
			t.Errorf("ParseLabels(%q): %v", tt.sel, err)
			continue
		}
		if got := sel.Matches(tt.labels); got != tt.want {
			t.Errorf("%q.Matches(%v) = %v, want %v", tt.sel, tt.labels, got, tt.want)
		}
		// Every Labels implementation must give the same answer.
		if got := sel.Matches(hasGetLabels(tt.labels)); got != tt.want {
			t.Errorf("%q.Matches(hasGetLabels(%v)) = %v, want %v", tt.sel, tt.labels, got, tt.want)
		}
		if got := sel.Matches(lookupLabels{tt.labels}); got != tt.want {
			t.Errorf("%q.Matches(lookupLabels(%v)) = %v, want %v", tt.sel, tt.labels, got, tt.want)
		}
		// A selector matches exactly when all its requirements do.
		all := true
		for _, r := range sel.Requirements() {
			all = all && r.Matches(tt.labels)
		}
		if all != tt.want {
			t.Errorf("%q: requirements match %v, selector %v", tt.sel, all, tt.want)
		}
	}
}

// hasGetLabels implements Labels with only Has and Get.
type hasGetLabels map[string]string

func (l hasGetLabels) Has(k string) bool   { _, ok := l[k]; return ok }
func (l hasGetLabels) Get(k string) string { return l[k] }

// lookupLabels implements Labels with a Lookup method, which must be
// preferred to Get.
type lookupLabels struct{ m map[string]string }

func (l lookupLabels) Has(k string) bool { _, ok := l.m[k]; return ok }
func (l lookupLabels) Get(string) string { panic("Get called although Lookup exists") }
func (l lookupLabels) Lookup(k string) (string, bool) {
	v, ok := l.m[k]
	return v, ok
}

func TestMatchesNilLabels(t *testing.T) {
	sel := selector.MustParseLabels("!a,b!=c,d notin (e)")
	if !sel.Matches(nil) {
		t.Error("Matches(nil) = false for a selector of absences")
	}
	if selector.MustParseLabels("a").Matches(nil) {
		t.Error("Matches(nil) = true for an existence requirement")
	}
	if !selector.Everything().Matches(nil) {
		t.Error("Everything().Matches(nil) = false")
	}
}

func TestLabelRequiresExactMatch(t *testing.T) {
	tests := []struct {
		sel, key  string
		wantValue string
		wantOK    bool
	}{
		{"", "a", "", false},
		{"a=b", "a", "b", true},
		{"a==b", "a", "b", true},
		{"a in (b)", "a", "b", true},
		{"a=", "a", "", true},
		{"a in (b,c)", "a", "", false},
		{"a!=b", "a", "", false},
		{"a notin (b)", "a", "", false},
		{"a", "a", "", false},
		{"!a", "a", "", false},
		{"a>1", "a", "", false},
		{"a=b", "b", "", false},
		{"x=1,a=b,z=2", "a", "b", true},
		{"a!=x,a=y", "a", "y", true},
		{"a in (x,y),a in (y)", "a", "y", true},
		{"aa=b,a!=c", "a", "", false},
		{"a!=c,aa=b", "aa", "b", true},
	}
	for _, tt := range tests {
		v, ok := selector.MustParseLabels(tt.sel).RequiresExactMatch(tt.key)
		if v != tt.wantValue || ok != tt.wantOK {
			t.Errorf("%q.RequiresExactMatch(%q) = %q, %v; want %q, %v", tt.sel, tt.key, v, ok, tt.wantValue, tt.wantOK)
		}
	}
}

func TestLabelRequirements(t *testing.T) {
	sel := selector.MustParseLabels("b in (y,x,y),!c,a>10")
	reqs := sel.Requirements()
	type flat struct {
		key    string
		op     selector.Operator
		values []string
	}
	want := []flat{
		{"a", selector.GreaterThan, []string{"10"}},
		{"b", selector.In, []string{"x", "y"}},
		{"c", selector.DoesNotExist, nil},
	}
	if len(reqs) != len(want) {
		t.Fatalf("Requirements() = %v", reqs)
	}
	for i, r := range reqs {
		if r.Key() != want[i].key || r.Operator() != want[i].op || !slices.Equal(r.Values(), want[i].values) {
			t.Errorf("requirement %d = (%q, %v, %q), want %v", i, r.Key(), r.Operator(), r.Values(), want[i])
		}
	}
	// The results are copies.
	reqs[0] = reqs[2]
	reqs[1].Values()[0] = "changed"
	if got := sel.String(); got != "a>10,b in (x,y),!c" {
		t.Errorf("selector changed through Requirements(): %q", got)
	}
}

func TestNewLabelRequirement(t *testing.T) {
	good := []struct {
		key    string
		op     selector.Operator
		values []string
		want   string
	}{
		{"a", selector.Exists, nil, "a"},
		{"a", selector.DoesNotExist, nil, "!a"},
		{"a", selector.Equals, []string{"b"}, "a=b"},
		{"a", selector.DoubleEquals, []string{""}, "a=="},
		{"a", selector.NotEquals, []string{"b"}, "a!=b"},
		{"a", selector.In, []string{"c", "b", "c"}, "a in (b,c)"},
		{"a", selector.NotIn, []string{""}, "a notin ()"},
		{"a", selector.GreaterThan, []string{"42"}, "a>42"},
		{"a", selector.LessThan, []string{"0"}, "a<0"},
		{"example.com/a", selector.Exists, nil, "example.com/a"},
	}
	for _, tt := range good {
		r, err := selector.NewLabelRequirement(tt.key, tt.op, tt.values...)
		if err != nil {
			t.Errorf("NewLabelRequirement(%q, %v, %q): %v", tt.key, tt.op, tt.values, err)
			continue
		}
		if got := r.String(); got != tt.want {
			t.Errorf("NewLabelRequirement(%q, %v, %q).String() = %q, want %q", tt.key, tt.op, tt.values, got, tt.want)
		}
	}

	bad := []struct {
		key     string
		op      selector.Operator
		values  []string
		invalid string // ValidationError.Value, if one is expected
	}{
		{"-a", selector.Exists, nil, "-a"},
		{"", selector.Exists, nil, ""},
		{"a", selector.Equals, []string{"-b"}, "-b"},
		{"a", selector.In, []string{"ok", "not ok"}, "not ok"},
		{"a", selector.GreaterThan, []string{"x"}, "x"},
		{"a", selector.Exists, []string{"b"}, ""},
		{"a", selector.Equals, nil, ""},
		{"a", selector.Equals, []string{"b", "c"}, ""},
		{"a", selector.In, nil, ""},
		{"a", selector.Operator(0), nil, ""},
		{"a", selector.Operator(200), nil, ""},
	}
	for _, tt := range bad {
		_, err := selector.NewLabelRequirement(tt.key, tt.op, tt.values...)
		if err == nil {
			t.Errorf("NewLabelRequirement(%q, %v, %q) succeeded", tt.key, tt.op, tt.values)
			continue
		}
		var ve *selector.ValidationError
		if got := errors.As(err, &ve); got != (tt.invalid != "" || tt.key == "") {
			t.Errorf("NewLabelRequirement(%q, %v, %q): error %v; ValidationError %v", tt.key, tt.op, tt.values, err, got)
		} else if got && ve.Value != tt.invalid {
			t.Errorf("NewLabelRequirement(%q, %v, %q): ValidationError names %q", tt.key, tt.op, tt.values, ve.Value)
		}
	}

	// The caller's slice is not retained.
	values := []string{"y", "x"}
	r, err := selector.NewLabelRequirement("a", selector.In, values...)
	if err != nil {
		t.Fatal(err)
	}
	values[0] = "z"
	if got := r.String(); got != "a in (x,y)" {
		t.Errorf("requirement changed with caller's slice: %q", got)
	}
	if !slices.Equal(values, []string{"z", "x"}) {
		t.Errorf("caller's slice was reordered: %q", values)
	}
}

func TestLabelSelectorAdd(t *testing.T) {
	base := selector.MustParseLabels("b=2")
	c, err := selector.NewLabelRequirement("c", selector.Exists)
	if err != nil {
		t.Fatal(err)
	}
	a, err := selector.NewLabelRequirement("a", selector.NotIn, "x")
	if err != nil {
		t.Fatal(err)
	}
	got := base.Add(c, a)
	if s := got.String(); s != "a notin (x),b=2,c" {
		t.Errorf("Add: %q", s)
	}
	if s := base.String(); s != "b=2" {
		t.Errorf("Add modified the receiver: %q", s)
	}
	if s := selector.Everything().Add().String(); s != "" {
		t.Errorf("Everything().Add() = %q", s)
	}
	defer func() {
		if recover() == nil {
			t.Error("Add with a zero LabelRequirement did not panic")
		}
	}()
	base.Add(selector.LabelRequirement{})
}

func TestZeroLabelRequirement(t *testing.T) {
	var r selector.LabelRequirement
	if r.Matches(selector.Set{"": ""}) || r.String() != "" || r.Operator().String() != "invalid" {
		t.Errorf("zero LabelRequirement: matches %v, string %q", r.Matches(selector.Set{}), r.String())
	}
}

func TestSelectorFromSet(t *testing.T) {
	sel := selector.SelectorFromSet(selector.Set{"b": "2", "a": "1", "example.com/c": ""})
	if got, want := sel.String(), "a=1,b=2,example.com/c="; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if !sel.Matches(selector.Set{"a": "1", "b": "2", "example.com/c": "", "d": "x"}) {
		t.Error("does not match a superset")
	}
	if sel.Matches(selector.Set{"a": "1", "b": "2"}) {
		t.Error("matches a subset")
	}
	if v, ok := sel.RequiresExactMatch("b"); v != "2" || !ok {
		t.Errorf("RequiresExactMatch(b) = %q, %v", v, ok)
	}
	for _, s := range []selector.Set{nil, {}} {
		if sel := selector.SelectorFromSet(s); !sel.Empty() || sel.String() != "" {
			t.Errorf("SelectorFromSet(%#v) = %q", s, sel)
		}
	}
	// No validation: the selector still matches.
	odd := selector.SelectorFromSet(selector.Set{"not valid": "a,b"})
	if !odd.Matches(selector.Set{"not valid": "a,b"}) {
		t.Error("unvalidated selector does not match")
	}

	if _, err := selector.ValidatedSelectorFromSet(selector.Set{"a": "ok", "b": "not ok"}); err == nil {
		t.Error("ValidatedSelectorFromSet accepted an invalid value")
	} else if ve := (*selector.ValidationError)(nil); !errors.As(err, &ve) || ve.Value != "not ok" {
		t.Errorf("ValidatedSelectorFromSet error %v", err)
	}
	if _, err := selector.ValidatedSelectorFromSet(selector.Set{"-a": "ok"}); err == nil {
		t.Error("ValidatedSelectorFromSet accepted an invalid key")
	}
	v, err := selector.ValidatedSelectorFromSet(selector.Set{"a": "1"})
	if err != nil || v.String() != "a=1" {
		t.Errorf("ValidatedSelectorFromSet = %q, %v", v, err)
	}
}

func TestEverything(t *testing.T) {
	for _, sel := range []selector.LabelSelector{selector.Everything(), {}, selector.MustParseLabels(" ")} {
		if !sel.Empty() || sel.String() != "" || !sel.Matches(selector.Set{"a": "b"}) || len(sel.Requirements()) != 0 {
			t.Errorf("Everything-like selector %#v misbehaves", sel)
		}
	}
}

func TestMustParseLabelsPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "at position") {
			t.Errorf("MustParseLabels panic value %v", r)
		}
	}()
	selector.MustParseLabels("a b")
}

func TestValidateLabelKey(t *testing.T) {
	valid := []string{
		"a", "A", "1", "a1", "a-b", "a_b", "a.b", "A.B-c_D", strings.Repeat("x", 63),
		"example.com/a", "1.2.3.4/a", "a-b.c-d/e", strings.Repeat("a", 253) + "/b",
		strings.Repeat("a", 100) + "." + strings.Repeat("b", 100) + "/c",
	}
	invalid := []string{
		"", "-a", "a-", "_a", "a_", ".a", "a.", "a b", "a/b/c", "/a", "a/", "Example.com/a",
		"example_com/a", "-example.com/a", "example-.com/a", "example..com/a", ".example.com/a",
		strings.Repeat("x", 64), strings.Repeat("a", 254) + "/b", "ä", "a\x00",
	}
	for _, k := range valid {
		if err := selector.ValidateLabelKey(k); err != nil {
			t.Errorf("ValidateLabelKey(%q): %v", k, err)
		}
	}
	for _, k := range invalid {
		err := selector.ValidateLabelKey(k)
		var ve *selector.ValidationError
		if !errors.As(err, &ve) || ve.What != "label key" || ve.Value != k {
			t.Errorf("ValidateLabelKey(%q) = %v", k, err)
		}
	}
	// Several problems are all reported.
	err := selector.ValidateLabelKey(strings.Repeat("A", 254) + "/-" + strings.Repeat("b", 63))
	if ve := (*selector.ValidationError)(nil); !errors.As(err, &ve) || len(ve.Problems) != 4 {
		t.Errorf("expected four problems, got %v", err)
	}
}

func TestValidateLabelValue(t *testing.T) {
	valid := []string{"", "a", "A", "0", "a-b_c.d", strings.Repeat("v", 63), "007"}
	invalid := []string{"-", "-a", "a-", "_a", "a.", "a b", "a/b", "a,b", strings.Repeat("v", 64), "ü", "a\n"}
	for _, v := range valid {
		if err := selector.ValidateLabelValue(v); err != nil {
			t.Errorf("ValidateLabelValue(%q): %v", v, err)
		}
	}
	for _, v := range invalid {
		err := selector.ValidateLabelValue(v)
		var ve *selector.ValidationError
		if !errors.As(err, &ve) || ve.What != "label value" || ve.Value != v {
			t.Errorf("ValidateLabelValue(%q) = %v", v, err)
		}
	}
	err := selector.ValidateLabelValue(strings.Repeat("v", 64))
	if got, want := err.Error(), `invalid label value "`+strings.Repeat("v", 64)+`": must be no more than 63 bytes`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestSetString(t *testing.T) {
	tests := []struct {
		set  selector.Set
		want string
	}{
		{nil, ""},
		{selector.Set{"b": "2", "a": "1", "c": ""}, "a=1,b=2,c="},
	}
	for _, tt := range tests {
		if got := tt.set.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.set, got, tt.want)
		}
	}
	s := selector.Set{"a": ""}
	if !s.Has("a") || s.Has("b") || s.Get("a") != "" {
		t.Error("Set.Has/Get")
	}
	if v, ok := s.Lookup("a"); v != "" || !ok {
		t.Error("Set.Lookup")
	}
}

func TestOperatorString(t *testing.T) {
	want := map[selector.Operator]string{
		selector.Exists: "exists", selector.DoesNotExist: "!", selector.Equals: "=", selector.DoubleEquals: "==",
		selector.NotEquals: "!=", selector.In: "in", selector.NotIn: "notin", selector.GreaterThan: "gt",
		selector.LessThan: "lt", 0: "invalid", 99: "invalid",
	}
	for op, s := range want {
		if op.String() != s {
			t.Errorf("Operator(%d).String() = %q, want %q", op, op.String(), s)
		}
	}
}

// TestConcurrentUse shares selectors between goroutines; run with -race.
func TestConcurrentUse(t *testing.T) {
	labelSel := selector.MustParseLabels("a in (x,y),b!=c,!d,e>3")
	fieldSel := selector.MustParseFields(`f=a\,b,g!=h`)
	extra, err := selector.NewLabelRequirement("z", selector.Exists)
	if err != nil {
		t.Fatal(err)
	}
	fieldExtra, err := selector.NewFieldRequirement("z", selector.Equals, "1")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	for i := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			set := selector.Set{"a": "x", "e": strconv.Itoa(i), "f": "a,b", "z": "1"}
			for range 200 {
				labelSel.Matches(set)
				_ = labelSel.String()
				labelSel.RequiresExactMatch("a")
				for _, r := range labelSel.Requirements() {
					_ = r.Values()
				}
				_ = labelSel.Add(extra).String()
				fieldSel.Matches(set)
				_ = fieldSel.Add(fieldExtra).String()
				fieldSel.RequiresExactMatch("f")
			}
		}()
	}
	for range 8 {
		<-done
	}
}
