package cel

import (
	"encoding/json"
	"sync"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
)

// BaseEnv returns the CEL environment every Kubernetes expression starts
// from: the standard library with cross-type numeric comparisons, optional
// types, literal validation, the strings (version 2), sets,
// two-variable comprehension and lists (version 3) extensions, and the Kubernetes libraries: Lists, Regex, URLs,
// Quantity, IP, CIDR, Semver and Format. It is built once and shared.
func BaseEnv() (*celgo.Env, error) {
	baseOnce.Do(func() {
		baseEnv, baseErr = celgo.NewEnv(baseOptions()...)
	})
	return baseEnv, baseErr
}

var (
	baseOnce sync.Once
	baseEnv  *celgo.Env
	baseErr  error
)

func baseOptions() []celgo.EnvOption {
	return []celgo.EnvOption{
		celgo.HomogeneousAggregateLiterals(),
		celgo.EagerlyValidateDeclarations(true),
		celgo.DefaultUTCTimeZone(true),
		celgo.CrossTypeNumericComparisons(true),
		celgo.OptionalTypes(),
		celgo.ASTValidators(celgo.ValidateDurationLiterals(), celgo.ValidateTimestampLiterals(),
			celgo.ValidateRegexLiterals(), celgo.ValidateHomogeneousAggregateLiterals()),
		// has() costs nothing, as in Kubernetes
		celgo.CostEstimatorOptions(checker.PresenceTestHasCost(false)),
		celgo.ParserExpressionSizeLimit(100000),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.TwoVarComprehensions(),
		ext.Lists(ext.ListsVersion(3)),
		Lists(), Regex(), URLs(), Quantity(), IP(), CIDR(), Semver(), Format(),
	}
}

// ruleEnv is the environment of the rules of one schema node: self of the
// node's type, oldSelf of the same type (optional_type of it with
// optionalOldSelf), the schema's object types known.
func ruleEnv(b *typeBuilder, self *declType, optional bool) (*celgo.Env, error) {
	old := self.cel
	if optional {
		old = types.NewOptionalType(old)
	}
	return extendBase(b.objects, false, celgo.Variable("self", self.cel), celgo.Variable("oldSelf", old))
}

// extendBase extends BaseEnv with the object types objects (and, with
// mutation, JSONPatch and the Object types) and opts: the one way the
// environments of CRD rules and admission policies are built.
func extendBase(objects map[string]*declType, mutation bool, opts ...celgo.EnvOption) (*celgo.Env, error) {
	base, err := BaseEnv()
	if err != nil {
		return nil, err
	}
	reg, err := types.NewRegistry()
	if err != nil {
		return nil, err
	}
	var p types.Provider = &provider{Provider: reg, objects: objects}
	if mutation {
		p = &mutationProvider{Provider: p}
	}
	return base.Extend(append([]celgo.EnvOption{celgo.CustomTypeProvider(p)}, opts...)...)
}

func jsonString(s string) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

// runtimeCost gives the runtime cost of the Kubernetes library functions
// (nil: the default of one unit per call).
type runtimeCost struct{}

func (runtimeCost) CallCost(function, overloadID string, args []ref.Val, result ref.Val) *uint64 {
	return libraryCallCost(function, overloadID, args, result)
}

// estimateLibraryCallCost estimates the cost of the Kubernetes library
// functions (nil: the checker's default).
func estimateLibraryCallCost(e checker.CostEstimator, function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return libraryEstimate(e, function, overloadID, target, args)
}
