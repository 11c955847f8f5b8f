package selector_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kapi-dev/kapi/selector"
)

func ExampleParseLabels() {
	sel, err := selector.ParseLabels("tier in (frontend, cache), app = web, !canary")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sel)

	pod := selector.Set{"app": "web", "tier": "cache"}
	canary := selector.Set{"app": "web", "tier": "frontend", "canary": "true"}
	fmt.Println(sel.Matches(pod), sel.Matches(canary))
	// Output:
	// app=web,!canary,tier in (cache,frontend)
	// true false
}

func ExampleParseFields() {
	sel, err := selector.ParseFields("status.phase!=Running,metadata.name=web-0")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sel)

	pending := selector.Set{"metadata.name": "web-0", "status.phase": "Pending"}
	running := selector.Set{"metadata.name": "web-0", "status.phase": "Running"}
	fmt.Println(sel.Matches(pending), sel.Matches(running))
	// Output:
	// metadata.name=web-0,status.phase!=Running
	// true false
}

func ExampleParseError() {
	input := "app=web, tier notin frontend"
	_, err := selector.ParseLabels(input)

	var pe *selector.ParseError
	if errors.As(err, &pe) {
		fmt.Println(pe.Input)
		fmt.Println(strings.Repeat(" ", pe.Offset) + "^")
		fmt.Println(pe.Msg)
	}
	// Output:
	// app=web, tier notin frontend
	//                     ^
	// unable to parse requirement: found 'frontend', expected: '('
}

func ExampleParseError_invalidValue() {
	_, err := selector.ParseLabels("app=web,version=-1")
	fmt.Println(err)

	var ve *selector.ValidationError
	if errors.As(err, &ve) {
		fmt.Printf("bad %s: %q\n", ve.What, ve.Value)
	}
	// Output:
	// unable to parse requirement: invalid label value "-1": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', 'my_value' or '12345') at position 17 in "app=web,version=-1"
	// bad label value: "-1"
}

func ExampleLabelSelector_RequiresExactMatch() {
	// An index from label value to object names.
	byApp := map[string][]string{"web": {"web-0", "web-1"}, "db": {"db-0"}}

	sel := selector.MustParseLabels("app in (web), tier!=cache")
	if app, ok := sel.RequiresExactMatch("app"); ok {
		fmt.Println("candidates:", byApp[app])
	}
	// Output:
	// candidates: [web-0 web-1]
}

func ExampleLabelSelector_Requirements() {
	sel := selector.MustParseLabels("env notin (dev,test),app")
	for _, r := range sel.Requirements() {
		fmt.Printf("%s %s %q\n", r.Key(), r.Operator(), r.Values())
	}
	// Output:
	// app exists []
	// env notin ["dev" "test"]
}

func ExampleLabelSelector_Add() {
	team, err := selector.NewLabelRequirement("example.com/team", selector.In, "payments", "billing")
	if err != nil {
		fmt.Println(err)
		return
	}
	sel := selector.SelectorFromSet(selector.Set{"app": "web"}).Add(team)
	fmt.Println(sel)
	// Output:
	// app=web,example.com/team in (billing,payments)
}

func ExampleEscapeFieldValue() {
	value := "a=b,c"
	sel := selector.MustParseFields("metadata.annotation=" + selector.EscapeFieldValue(value))
	fmt.Println(sel)
	fmt.Println(sel.Matches(selector.Set{"metadata.annotation": value}))
	// Output:
	// metadata.annotation=a\=b\,c
	// true
}
