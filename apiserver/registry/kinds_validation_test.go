package registry

import (
	"encoding/json"
	"reflect"
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
				patched, err := jsonpatch.MergePatch(c.ResponseBody, x.RequestBody)
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
