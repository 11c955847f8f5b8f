package registry

import (
	"strconv"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// labelSelectorErrors checks a metav1.LabelSelector at path as
// kube-apiserver's ValidateLabelSelector does: its matchLabels as labels,
// then each of its matchExpressions' operator (with values exactly for In
// and NotIn) and key.
func labelSelectorErrors(sel *metav1.LabelSelector, path string) metav1.FieldErrors {
	if sel == nil {
		return nil
	}
	errs := ValidateLabels(sel.MatchLabels, path+".matchLabels")
	for i, r := range sel.MatchExpressions {
		p := path + ".matchExpressions[" + strconv.Itoa(i) + "]"
		switch r.Operator {
		case metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn:
			if len(r.Values) == 0 {
				errs = append(errs, metav1.FieldRequired(p+".values", "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				errs = append(errs, metav1.FieldForbidden(p+".values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		default:
			errs = append(errs, metav1.FieldInvalid(p+".operator", string(r.Operator), "not a valid selector operator"))
		}
		for _, msg := range ValidateQualifiedName(r.Key) {
			errs = append(errs, metav1.FieldInvalid(p+".key", r.Key, msg))
		}
	}
	return errs
}
