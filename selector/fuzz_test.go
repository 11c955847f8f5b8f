package selector_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/selector"
)

var labelFuzzSeeds = []string{
	"",
	"a",
	"!a",
	"a=b",
	"a==b",
	"a!=b",
	"a=",
	"a>5",
	"a<5",
	"a in (x,y)",
	"a notin (x,y)",
	"a in ()",
	"a in (x,,y,)",
	"in in (in),notin notin (notin)",
	" a = b , c in ( x , y ) , ! d ",
	"a in (x),a=y,a,!a,a notin (z),a>1,a<2,a==w,a!=v",
	"example.com/app=web,k8s.io/tier in (a,b)",
	"x=a||y=b",
	"x==a==b",
	"!x=a",
	"a,=b",
	"a in (x y)",
	"a/b/c=d",
	"a=b\x00c",
	"a>9223372036854775808",
}

// checkParseError verifies the invariants of a *ParseError for input.
func checkParseError(t *testing.T, input string, err error) {
	t.Helper()
	var pe *selector.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("%q: error %T (%v) is not a *ParseError", input, err, err)
	}
	if pe.Input != input {
		t.Fatalf("%q: ParseError.Input = %q", input, pe.Input)
	}
	if pe.Offset < 0 || pe.Offset+len(pe.Token) > len(input) || input[pe.Offset:pe.Offset+len(pe.Token)] != pe.Token {
		t.Fatalf("%q: Token %q is not at Offset %d", input, pe.Token, pe.Offset)
	}
	if pe.Msg == "" || !strings.HasPrefix(pe.Error(), pe.Msg) {
		t.Fatalf("%q: bad message %q / %q", input, pe.Msg, pe.Error())
	}
}

// labelProbes returns label sets built from the keys and values a selector
// mentions, so that matching is exercised on both sides of every
// requirement.
func labelProbes(sel selector.LabelSelector) []selector.Set {
	probes := []selector.Set{nil, {"unrelated": "x"}}
	reqs := sel.Requirements()
	for variant := range 6 {
		set := selector.Set{}
		for i, r := range reqs {
			if (variant == 4 && i%2 == 1) || (variant == 5 && i%2 == 0) {
				continue
			}
			switch values := r.Values(); {
			case variant == 1:
				set[r.Key()] = ""
			case variant == 2:
				set[r.Key()] = "5"
			case variant == 3:
				set[r.Key()] = "-9"
			case len(values) > 0:
				set[r.Key()] = values[(variant+i)%len(values)]
			default:
				set[r.Key()] = "v"
			}
		}
		probes = append(probes, set)
	}
	return probes
}

func FuzzParseLabels(f *testing.F) {
	for _, s := range labelFuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		sel, err := selector.ParseLabels(input)
		if err != nil {
			checkParseError(t, input, err)
			return
		}
		canonical := sel.String()
		again, err := selector.ParseLabels(canonical)
		if err != nil {
			t.Fatalf("%q: canonical form %q does not parse: %v", input, canonical, err)
		}
		if got := again.String(); got != canonical {
			t.Fatalf("%q: canonical form %q re-parses to %q", input, canonical, got)
		}
		if sel.Empty() != again.Empty() || sel.Empty() != (canonical == "") {
			t.Fatalf("%q: Empty differs", input)
		}
		r1, r2 := sel.Requirements(), again.Requirements()
		if len(r1) != len(r2) {
			t.Fatalf("%q: %d requirements, %d after re-parse", input, len(r1), len(r2))
		}
		for i := range r1 {
			if r1[i].Key() != r2[i].Key() || r1[i].Operator() != r2[i].Operator() || !slices.Equal(r1[i].Values(), r2[i].Values()) {
				t.Fatalf("%q: requirement %d is %v, %v after re-parse", input, i, r1[i], r2[i])
			}
			v1, ok1 := sel.RequiresExactMatch(r1[i].Key())
			v2, ok2 := again.RequiresExactMatch(r1[i].Key())
			if v1 != v2 || ok1 != ok2 {
				t.Fatalf("%q: RequiresExactMatch(%q) differs after re-parse", input, r1[i].Key())
			}
		}
		for _, set := range labelProbes(sel) {
			want := sel.Matches(set)
			if again.Matches(set) != want {
				t.Fatalf("%q: Matches(%v) = %v, but %v after re-parse", input, set, want, !want)
			}
			if sel.Matches(hasGetLabels(set)) != want {
				t.Fatalf("%q: Matches(%v) depends on the Labels implementation", input, set)
			}
			all := true
			for _, r := range r1 {
				all = all && r.Matches(set)
			}
			if all != want {
				t.Fatalf("%q: Matches(%v) = %v, but the requirements say %v", input, set, want, all)
			}
		}
	})
}

var fieldFuzzSeeds = []string{
	"",
	"a=b",
	"a==b",
	"a!=b",
	"a=",
	"=",
	"=b",
	",,a=b,,",
	"metadata.name=web,status.phase!=Running",
	`a=\,\=\\`,
	`a\,b=c`,
	`a\==b`,
	"a!!=b",
	" a = b ",
	"a=b=c",
	`a=b\`,
	`a=b\x`,
	"a",
	"a=\xff\\,",
}

func FuzzParseFields(f *testing.F) {
	for _, s := range fieldFuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		// Escaping round-trips any string.
		if got, err := selector.UnescapeFieldValue(selector.EscapeFieldValue(input)); err != nil || got != input {
			t.Fatalf("%q: escape round trip gave %q, %v", input, got, err)
		}

		sel, err := selector.ParseFields(input)
		if err != nil {
			checkParseError(t, input, err)
			return
		}
		canonical := sel.String()
		again, err := selector.ParseFields(canonical)
		if err != nil {
			t.Fatalf("%q: canonical form %q does not parse: %v", input, canonical, err)
		}
		if got := again.String(); got != canonical {
			t.Fatalf("%q: canonical form %q re-parses to %q", input, canonical, got)
		}
		r1, r2 := sel.Requirements(), again.Requirements()
		if len(r1) != len(r2) {
			t.Fatalf("%q: %d requirements, %d after re-parse", input, len(r1), len(r2))
		}
		probes := []selector.Set{nil, {}, {}, {}}
		for i := range r1 {
			if r1[i] != r2[i] {
				t.Fatalf("%q: requirement %d is %v, %v after re-parse", input, i, r1[i], r2[i])
			}
			v1, ok1 := sel.RequiresExactMatch(r1[i].Field())
			v2, ok2 := again.RequiresExactMatch(r1[i].Field())
			if v1 != v2 || ok1 != ok2 {
				t.Fatalf("%q: RequiresExactMatch(%q) differs after re-parse", input, r1[i].Field())
			}
			probes[1][r1[i].Field()] = r1[i].Value()
			probes[2][r1[i].Field()] = r1[i].Value() + "x"
			if i%2 == 0 {
				probes[3][r1[i].Field()] = r1[i].Value()
			}
		}
		for _, set := range probes {
			if sel.Matches(set) != again.Matches(set) {
				t.Fatalf("%q: Matches(%v) differs after re-parse", input, set)
			}
		}
	})
}
