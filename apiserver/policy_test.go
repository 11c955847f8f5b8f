package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"

	admissionv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/internal/cel"
)

const (
	vapPath  = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
	vapbPath = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
	mapPath  = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies"
	mapbPath = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings"
)

func policyServe(t *testing.T, srv *Server, code int, method, path, body string, header ...string) string {
	t.Helper()
	rec := crdServe(t, srv, method, path, body, header...)
	if rec.Code != code {
		t.Fatalf("%s %s: %d, want %d\n%s", method, path, rec.Code, code, rec.Body)
	}
	return rec.Body.String()
}

const denyBadPolicy = `{"metadata":{"name":"p"},"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],
"operations":["CREATE","UPDATE"],"resources":["configmaps"]}]},"validations":[{"expression":"!has(object.data) || !('bad' in object.data)","message":"bad"}]}}`

// TestPolicyTakesEffectAtOnce: a policy and its binding act on the very
// next request after they are written, and stop acting on the next
// request after the binding or the policy is deleted.
func TestPolicyTakesEffectAtOnce(t *testing.T) {
	srv, _ := newCRDTestServer(t)
	cms := "/api/v1/namespaces/default/configmaps"
	bad := func(name string) string { return fmt.Sprintf(`{"metadata":{"name":%q},"data":{"bad":"1"}}`, name) }
	policyServe(t, srv, http.StatusCreated, "POST", cms, bad("before"))
	policyServe(t, srv, http.StatusCreated, "POST", vapPath, denyBadPolicy)
	policyServe(t, srv, http.StatusCreated, "POST", cms, bad("unbound"))
	policyServe(t, srv, http.StatusCreated, "POST", vapbPath, `{"metadata":{"name":"b"},"spec":{"policyName":"p","validationActions":["Deny"]}}`)
	body := policyServe(t, srv, http.StatusUnprocessableEntity, "POST", cms, bad("denied"))
	if !strings.Contains(body, "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: bad") {
		t.Errorf("denial: %s", body)
	}
	// An update that adds the key is refused too; a dry run as well.
	policyServe(t, srv, http.StatusUnprocessableEntity, "PUT", cms+"/before", `{"metadata":{"name":"before"},"data":{"bad":"2"}}`)
	policyServe(t, srv, http.StatusUnprocessableEntity, "POST", cms+"?dryRun=All", bad("dry"))
	policyServe(t, srv, http.StatusOK, "DELETE", vapbPath+"/b", "")
	policyServe(t, srv, http.StatusCreated, "POST", cms, bad("after-binding"))
	policyServe(t, srv, http.StatusCreated, "POST", vapbPath, `{"metadata":{"name":"b"},"spec":{"policyName":"p","validationActions":["Deny"]}}`)
	policyServe(t, srv, http.StatusUnprocessableEntity, "POST", cms, bad("denied"))
	policyServe(t, srv, http.StatusOK, "DELETE", vapPath+"/p", "")
	policyServe(t, srv, http.StatusCreated, "POST", cms, bad("after-policy"))
}

// TestPolicyCompiledOncePerGeneration: a policy's expressions are compiled
// on first use, once per generation: not per request, not on the status
// write, again after the spec changes.
func TestPolicyCompiledOncePerGeneration(t *testing.T) {
	srv, _ := newCRDTestServer(t)
	cms := "/api/v1/namespaces/default/configmaps"
	policyServe(t, srv, http.StatusCreated, "POST", vapPath, denyBadPolicy)
	policyServe(t, srv, http.StatusCreated, "POST", vapbPath, `{"metadata":{"name":"b"},"spec":{"policyName":"p","validationActions":["Deny"]}}`)
	before := policyCompiles.Load()
	for i := range 5 {
		policyServe(t, srv, http.StatusCreated, "POST", cms, fmt.Sprintf(`{"metadata":{"name":"c%d"}}`, i))
	}
	if n := policyCompiles.Load() - before; n != 1 {
		t.Fatalf("5 requests compiled the policy %d times, want 1", n)
	}
	policyServe(t, srv, http.StatusOK, "PATCH", vapPath+"/p", `{"spec":{"validations":[{"expression":"!has(object.data)"}]}}`,
		"Content-Type", "application/merge-patch+json")
	policyServe(t, srv, http.StatusUnprocessableEntity, "POST", cms, `{"metadata":{"name":"d"},"data":{"x":"y"}}`)
	policyServe(t, srv, http.StatusCreated, "POST", cms, `{"metadata":{"name":"e"}}`)
	if n := policyCompiles.Load() - before; n != 2 {
		t.Fatalf("compiled %d times after a new generation, want 2", n)
	}
}

// TestMutatingPolicyReinvocation: a policy with reinvocationPolicy
// IfNeeded runs again when a policy after it changed the object; with
// Never it does not.
func TestMutatingPolicyReinvocation(t *testing.T) {
	for _, policy := range []string{"IfNeeded", "Never"} {
		t.Run(policy, func(t *testing.T) {
			srv, _ := newCRDTestServer(t)
			rule := `"matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["configmaps"]}]}`
			// a-copy copies data.b into data.copy; b-set, after it, sets data.b.
			policyServe(t, srv, http.StatusCreated, "POST", mapPath, `{"metadata":{"name":"a-copy"},"spec":{"reinvocationPolicy":"`+policy+`",`+rule+`,
"mutations":[{"patchType":"ApplyConfiguration","applyConfiguration":{"expression":"Object{data: {'copy': has(object.data) && 'b' in object.data ? object.data.b : 'none'}}"}}]}}`)
			policyServe(t, srv, http.StatusCreated, "POST", mapPath, `{"metadata":{"name":"b-set"},"spec":{"reinvocationPolicy":"Never",`+rule+`,
"mutations":[{"patchType":"JSONPatch","jsonPatch":{"expression":"[JSONPatch{op: 'add', path: '/data/b', value: 'set'}]"}}]}}`)
			for _, b := range []string{"a-copy", "b-set"} {
				policyServe(t, srv, http.StatusCreated, "POST", mapbPath, `{"metadata":{"name":"`+b+`"},"spec":{"policyName":"`+b+`"}}`)
			}
			body := policyServe(t, srv, http.StatusCreated, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"c"}}`)
			want := `"copy":"none"`
			if policy == "IfNeeded" {
				want = `"copy":"set"`
			}
			if !strings.Contains(body, want) || !strings.Contains(body, `"b":"set"`) {
				t.Errorf("created %s\nwant data with %s", body, want)
			}
		})
	}
}

// FuzzPolicyMutation applies arbitrary mutation results (JSON patches and
// apply configurations, as the expressions could give them) to a pod and
// a configmap, and evaluates a validating policy on the result: no input
// panics.
func FuzzPolicyMutation(f *testing.F) {
	for _, s := range []string{
		`[{"op":"add","path":"/data/x","value":"y"}]`,
		`[{"op":"replace","path":"/spec/containers/0/image","value":{"a":1}}]`,
		`[{"op":"move","from":"/metadata","path":"/spec/x"}]`,
		`{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":1e40}]}]}}`,
		`{"data":{"k":[1,2]},"binaryData":{"b":"!!"}}`,
		`{"metadata":{"managedFields":[{}],"creationTimestamp":"x"}}`,
	} {
		f.Add(s)
	}
	srv, err := New(Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = srv.Close() })
	pods, cms := srv.reg.Get("", "v1", "pods"), srv.reg.Get("", "v1", "configmaps")
	check := compilePolicy(&admissionv1.ValidatingAdmissionPolicySpec{
		Variables:   []admissionv1.Variable{{Name: "v", Expression: "object.metadata.name"}},
		Validations: []admissionv1.Validation{{Expression: "has(object.spec) && object.spec.containers.all(c, c.image != '')", MessageExpression: "variables.v"}},
	})
	f.Fuzz(func(t *testing.T, result string) {
		var x any
		d := json.NewDecoder(strings.NewReader(result))
		d.UseNumber()
		if d.Decode(&x) != nil {
			return
		}
		out := cel.JSONValue(normalNumbers(x))
		for _, obj := range []registry.Object{
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"}, Data: map[string]string{"a": "b"}},
		} {
			res := cms
			if _, ok := obj.(*corev1.Pod); ok {
				res = pods
			}
			for _, jp := range []bool{true, false} {
				r := &policyRequest{res: res, op: "CREATE", obj: obj, namespace: "default", name: obj.GetName()}
				_, _ = srv.mutate(r, jp, out)
				r.vars = nil
				_ = srv.evalPolicy(t.Context(), r, check, types.NullValue)
			}
		}
	})
}
