package registry

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/common/types"

	admissionv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/cel"
)

// policyExpressionErrors compiles the CEL expressions of a
// ValidatingAdmissionPolicy as kube-apiserver does when one is written:
// variables in order (each typed for those after it), matchConditions and
// validations that must give a bool, messageExpressions a string,
// auditAnnotations a string or null; blank expressions are reported by the
// other checks. The errors come in kube-apiserver's order.
func policyExpressionErrors(s *admissionv1.ValidatingAdmissionPolicySpec) metav1.FieldErrors {
	pc, err := cel.NewPolicyCompiler(false)
	if err != nil {
		return metav1.FieldErrors{metav1.FieldInternal("spec", err)}
	}
	var varErrs, errs metav1.FieldErrors
	check := func(errs *metav1.FieldErrors, path, expr string, want ...*types.Type) {
		if strings.TrimSpace(expr) == "" {
			return
		}
		if _, err := pc.Compile(expr, want...); err != nil {
			*errs = append(*errs, metav1.FieldInvalid(path, expr, err.Error()))
		}
	}
	for i, v := range s.Variables {
		if strings.TrimSpace(v.Expression) == "" {
			continue
		}
		if _, err := pc.AddVariable(v.Name, v.Expression); err != nil {
			varErrs = append(varErrs, metav1.FieldInvalid(fmt.Sprintf("spec.variables[%d].expression", i), v.Expression, err.Error()))
		}
	}
	for i, m := range s.MatchConditions {
		check(&errs, fmt.Sprintf("spec.matchConditions[%d].expression", i), m.Expression, types.BoolType)
	}
	errs = append(errs, varErrs...)
	for i, v := range s.Validations {
		check(&errs, fmt.Sprintf("spec.validations[%d].expression", i), v.Expression, types.BoolType)
		if strings.TrimSpace(v.MessageExpression) != "" {
			if _, err := pc.CompileMessage(v.MessageExpression); err != nil {
				errs = append(errs, metav1.FieldInvalid(fmt.Sprintf("spec.validations[%d].messageExpression", i), v.MessageExpression, err.Error()))
			}
		}
	}
	for i, a := range s.AuditAnnotations {
		check(&errs, fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), a.ValueExpression, types.StringType, types.NullType)
	}
	return errs
}
