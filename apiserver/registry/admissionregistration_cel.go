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
	return expressionErrors(false, s.MatchConditions, s.Variables, func(pc *cel.PolicyCompiler, check checkFunc) (errs metav1.FieldErrors) {
		for i, v := range s.Validations {
			check(&errs, fmt.Sprintf("spec.validations[%d].expression", i), v.Expression, func(e string) error {
				_, err := pc.Compile(e, types.BoolType)
				return err
			})
			check(&errs, fmt.Sprintf("spec.validations[%d].messageExpression", i), v.MessageExpression, func(e string) error {
				_, err := pc.CompileMessage(e)
				return err
			})
		}
		for i, a := range s.AuditAnnotations {
			// Compiled trimmed, reported as written, as kube-apiserver does.
			check(&errs, fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), a.ValueExpression, func(e string) error {
				_, err := pc.Compile(strings.TrimSpace(e), types.StringType, types.NullType)
				return err
			})
		}
		return errs
	})
}

// mutatingExpressionErrors compiles the CEL expressions of a
// MutatingAdmissionPolicy as kube-apiserver does when one is written:
// matchConditions and variables as a validating policy's, then each
// mutation, which must give an Object (ApplyConfiguration) or a
// list(JSONPatch), not dyn.
func mutatingExpressionErrors(s *admissionv1.MutatingAdmissionPolicySpec) metav1.FieldErrors {
	return expressionErrors(true, s.MatchConditions, s.Variables, func(pc *cel.PolicyCompiler, check checkFunc) (errs metav1.FieldErrors) {
		for i, m := range s.Mutations {
			path, expr, jp := fmt.Sprintf("spec.mutations[%d].applyConfiguration.expression", i), "", false
			switch {
			case m.PatchType == admissionv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
				expr = m.ApplyConfiguration.Expression
			case m.PatchType == admissionv1.PatchTypeJSONPatch && m.JSONPatch != nil:
				path, expr, jp = fmt.Sprintf("spec.mutations[%d].jsonPatch.expression", i), m.JSONPatch.Expression, true
			}
			check(&errs, path, expr, func(e string) error {
				_, err := pc.CompileMutation(e, jp)
				return err
			})
		}
		return errs
	})
}

// checkFunc reports the error compile gives for expr at path, unless
// expr is blank (reported by the other checks).
type checkFunc func(errs *metav1.FieldErrors, path, expr string, compile func(string) error)

// expressionErrors compiles a policy's matchConditions and variables (in
// order, each typed for those after it), then the rest of its
// expressions, and returns the errors in kube-apiserver's order:
// matchConditions, variables, the rest.
func expressionErrors(mutation bool, conds []admissionv1.MatchCondition, vars []admissionv1.Variable,
	rest func(*cel.PolicyCompiler, checkFunc) metav1.FieldErrors) metav1.FieldErrors {
	pc, err := cel.NewPolicyCompiler(mutation)
	if err != nil {
		return metav1.FieldErrors{metav1.FieldInternal("spec", err)}
	}
	check := func(errs *metav1.FieldErrors, path, expr string, compile func(string) error) {
		if strings.TrimSpace(expr) == "" {
			return
		}
		if err := compile(expr); err != nil {
			*errs = append(*errs, metav1.FieldInvalid(path, expr, err.Error()))
		}
	}
	var varErrs, errs metav1.FieldErrors
	for i, v := range vars {
		if strings.TrimSpace(v.Expression) == "" {
			continue
		}
		if _, err := pc.AddVariable(v.Name, v.Expression); err != nil {
			varErrs = append(varErrs, metav1.FieldInvalid(fmt.Sprintf("spec.variables[%d].expression", i), v.Expression, err.Error()))
		}
	}
	for i, m := range conds {
		// Compiled and reported trimmed, as kube-apiserver does.
		check(&errs, fmt.Sprintf("spec.matchConditions[%d].expression", i), strings.TrimSpace(m.Expression), func(e string) error {
			_, err := pc.Compile(e, types.BoolType)
			return err
		})
	}
	errs = append(errs, varErrs...)
	return append(errs, rest(pc, check)...)
}
