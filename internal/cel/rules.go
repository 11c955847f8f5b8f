package cel

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// Cost limits of kube-apiserver, in CEL cost units.
const (
	// PerCallLimit bounds the runtime cost of one rule evaluation.
	PerCallLimit = 1000000
	// RuntimeCostBudget bounds the runtime cost of all rules of one
	// object's validation.
	RuntimeCostBudget = 10000000
	// StaticEstimatedCostLimit bounds the estimated cost of one rule (times
	// the number of times it can run: the items of the lists and maps above
	// it).
	StaticEstimatedCostLimit = 10000000
	// StaticEstimatedCRDCostLimit bounds the sum of those estimates over a
	// whole schema.
	StaticEstimatedCRDCostLimit = 100000000
)

// Validator holds the compiled x-kubernetes-validations rules of one
// schema. It is safe for concurrent use; build it once per schema
// (Compile) and use it for every request.
type Validator struct {
	root   *node
	budget uint64 // runtime cost of one validation
}

// node is a schema node with rules, or with rules below it.
type node struct {
	schema *Schema
	decl   *declType
	rules  []*rule
	props  map[string]*node // by JSON property name
	items  *node            // array items
	values *node            // additionalProperties
	// correlatable: for items, whether an old item can be found (list-type
	// map or set).
	listType string
	mapKeys  []string
}

type rule struct {
	src        apiextensionsv1.ValidationRule
	prog       celgo.Program
	msgProg    celgo.Program
	transition bool // uses oldSelf
	optional   bool // optionalOldSelf
}

// Compile compiles the rules of schema s (a CRD version's
// openAPIV3Schema). It returns the errors a CRD with this schema is
// rejected with, paths under path ("spec.validation.openAPIV3Schema"),
// worded as kube-apiserver's: invalid reasons, field paths and messages,
// rules and message expressions that do not compile or are not of type bool
// and string, optionalOldSelf without oldSelf, estimated costs over the
// budgets, and oldSelf where no old value can be found (under a list that
// is not a list-type map). The Validator holds the rules that compiled.
func Compile(s *Schema, path string) (*Validator, metav1.FieldErrors) {
	return compile(s, path, limits{perCall: PerCallLimit, budget: RuntimeCostBudget})
}

// limits are the runtime cost limits of a Validator (smaller in tests).
type limits struct {
	perCall, budget uint64
}

func compile(s *Schema, path string, l limits) (*Validator, metav1.FieldErrors) {
	compiles.Add(1)
	c := &compiler{b: &typeBuilder{objects: map[string]*declType{}}, limits: l}
	if s == nil {
		return &Validator{}, nil
	}
	c.static(s, path, 0)
	if len(c.errs) > 0 {
		return &Validator{}, c.errs
	}
	root := c.compile(s, path, "kapi@self", true, 1, "", 0)
	if c.total > StaticEstimatedCRDCostLimit {
		for _, e := range c.expensive {
			c.errs = append(c.errs, metav1.FieldForbidden(e.path, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"))
		}
		c.errs = append(c.errs, metav1.FieldForbidden(path, costErrorMessage("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", c.total, StaticEstimatedCRDCostLimit)))
	}
	return &Validator{root: root, budget: l.budget}, c.errs
}

var compiles atomic.Uint64

// Compiles is the number of schemas Compile has compiled since the process
// started; tests use it to see that a server compiles a CRD's rules once,
// not per request.
func Compiles() uint64 { return compiles.Load() }

type compiler struct {
	limits    limits
	b         *typeBuilder
	errs      metav1.FieldErrors
	total     uint64
	expensive []ruleCost
}

type ruleCost struct {
	path string
	cost uint64
}

// observe adds a rule's cost to the schema's total, remembering the four
// most expensive rules that cost at least 1% of the limit.
func (c *compiler) observe(path string, cost uint64) {
	if math.MaxUint64-c.total < cost {
		c.total = math.MaxUint64
	} else {
		c.total += cost
	}
	if cost < StaticEstimatedCRDCostLimit/100 {
		return
	}
	c.expensive = append(c.expensive, ruleCost{path, cost})
	sort.SliceStable(c.expensive, func(i, j int) bool { return c.expensive[i].cost > c.expensive[j].cost })
	if len(c.expensive) > 4 {
		c.expensive = c.expensive[:4]
	}
}

var reasons = []string{"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"}

// static checks the rules' fields that need no compiling.
func (c *compiler) static(s *Schema, path string, depth int) {
	if s == nil || depth > 64 {
		return
	}
	for i, r := range s.XValidations {
		p := fmt.Sprintf("%s.x-kubernetes-validations[%d]", path, i)
		if strings.TrimSpace(r.Rule) == "" {
			c.errs = append(c.errs, metav1.FieldRequired(p+".rule", ""))
		}
		if strings.ContainsAny(r.Message, "\r\n") {
			c.errs = append(c.errs, metav1.FieldInvalid(p+".message", r.Message, "must not contain line breaks"))
		}
		if r.Reason != nil && !slices.Contains(reasons, string(*r.Reason)) {
			c.errs = append(c.errs, metav1.FieldNotSupported(p+".reason", string(*r.Reason), reasons))
		}
		if r.FieldPath != "" {
			if _, err := fieldPathUnder(s, r.FieldPath); err != nil {
				c.errs = append(c.errs, metav1.FieldInvalid(p+".fieldPath", r.FieldPath, "must be a valid path"))
			}
		}
	}
	for _, k := range sortedKeys(s.Properties) {
		ps := s.Properties[k]
		c.static(&ps, path+".properties["+k+"]", depth+1)
	}
	if s.Items != nil && s.Items.Schema != nil {
		c.static(s.Items.Schema, path+".items", depth+1)
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
		c.static(ap.Schema, path+".additionalProperties", depth+1)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// compile compiles the rules at s and below; cardinality is how many times
// s can occur in an object (the product of the sizes of the lists and maps
// above it); uncorrelatable is the path of the outermost list above s
// whose items have no old value to compare with (not a list-type map), ""
// when there is none.
func (c *compiler) compile(s *Schema, path, typeName string, root bool, cardinality uint64, uncorrelatable string, depth int) *node {
	if s == nil || depth > 64 {
		return nil
	}
	n := &node{schema: s}
	if s.XListType != nil {
		n.listType = *s.XListType
		n.mapKeys = s.XListMapKeys
	}
	if len(s.XValidations) > 0 {
		n.decl = c.b.declTypeOf(s, typeName, root || s.XEmbeddedResource, 0)
		if n.decl == nil {
			n.decl = dynType
		}
		var envs [2]*celgo.Env // oldSelf of the node's type, optional
		envFor := func(optional bool) (*celgo.Env, error) {
			i := 0
			if optional {
				i = 1
			}
			if envs[i] == nil {
				env, err := ruleEnv(c.b, n.decl, optional)
				if err != nil {
					return nil, err
				}
				envs[i] = env
			}
			return envs[i], nil
		}
		for i, r := range s.XValidations {
			p := fmt.Sprintf("%s.x-kubernetes-validations[%d]", path, i)
			if cr := c.rule(envFor, n.decl, r, p, cardinality, uncorrelatable); cr != nil {
				n.rules = append(n.rules, cr)
			}
		}
	}
	for _, k := range sortedKeys(s.Properties) {
		ps := s.Properties[k]
		esc, _ := Escape(k)
		if child := c.compile(&ps, path+".properties["+k+"]", typeName+"."+esc, false, cardinality, uncorrelatable, depth+1); child != nil {
			if n.props == nil {
				n.props = map[string]*node{}
			}
			n.props[k] = child
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		size := c.size(s, typeName, root)
		unc := uncorrelatable
		if unc == "" && n.listType != "map" {
			unc = path
		}
		n.items = c.compile(s.Items.Schema, path+".items", typeName+".@idx", false, mulNoOverflow(cardinality, size), unc, depth+1)
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
		size := c.size(s, typeName, root)
		n.values = c.compile(ap.Schema, path+".additionalProperties", typeName+".@idx", false, mulNoOverflow(cardinality, size), uncorrelatable, depth+1)
	}
	if n.rules == nil && n.props == nil && n.items == nil && n.values == nil {
		return nil
	}
	return n
}

// size is the most elements the list or map s can have, for the
// cardinality of what is below it: maxItems or maxProperties, else as many
// of the smallest element as a request holds (one separator each), as
// kube-apiserver counts.
func (c *compiler) size(s *Schema, typeName string, root bool) uint64 {
	switch {
	case s.Type == "array" && s.MaxItems != nil:
		return uint64(max(*s.MaxItems, 0))
	case s.Type == "object" && s.MaxProperties != nil:
		return uint64(max(*s.MaxProperties, 0))
	}
	d := c.b.declTypeOf(s, typeName, root, 0)
	if d == nil || d.elem == nil {
		return 1
	}
	return uint64(maxRequestSizeBytes / (d.elem.minSize + 1))
}

func mulNoOverflow(a, b uint64) uint64 {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}

// ruleValue shows a rule in an error as kube-apiserver does (its Go
// field names, JSON-encoded).
type ruleValue apiextensionsv1.ValidationRule

func (r ruleValue) String() string {
	q := func(s string) string { b, _ := jsonString(s); return b }
	reason, opt := "null", "null"
	if r.Reason != nil {
		reason = q(string(*r.Reason))
	}
	if r.OptionalOldSelf != nil {
		opt = strconv.FormatBool(*r.OptionalOldSelf)
	}
	return `{"Rule":` + q(r.Rule) + `,"Message":` + q(r.Message) + `,"MessageExpression":` + q(r.MessageExpression) +
		`,"Reason":` + reason + `,"FieldPath":` + q(r.FieldPath) + `,"OptionalOldSelf":` + opt + `}`
}

func (c *compiler) rule(envFor func(optional bool) (*celgo.Env, error), decl *declType, r apiextensionsv1.ValidationRule, path string,
	cardinality uint64, uncorrelatable string) *rule {
	bad := func(field, msg string) {
		c.errs = append(c.errs, metav1.FieldInvalid(path+"."+field, ruleValue(r), msg))
	}
	optional := r.OptionalOldSelf != nil && *r.OptionalOldSelf
	env, err := envFor(optional)
	if err != nil {
		c.errs = append(c.errs, metav1.FieldInternal(path+".rule", err))
		return nil
	}
	ast, iss := env.Compile(r.Rule)
	if iss.Err() != nil {
		bad("rule", "compilation failed: "+iss.Err().Error())
		return nil
	}
	if ast.OutputType() != types.BoolType {
		bad("rule", "cel expression must evaluate to a bool")
		return nil
	}
	out := &rule{src: r, transition: usesOldSelf(ast), optional: optional}
	if optional && !out.transition {
		c.errs = append(c.errs, metav1.FieldInvalid(path+".optionalOldSelf", true, "may not be set if oldSelf is not used in rule"))
	}
	est := &estimator{root: decl}
	cost, err := env.EstimateCost(ast, est)
	if err != nil {
		c.errs = append(c.errs, metav1.FieldInternal(path+".rule", err))
		return nil
	}
	expr := mulNoOverflow(cost.Max, cardinality)
	if expr > StaticEstimatedCostLimit {
		c.errs = append(c.errs, metav1.FieldForbidden(path+".rule", costErrorMessage("estimated rule cost", expr, StaticEstimatedCostLimit)))
	}
	c.observe(path+".rule", expr)
	if out.transition && uncorrelatable != "" {
		c.errs = append(c.errs, metav1.FieldInvalid(path+".rule", r.Rule,
			"oldSelf cannot be used on the uncorrelatable portion of the schema within "+uncorrelatable))
	}
	prog, err := env.Program(ast, programOptions(c.limits.perCall)...)
	if err != nil {
		c.errs = append(c.errs, metav1.FieldInternal(path+".rule", err))
		return nil
	}
	out.prog = prog
	if r.MessageExpression != "" {
		mast, iss := env.Compile(r.MessageExpression)
		switch {
		case iss.Err() != nil:
			bad("messageExpression", "messageExpression compilation failed: "+iss.Err().Error())
			return nil
		case mast.OutputType() != types.StringType:
			bad("messageExpression", "messageExpression must evaluate to a string")
			return nil
		}
		mcost, err := env.EstimateCost(mast, est)
		if err != nil {
			c.errs = append(c.errs, metav1.FieldInternal(path+".messageExpression", err))
			return nil
		}
		mexpr := mulNoOverflow(mcost.Max, cardinality)
		if mexpr > StaticEstimatedCostLimit {
			c.errs = append(c.errs, metav1.FieldForbidden(path+".messageExpression", costErrorMessage("estimated messageExpression cost", mexpr, StaticEstimatedCostLimit)))
		}
		c.observe(path+".messageExpression", mexpr)
		if out.msgProg, err = env.Program(mast, programOptions(c.limits.perCall)...); err != nil {
			c.errs = append(c.errs, metav1.FieldInternal(path+".messageExpression", err))
			return nil
		}
	}
	return out
}

// costErrorMessage words an estimate over its limit as kube-apiserver.
func costErrorMessage(name string, cost, limit uint64) string {
	f := float64(cost) / float64(limit)
	var factor string
	switch {
	case f > 100:
		factor = "more than 100x"
	case f < 1.5:
		factor = fmt.Sprintf("%fx", f)
	default:
		factor = fmt.Sprintf("%.1fx", f)
	}
	return fmt.Sprintf("%s exceeds budget by factor of %s (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)", name, factor)
}

func usesOldSelf(a *celgo.Ast) bool {
	for _, ref := range a.NativeRep().ReferenceMap() {
		if ref.Name == "oldSelf" {
			return true
		}
	}
	return false
}

// estimator bounds the sizes of self and oldSelf and what they hold by the
// schema's maxLength, maxItems and maxProperties (or by the request size).
type estimator struct {
	root *declType
}

func (e *estimator) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	if t := n.Type(); t != nil && libraryTypes[t.TypeName()] {
		// values of the library types are of bounded size
		return &checker.SizeEstimate{Min: 1, Max: 1}
	}
	p := n.Path()
	if len(p) == 0 {
		return nil
	}
	// the path starts at self (or oldSelf, or a variable bound to a part of
	// them), below the node's type
	d := e.root
	for _, name := range p[1:] {
		switch name {
		case "@items", "@values":
			d = d.elem
		case "@keys":
			d = d.key
		default:
			if d.fields == nil || d.fields[name] == nil {
				return nil
			}
			d = d.fields[name].typ
		}
		if d == nil {
			return nil
		}
	}
	return &checker.SizeEstimate{Min: 0, Max: uint64(max(d.maxElements, 0))}
}

func (e *estimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return estimateLibraryCallCost(e, function, overloadID, target, args)
}

// Validate evaluates the rules on obj, a whole custom resource, and on old,
// its previous state on an update (nil on a create). Rules that use oldSelf
// run only where an old value exists (or with optionalOldSelf); other
// rules of values an update leaves unchanged do not run again, as
// kube-apiserver ratchets them. The errors are worded as kube-apiserver's.
func (v *Validator) Validate(obj, old map[string]any) metav1.FieldErrors {
	if v == nil || v.root == nil {
		return nil
	}
	e := &evaluation{budget: v.budget}
	var o any
	if old != nil {
		o = old
	}
	e.value(v.root, "", obj, o, old != nil, 0)
	return e.errs
}

// Empty reports whether the schema has no rules.
func (v *Validator) Empty() bool { return v == nil || v.root == nil }

type evaluation struct {
	errs    metav1.FieldErrors
	budget  uint64
	stopped bool
}

var errStop = errors.New("stop")

func (e *evaluation) value(n *node, path string, x, old any, hasOld bool, depth int) {
	if n == nil || e.stopped || depth > 1000 {
		return
	}
	if x == nil && len(n.rules) > 0 {
		return // null: nothing to check (nullable)
	}
	if len(n.rules) > 0 {
		// A value the update leaves as it was keeps its errors of rules
		// without oldSelf (ratcheting); transition rules run anyway.
		unchanged := hasOld && reflect.DeepEqual(x, old)
		e.rules(n, path, x, old, hasOld, unchanged)
	}
	switch t := x.(type) {
	case map[string]any:
		om, _ := old.(map[string]any)
		for _, k := range sortedKeys(t) {
			child := n.props[k]
			if child == nil {
				child = n.values
				if _, known := n.schema.Properties[k]; known {
					child = nil
				}
			}
			if child == nil {
				continue
			}
			p := join(path, k)
			if child == n.values {
				p = path + "[" + k + "]" // a map key, as kube-apiserver writes it
			}
			ov, ok := om[k]
			e.value(child, p, t[k], ov, hasOld && ok, depth+1)
		}
	case []any:
		if n.items == nil {
			return
		}
		oa, _ := old.([]any)
		for i, item := range t {
			ov, ok := e.correlate(n, item, oa)
			e.value(n.items, path+"["+strconv.Itoa(i)+"]", item, ov, hasOld && ok, depth+1)
		}
	}
}

// correlate finds the old item of a list item: by key in a list-type map,
// by value in a set; items of atomic lists have none.
func (e *evaluation) correlate(n *node, item any, old []any) (any, bool) {
	switch n.listType {
	case "set":
		for _, o := range old {
			if reflect.DeepEqual(o, item) {
				return o, true
			}
		}
	case "map":
		m, ok := item.(map[string]any)
		if !ok {
			return nil, false
		}
	next:
		for _, o := range old {
			om, ok := o.(map[string]any)
			if !ok {
				continue
			}
			for _, k := range n.mapKeys {
				if !reflect.DeepEqual(om[k], m[k]) {
					continue next
				}
			}
			return o, true
		}
	}
	return nil, false
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// typeName is how kube-apiserver shows a value's type in errors.
func typeName(s *Schema) string { return s.Type }

func (e *evaluation) rules(n *node, path string, x, old any, hasOld, unchanged bool) {
	self := toVal(n.decl, x)
	var oldSelf ref.Val
	if hasOld {
		oldSelf = toVal(n.decl, old)
	}
	shown := path
	if shown == "" {
		shown = "<nil>"
	}
	for _, r := range n.rules {
		if r.transition && !hasOld && !r.optional || !r.transition && unchanged {
			continue
		}
		act := map[string]any{"self": self}
		if r.transition {
			switch {
			case r.optional && hasOld:
				act["oldSelf"] = types.OptionalOf(oldSelf)
			case r.optional:
				act["oldSelf"] = types.OptionalNone
			default:
				act["oldSelf"] = oldSelf
			}
		}
		out, det, err := r.prog.Eval(act)
		if det != nil && det.ActualCost() != nil {
			cost := *det.ActualCost()
			if cost > e.budget {
				e.errs = append(e.errs, metav1.FieldInvalid(shown, typeName(n.schema), "validation failed due to running out of cost budget, no further validation rules will be run"))
				e.stopped = true
				return
			}
			e.budget -= cost
		}
		if err != nil {
			if strings.Contains(err.Error(), "operation cancelled: actual cost limit exceeded") {
				e.errs = append(e.errs, metav1.FieldInvalid(shown, typeName(n.schema),
					fmt.Sprintf("'%v': no further validation rules will be run due to call cost exceeds limit for rule: %s", err, ruleText(r.src))))
				e.stopped = true
				return
			}
			msg := fmt.Sprintf("%v evaluating rule: %s", err, ruleText(r.src))
			if strings.HasPrefix(err.Error(), "no such overload") {
				msg = fmt.Sprintf("'%v': call arguments did not match a supported operator, function or macro signature for rule: %s", err, ruleText(r.src))
			}
			e.errs = append(e.errs, metav1.FieldInvalid(shown, typeName(n.schema), msg))
			continue
		}
		if b, ok := out.(types.Bool); ok && bool(b) {
			continue
		}
		if _, ok := out.(types.Bool); !ok {
			e.errs = append(e.errs, metav1.FieldInvalid(shown, typeName(n.schema), "rule did not evaluate to a bool: "+ruleText(r.src)))
			continue
		}
		detail := e.message(r, act)
		fpath := shown
		if r.src.FieldPath != "" {
			if rel, err := fieldPathUnder(n.schema, r.src.FieldPath); err == nil {
				fpath = path + rel
				if path == "" {
					fpath = strings.TrimPrefix(rel, ".")
				}
			}
		}
		e.errs = append(e.errs, fieldError(r.src.Reason, fpath, shownValue(x), detail))
		if e.stopped {
			return
		}
	}
}

// message is the detail of a failed rule: its messageExpression's result,
// else its message, else "failed rule: <rule>".
func (e *evaluation) message(r *rule, act map[string]any) string {
	fallback := "failed rule: " + ruleText(r.src)
	if r.src.Message != "" {
		fallback = r.src.Message
	}
	if r.msgProg == nil {
		return fallback
	}
	out, det, err := r.msgProg.Eval(act)
	if det != nil && det.ActualCost() != nil {
		cost := *det.ActualCost()
		if cost > e.budget {
			e.stopped = true
			return fallback
		}
		e.budget -= cost
	}
	s, ok := out.(types.String)
	if err != nil || !ok || strings.TrimSpace(string(s)) == "" || strings.ContainsAny(string(s), "\r\n") || len(s) > 5000 {
		return fallback
	}
	return string(s)
}

func ruleText(r apiextensionsv1.ValidationRule) string { return strings.TrimSpace(r.Rule) }

// shownValue is the value an error shows: scalars as they are, objects and
// lists not at all.
func shownValue(x any) any {
	switch x.(type) {
	case map[string]any, []any:
		return metav1.OmitValue
	}
	return x
}

func fieldError(reason *apiextensionsv1.FieldValueErrorReason, path string, value any, detail string) *metav1.FieldError {
	if reason != nil {
		switch *reason {
		case apiextensionsv1.FieldValueForbidden:
			return metav1.FieldForbidden(path, detail)
		case apiextensionsv1.FieldValueRequired:
			return metav1.FieldRequired(path, detail)
		case apiextensionsv1.FieldValueDuplicate:
			return metav1.FieldDuplicate(path, value)
		}
	}
	return metav1.FieldInvalid(path, value, detail)
}

var (
	pathField = regexp.MustCompile(`^\.([a-zA-Z_][a-zA-Z0-9_-]*)`)
	pathKey   = regexp.MustCompile(`^\['((?:[^'\\]|\\.)*)'\]`)
)

// fieldPathUnder resolves a rule's fieldPath (".spec.x", ".m['a.b']")
// against s and returns the path it adds to the rule's node: ".x" for a
// property, "[k]" for a key of a map (additionalProperties). It fails when
// the schema has no such field; list indexes are not paths.
func fieldPathUnder(s *Schema, fp string) (string, error) {
	var out strings.Builder
	rest := fp
	cur := s
	for rest != "" {
		var name string
		if m := pathField.FindStringSubmatch(rest); m != nil {
			name, rest = m[1], rest[len(m[0]):]
		} else if m := pathKey.FindStringSubmatch(rest); m != nil {
			name, rest = strings.ReplaceAll(m[1], `\'`, `'`), rest[len(m[0]):]
		} else {
			return "", fmt.Errorf("invalid path %q", fp)
		}
		if ps, ok := cur.Properties[name]; ok {
			cur = &ps
			out.WriteString("." + name)
		} else if ap := cur.AdditionalProperties; ap != nil && ap.Schema != nil {
			cur = ap.Schema
			out.WriteString("[" + name + "]")
		} else {
			return "", fmt.Errorf("no field %q", name)
		}
	}
	return out.String(), nil
}

// programOptions are the options of every rule's program: cost tracking
// with a per-call limit (kube-apiserver's PerCallLimit).
func programOptions(perCall uint64) []celgo.ProgramOption {
	return []celgo.ProgramOption{
		celgo.EvalOptions(celgo.OptOptimize, celgo.OptTrackCost),
		celgo.CostLimit(perCall),
		celgo.CostTracking(runtimeCost{}),
		celgo.CostTrackerOptions(interpreter.PresenceTestHasCost(false)),
		celgo.InterruptCheckFrequency(100),
	}
}

var _ interpreter.ActualCostEstimator = runtimeCost{}
