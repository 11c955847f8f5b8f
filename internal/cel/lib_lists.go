package cel

import (
	"math"
	"regexp"
	"slices"
	"strings"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/ast"
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

// Cost factors of cel-go's estimates: a string costs 0.1 a byte to walk,
// a regular expression 0.25 a byte of its source.
const (
	stringCostFactor = 0.1
	regexCostFactor  = 0.25
)

func ceilCost(f float64) uint64 { return uint64(math.Ceil(f)) }

// actualSize is the size of a value for runtime costs: its length, or 1.
func actualSize(v ref.Val) uint64 {
	if s, ok := v.(traits.Sizer); ok {
		if n, ok := s.Size().(types.Int); ok && n >= 0 {
			return uint64(n)
		}
	}
	return 1
}

// traversalCost is the cost of walking a value: 0.1 a byte of its strings,
// 1 for any other leaf.
func traversalCost(v ref.Val) uint64 {
	switch t := v.(type) {
	case types.String:
		return uint64(float64(len(t)) * stringCostFactor)
	case types.Bytes:
		return uint64(float64(len(t)) * stringCostFactor)
	case traits.Lister:
		var c uint64
		for it := t.Iterator(); it.HasNext() == types.True; {
			c += traversalCost(it.Next())
		}
		return c
	case traits.Mapper:
		var c uint64
		for it := t.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			c += traversalCost(k) + traversalCost(t.Get(k))
		}
		return c
	}
	return 1
}

// libraryCallCost is the runtime cost of a call of the Kubernetes
// libraries (and of the string functions Kubernetes prices itself), as
// kube-apiserver counts it; nil leaves the call to cel-go.
func libraryCallCost(function, overloadID string, args []ref.Val, result ref.Val) *uint64 {
	c := func(n uint64) *uint64 { return &n }
	switch function {
	case "check":
		if overloadID == "pathcheck_check" || overloadID == "resourcecheck_check" {
			return c(authzCheckCost)
		}
	case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf":
		if len(args) > 0 {
			return c(traversalCost(args[0]))
		}
		return c(0)
	case "url", "lowerAscii", "upperAscii", "substring", "trim", "quantity", "isQuantity", "cidr", "isIP", "isCIDR":
		if len(args) >= 1 {
			return c(ceilCost(float64(actualSize(args[0])) * stringCostFactor))
		}
	case "replace", "split":
		if len(args) >= 1 {
			return c(ceilCost(float64(actualSize(args[0])) * 2 * stringCostFactor))
		}
	case "join":
		if len(args) >= 1 {
			return c(ceilCost(float64(actualSize(result)) * 2 * stringCostFactor))
		}
	case "find", "findAll":
		if len(args) >= 2 {
			str := ceilCost((1 + float64(actualSize(args[0]))) * stringCostFactor)
			re := ceilCost(float64(actualSize(args[1])) * regexCostFactor)
			return c(str * re)
		}
	case "ip":
		if overloadID == "cidr_ip" {
			return c(1)
		}
		if len(args) >= 1 {
			return c(ceilCost(float64(actualSize(args[0])) * stringCostFactor))
		}
	case "ip.isCanonical":
		if len(args) >= 1 {
			return c(ceilCost(float64(actualSize(args[0])) * 2 * stringCostFactor))
		}
	case "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast",
		"asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub":
		return c(1)
	case "containsIP", "containsCIDR":
		if len(args) >= 2 {
			cidr := actualSize(args[0])
			n := ceilCost(float64(2*cidr) * stringCostFactor)
			if function == "containsCIDR" {
				n += ceilCost(float64(cidr)*stringCostFactor) + 1
			}
			if strings.HasSuffix(overloadID, "_string") {
				n += ceilCost(float64(actualSize(args[1])) * stringCostFactor)
			}
			return c(n)
		}
	}
	return nil
}

// libraryEstimate estimates the cost of a call of the Kubernetes libraries
// as kube-apiserver does (an estimate decides which rules a CRD may have,
// so it follows kube-apiserver's exactly, quirks included); nil leaves the
// call to cel-go.
func libraryEstimate(e checker.CostEstimator, function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	size := func(n checker.AstNode) checker.SizeEstimate {
		if s := n.ComputedSize(); s != nil {
			return *s
		}
		if s := e.EstimateSize(n); s != nil {
			return *s
		}
		return checker.SizeEstimate{Min: 0, Max: math.MaxUint64}
	}
	fixed := func(n uint64) *checker.CallEstimate {
		return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: n, Max: n}}
	}
	switch function {
	case "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf":
		if target == nil {
			return nil
		}
		if el := elementNode(*target); el != nil {
			elCost := checker.CostEstimate{Min: 1, Max: 1}
			if k := el.Type().Kind(); k == types.StringKind || k == types.BytesKind {
				elCost = elCost.Add(size(el).MultiplyByCostFactor(stringCostFactor))
			}
			return &checker.CallEstimate{CostEstimate: size(*target).MultiplyByCost(elCost)}
		}
		return &checker.CallEstimate{CostEstimate: size(*target).MultiplyByCostFactor(stringCostFactor)}
	case "url":
		if len(args) == 1 {
			return &checker.CallEstimate{CostEstimate: size(args[0]).MultiplyByCostFactor(stringCostFactor)}
		}
	case "lowerAscii", "upperAscii", "substring", "trim":
		if target != nil {
			sz := size(*target)
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(stringCostFactor), ResultSize: &sz}
		}
	case "replace", "split":
		if target != nil {
			sz := size(*target)
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(2 * stringCostFactor)}
		}
	case "join":
		if target != nil {
			var sz checker.SizeEstimate
			list := size(*target)
			if el := elementNode(*target); el != nil {
				sz = list.Multiply(size(el))
			}
			if len(args) > 0 {
				seps := checker.SizeEstimate{}
				if list.Min > 0 {
					seps.Min = list.Min - 1
				}
				if list.Max > 0 {
					seps.Max = list.Max - 1
				}
				sz = sz.Add(size(args[0]).Multiply(seps))
			}
			return &checker.CallEstimate{CostEstimate: sz.MultiplyByCostFactor(stringCostFactor), ResultSize: &sz}
		}
	case "find", "findAll":
		if target != nil && len(args) >= 1 {
			sz := size(*target)
			str := sz.Add(checker.SizeEstimate{Min: 1, Max: 1}).MultiplyByCostFactor(stringCostFactor)
			re := size(args[0]).MultiplyByCostFactor(regexCostFactor)
			return &checker.CallEstimate{CostEstimate: str.Multiply(re), ResultSize: &checker.SizeEstimate{Min: 0, Max: sz.Max}}
		}
	case "ip":
		if target != nil && overloadID == "cidr_ip" {
			return fixed(1)
		}
	case "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast",
		"asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub":
		return fixed(1)
	case "containsIP", "containsCIDR":
		if target != nil && len(args) >= 1 {
			ip := checker.SizeEstimate{Min: 4, Max: 16} // bytes of an IPv4 or IPv6 address
			cost := ip.Add(ip).MultiplyByCostFactor(stringCostFactor)
			if function == "containsCIDR" {
				cost = cost.Add(ip.MultiplyByCostFactor(stringCostFactor)).Add(checker.CostEstimate{Min: 1, Max: 1})
			}
			if strings.HasSuffix(overloadID, "_string") {
				cost = cost.Add(size(args[0]).MultiplyByCostFactor(stringCostFactor))
			}
			return &checker.CallEstimate{CostEstimate: cost}
		}
	}
	return nil
}

// elementNode is the node of a list's elements, for size estimates.
func elementNode(list checker.AstNode) checker.AstNode {
	params := list.Type().Parameters()
	if len(params) == 0 {
		return nil
	}
	n := &itemsNode{t: params[0]}
	if p := list.Path(); p != nil {
		n.path = append(slices.Clone(p), "@items")
	}
	return n
}

type itemsNode struct {
	path []string
	t    *types.Type
}

func (n *itemsNode) Path() []string                      { return n.path }
func (n *itemsNode) Type() *types.Type                   { return n.t }
func (n *itemsNode) Expr() ast.Expr                      { return nil }
func (n *itemsNode) ComputedSize() *checker.SizeEstimate { return nil }
