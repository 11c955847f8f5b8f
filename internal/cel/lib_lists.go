package cel

import (
	"regexp"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// Lists is the Kubernetes list library: on lists of comparable elements
// isSorted(), min(), max(); on lists of numbers and durations sum(); on any
// list indexOf(x) and lastIndexOf(x) (-1 when absent).
//
//	[1, 2, 3].isSorted() && [1, 2].sum() == 3 && ['a', 'b'].indexOf('b') == 1
func Lists() celgo.EnvOption {
	comparable := []*types.Type{types.IntType, types.UintType, types.DoubleType, types.BoolType, types.DurationType,
		types.TimestampType, types.StringType, types.BytesType}
	summable := map[*types.Type]ref.Val{types.IntType: types.Int(0), types.UintType: types.Uint(0),
		types.DoubleType: types.Double(0), types.DurationType: types.Duration{}}
	var sorted, mins, maxs, sums []celgo.FunctionOpt
	for _, t := range comparable {
		name := t.String()
		lt := types.NewListType(t)
		sorted = append(sorted, celgo.MemberOverload("list_"+name+"_is_sorted_bool", []*types.Type{lt}, types.BoolType,
			celgo.UnaryBinding(isSorted)))
		mins = append(mins, celgo.MemberOverload("list_"+name+"_min_"+name, []*types.Type{lt}, t,
			celgo.UnaryBinding(func(v ref.Val) ref.Val { return extreme(v, -1, "min") })))
		maxs = append(maxs, celgo.MemberOverload("list_"+name+"_max_"+name, []*types.Type{lt}, t,
			celgo.UnaryBinding(func(v ref.Val) ref.Val { return extreme(v, 1, "max") })))
	}
	for _, t := range []*types.Type{types.IntType, types.UintType, types.DoubleType, types.DurationType} {
		zero := summable[t]
		sums = append(sums, celgo.MemberOverload("list_"+t.String()+"_sum_"+t.String(), []*types.Type{types.NewListType(t)}, t,
			celgo.UnaryBinding(func(v ref.Val) ref.Val { return sum(v, zero) })))
	}
	a := types.NewTypeParamType("A")
	la := types.NewListType(a)
	return celgo.Lib(&library{opts: []celgo.EnvOption{
		celgo.Function("isSorted", sorted...),
		celgo.Function("sum", sums...),
		celgo.Function("min", mins...),
		celgo.Function("max", maxs...),
		celgo.Function("indexOf", celgo.MemberOverload("list_a_index_of_int", []*types.Type{la, a}, types.IntType,
			celgo.BinaryBinding(func(l, x ref.Val) ref.Val { return indexOf(l, x, false) }))),
		celgo.Function("lastIndexOf", celgo.MemberOverload("list_a_last_index_of_int", []*types.Type{la, a}, types.IntType,
			celgo.BinaryBinding(func(l, x ref.Val) ref.Val { return indexOf(l, x, true) }))),
	}})
}

// library is a cel.Library of environment options only.
type library struct{ opts []celgo.EnvOption }

func (l *library) CompileOptions() []celgo.EnvOption { return l.opts }
func (l *library) ProgramOptions() []celgo.ProgramOption {
	return nil
}

func items(v ref.Val) ([]ref.Val, ref.Val) {
	l, ok := v.(traits.Lister)
	if !ok {
		return nil, types.MaybeNoSuchOverloadErr(v)
	}
	n, _ := l.Size().(types.Int)
	out := make([]ref.Val, 0, int(n))
	for it := l.Iterator(); it.HasNext() == types.True; {
		out = append(out, it.Next())
	}
	return out, nil
}

func compare(a, b ref.Val) (int, ref.Val) {
	c, ok := a.(traits.Comparer)
	if !ok {
		return 0, types.MaybeNoSuchOverloadErr(a)
	}
	r, ok := c.Compare(b).(types.Int)
	if !ok {
		return 0, types.MaybeNoSuchOverloadErr(b)
	}
	return int(r), nil
}

func isSorted(v ref.Val) ref.Val {
	xs, err := items(v)
	if err != nil {
		return err
	}
	for i := 1; i < len(xs); i++ {
		c, err := compare(xs[i-1], xs[i])
		if err != nil {
			return err
		}
		if c > 0 {
			return types.False
		}
	}
	return types.True
}

func extreme(v ref.Val, sign int, name string) ref.Val {
	xs, err := items(v)
	if err != nil {
		return err
	}
	if len(xs) == 0 {
		return types.NewErr("%s called on empty list", name)
	}
	best := xs[0]
	for _, x := range xs[1:] {
		c, err := compare(x, best)
		if err != nil {
			return err
		}
		if c*sign > 0 {
			best = x
		}
	}
	return best
}

func sum(v ref.Val, zero ref.Val) ref.Val {
	xs, err := items(v)
	if err != nil {
		return err
	}
	acc := zero
	for _, x := range xs {
		a, ok := acc.(traits.Adder)
		if !ok {
			return types.MaybeNoSuchOverloadErr(acc)
		}
		acc = a.Add(x)
		if types.IsError(acc) {
			return acc
		}
	}
	return acc
}

func indexOf(v, x ref.Val, last bool) ref.Val {
	xs, err := items(v)
	if err != nil {
		return err
	}
	idx := -1
	for i, y := range xs {
		if y.Equal(x) == types.True {
			idx = i
			if !last {
				break
			}
		}
	}
	return types.Int(idx)
}

// Regex is the Kubernetes regex library: s.find(re) is the first match of
// the RE2 expression re in s ("" when none), s.findAll(re) every match and
// s.findAll(re, n) at most n of them.
//
//	'abc 123'.find('[0-9]+') == '123'
func Regex() celgo.EnvOption {
	return celgo.Lib(&library{opts: []celgo.EnvOption{
		celgo.Function("find", celgo.MemberOverload("string_find_string", []*types.Type{types.StringType, types.StringType}, types.StringType,
			celgo.BinaryBinding(func(s, re ref.Val) ref.Val {
				r, err := compileRegex(re)
				if err != nil {
					return err
				}
				return types.String(r.FindString(string(s.(types.String))))
			}))),
		celgo.Function("findAll",
			celgo.MemberOverload("string_find_all_string", []*types.Type{types.StringType, types.StringType}, types.NewListType(types.StringType),
				celgo.BinaryBinding(func(s, re ref.Val) ref.Val { return findAll(s, re, types.Int(-1)) })),
			celgo.MemberOverload("string_find_all_string_int", []*types.Type{types.StringType, types.StringType, types.IntType}, types.NewListType(types.StringType),
				celgo.FunctionBinding(func(args ...ref.Val) ref.Val { return findAll(args[0], args[1], args[2]) }))),
	}})
}

func compileRegex(re ref.Val) (*regexp.Regexp, ref.Val) {
	s, ok := re.(types.String)
	if !ok {
		return nil, types.MaybeNoSuchOverloadErr(re)
	}
	r, err := regexp.Compile(string(s))
	if err != nil {
		return nil, types.NewErr("%v", err)
	}
	return r, nil
}

func findAll(s, re, n ref.Val) ref.Val {
	r, err := compileRegex(re)
	if err != nil {
		return err
	}
	str, ok := s.(types.String)
	limit, ok2 := n.(types.Int)
	if !ok || !ok2 {
		return types.MaybeNoSuchOverloadErr(s)
	}
	if limit == 0 {
		return types.NewStringList(types.DefaultTypeAdapter, []string{})
	}
	return types.NewStringList(types.DefaultTypeAdapter, r.FindAllString(string(str), int(limit)))
}

// traversal cost factor of strings, as CEL's own string functions
const stringCostFactor = 0.1

// libraryCallCost is the runtime cost of a library call: proportional to
// the sizes the function walks.
func libraryCallCost(function, overloadID string, args []ref.Val, result ref.Val) *uint64 {
	size := func(v ref.Val) uint64 {
		switch t := v.(type) {
		case types.String:
			return uint64(len(t))
		case traits.Sizer:
			if n, ok := t.Size().(types.Int); ok && n > 0 {
				return uint64(n)
			}
		}
		return 0
	}
	var c uint64
	switch function {
	case "isSorted", "sum", "min", "max", "indexOf", "lastIndexOf":
		if len(args) > 0 {
			c = 1 + size(args[0])
		}
	case "find", "findAll", "matches", "url", "isURL", "quantity", "isQuantity", "semver", "isSemver",
		"ip", "isIP", "cidr", "isCIDR", "validate":
		var total uint64
		for _, a := range args {
			total += size(a)
		}
		c = 1 + uint64(float64(total)*stringCostFactor)
		if function == "find" || function == "findAll" {
			c = 1 + uint64(float64(size(args[0]))*float64(size(args[1]))*stringCostFactor)
		}
	default:
		return nil
	}
	return &c
}

// libraryEstimate estimates library calls from the sizes of their
// arguments.
func libraryEstimate(e checker.CostEstimator, function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	sizeOf := func(n checker.AstNode) checker.SizeEstimate {
		if s := n.ComputedSize(); s != nil {
			return *s
		}
		if s := e.EstimateSize(n); s != nil {
			return *s
		}
		return checker.SizeEstimate{Min: 0, Max: maxRequestSizeBytes}
	}
	switch function {
	case "isSorted", "sum", "min", "max", "indexOf", "lastIndexOf":
		if target == nil {
			return nil
		}
		s := sizeOf(*target)
		return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1 + s.Min, Max: 1 + s.Max}}
	case "find", "findAll":
		if target == nil || len(args) == 0 {
			return nil
		}
		s, p := sizeOf(*target), sizeOf(args[0])
		return &checker.CallEstimate{CostEstimate: s.Multiply(p).MultiplyByCostFactor(stringCostFactor).Add(checker.CostEstimate{Min: 1, Max: 1})}
	case "url", "isURL", "quantity", "isQuantity", "semver", "isSemver", "ip", "isIP", "cidr", "isCIDR", "validate":
		var s checker.SizeEstimate
		switch {
		case len(args) > 0:
			s = sizeOf(args[len(args)-1])
		default:
			return nil
		}
		return &checker.CallEstimate{CostEstimate: s.MultiplyByCostFactor(stringCostFactor).Add(checker.CostEstimate{Min: 1, Max: 1})}
	}
	return nil
}
