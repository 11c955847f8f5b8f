package registry

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
)

func TestNameFuncs(t *testing.T) {
	long := strings.Repeat("a", 64)
	for _, tc := range []struct {
		fn     NameFunc
		name   string
		prefix bool
		want   []string // substrings of each message, in order
	}{
		{NameIsDNSSubdomain, "a.b-c", false, nil},
		{NameIsDNSSubdomain, "Bad_Name", false, []string{"RFC 1123 subdomain"}},
		{NameIsDNSSubdomain, strings.Repeat("a", 254), false, []string{"no more than 253 characters"}},
		{NameIsDNSSubdomain, "web-", true, nil},
		{NameIsDNSSubdomain, "web-", false, []string{"RFC 1123 subdomain"}},
		{NameIsDNSSubdomain, "-", true, []string{"RFC 1123 subdomain"}},
		{NameIsDNSSubdomain, "A-", true, nil}, // masked to "a", as kube-apiserver does
		{NameIsDNSLabel, "a.b", false, []string{"must not contain dots"}},
		{NameIsDNSLabel, "1abc", false, nil},
		{NameIsDNSLabel, long, false, []string{"no more than 63 characters"}},
		{NameIsDNSLabel, "A_b", false, []string{"RFC 1123 label"}},
		{NameIsDNS1035Label, "1abc", false, []string{"DNS-1035 label"}},
		{NameIsPathSegment, "Abc_x! y", false, nil},
		{NameIsPathSegment, "..", false, []string{"may not be '..'"}},
		{NameIsPathSegment, "a/%", false, []string{"may not contain '/'", "may not contain '%'"}},
		{NameIsPathSegment, "..", true, nil},
	} {
		got := tc.fn(tc.name, tc.prefix)
		if len(got) != len(tc.want) {
			t.Errorf("%q (prefix %v): %q, want %q", tc.name, tc.prefix, got, tc.want)
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], tc.want[i]) {
				t.Errorf("%q (prefix %v): message %d %q lacks %q", tc.name, tc.prefix, i, got[i], tc.want[i])
			}
		}
	}
}

func TestValidateQualifiedNameAndValue(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want []string
	}{
		{"app", nil},
		{"example.com/app", nil},
		{"Example.com/app", []string{"prefix part a lowercase RFC 1123 subdomain"}},
		{"/app", []string{"prefix part must be non-empty"}},
		{"a/", []string{"name part must be non-empty", "name part must consist of"}},
		{"a/b/c", []string{"a valid label key must consist of"}},
		{strings.Repeat("a", 64), []string{"name part must be no more than 63 bytes"}},
		{strings.Repeat("a", 254) + "/x", []string{"prefix part must be no more than 253 bytes"}},
	} {
		got := ValidateQualifiedName(tc.key)
		if len(got) != len(tc.want) {
			t.Errorf("%q: %q, want %q", tc.key, got, tc.want)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], tc.want[i]) {
				t.Errorf("%q: message %d %q, want prefix %q", tc.key, i, got[i], tc.want[i])
			}
		}
	}
	if got := ValidateLabelValue(""); got != nil {
		t.Errorf("empty value: %q", got)
	}
	if got := ValidateLabelValue("-" + strings.Repeat("a", 63)); len(got) != 2 || got[0] != "must be no more than 63 bytes" {
		t.Errorf("long bad value: %q", got)
	}
	for key, n := range map[string]int{"ok.key_1": 0, "..x": 1, ".": 1, "a b": 1, strings.Repeat("k", 254): 1} {
		if got := ValidateConfigMapKey(key); len(got) != n {
			t.Errorf("config key %q: %q", key, got)
		}
	}
}

func causes(errs metav1.FieldErrors) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field+": "+e.ErrorBody())
	}
	return out
}

func TestValidateObjectMeta(t *testing.T) {
	yes := true
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "c", Namespace: "ns",
		Finalizers: []string{"foo", "orphan", "foregroundDeletion"},
		OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "Event", Name: "e", UID: "u", Controller: &yes},
			{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "r", UID: "u2", Controller: &yes},
		},
		Annotations: map[string]string{"big": strings.Repeat("x", MaxAnnotationsSize)},
	}}
	got := causes(ValidateObjectMeta(cm, true, builtinMeta(NameIsDNSSubdomain)))
	want := []string{
		"metadata.annotations: Too long: may not be more than 262144 bytes",
		`metadata.ownerReferences[0]: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u","controller":true}: /v1, Kind=Event is disallowed from being an owner`,
		`metadata.ownerReferences: Invalid value: [{"apiVersion":"v1","kind":"Event","name":"e","uid":"u","controller":true},{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"r","uid":"u2","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for Event/e and ReplicaSet/r`,
		`metadata.finalizers: Invalid value: ["foo","orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set`,
		`metadata.finalizers[0]: Invalid value: "foo": name is neither a standard finalizer name nor is it fully qualified`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("\n got  %q\n want %q", got, want)
	}
	// Custom resources: no standard-finalizer rule, a warning instead.
	cm.Annotations, cm.OwnerReferences, cm.Finalizers = nil, nil, []string{"foo", "example.com/x"}
	if got := ValidateObjectMeta(cm, true, MetaRules{}); len(got) != 0 {
		t.Errorf("custom rules: %q", causes(got))
	}
	if w := FinalizerWarnings(cm, nil); len(w) != 1 || !strings.Contains(w[0], `metadata.finalizers: "foo": prefer a domain-qualified`) {
		t.Errorf("warnings %q", w)
	}
	old := cm.DeepCopy()
	if w := FinalizerWarnings(cm, old); len(w) != 0 {
		t.Errorf("warnings for kept finalizers %q", w)
	}
	// Cluster-scoped kinds have no namespace.
	if got := causes(ValidateObjectMeta(cm, false, MetaRules{})); fmt.Sprint(got) != "[metadata.namespace: Forbidden: not allowed on this type]" {
		t.Errorf("cluster-scoped: %q", got)
	}
}

func TestValidateObjectMetaUpdate(t *testing.T) {
	now := metav1.Now()
	old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", UID: "u", ResourceVersion: "1",
		Generation: 3, DeletionTimestamp: &now, Finalizers: []string{"a.io/x"}}}
	next := old.DeepCopy()
	next.Finalizers = []string{"a.io/x", "c.io/z", "b.io/y"}
	next.Generation = 2
	next.UID = "other"
	got := causes(ValidateObjectMetaUpdate(next, old, MetaRules{}))
	want := []string{
		`metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b.io/y", "c.io/z"}`,
		"metadata.generation: Invalid value: 2: must not be decremented",
		`metadata.uid: Invalid value: "other": field is immutable`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("\n got  %q\n want %q", got, want)
	}
}

func TestGenerationChanged(t *testing.T) {
	g := Builtin()
	deploy := g.Get("apps", "v1", "deployments")
	d := &appsv1.Deployment{}
	d2 := d.DeepCopy()
	d2.Annotations = map[string]string{"a": "b"}
	if !deploy.GenerationChanged(d, d2) {
		t.Error("a deployment's annotations do not bump its generation")
	}
	d3 := d.DeepCopy()
	d3.Labels = map[string]string{"a": "b"}
	if deploy.GenerationChanged(d, d3) {
		t.Error("a deployment's labels bump its generation")
	}
	pods := g.Get("", "v1", "pods")
	p, p2 := minimalPod(), minimalPod()
	p2.Spec.ActiveDeadlineSeconds = new(int64(5))
	if !pods.GenerationChanged(p, p2) || pods.GenerationChanged(p, minimalPod()) {
		t.Error("a pod's generation does not follow its spec")
	}
	cms := g.Get("", "v1", "configmaps")
	if cms.GenerationChanged(&corev1.ConfigMap{}, &corev1.ConfigMap{Data: map[string]string{"a": "b"}}) {
		t.Error("a configmap has a generation")
	}
	for _, status := range []bool{true, false} {
		r := &Resource{Generation: true, Custom: true, StatusSubresource: status}
		a := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"n": int64(1)}}}
		b := a.DeepCopy()
		b.Object["status"] = map[string]any{"ready": true}
		if got := r.GenerationChanged(a, b); got == status {
			t.Errorf("status subresource %v: a status change bumps the generation: %v", status, got)
		}
		c := a.DeepCopy()
		c.Object["metadata"] = map[string]any{"labels": map[string]any{"a": "b"}}
		if r.GenerationChanged(a, c) {
			t.Errorf("status subresource %v: metadata bumps the generation", status)
		}
	}
}

func TestValidateConfigMapAndSecret(t *testing.T) {
	cm := &corev1.ConfigMap{Data: map[string]string{"b key": "1", "dup": "x"}, BinaryData: map[string][]byte{"dup": {1}}}
	got := causes(validateConfigMap(cm, nil))
	if len(got) != 2 || !strings.HasPrefix(got[0], "data[b key]: Invalid value") || got[1] != `data[dup]: Invalid value: "dup": duplicate of key present in binaryData` {
		t.Errorf("configmap: %q", got)
	}
	yes := true
	frozen := &corev1.ConfigMap{Immutable: &yes, Data: map[string]string{"a": "1"}}
	if got := causes(validateConfigMap(&corev1.ConfigMap{Data: map[string]string{"a": "2"}}, frozen)); len(got) != 2 {
		t.Errorf("immutable configmap: %q", got)
	}
	for typ, want := range map[corev1.SecretType][]string{
		corev1.SecretTypeTLS:                 {"data[tls.crt]: Required value", "data[tls.key]: Required value"},
		corev1.SecretTypeBasicAuth:           {"data[username]: Required value", "data[password]: Required value"},
		corev1.SecretTypeSSHAuth:             {"data[ssh-privatekey]: Required value"},
		corev1.SecretTypeDockerConfigJson:    {"data[.dockerconfigjson]: Required value"},
		corev1.SecretTypeServiceAccountToken: {"metadata.annotations[kubernetes.io/service-account.name]: Required value"},
		corev1.SecretTypeOpaque:              nil,
	} {
		if got := causes(validateSecret(&corev1.Secret{Type: typ}, nil)); !slices.Equal(got, want) {
			t.Errorf("secret %s: %q, want %q", typ, got, want)
		}
	}
	bad := &corev1.Secret{Type: corev1.SecretTypeDockercfg, Data: map[string][]byte{".dockercfg": []byte("{")}}
	if got := causes(validateSecret(bad, nil)); len(got) != 1 || !strings.HasPrefix(got[0], `data[.dockercfg]: Invalid value: "<secret contents redacted>": unexpected end of JSON input`) {
		t.Errorf("dockercfg: %q", got)
	}
	if got := causes(validateSecret(&corev1.Secret{Type: "a"}, &corev1.Secret{Type: "b"})); len(got) != 1 || got[0] != `type: Invalid value: "a": field is immutable` {
		t.Errorf("secret type change: %q", got)
	}
}
