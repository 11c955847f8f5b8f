package registry

import (
	"encoding/json"
	"slices"
	"testing"

	flowcontrolv1 "github.com/kapi-dev/kapi/api/flowcontrol/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	networkingv1 "github.com/kapi-dev/kapi/api/networking/v1"
	nodev1 "github.com/kapi-dev/kapi/api/node/v1"
	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
	schedulingv1 "github.com/kapi-dev/kapi/api/scheduling/v1"
)

// The validation cases of the rbac, networking, node, scheduling and
// flowcontrol kinds: each object was sent to kube-apiserver v1.37.2
// (dry run), and want is its answer's causes (but those of metadata,
// checked by ValidateObjectMeta), in order.

// validationCase is an object as JSON, defaulted with def (when set) and
// validated with validate as a create (old empty) or an update of old.
type validationCase struct {
	name     string
	obj, old string
	want     []string
}

func runValidationCases[T any, PT interface {
	*T
	Object
}](t *testing.T, def func(Object), validate func(obj, old Object) metav1.FieldErrors, cases []validationCase) {
	t.Helper()
	decode := func(t *testing.T, s string) Object {
		var v T
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("decoding %s: %v", s, err)
		}
		o := PT(&v)
		if def != nil {
			def(o)
		}
		return o
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := decode(t, c.obj)
			var old Object
			if c.old != "" {
				old = decode(t, c.old)
			}
			var got []string
			for _, e := range validate(o, old) {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("causes\n got  %q\n want %q", got, c.want)
			}
		})
	}
}

func TestValidateRBAC(t *testing.T) {
	runValidationCases[rbacv1.Role](t, nil, validateRole, []validationCase{
		{name: "valid", obj: `{"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`},
		{name: "rules", obj: `{"rules":[{},{"verbs":["get"],"apiGroups":[""],"resources":["a","b"],"resourceNames":["x"]},{"verbs":[],"nonResourceURLs":["/x"],"apiGroups":["a"]}]}`, want: []string{
			"rules[0].apiGroups: Required value: resource rules must supply at least one api group",
			"rules[0].resources: Required value: resource rules must supply at least one resource",
			`rules[2].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to non-resource URLs`,
			`rules[2].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs`,
			"rules[0].verbs: Required value",
			"rules[2].verbs: Required value",
		}},
	})
	runValidationCases[rbacv1.ClusterRole](t, nil, validateClusterRole, []validationCase{
		{name: "non-resource", obj: `{"rules":[{"verbs":["get"],"nonResourceURLs":["/healthz"]}]}`},
		{name: "aggregation", obj: `{"rules":[{"verbs":["get"],"nonResourceURLs":["/x"],"resources":["pods"]}],"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"bad key":"x"}}]}}`, want: []string{
			`rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs`,
			`aggregationRule.clusterRoleSelectors[0].matchLabels: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			"aggregationRule.clusterRoleSelectors[0]: Invalid value: null: invalid label selector.",
		}},
	})
	runValidationCases[rbacv1.ClusterRole](t, nil, validateClusterRole, []validationCase{
		{name: "no selectors", obj: `{"aggregationRule":{"clusterRoleSelectors":[]}}`, want: []string{
			"aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil",
		}},
		{name: "expression without values", obj: `{"aggregationRule":{"clusterRoleSelectors":[{"matchExpressions":[{"key":"a","operator":"In"}]}]}}`, want: []string{
			"aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
			"aggregationRule.clusterRoleSelectors[0]: Invalid value: null: invalid label selector.",
		}},
	})
	runValidationCases[rbacv1.RoleBinding](t, defaultRoleBinding, validateRoleBinding, []validationCase{
		{name: "defaulted groups", obj: `{"roleRef":{"kind":"Role","name":"r"},"subjects":[{"kind":"User","name":"u"},{"kind":"Group","name":"g"},{"kind":"ServiceAccount","name":"default"}]}`},
		{name: "everything", obj: `{"roleRef":{"apiGroup":"foo","kind":"Role","name":"a/b"},"subjects":[{"kind":"ServiceAccount","name":"Bad_Name","apiGroup":"x"},{"kind":"User","name":"","apiGroup":"y"},{"kind":"Group","name":""},{"kind":"User","name":"u","apiGroup":"rbac.authorization.k8s.io"}]}`, want: []string{
			`roleRef.apiGroup: Unsupported value: "foo": supported values: "rbac.authorization.k8s.io"`,
			`roleRef.name: Invalid value: "a/b": may not contain '/'`,
			`subjects[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			`subjects[0].apiGroup: Unsupported value: "x": supported values: ""`,
			`subjects[1].apiGroup: Unsupported value: "y": supported values: "rbac.authorization.k8s.io"`,
			"subjects[1].name: Required value",
			"subjects[2].name: Required value",
		}},
		{name: "capture", obj: `{"subjects":[{"kind":"Robot","name":""}]}`, want: []string{
			`roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole"`,
			`subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"`,
			"subjects[0].name: Required value",
			"roleRef.name: Required value",
		}},
		{name: "roleRef changed", old: `{"roleRef":{"kind":"ClusterRole","name":"view"}}`, obj: `{"roleRef":{"kind":"ClusterRole","name":"edit"}}`, want: []string{
			`roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: field is immutable`,
		}},
		{name: "subjects changed", old: `{"roleRef":{"kind":"ClusterRole","name":"view"}}`, obj: `{"roleRef":{"kind":"ClusterRole","name":"view"},"subjects":[{"kind":"User","name":"u"}]}`},
	})
	runValidationCases[rbacv1.ClusterRoleBinding](t, defaultClusterRoleBinding, validateClusterRoleBinding, []validationCase{
		{name: "capture", obj: `{"roleRef":{"kind":"Role","name":"x"},"subjects":[{"kind":"ServiceAccount","name":"default"}]}`, want: []string{
			`roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"`,
			"subjects[0].namespace: Required value",
		}},
	})
}

func TestDefaultBinding(t *testing.T) {
	var b rbacv1.ClusterRoleBinding
	if err := json.Unmarshal([]byte(`{"roleRef":{"kind":"ClusterRole","name":"x"},"subjects":[{"kind":"User","name":"u"},{"kind":"Group","name":"g","apiGroup":"rbac.authorization.k8s.io"},{"kind":"ServiceAccount","name":"s","namespace":"n"},{"kind":"Robot","name":"r"}]}`), &b); err != nil {
		t.Fatal(err)
	}
	defaultClusterRoleBinding(&b)
	sameJSON(t, struct {
		R rbacv1.RoleRef
		S []rbacv1.Subject
	}{b.RoleRef, b.Subjects}, struct {
		R rbacv1.RoleRef
		S []rbacv1.Subject
	}{rbacv1.RoleRef{APIGroup: rbacGroup, Kind: "ClusterRole", Name: "x"}, []rbacv1.Subject{
		{Kind: "User", APIGroup: rbacGroup, Name: "u"}, {Kind: "Group", APIGroup: rbacGroup, Name: "g"},
		{Kind: "ServiceAccount", Name: "s", Namespace: "n"}, {Kind: "Robot", Name: "r"},
	}})
}

func TestValidateNetworking(t *testing.T) {
	runValidationCases[networkingv1.NetworkPolicy](t, defaultNetworkPolicy, validateNetworkPolicy, []validationCase{
		{name: "capture", obj: `{"spec":{"podSelector":{"matchLabels":{"bad key!":"x"}},"policyTypes":["Sideways"],"ingress":[{"ports":[{"port":0,"protocol":"BOGUS"}],"from":[{"ipBlock":{"cidr":"bad"}}]}]}}`, want: []string{
			`spec.podSelector.matchLabels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			`spec.ingress[0].ports[0].protocol: Unsupported value: "BOGUS": supported values: "TCP", "UDP", "SCTP"`,
			"spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
			`spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "bad": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`,
			`spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"`,
		}},
		{name: "selectors ports peers", obj: `{"spec":{"podSelector":{"matchExpressions":[{"key":"a","operator":"In"},{"key":"b c","operator":"Exists","values":["x"]},{"key":"c","operator":"Bogus"}]},"ingress":[{"ports":[{"port":"http","endPort":5},{"port":10,"endPort":5},{"endPort":3}],"from":[{},{"podSelector":{},"ipBlock":{"cidr":"10.0.0.0/8","except":["11.0.0.0/24","010.0.0.0/24"]}},{"ipBlock":{"cidr":""}}]}],"policyTypes":["Ingress","Egress","Ingress"]}}`, want: []string{
			"spec.podSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
			"spec.podSelector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
			`spec.podSelector.matchExpressions[1].key: Invalid value: "b c": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			`spec.podSelector.matchExpressions[2].operator: Invalid value: "Bogus": not a valid selector operator`,
			"spec.ingress[0].ports[0].endPort: Invalid value: 5: may not be specified when `port` is non-numeric",
			"spec.ingress[0].ports[1].endPort: Invalid value: 5: must be greater than or equal to `port`",
			"spec.ingress[0].ports[2].endPort: Invalid value: 3: may not be specified when `port` is not specified",
			"spec.ingress[0].from[0]: Required value: must specify a peer",
			"spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: \"11.0.0.0/24\": must be a strict subset of `cidr`",
			`spec.ingress[0].from[1].ipBlock.except[1]: Invalid value: "010.0.0.0/24": must not have leading 0s in IP or prefix length`,
			"spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer",
			`spec.policyTypes: Invalid value: ["Ingress","Egress","Ingress"]: may not specify more than two policyTypes`,
			"spec.ingress[0].from[2].ipBlock.cidr: Required value",
		}},
	})
	runValidationCases[networkingv1.Ingress](t, nil, validateIngress, []validationCase{
		{name: "empty spec", obj: `{"spec":{}}`, want: []string{"spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"}},
		{name: "capture", obj: `{"spec":{"rules":[{"host":"Bad_Host","http":{"paths":[{"path":"relative"}]}}]}}`, want: []string{
			`spec.rules[0].host: Invalid value: "Bad_Host": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			"spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified",
		}},
		{name: "wildcard host and backends", obj: `{"spec":{"defaultBackend":{"service":{"name":"web"}},"rules":[{"host":"*.example.com","http":{"paths":[{"path":"/a//b","pathType":"Prefix","backend":{"service":{"name":"web","port":{"number":80}}}}]}}]}}`, want: []string{
			"spec.defaultBackend: Required value: port name or number is required",
			`spec.rules[0].http.paths[0].path: Invalid value: "/a//b": must not contain '//'`,
		}},
	})
	runValidationCases[networkingv1.Ingress](t, nil, validateIngress, []validationCase{
		{name: "status", old: `{"spec":{"defaultBackend":{"service":{"name":"web","port":{"number":80}}}},"status":{"loadBalancer":{"ingress":[{"ip":"010.0.0.1"}]}}}`,
			obj: `{"spec":{"defaultBackend":{"service":{"name":"web","port":{"number":80}}}},"status":{"loadBalancer":{"ingress":[{"ip":"010.0.0.1"},{"ip":"bad"},{"hostname":"192.0.2.1"}]}}}`, want: []string{
				`status.loadBalancer.ingress[1].ip: Invalid value: "bad": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
				`status.loadBalancer.ingress[2].hostname: Invalid value: "192.0.2.1": must be a DNS name, not an IP address`,
			}},
	})
	runValidationCases[networkingv1.IngressClass](t, defaultIngressClass, validateIngressClass, []validationCase{
		{name: "capture", obj: `{"spec":{"controller":"Not A Controller","parameters":{"kind":"","name":"x","scope":"Namespace"}}}`, want: []string{
			`spec.controller: Invalid value: "Not A Controller": must be a domain-prefixed path (such as "acme.io/foo")`,
			"spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'",
			"spec.parameters.kind: Required value",
		}},
		{name: "defaulted scope", obj: `{"spec":{"controller":"example.com/c","parameters":{"kind":"K","name":"x"}}}`},
		{name: "controller changed", old: `{"spec":{"controller":"example.com/c"}}`, obj: `{"spec":{"controller":"example.com/other"}}`, want: []string{
			`spec.controller: Invalid value: "example.com/other": field is immutable`,
		}},
	})
	runValidationCases[networkingv1.IPAddress](t, nil, validateIPAddress, []validationCase{
		{name: "no parentRef", obj: `{"spec":{}}`, want: []string{"spec.parentRef: Required value"}},
		{name: "parentRef", obj: `{"spec":{"parentRef":{"group":"Bad","resource":"a/b","namespace":"x/y"}}}`, want: []string{
			`spec.parentRef.group: Invalid value: "Bad": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			`spec.parentRef.resource: Invalid value: "a/b": may not contain '/'`,
			`spec.parentRef.namespace: Invalid value: "x/y": may not contain '/'`,
			"spec.parentRef.name: Required value",
		}},
		{name: "parentRef changed", old: `{"spec":{"parentRef":{"resource":"services","name":"a"}}}`, obj: `{"spec":{"parentRef":{"resource":"services","name":"b"}}}`, want: []string{
			"spec.parentRef: Invalid value: null: field is immutable",
		}},
	})
	runValidationCases[networkingv1.ServiceCIDR](t, nil, validateServiceCIDR, []validationCase{
		{name: "empty", obj: `{"spec":{}}`, want: []string{"spec.cidrs: Required value: at least one CIDR required"}},
		{name: "too many", obj: `{"spec":{"cidrs":["10.99.2.0/24","10.99.3.0/24","fd00:98::/112"]}}`, want: []string{
			`spec.cidrs: Invalid value: {"CIDRs":["10.99.2.0/24","10.99.3.0/24","fd00:98::/112"]}: may only hold up to 2 values`,
		}},
		{name: "invalid", obj: `{"spec":{"cidrs":["bad","10.99.2.0/33"]}}`, want: []string{
			`spec.cidrs[0]: Invalid value: "bad": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`,
			`spec.cidrs[1]: Invalid value: "10.99.2.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`,
		}},
		{name: "not canonical", obj: `{"spec":{"cidrs":["10.99.2.1/24","FD00::/112"]}}`, want: []string{
			`spec.cidrs[0]: Invalid value: "10.99.2.1/24": must not have bits set beyond the prefix length`,
			`spec.cidrs[1]: Invalid value: "FD00::/112": must be in canonical form ("fd00::/112")`,
		}},
		{name: "mapped and leading zeros", obj: `{"spec":{"cidrs":["::ffff:10.0.0.0/120","010.1.0.0/16"]}}`, want: []string{
			`spec.cidrs[0]: Invalid value: "::ffff:10.0.0.0/120": must not have an IPv4-mapped IPv6 address`,
			`spec.cidrs[1]: Invalid value: "010.1.0.0/16": must not have leading 0s in IP or prefix length`,
			`spec.cidrs: Invalid value: ["::ffff:10.0.0.0/120","010.1.0.0/16"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64`,
		}},
		{name: "changed", old: `{"spec":{"cidrs":["10.99.0.0/24"]}}`, obj: `{"spec":{"cidrs":["10.98.0.0/24"]}}`, want: []string{
			`spec.cidrs[0]: Invalid value: "10.98.0.0/24": field is immutable`,
		}},
		{name: "made dual-stack", old: `{"spec":{"cidrs":["10.99.0.0/24"]}}`, obj: `{"spec":{"cidrs":["10.99.0.0/24","fd00::/112"]}}`},
		{name: "shrunk", old: `{"spec":{"cidrs":["10.99.0.0/24","fd00::/112"]}}`, obj: `{"spec":{"cidrs":["10.99.0.0/24"]}}`, want: []string{
			`spec.cidrs: Invalid value: ["10.99.0.0/24"]: field is immutable`,
		}},
	})
}

func TestDefaultNetworkPolicy(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"spec":{"podSelector":{}}}`, `{"podSelector":{},"policyTypes":["Ingress"]}`},
		{`{"spec":{"podSelector":{},"egress":[{"ports":[{"port":53},{"protocol":"UDP","port":53}]}]}}`,
			`{"podSelector":{},"egress":[{"ports":[{"protocol":"TCP","port":53},{"protocol":"UDP","port":53}]}],"policyTypes":["Ingress","Egress"]}`},
		{`{"spec":{"podSelector":{},"egress":[{}],"policyTypes":["Egress"]}}`, `{"podSelector":{},"egress":[{}],"policyTypes":["Egress"]}`},
	} {
		var np networkingv1.NetworkPolicy
		if err := json.Unmarshal([]byte(c.in), &np); err != nil {
			t.Fatal(err)
		}
		defaultNetworkPolicy(&np)
		if got, _ := json.Marshal(np.Spec); string(got) != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.in, got, c.want)
		}
	}
}

func TestValidateRuntimeClass(t *testing.T) {
	runValidationCases[nodev1.RuntimeClass](t, nil, validateRuntimeClass, []validationCase{
		{name: "no handler", obj: `{}`, want: []string{"handler: Required value"}},
		{name: "everything", obj: `{"handler":"Bad_H","overhead":{"podFixed":{"cpu":"-1"}},"scheduling":{"nodeSelector":{"bad key":"x"},"tolerations":[{"key":"","operator":"Equal","value":"v","effect":"Bogus"},{"key":"k","operator":"Exists","value":"v"},{"key":"bad key","operator":"Frob","tolerationSeconds":5,"effect":"NoSchedule"}]}}`, want: []string{
			`overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0`,
			`scheduling.nodeSelector: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			"scheduling.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
			`scheduling.tolerations[0].effect: Unsupported value: "Bogus": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
			"scheduling.tolerations[1].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'",
			`scheduling.tolerations[2].key: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			"scheduling.tolerations[2].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
			`scheduling.tolerations[2].operator: Unsupported value: "Frob": supported values: "Equal", "Exists"`,
			`handler: Invalid value: "Bad_H": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
		}},
		{name: "handler changed", old: `{"handler":"runc"}`, obj: `{"handler":"crun"}`, want: []string{"handler: Invalid value: null: field is immutable"}},
	})
}

func TestValidatePriorityClass(t *testing.T) {
	runValidationCases[schedulingv1.PriorityClass](t, defaultPriorityClass, validatePriorityClass, []validationCase{
		{name: "valid", obj: `{"value":1000}`},
		{name: "capture", obj: `{"metadata":{"name":"kinds-bad"},"value":2000000000,"preemptionPolicy":"Sometimes"}`, want: []string{
			"value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
			`preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"`,
		}},
		{name: "unknown system name", obj: `{"metadata":{"name":"system-foo"},"value":5}`, want: []string{
			"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-foo is not a known system priority class",
		}},
		{name: "system value", obj: `{"metadata":{"name":"system-node-critical"},"value":5}`, want: []string{
			"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000",
		}},
		{name: "system global default", obj: `{"metadata":{"name":"system-cluster-critical"},"value":2000000000,"globalDefault":true}`, want: []string{
			"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: globalDefault of system-cluster-critical PriorityClass must be false",
		}},
		{name: "system class", obj: `{"metadata":{"name":"system-cluster-critical"},"value":2000000000}`},
		{name: "value changed", old: `{"value":1000}`, obj: `{"value":2000}`, want: []string{"value: Forbidden: may not be changed in an update."}},
		{name: "policy changed", old: `{"value":1000}`, obj: `{"value":1000,"preemptionPolicy":"Never"}`, want: []string{`preemptionPolicy: Invalid value: "Never": field is immutable`}},
	})
}

func TestValidateFlowControl(t *testing.T) {
	runValidationCases[flowcontrolv1.FlowSchema](t, defaultFlowSchema, validateFlowSchema, []validationCase{
		{name: "capture", obj: `{"spec":{}}`, want: []string{"spec.priorityLevelConfiguration.name: Required value: must reference a priority level"}},
		{name: "too high", obj: `{"spec":{"matchingPrecedence":10001,"priorityLevelConfiguration":{"name":"x"}}}`, want: []string{"spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000"}},
		{name: "exempt precedence", obj: `{"metadata":{"name":"exempt"},"spec":{"matchingPrecedence":1,"priorityLevelConfiguration":{"name":"exempt"}}}`},
		{name: "everything", obj: `{"spec":{"matchingPrecedence":1,"distinguisherMethod":{"type":"Bogus"},"priorityLevelConfiguration":{"name":"Bad_Name"},"rules":[{"subjects":[{"kind":"ServiceAccount","serviceAccount":{"name":""},"user":{"name":"x"}},{"kind":"User"},{"kind":"Robot"}],"resourceRules":[{"verbs":["*","get"],"apiGroups":[],"resources":["*","x"]},{"verbs":["frob"],"apiGroups":["*"],"resources":["p"],"namespaces":["Bad"]}]},{"subjects":[],"nonResourceRules":[{"verbs":[],"nonResourceURLs":["x","/a/*/b"]}]}]}}`, want: []string{
			"spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
			`spec.distinguisherMethod.type: Unsupported value: {"Type":"Bogus"}: supported values: "ByNamespace", "ByUser"`,
			`spec.priorityLevelConfiguration.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			"spec.rules[0].subjects[0].serviceAccount.name: Required value",
			"spec.rules[0].subjects[0].serviceAccount.namespace: Required value: must specify namespace for service account",
			"spec.rules[0].subjects[0].user: Forbidden: user is forbidden when subject kind is not 'User'",
			"spec.rules[0].subjects[1].user: Required value: user is required when subject kind is 'User'",
			`spec.rules[0].subjects[2].kind: Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User"`,
			`spec.rules[0].resourceRules[0].verbs: Invalid value: ["*","get"]: if '*' is present, must not specify other verbs`,
			"spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group",
			`spec.rules[0].resourceRules[0].resources: Invalid value: ["*","x"]: if '*' is present, must not specify other resources`,
			"spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace",
			`spec.rules[0].resourceRules[1].verbs: Unsupported value: ["frob"]: supported values: "create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"`,
			`spec.rules[0].resourceRules[1].namespaces[0]: Invalid value: "Bad": each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
			"spec.rules[1].subjects: Required value: subjects must contain at least one value",
			"spec.rules[1].nonResourceRules[0].verbs: Required value: verbs must contain at least one value",
			`spec.rules[1].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "x": must start with slash`,
			`spec.rules[1].nonResourceRules[0].nonResourceURLs[1]: Invalid value: "/a/*/b": wildcard can only do suffix matching`,
		}},
	})
	runValidationCases[flowcontrolv1.PriorityLevelConfiguration](t, defaultPriorityLevel, validatePriorityLevel, []validationCase{
		{name: "no type", obj: `{"spec":{}}`, want: []string{"spec.type: Required value"}},
		{name: "empty limited", obj: `{"spec":{"type":"Limited","limited":{}}}`, want: []string{"spec.limited.limitResponse.type: Required value"}},
		{name: "exempt not named exempt", obj: `{"metadata":{"name":"x"},"spec":{"type":"Exempt","exempt":{}}}`, want: []string{
			"spec.type: Invalid value: \"Exempt\": must be 'Exempt' if and only if `name` is 'exempt'",
		}},
		{name: "exempt", obj: `{"metadata":{"name":"exempt"},"spec":{"type":"Exempt","exempt":{}}}`},
		{name: "exempt with limited", obj: `{"metadata":{"name":"y"},"spec":{"type":"Exempt","limited":{"limitResponse":{"type":"Reject"}}}}`, want: []string{
			"spec.type: Invalid value: \"Exempt\": must be 'Exempt' if and only if `name` is 'exempt'",
			"spec.limited: Forbidden",
		}},
		{name: "limited values", obj: `{"spec":{"type":"Limited","limited":{"nominalConcurrencyShares":-1,"lendablePercent":101,"borrowingLimitPercent":-1,"limitResponse":{"type":"Queue","queuing":{"queues":4,"handSize":5,"queueLengthLimit":-1}}},"exempt":{}}}`, want: []string{
			"spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
			"spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -1: must be positive",
			"spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)",
			"spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
			"spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer",
			"spec.exempt: Forbidden",
		}},
		{name: "bogus type", obj: `{"spec":{"type":"Bogus"}}`, want: []string{`spec.type: Unsupported value: "Bogus": supported values: "Exempt", "Limited"`}},
		{name: "queue without queuing", obj: `{"spec":{"type":"Limited","limited":{"limitResponse":{"type":"Queue"}}}}`, want: []string{"spec.limited.limitResponse.queuing: Required value"}},
		{name: "reject with queuing", obj: `{"spec":{"type":"Limited","limited":{"limitResponse":{"type":"Reject","queuing":{}}}}}`, want: []string{"spec.limited.limitResponse.queuing: Forbidden"}},
		{name: "no limited", obj: `{"spec":{"type":"Limited"}}`, want: []string{"spec.limited: Required value"}},
	})
}

func TestDefaultPriorityLevel(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"type":"Limited","limited":{"limitResponse":{"type":"Reject"}}}`,
			`{"type":"Limited","limited":{"nominalConcurrencyShares":30,"limitResponse":{"type":"Reject"},"lendablePercent":0}}`},
		{`{"type":"Limited","limited":{"nominalConcurrencyShares":5,"lendablePercent":50,"limitResponse":{"type":"Queue","queuing":{"queues":16}}}}`,
			`{"type":"Limited","limited":{"nominalConcurrencyShares":5,"limitResponse":{"type":"Queue","queuing":{"queues":16,"handSize":8,"queueLengthLimit":50}},"lendablePercent":50}}`},
		{`{"type":"Exempt","exempt":{}}`, `{"type":"Exempt","exempt":{"nominalConcurrencyShares":0,"lendablePercent":0}}`},
	} {
		var pl flowcontrolv1.PriorityLevelConfiguration
		if err := json.Unmarshal([]byte(`{"spec":`+c.in+`}`), &pl); err != nil {
			t.Fatal(err)
		}
		defaultPriorityLevel(&pl)
		if got, _ := json.Marshal(pl.Spec); string(got) != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.in, got, c.want)
		}
	}
}

func TestValidateIPAndCIDR(t *testing.T) {
	for _, c := range []struct {
		value string
		want  []string
	}{
		{"192.0.2.20", nil},
		{"2001:db8::20", nil},
		{"kinds-bad", []string{"must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"}},
		{"2001:DB8:0::21", []string{`must be in canonical form ("2001:db8::21")`}},
		{"::ffff:10.0.0.1", []string{"must not be an IPv4-mapped IPv6 address"}},
		{"010.0.0.1", []string{"must not have leading 0s"}},
		{"fe80::1%eth0", []string{"must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"}},
		{"", []string{"must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"}},
	} {
		if got := ValidateIP(c.value); !slices.Equal(got, c.want) {
			t.Errorf("ValidateIP(%q) = %q, want %q", c.value, got, c.want)
		}
	}
	for _, c := range []struct {
		value string
		want  []string
	}{
		{"10.0.0.0/8", nil},
		{"fd00::/112", nil},
		{"bad", []string{"must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"}},
		{"10.99.2.0/33", []string{"must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"}},
		{"10.99.2.1/24", []string{"must not have bits set beyond the prefix length"}},
		{"FD00::/112", []string{`must be in canonical form ("fd00::/112")`}},
		{"::ffff:10.0.0.0/120", []string{"must not have an IPv4-mapped IPv6 address"}},
		{"010.1.0.0/16", []string{"must not have leading 0s in IP or prefix length"}},
		{"10.1.0.0/016", []string{"must not have leading 0s in IP or prefix length"}},
	} {
		if got := ValidateCIDR(c.value); !slices.Equal(got, c.want) {
			t.Errorf("ValidateCIDR(%q) = %q, want %q", c.value, got, c.want)
		}
	}
}

// FuzzValidateIPAndCIDR checks that the address parsers never panic, and
// that what they accept is canonical (its own canonical form).
func FuzzValidateIPAndCIDR(f *testing.F) {
	for _, s := range []string{"192.0.2.1", "2001:DB8::1", "010.0.0.1", "::ffff:1.2.3.4", "10.0.0.0/8", "10.0.0.1/24", "fe80::1%eth0/64", "1.2.3.4/033", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ValidateIP(s) == nil && NameIsIP(s, false) != nil {
			t.Errorf("NameIsIP disagrees with ValidateIP on %q", s)
		}
		if ValidateCIDR(s) == nil && cidrFamily(s) == 0 {
			t.Errorf("valid CIDR %q has no family", s)
		}
	})
}
