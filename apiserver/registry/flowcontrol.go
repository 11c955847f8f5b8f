package registry

import (
	"math"
	"strconv"
	"strings"
	"time"

	flowcontrolv1 "github.com/kapi-dev/kapi/api/flowcontrol/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// flowcontrol.apiserver.k8s.io/v1: the FlowSchemas and
// PriorityLevelConfigurations of API Priority and Fairness, defaulted and
// validated as kube-apiserver v1.37 does. kapi stores them but does not
// queue requests by them, and it does not create the mandatory and
// suggested configuration objects kube-apiserver maintains, nor check that
// the mandatory ones ("exempt", "catch-all") keep their fixed specs.

const flowcontrolGroup = "flowcontrol.apiserver.k8s.io"

// The names that kube-apiserver reserves for the exempt configuration.
const (
	flowSchemaExempt    = "exempt"
	priorityLevelExempt = "exempt"
)

const (
	plTypeExempt  = "Exempt"
	plTypeLimited = "Limited"
)

func flowcontrolKinds(Options, services) []*Resource {
	return []*Resource{
		kind[flowcontrolv1.FlowSchema](flowcontrolGroup, "v1", "flowschemas", Resource{Generation: true,
			Meta: builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			Default: defaultFlowSchema,
			PrepareForCreate: func(o Object) {
				defaultFlowSchema(o)
				ResetStatus(o)
			},
			PrepareForUpdate: func(o, _ Object) { defaultFlowSchema(o) },
			Validate:         validateFlowSchema, Printer: flowSchemaPrinter}),
		kind[flowcontrolv1.PriorityLevelConfiguration](flowcontrolGroup, "v1", "prioritylevelconfigurations", Resource{Generation: true,
			Meta: builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			Default: defaultPriorityLevel,
			PrepareForCreate: func(o Object) {
				defaultPriorityLevel(o)
				ResetStatus(o)
			},
			PrepareForUpdate: func(o, _ Object) { defaultPriorityLevel(o) },
			Validate:         validatePriorityLevel, Printer: priorityLevelPrinter}),
	}
}

// defaultFlowSchema gives a FlowSchema without matchingPrecedence 1000.
func defaultFlowSchema(o Object) {
	fs := o.(*flowcontrolv1.FlowSchema)
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = 1000
	}
}

// defaultPriorityLevel fills in a limited level's nominal concurrency
// shares (30), lendable percent (0) and queuing parameters (64 queues,
// hands of 8, 50 requests a queue), and an exempt level's shares and
// lendable percent (0).
func defaultPriorityLevel(o Object) {
	spec := &o.(*flowcontrolv1.PriorityLevelConfiguration).Spec
	if l := spec.Limited; l != nil {
		if l.NominalConcurrencyShares == nil {
			l.NominalConcurrencyShares = new(int32(30))
		}
		if l.LendablePercent == nil {
			l.LendablePercent = new(int32(0))
		}
		if q := l.LimitResponse.Queuing; q != nil {
			if q.Queues == 0 {
				q.Queues = 64
			}
			if q.HandSize == 0 {
				q.HandSize = 8
			}
			if q.QueueLengthLimit == 0 {
				q.QueueLengthLimit = 50
			}
		}
	}
	if e := spec.Exempt; e != nil {
		if e.NominalConcurrencyShares == nil {
			e.NominalConcurrencyShares = new(int32(0))
		}
		if e.LendablePercent == nil {
			e.LendablePercent = new(int32(0))
		}
	}
}

// flowcontrolVerbs are the verbs a FlowSchema's rules may name besides "*".
var flowcontrolVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"}

func validateFlowSchema(o, _ Object) metav1.FieldErrors {
	fs := o.(*flowcontrolv1.FlowSchema)
	spec := &fs.Spec
	var errs metav1.FieldErrors
	switch p := int64(spec.MatchingPrecedence); {
	case p <= 0:
		errs = append(errs, metav1.FieldInvalid("spec.matchingPrecedence", p, "must be a positive value"))
	case p > 10000:
		errs = append(errs, metav1.FieldInvalid("spec.matchingPrecedence", p, "must not be greater than 10000"))
	case p == 1 && fs.Name != flowSchemaExempt:
		errs = append(errs, metav1.FieldInvalid("spec.matchingPrecedence", p, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if d := spec.DistinguisherMethod; d != nil && d.Type != "ByNamespace" && d.Type != "ByUser" {
		// kube-apiserver shows the method with its internal Go field name.
		errs = append(errs, metav1.FieldNotSupported("spec.distinguisherMethod.type", struct{ Type string }{string(d.Type)}, []string{"ByNamespace", "ByUser"}))
	}
	if name := spec.PriorityLevelConfiguration.Name; name == "" {
		errs = append(errs, metav1.FieldRequired("spec.priorityLevelConfiguration.name", "must reference a priority level"))
	} else {
		for _, msg := range ValidateDNS1123Subdomain(name) {
			errs = append(errs, metav1.FieldInvalid("spec.priorityLevelConfiguration.name", name, msg))
		}
	}
	for i := range spec.Rules {
		errs = append(errs, flowSchemaRuleErrors(&spec.Rules[i], "spec.rules["+strconv.Itoa(i)+"]")...)
	}
	return errs
}

func flowSchemaRuleErrors(r *flowcontrolv1.PolicyRulesWithSubjects, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if len(r.Subjects) == 0 {
		errs = append(errs, metav1.FieldRequired(path+".subjects", "subjects must contain at least one value"))
	}
	for i := range r.Subjects {
		errs = append(errs, flowSchemaSubjectErrors(&r.Subjects[i], path+".subjects["+strconv.Itoa(i)+"]")...)
	}
	if len(r.ResourceRules) == 0 && len(r.NonResourceRules) == 0 {
		errs = append(errs, metav1.FieldRequired(path, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i, rr := range r.ResourceRules {
		p := path + ".resourceRules[" + strconv.Itoa(i) + "]"
		errs = append(errs, flowSchemaVerbErrors(rr.Verbs, p+".verbs")...)
		errs = append(errs, wildcardListErrors(rr.APIGroups, p+".apiGroups", "resource rules must supply at least one api group", "api groups")...)
		errs = append(errs, wildcardListErrors(rr.Resources, p+".resources", "resource rules must supply at least one resource", "resources")...)
		switch {
		case len(rr.Namespaces) == 0 && !rr.ClusterScope:
			errs = append(errs, metav1.FieldRequired(p+".namespaces", "resource rules that are not cluster scoped must supply at least one namespace"))
		case hasWildcard(rr.Namespaces):
			if len(rr.Namespaces) > 1 {
				errs = append(errs, metav1.FieldInvalid(p+".namespaces", rr.Namespaces, "if '*' is present, must not specify other namespaces"))
			}
		default:
			for j, ns := range rr.Namespaces {
				for _, msg := range ValidateDNS1123Label(ns) {
					errs = append(errs, metav1.FieldInvalid(p+".namespaces["+strconv.Itoa(j)+"]", ns,
						"each member of this list must be '*' or a DNS-1123 label; "+msg))
				}
			}
		}
	}
	for i, nr := range r.NonResourceRules {
		p := path + ".nonResourceRules[" + strconv.Itoa(i) + "]"
		errs = append(errs, flowSchemaVerbErrors(nr.Verbs, p+".verbs")...)
		switch {
		case len(nr.NonResourceURLs) == 0:
			errs = append(errs, metav1.FieldRequired(p+".nonResourceURLs", "nonResourceURLs must contain at least one value"))
		case hasWildcard(nr.NonResourceURLs):
			if len(nr.NonResourceURLs) > 1 {
				errs = append(errs, metav1.FieldInvalid(p+".nonResourceURLs", nr.NonResourceURLs, "if '*' is present, must not specify other non-resource URLs"))
			}
		default:
			for j, u := range nr.NonResourceURLs {
				if msg := nonResourceURLError(u); msg != "" {
					errs = append(errs, metav1.FieldInvalid(p+".nonResourceURLs["+strconv.Itoa(j)+"]", u, msg))
				}
			}
		}
	}
	return errs
}

func flowSchemaSubjectErrors(s *flowcontrolv1.Subject, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	forbid := func(present bool, field, kind string) {
		if present {
			errs = append(errs, metav1.FieldForbidden(path+"."+field, field+" is forbidden when subject kind is not '"+kind+"'"))
		}
	}
	switch s.Kind {
	case "ServiceAccount":
		if sa := s.ServiceAccount; sa == nil {
			errs = append(errs, metav1.FieldRequired(path+".serviceAccount", "serviceAccount is required when subject kind is 'ServiceAccount'"))
		} else {
			if sa.Name == "" {
				errs = append(errs, metav1.FieldRequired(path+".serviceAccount.name", ""))
			} else if sa.Name != "*" {
				for _, msg := range ValidateDNS1123Subdomain(sa.Name) {
					errs = append(errs, metav1.FieldInvalid(path+".serviceAccount.name", sa.Name, msg))
				}
			}
			if sa.Namespace == "" {
				errs = append(errs, metav1.FieldRequired(path+".serviceAccount.namespace", "must specify namespace for service account"))
			} else {
				for _, msg := range ValidateDNS1123Label(sa.Namespace) {
					errs = append(errs, metav1.FieldInvalid(path+".serviceAccount.namespace", sa.Namespace, msg))
				}
			}
		}
		forbid(s.User != nil, "user", "User")
		forbid(s.Group != nil, "group", "Group")
	case "User":
		if s.User == nil {
			errs = append(errs, metav1.FieldRequired(path+".user", "user is required when subject kind is 'User'"))
		} else if s.User.Name == "" {
			errs = append(errs, metav1.FieldRequired(path+".user.name", ""))
		}
		forbid(s.ServiceAccount != nil, "serviceAccount", "ServiceAccount")
		forbid(s.Group != nil, "group", "Group")
	case "Group":
		if s.Group == nil {
			errs = append(errs, metav1.FieldRequired(path+".group", "group is required when subject kind is 'Group'"))
		} else if s.Group.Name == "" {
			errs = append(errs, metav1.FieldRequired(path+".group.name", ""))
		}
		forbid(s.ServiceAccount != nil, "serviceAccount", "ServiceAccount")
		forbid(s.User != nil, "user", "User")
	default:
		errs = append(errs, metav1.FieldNotSupported(path+".kind", string(s.Kind), []string{"Group", "ServiceAccount", "User"}))
	}
	return errs
}

func flowSchemaVerbErrors(verbs []string, path string) metav1.FieldErrors {
	switch {
	case len(verbs) == 0:
		return metav1.FieldErrors{metav1.FieldRequired(path, "verbs must contain at least one value")}
	case hasWildcard(verbs):
		if len(verbs) > 1 {
			return metav1.FieldErrors{metav1.FieldInvalid(path, verbs, "if '*' is present, must not specify other verbs")}
		}
		return nil
	}
	for _, v := range verbs {
		known := false
		for _, k := range flowcontrolVerbs {
			known = known || v == k
		}
		if !known {
			return metav1.FieldErrors{metav1.FieldNotSupported(path, verbs, flowcontrolVerbs)}
		}
	}
	return nil
}

// wildcardListErrors checks a required list that may be just "*".
func wildcardListErrors(list []string, path, required, what string) metav1.FieldErrors {
	switch {
	case len(list) == 0:
		return metav1.FieldErrors{metav1.FieldRequired(path, required)}
	case len(list) > 1 && hasWildcard(list):
		return metav1.FieldErrors{metav1.FieldInvalid(path, list, "if '*' is present, must not specify other "+what)}
	}
	return nil
}

func hasWildcard(list []string) bool {
	for _, s := range list {
		if s == "*" {
			return true
		}
	}
	return false
}

// nonResourceURLError is kube-apiserver's message for a non-resource URL a
// FlowSchema may not match: it starts with a slash, has no white-space or
// double slash, and a wildcard only as its last segment.
func nonResourceURLError(u string) string {
	switch {
	case u == "":
		return "must not be empty"
	case u == "/":
		return ""
	case u[0] != '/':
		return "must start with slash"
	case strings.Contains(u, " "):
		return "must not contain white-space"
	case strings.Contains(u, "//"):
		return "must not contain double slash"
	}
	stars := 0
	for _, c := range u {
		if c == '*' {
			stars++
		}
	}
	if stars > 1 || (stars == 1 && (len(u) < 2 || u[len(u)-2:] != "/*")) {
		return "wildcard can only do suffix matching"
	}
	return ""
}

func validatePriorityLevel(o, _ Object) metav1.FieldErrors {
	pl := o.(*flowcontrolv1.PriorityLevelConfiguration)
	spec := &pl.Spec
	var errs metav1.FieldErrors
	if (pl.Name == priorityLevelExempt) != (spec.Type == plTypeExempt) {
		errs = append(errs, metav1.FieldInvalid("spec.type", string(spec.Type), "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	switch spec.Type {
	case plTypeExempt:
		if spec.Limited != nil {
			errs = append(errs, metav1.FieldForbidden("spec.limited", ""))
		}
		if e := spec.Exempt; e != nil {
			if e.NominalConcurrencyShares != nil && *e.NominalConcurrencyShares < 0 {
				errs = append(errs, metav1.FieldInvalid("spec.exempt.nominalConcurrencyShares", int64(*e.NominalConcurrencyShares), "must be a non-negative integer"))
			}
			errs = append(errs, lendablePercentErrors(e.LendablePercent, "spec.exempt.lendablePercent")...)
		}
	case plTypeLimited:
		if l := spec.Limited; l == nil {
			errs = append(errs, metav1.FieldRequired("spec.limited", ""))
		} else {
			errs = append(errs, limitedErrors(l)...)
		}
		if spec.Exempt != nil {
			errs = append(errs, metav1.FieldForbidden("spec.exempt", ""))
		}
	case "":
		errs = append(errs, metav1.FieldRequired("spec.type", ""))
	default:
		errs = append(errs, metav1.FieldNotSupported("spec.type", string(spec.Type), []string{plTypeExempt, plTypeLimited}))
	}
	return errs
}

func limitedErrors(l *flowcontrolv1.LimitedPriorityLevelConfiguration) metav1.FieldErrors {
	const path = "spec.limited"
	var errs metav1.FieldErrors
	if l.NominalConcurrencyShares != nil && *l.NominalConcurrencyShares < 0 {
		errs = append(errs, metav1.FieldInvalid(path+".nominalConcurrencyShares", int64(*l.NominalConcurrencyShares), "must be a non-negative integer"))
	}
	lr := l.LimitResponse
	switch lr.Type {
	case "Reject":
		if lr.Queuing != nil {
			errs = append(errs, metav1.FieldForbidden(path+".limitResponse.queuing", ""))
		}
	case "Queue":
		if q := lr.Queuing; q == nil {
			errs = append(errs, metav1.FieldRequired(path+".limitResponse.queuing", ""))
		} else {
			errs = append(errs, queuingErrors(q, path+".limitResponse.queuing")...)
		}
	case "":
		errs = append(errs, metav1.FieldRequired(path+".limitResponse.type", ""))
	default:
		errs = append(errs, metav1.FieldNotSupported(path+".limitResponse.type", string(lr.Type), []string{"Queue", "Reject"}))
	}
	errs = append(errs, lendablePercentErrors(l.LendablePercent, path+".lendablePercent")...)
	if b := l.BorrowingLimitPercent; b != nil && *b < 0 {
		errs = append(errs, metav1.FieldInvalid(path+".borrowingLimitPercent", int64(*b), "if specified, must be a non-negative integer"))
	}
	return errs
}

func lendablePercentErrors(p *int32, path string) metav1.FieldErrors {
	if p != nil && (*p < 0 || *p > 100) {
		return metav1.FieldErrors{metav1.FieldInvalid(path, int64(*p), "must be between 0 and 100, inclusive")}
	}
	return nil
}

// maxShuffleShardingBits is the entropy a queue assignment may need at
// most: a hand of handSize queues out of queues takes about
// handSize*log2(queues) bits of a 64-bit hash.
const maxShuffleShardingBits = 60

func queuingErrors(q *flowcontrolv1.QueuingConfiguration, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if q.QueueLengthLimit <= 0 {
		errs = append(errs, metav1.FieldInvalid(path+".queueLengthLimit", int64(q.QueueLengthLimit), "must be positive"))
	}
	if q.Queues <= 0 {
		errs = append(errs, metav1.FieldInvalid(path+".queues", int64(q.Queues), "must be positive"))
	} else if q.Queues > 10_000_000 {
		errs = append(errs, metav1.FieldInvalid(path+".queues", int64(q.Queues), "must not be greater than 10000000"))
	}
	switch {
	case q.HandSize <= 0:
		errs = append(errs, metav1.FieldInvalid(path+".handSize", int64(q.HandSize), "must be positive"))
	case q.HandSize > q.Queues:
		errs = append(errs, metav1.FieldInvalid(path+".handSize", int64(q.HandSize), "should not be greater than queues ("+strconv.Itoa(int(q.Queues))+")"))
	default:
		if bits := int(math.Ceil(math.Log2(float64(q.Queues)) * float64(q.HandSize))); bits > maxShuffleShardingBits {
			errs = append(errs, metav1.FieldInvalid(path+".handSize", int64(q.HandSize), "required entropy bits of deckSize "+strconv.Itoa(int(q.Queues))+
				" and handSize "+strconv.Itoa(int(q.HandSize))+" should not be greater than "+strconv.Itoa(maxShuffleShardingBits)))
		}
	}
	return errs
}

var flowSchemaPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("PriorityLevel", "`name` is the name of the priority level configuration being referenced Required."),
		{Name: "MatchingPrecedence", Type: "string", Description: "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default."},
		col("DistinguisherMethod", "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string."),
		ageColumn(),
		col("MissingPL", "references a broken or non-existent PriorityLevelConfiguration"),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		fs := o.(*flowcontrolv1.FlowSchema)
		method := "<none>"
		if fs.Spec.DistinguisherMethod != nil {
			method = string(fs.Spec.DistinguisherMethod.Type)
		}
		// kube-apiserver's APF configuration controller sets the Dangling
		// condition; kapi runs none, and the cell is then "?".
		missing := "?"
		for _, c := range fs.Status.Conditions {
			if c.Type == "Dangling" {
				missing = string(c.Status)
			}
		}
		return []any{fs.Name, fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), method,
			Age(fs.CreationTimestamp, now), missing}, nil
	},
	Less: func(a, b Object) bool {
		x, y := a.(*flowcontrolv1.FlowSchema), b.(*flowcontrolv1.FlowSchema)
		if x.Spec.MatchingPrecedence != y.Spec.MatchingPrecedence {
			return x.Spec.MatchingPrecedence < y.Spec.MatchingPrecedence
		}
		return x.Name < y.Name
	},
}

var priorityLevelPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Type", "`type` indicates whether this priority level is subject to limitation on request execution.  A value of `\"Exempt\"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `\"Limited\"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server's limited capacity is made available exclusively to this priority level. Required."),
		col("NominalConcurrencyShares", "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution seats available at this priority level. This is used both for requests dispatched from this priority level as well as requests dispatched from other priority levels borrowing seats from this level. The server's concurrency limit (ServerCL) is divided among the Limited priority levels in proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers mean a larger nominal concurrency limit, at the expense of every other priority level.\n\nIf not specified, this field defaults to a value of 30.\n\nSetting this field to zero supports the construction of a \"jail\" for this priority level that is used to hold some request(s)"),
		col("Queues", "`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64."),
		col("HandSize", "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8."),
		col("QueueLengthLimit", "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50."),
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		pl := o.(*flowcontrolv1.PriorityLevelConfiguration)
		var ncs, queues, hand, qlen any = "<none>", "<none>", "<none>", "<none>"
		if l := pl.Spec.Limited; l != nil {
			if l.NominalConcurrencyShares != nil {
				ncs = int64(*l.NominalConcurrencyShares)
			}
			if q := l.LimitResponse.Queuing; q != nil {
				queues, hand, qlen = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
			}
		}
		return []any{pl.Name, string(pl.Spec.Type), ncs, queues, hand, qlen, Age(pl.CreationTimestamp, now)}, nil
	},
}
