package selector

import (
	"errors"
	"fmt"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// ErrNilLabelSelector is returned by [FromLabelSelector] for a nil
// metav1.LabelSelector, which in Kubernetes selects nothing (an empty one
// selects everything).
var ErrNilLabelSelector = errors.New("selector: a nil LabelSelector selects nothing")

// FromLabelSelector converts the structured selector of an API object (a
// Deployment's spec.selector, say) into a LabelSelector: every matchLabels
// entry and every matchExpressions requirement, sorted by key, so that its
// String is the form kube-apiserver and kubectl print ("app=web,tier in
// (a,b)"). An invalid key, value or operator is an error.
func FromLabelSelector(ls *metav1.LabelSelector) (LabelSelector, error) {
	if ls == nil {
		return LabelSelector{}, ErrNilLabelSelector
	}
	reqs := make([]LabelRequirement, 0, len(ls.MatchLabels)+len(ls.MatchExpressions))
	for k, v := range ls.MatchLabels {
		r, err := NewLabelRequirement(k, Equals, v)
		if err != nil {
			return LabelSelector{}, err
		}
		reqs = append(reqs, r)
	}
	for _, e := range ls.MatchExpressions {
		var op Operator
		switch e.Operator {
		case metav1.LabelSelectorOpIn:
			op = In
		case metav1.LabelSelectorOpNotIn:
			op = NotIn
		case metav1.LabelSelectorOpExists:
			op = Exists
		case metav1.LabelSelectorOpDoesNotExist:
			op = DoesNotExist
		default:
			return LabelSelector{}, fmt.Errorf("selector: %q is not a valid label selector operator", e.Operator)
		}
		r, err := NewLabelRequirement(e.Key, op, e.Values...)
		if err != nil {
			return LabelSelector{}, err
		}
		reqs = append(reqs, r)
	}
	return Everything().Add(reqs...), nil
}
