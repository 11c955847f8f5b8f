package registry

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/golden"
)

// The validators of kinds_validation.go give, for the invalid objects and
// immutable-field updates kube-apiserver v1.37.2 was sent
// (testdata/golden-1.37/kinds), exactly its details.causes: fields,
// reasons, messages and order. Creates are defaulted first
// (PrepareForCreate), as on the server; an update's old object is the
// create's captured answer, and its new one that with the captured merge
// patch applied.
func TestKindsValidationGolden(t *testing.T) {
	tests := []struct {
		capture  string
		resource string // group/resource
		validate func(obj, old Object) metav1.FieldErrors
		old      string // the create capture of the updated object
		// strategic: the patch is a strategic merge patch of a list keyed
		// by name (containers); messagePrefix: kube-apiserver's messages go
		// on with a dump kapi does not reproduce.
		strategic, messagePrefix bool
	}{
		{capture: "invalid-core-nodes", resource: "/nodes", validate: validateNode},
		{capture: "update-immutable-core-nodes", resource: "/nodes", validate: validateNode, old: "full-core-nodes"},
		{capture: "invalid-core-events", resource: "/events", validate: validateEvent},
		{capture: "invalid-coordination.k8s.io-leases", resource: "coordination.k8s.io/leases", validate: validateLease},
		{capture: "invalid-core-endpoints", resource: "/endpoints", validate: validateEndpoints},
		{capture: "invalid-discovery.k8s.io-endpointslices", resource: "discovery.k8s.io/endpointslices", validate: validateEndpointSlice},
		{capture: "update-immutable-discovery.k8s.io-endpointslices", resource: "discovery.k8s.io/endpointslices",
			validate: validateEndpointSlice, old: "create-discovery.k8s.io-endpointslices"},
		{capture: "invalid-core-pods", resource: "/pods", validate: validatePodSpec},
		{capture: "invalid-core-pods-container", resource: "/pods", validate: validatePodSpec},
		{capture: "update-immutable-core-pods", resource: "/pods", validate: validatePodSpec, old: "create-core-pods",
			strategic: true, messagePrefix: true},
		{capture: "invalid-apps-deployments", resource: "apps/deployments", validate: validateDeploymentSpec},
		{capture: "update-immutable-apps-deployments", resource: "apps/deployments", validate: validateDeploymentSpec,
			old: "create-apps-deployments"},
	}
	reg := Builtin()
	for _, tt := range tests {
		t.Run(tt.capture, func(t *testing.T) {
			x, err := golden.LoadKind(tt.capture)
			if err != nil {
				t.Fatal(err)
			}
			group, resource, _ := strings.Cut(tt.resource, "/")
			res := reg.ByGroupResource(group, resource)[0]
			ns := ""
			if parts := strings.Split(x.Path, "/namespaces/"); len(parts) == 2 {
				ns, _, _ = strings.Cut(parts[1], "/")
			}
			var obj, old Object
			if tt.old == "" {
				obj = decodeKind(t, res, x.RequestBody)
				obj.SetNamespace(ns)
				if res.PrepareForCreate != nil {
					res.PrepareForCreate(obj)
				}
			} else {
				c, err := golden.LoadKind(tt.old)
				if err != nil {
					t.Fatal(err)
				}
				old = decodeKind(t, res, c.ResponseBody)
				patch := x.RequestBody
				if tt.strategic {
					patch = containerPatch(t, c.ResponseBody, patch)
				}
				patched, err := jsonpatch.MergePatch(c.ResponseBody, patch)
				if err != nil {
					t.Fatal(err)
				}
				obj = decodeKind(t, res, patched)
				if res.PrepareForUpdate != nil {
					res.PrepareForUpdate(obj, old)
				}
			}
			st := metav1.NewInvalid(res.GroupKind(), obj.GetName(), tt.validate(obj, old))
			var want metav1.Status
			if err := json.Unmarshal(x.ResponseBody, &want); err != nil {
				t.Fatal(err)
			}
			if tt.messagePrefix {
				for i := range min(len(st.Details.Causes), len(want.Details.Causes)) {
					if strings.HasPrefix(want.Details.Causes[i].Message, st.Details.Causes[i].Message+"\n") {
						want.Details.Causes[i].Message = st.Details.Causes[i].Message
					}
				}
				if first, _, ok := strings.Cut(want.Message, "\n"); ok && strings.HasPrefix(st.Message, first) {
					want.Message = st.Message
				}
			}
			if !reflect.DeepEqual(st.Details.Causes, want.Details.Causes) {
				g, _ := json.Marshal(st.Details.Causes)
				w, _ := json.Marshal(want.Details.Causes)
				t.Errorf("causes\n got  %s\n want %s", g, w)
			}
			if st.Message != want.Message {
				t.Errorf("message\n got  %s\n want %s", st.Message, want.Message)
			}
		})
	}
}

// The valid objects of the captures stay valid.
func TestKindsValidationGoldenValid(t *testing.T) {
	validators := map[string]func(obj, old Object) metav1.FieldErrors{
		"/nodes": validateNode, "/events": validateEvent, "coordination.k8s.io/leases": validateLease,
		"/endpoints": validateEndpoints, "discovery.k8s.io/endpointslices": validateEndpointSlice,
		"/pods": validatePodSpec, "apps/deployments": validateDeploymentSpec,
	}
	names, err := golden.KindsOrder()
	if err != nil {
		t.Fatal(err)
	}
	reg := Builtin()
	for _, name := range names {
		for gr, validate := range validators {
			group, resource, _ := strings.Cut(gr, "/")
			g := group
			if g == "" {
				g = "core"
			}
			if !strings.HasPrefix(name, "create-"+g+"-"+resource) && !strings.HasPrefix(name, "full-"+g+"-"+resource) {
				continue
			}
			t.Run(name, func(t *testing.T) {
				x, err := golden.LoadKind(name)
				if err != nil {
					t.Fatal(err)
				}
				obj := decodeKind(t, reg.ByGroupResource(group, resource)[0], x.ResponseBody)
				if errs := validate(obj, nil); len(errs) > 0 {
					t.Errorf("the server's answer is invalid: %s", errs.Message())
				}
			})
		}
	}
}

// Leases lose spec.strategy and spec.preferredHolder on create (the
// CoordinatedLeaderElection gate is off by default in v1.37), and keep them
// on update only where the stored lease has them.
func TestDropDisabledLeaseFields(t *testing.T) {
	res := Builtin().Get("coordination.k8s.io", "v1", "leases")
	x, err := golden.LoadKind("full-coordination.k8s.io-leases")
	if err != nil {
		t.Fatal(err)
	}
	obj := decodeKind(t, res, x.RequestBody)
	want := decodeKind(t, res, x.ResponseBody)
	dropDisabledLeaseFields(obj, nil)
	g, _ := json.Marshal(field(obj, "Spec").Interface())
	w, _ := json.Marshal(field(want, "Spec").Interface())
	if string(g) != string(w) {
		t.Errorf("spec\n got  %s\n want %s", g, w)
	}
	kept := decodeKind(t, res, x.RequestBody)
	dropDisabledLeaseFields(kept, decodeKind(t, res, x.RequestBody))
	if g, _ := json.Marshal(field(kept, "Spec").Interface()); !strings.Contains(string(g), "preferredHolder") {
		t.Errorf("an update dropped the stored lease's fields: %s", g)
	}
}

// containerPatch turns a strategic merge patch of spec.containers (merged
// by name) into the merge patch of the whole list it amounts to on base.
func containerPatch(t *testing.T, base, patch []byte) []byte {
	t.Helper()
	var b, p map[string]any
	if json.Unmarshal(base, &b) != nil || json.Unmarshal(patch, &p) != nil {
		t.Fatal("patch or object is not JSON")
	}
	spec := b["spec"].(map[string]any)
	pspec := p["spec"].(map[string]any)
	var merged []any
	for _, c := range spec["containers"].([]any) {
		c := c.(map[string]any)
		for _, pc := range pspec["containers"].([]any) {
			if pc := pc.(map[string]any); pc["name"] == c["name"] {
				for k, v := range pc {
					c[k] = v
				}
			}
		}
		merged = append(merged, c)
	}
	pspec["containers"] = merged
	out, _ := json.Marshal(p)
	return out
}

func decodeKind(t *testing.T, res *Resource, body []byte) Object {
	t.Helper()
	obj := res.New()
	if err := json.Unmarshal(body, obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// A pod created with scheduling gates has the PodScheduled condition of
// full-core-pods (its time is the creation's); one without gates has none.
func TestGatePodScheduling(t *testing.T) {
	res := Builtin().Get("", "v1", "pods")
	x, err := golden.LoadKind("full-core-pods")
	if err != nil {
		t.Fatal(err)
	}
	want := decodeKind(t, res, x.ResponseBody).(*corev1.Pod)
	p := decodeKind(t, res, x.RequestBody).(*corev1.Pod)
	res.PrepareForCreate(p)
	p.Status.Conditions = nil // what gatePodScheduling adds, wherever PrepareForCreate calls it
	gatePodScheduling(p, want.CreationTimestamp.Time.Add(300*time.Millisecond))
	if !reflect.DeepEqual(p.Status.Conditions, want.Status.Conditions) {
		g, _ := json.Marshal(p.Status.Conditions)
		w, _ := json.Marshal(want.Status.Conditions)
		t.Errorf("conditions\n got  %s\n want %s", g, w)
	}
	ungated := decodeKind(t, res, x.RequestBody).(*corev1.Pod)
	ungated.Spec.SchedulingGates = nil
	gatePodScheduling(ungated, time.Now())
	if ungated.Status.Conditions != nil {
		t.Errorf("a pod without gates got %v", ungated.Status.Conditions)
	}
}

// A kubernetes.io/tls Secret whose key is not PEM gets kube-apiserver's
// warning (full-core-secrets); the other captured Secrets get none.
func TestSecretWarnings(t *testing.T) {
	res := Builtin().Get("", "v1", "secrets")
	for _, name := range []string{"full-core-secrets", "create-core-secrets", "create-core-secrets-dockerconfigjson", "create-core-secrets-service-account-token"} {
		t.Run(name, func(t *testing.T) {
			x, err := golden.LoadKind(name)
			if err != nil {
				t.Fatal(err)
			}
			obj := decodeKind(t, res, x.RequestBody)
			res.PrepareForCreate(obj)
			var want []string
			if w := x.ResponseHeader["Warning"]; w != "" {
				text, err := strconv.Unquote(strings.TrimPrefix(w, "299 - "))
				if err != nil {
					t.Fatal(err)
				}
				want = []string{text}
			}
			if got := SecretWarnings(obj, nil); !reflect.DeepEqual(got, want) {
				t.Errorf("warnings %q, want %q", got, want)
			}
		})
	}
}
