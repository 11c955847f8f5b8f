package selector_test

import (
	"errors"
	"testing"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/selector"
)

func TestFromLabelSelector(t *testing.T) {
	for _, c := range []struct {
		sel  metav1.LabelSelector
		want string
		ok   bool
	}{
		{metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, "app=web", true},
		{metav1.LabelSelector{MatchLabels: map[string]string{"b": "2", "a": "1"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "In", Values: []string{"y", "x"}}, {Key: "c", Operator: "DoesNotExist"}}},
			"a=1,b=2,!c,tier in (x,y)", true},
		{metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Exists"}, {Key: "c", Operator: "NotIn", Values: []string{"x"}}}}, "a,c notin (x)", true},
		{metav1.LabelSelector{}, "", true},
		{metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}, "", false},
		{metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "v"}}, "", false},
		{metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "In"}}}, "", false},
	} {
		got, err := selector.FromLabelSelector(&c.sel)
		if (err == nil) != c.ok || (c.ok && got.String() != c.want) {
			t.Errorf("%+v: %q, %v; want %q (ok %v)", c.sel, got.String(), err, c.want, c.ok)
		}
	}
	sel, _ := selector.FromLabelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})
	if !sel.Matches(selector.Set{"app": "web", "x": "y"}) || sel.Matches(selector.Set{"app": "db"}) {
		t.Error("app=web does not match as it should")
	}
	if _, err := selector.FromLabelSelector(nil); !errors.Is(err, selector.ErrNilLabelSelector) {
		t.Errorf("nil: %v", err)
	}
}
