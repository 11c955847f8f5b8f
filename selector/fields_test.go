package selector_test

import (
	"errors"
	"testing"

	"github.com/kapi-dev/kapi/selector"
)

func TestParseFieldsCanonical(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{",", ""},
		{",,", ""},
		{"a=b", "a=b"},
		{"a==b", "a=b"},
		{"a!=b", "a!=b"},
		{"a=", "a="},
		{"a!=", "a!="},
		{"metadata.name=web,status.phase!=Running", "metadata.name=web,status.phase!=Running"},
		{"status.phase!=Running,metadata.name==web", "metadata.name=web,status.phase!=Running"},
		{",a=b,,c=d,", "a=b,c=d"},
		// Order: field, then = before !=, then value.
		{"a!=x,a=z,a=y,a!=w", "a=y,a=z,a!=w,a!=x"},
		{"a==c,a=b", "a=b,a=c"},
		{"a=b,a=b", "a=b,a=b"},
		// Escaping.
		{`a=b\,c`, `a=b\,c`},
		{`a=b\=c`, `a=b\=c`},
		{`a=b\\c`, `a=b\\c`},
		{`a=\\`, `a=\\`},
		{`a=\,\=\\,b=1`, `a=\,\=\\,b=1`},
		{`a=x\\,b=y`, `a=x\\,b=y`},
		{`a=!b`, `a=!b`},
		{`a=b!`, `a=b!`},
		// Field names are verbatim; blanks are significant.
		{" a = b ", " a = b "},
		{"a b=c", "a b=c"},
		{"a!!=b", "a!!=b"},
		{"a!b=c", "a!b=c"},
		{`a\,b=c`, `a\,b=c`},
		{`a\=b`, `a\=b`},
		{`a\==b`, `a\=b`},
		{"=b", "=b"},
		// A term with an empty field and an empty value is ignored.
		{"=", ""},
		{"==", ""},
		{"!=", ""},
		{"a=b,=", "a=b"},
		{"ä=ü", "ä=ü"},
	}
	for _, tt := range tests {
		sel, err := selector.ParseFields(tt.in)
		if err != nil {
			t.Errorf("ParseFields(%q): %v", tt.in, err)
			continue
		}
		if got := sel.String(); got != tt.want {
			t.Errorf("ParseFields(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
		if sel.Empty() != (tt.want == "") {
			t.Errorf("ParseFields(%q).Empty() = %v", tt.in, sel.Empty())
		}
		again, err := selector.ParseFields(tt.want)
		if err != nil {
			t.Errorf("re-parsing %q: %v", tt.want, err)
			continue
		}
		if got := again.String(); got != tt.want {
			t.Errorf("re-parsing %q gave %q", tt.want, got)
		}
	}
}

func TestParseFieldsValues(t *testing.T) {
	tests := []struct {
		in           string
		field, value string
		op           selector.Operator
	}{
		{`a=b\,c`, "a", "b,c", selector.Equals},
		{`a==b\=c`, "a", "b=c", selector.Equals},
		{`a!=b\\c`, "a", `b\c`, selector.NotEquals},
		{`x=\,\=\\`, "x", `,=\`, selector.Equals},
		{" a = b ", " a ", " b ", selector.Equals},
		{`a\,b=c`, `a\,b`, "c", selector.Equals},
		{"a!!=b", "a!", "b", selector.NotEquals},
		{"a=\xff\\,", "a", "\xff,", selector.Equals},
	}
	for _, tt := range tests {
		sel, err := selector.ParseFields(tt.in)
		if err != nil {
			t.Errorf("ParseFields(%q): %v", tt.in, err)
			continue
		}
		reqs := sel.Requirements()
		if len(reqs) != 1 || reqs[0].Field() != tt.field || reqs[0].Value() != tt.value || reqs[0].Operator() != tt.op {
			t.Errorf("ParseFields(%q).Requirements() = %v, want %q %v %q", tt.in, reqs, tt.field, tt.op, tt.value)
		}
	}
}

func TestParseFieldsErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		token  string
		msg    string
	}{
		{"a", 0, "a", "invalid field selector: can't understand 'a'; expected <field>=<value>, <field>==<value> or <field>!=<value>"},
		{"a=b,c", 4, "c", ""},
		{"a=b, ", 4, " ", ""},
		{"a!b", 0, "a!b", ""},
		{`a\=b,\,`, 5, `\,`, ""},
		{`a=b\`, 3, `\`, `invalid field selector: invalid escape sequence: \`},
		{`a=b\x`, 3, `\x`, `invalid field selector: invalid escape sequence: \x`},
		{`x=1,a=\€`, 6, `\€`, `invalid field selector: invalid escape sequence: \€`},
		{"a=\\\xff", 2, "\\\xff", ""},
		{"a=b=c", 3, "=", `invalid field selector: unescaped character in value: '=' (escape it as '\=')`},
		{"a===b", 3, "=", ""},
		{"a!==b", 3, "=", ""},
		{`a=\\=`, 4, "=", ""},
		{`a=b\\\`, 5, `\`, ""},
	}
	for _, tt := range tests {
		sel, err := selector.ParseFields(tt.in)
		if err == nil {
			t.Errorf("ParseFields(%q) = %q, want an error", tt.in, sel)
			continue
		}
		var pe *selector.ParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParseFields(%q) error %T is not a *ParseError", tt.in, err)
			continue
		}
		if pe.Input != tt.in || pe.Offset != tt.offset || pe.Token != tt.token {
			t.Errorf("ParseFields(%q): Input %q, Offset %d, Token %q; want Offset %d, Token %q",
				tt.in, pe.Input, pe.Offset, pe.Token, tt.offset, tt.token)
		}
		if tt.msg != "" && pe.Msg != tt.msg {
			t.Errorf("ParseFields(%q) message\n got: %s\nwant: %s", tt.in, pe.Msg, tt.msg)
		}
	}
}

func TestEscapeFieldValue(t *testing.T) {
	tests := []struct {
		raw, escaped string
	}{
		{"", ""},
		{"plain", "plain"},
		{`a,b`, `a\,b`},
		{`a=b`, `a\=b`},
		{`a\b`, `a\\b`},
		{`\,=`, `\\\,\=`},
		{`,,`, `\,\,`},
		{"ü=\xff", "ü\\=\xff"},
	}
	for _, tt := range tests {
		if got := selector.EscapeFieldValue(tt.raw); got != tt.escaped {
			t.Errorf("EscapeFieldValue(%q) = %q, want %q", tt.raw, got, tt.escaped)
		}
		got, err := selector.UnescapeFieldValue(tt.escaped)
		if err != nil || got != tt.raw {
			t.Errorf("UnescapeFieldValue(%q) = %q, %v; want %q", tt.escaped, got, err, tt.raw)
		}
		// A value survives a selector round trip.
		sel := selector.FieldsFromSet(selector.Set{"f": tt.raw})
		again, err := selector.ParseFields(sel.String())
		if err != nil {
			t.Errorf("ParseFields(%q): %v", sel.String(), err)
			continue
		}
		if v, ok := again.RequiresExactMatch("f"); !ok || v != tt.raw {
			t.Errorf("value %q came back as %q, %v", tt.raw, v, ok)
		}
	}
	for _, bad := range []string{`\`, `a\b`, `a,b`, `a=b`} {
		if _, err := selector.UnescapeFieldValue(bad); err == nil {
			t.Errorf("UnescapeFieldValue(%q) succeeded", bad)
		}
	}
	_, err := selector.UnescapeFieldValue(`ab\x`)
	var pe *selector.ParseError
	if !errors.As(err, &pe) || pe.Offset != 2 || pe.Token != `\x` || pe.Input != `ab\x` {
		t.Errorf("UnescapeFieldValue error %#v", err)
	}
}

func TestFieldMatches(t *testing.T) {
	type set = selector.Set
	tests := []struct {
		sel    string
		fields set
		want   bool
	}{
		{"", nil, true},
		{"a=b", set{"a": "b"}, true},
		{"a=b", set{"a": "c"}, false},
		{"a=b", set{}, false},
		{"a=", set{}, true}, // an absent field reads as ""
		{"a=", set{"a": ""}, true},
		{"a!=", set{}, false},
		{"a!=b", set{}, true},
		{"a!=b", set{"a": "b"}, false},
		{`a=b\,c`, set{"a": "b,c"}, true},
		{`a=b\\c`, set{"a": `b\c`}, true},
		{"metadata.name=web,status.phase!=Running", set{"metadata.name": "web", "status.phase": "Pending"}, true},
		{"metadata.name=web,status.phase!=Running", set{"metadata.name": "web", "status.phase": "Running"}, false},
		{" a = b ", set{" a ": " b "}, true},
		{" a = b ", set{" a ": " b"}, false},
		{" a = b ", set{"a": "b"}, false},
	}
	for _, tt := range tests {
		sel, err := selector.ParseFields(tt.sel)
		if err != nil {
			t.Errorf("ParseFields(%q): %v", tt.sel, err)
			continue
		}
		if got := sel.Matches(tt.fields); got != tt.want {
			t.Errorf("%q.Matches(%v) = %v, want %v", tt.sel, tt.fields, got, tt.want)
		}
		if got := sel.Matches(getOnlyFields(tt.fields)); got != tt.want {
			t.Errorf("%q.Matches(getOnlyFields(%v)) = %v, want %v", tt.sel, tt.fields, got, tt.want)
		}
		if tt.fields == nil {
			if got := sel.Matches(nil); got != tt.want {
				t.Errorf("%q.Matches(nil) = %v, want %v", tt.sel, got, tt.want)
			}
		}
	}
}

// getOnlyFields implements Fields; like Kubernetes, matching must use only
// Get.
type getOnlyFields map[string]string

func (f getOnlyFields) Has(string) bool     { panic("Has called") }
func (f getOnlyFields) Get(k string) string { return f[k] }

func TestFieldRequiresExactMatch(t *testing.T) {
	tests := []struct {
		sel, field string
		wantValue  string
		wantOK     bool
	}{
		{"", "a", "", false},
		{"a=b", "a", "b", true},
		{"a==b", "a", "b", true},
		{"a=", "a", "", true},
		{"a!=b", "a", "", false},
		{"a!=b,a=c", "a", "c", true},
		{"x=1,a=b,z=2", "a", "b", true},
		{"aa=b", "a", "", false},
		{`a=b\,c`, "a", "b,c", true},
	}
	for _, tt := range tests {
		v, ok := selector.MustParseFields(tt.sel).RequiresExactMatch(tt.field)
		if v != tt.wantValue || ok != tt.wantOK {
			t.Errorf("%q.RequiresExactMatch(%q) = %q, %v; want %q, %v", tt.sel, tt.field, v, ok, tt.wantValue, tt.wantOK)
		}
	}
}

func TestFieldsFromSet(t *testing.T) {
	sel := selector.FieldsFromSet(selector.Set{"spec.nodeName": "n1", "metadata.name": "a,b"})
	if got, want := sel.String(), `metadata.name=a\,b,spec.nodeName=n1`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if !sel.Matches(selector.Set{"spec.nodeName": "n1", "metadata.name": "a,b"}) {
		t.Error("does not match its own set")
	}
	for _, s := range []selector.Set{nil, {}} {
		if sel := selector.FieldsFromSet(s); !sel.Empty() || sel.String() != "" {
			t.Errorf("FieldsFromSet(%#v) = %q", s, sel)
		}
	}
	if sel := selector.EverythingFields(); !sel.Empty() || !sel.Matches(selector.Set{"a": "b"}) {
		t.Error("EverythingFields misbehaves")
	}
}

func TestNewFieldRequirement(t *testing.T) {
	for _, op := range []selector.Operator{selector.Equals, selector.DoubleEquals, selector.NotEquals} {
		r, err := selector.NewFieldRequirement("f", op, "v,w")
		if err != nil {
			t.Errorf("NewFieldRequirement(f, %v): %v", op, err)
			continue
		}
		wantOp, wantString := selector.Equals, `f=v\,w`
		if op == selector.NotEquals {
			wantOp, wantString = selector.NotEquals, `f!=v\,w`
		}
		if r.Operator() != wantOp || r.Field() != "f" || r.Value() != "v,w" || r.String() != wantString {
			t.Errorf("NewFieldRequirement(f, %v) = %v %q %q %q", op, r.Operator(), r.Field(), r.Value(), r.String())
		}
	}
	for _, op := range []selector.Operator{0, selector.Exists, selector.DoesNotExist, selector.In, selector.NotIn, selector.GreaterThan, selector.LessThan} {
		if _, err := selector.NewFieldRequirement("f", op, "v"); err == nil {
			t.Errorf("NewFieldRequirement(f, %v) succeeded", op)
		}
	}

	a, _ := selector.NewFieldRequirement("a", selector.NotEquals, "x")
	b, _ := selector.NewFieldRequirement("b", selector.Equals, "y")
	base := selector.MustParseFields("c=z")
	if got := base.Add(b, a).String(); got != "a!=x,b=y,c=z" {
		t.Errorf("Add: %q", got)
	}
	if got := base.String(); got != "c=z" {
		t.Errorf("Add modified the receiver: %q", got)
	}
	if got := base.Add().String(); got != "c=z" {
		t.Errorf("Add(): %q", got)
	}
	var zero selector.FieldRequirement
	if zero.Matches(selector.Set{}) || zero.String() != "" {
		t.Error("zero FieldRequirement matches or prints")
	}
	defer func() {
		if recover() == nil {
			t.Error("Add with a zero FieldRequirement did not panic")
		}
	}()
	base.Add(zero)
}

func TestFieldRequirementsAreCopies(t *testing.T) {
	sel := selector.MustParseFields("a=1,b=2")
	reqs := sel.Requirements()
	reqs[0] = reqs[1]
	if got := sel.String(); got != "a=1,b=2" {
		t.Errorf("selector changed through Requirements(): %q", got)
	}
}

func TestMustParseFieldsPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParseFields did not panic")
		}
	}()
	selector.MustParseFields("a")
}
