package apiserver

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

func TestKeyOf(t *testing.T) {
	for _, tc := range []struct {
		group, resource, namespace, name, want string
	}{
		{"", "configmaps", "ns", "a", "/core/configmaps/ns/a"},
		{"", "configmaps", "ns", "", "/core/configmaps/ns/"},
		{"", "configmaps", "", "", "/core/configmaps/"},
		{"", "namespaces", "", "ns", "/core/namespaces/ns"},
		{"apps", "deployments", "ns", "d", "/apps/deployments/ns/d"},
		{crdGroup, crdResourceName, "", "", crdPrefix},
	} {
		if got := keyOf(tc.group, tc.resource, tc.namespace, tc.name); got != tc.want {
			t.Errorf("keyOf(%q, %q, %q, %q) = %q, want %q", tc.group, tc.resource, tc.namespace, tc.name, got, tc.want)
		}
	}
	if got := groupKey(""); got != "/core/" {
		t.Errorf("groupKey(\"\") = %q", got)
	}
	if got := namespaceKey("x"); got != "/core/namespaces/x" {
		t.Errorf("namespaceKey = %q", got)
	}
}

// TestStoreErrorsCarryStatus: the store's errors carry the Status the API
// answers, and unwrap to the storage error.
func TestStoreErrorsCarryStatus(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	rs := s.storeOf(s.reg.Get("", "v1", "configmaps"))

	_, err = rs.Get(ctx, "default", "missing", storage.ReadOptions{})
	if st := errorStatus(err); st.Code != http.StatusNotFound || st.Reason != metav1.StatusReasonNotFound || !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("get of a missing object: %v (%+v)", err, st)
	}

	cm := &corev1.ConfigMap{}
	cm.Name, cm.Namespace = "Bad_Name", "default"
	_, err = rs.Create(ctx, cm, &writeOptions{Manager: "test"})
	if st := errorStatus(err); st.Code != http.StatusUnprocessableEntity || st.Reason != metav1.StatusReasonInvalid || !stageError(err) {
		t.Errorf("create of an invalid object: %v (%+v)", err, st)
	}

	cm = &corev1.ConfigMap{}
	cm.Name, cm.Namespace = "a", "missing-namespace"
	_, err = rs.Create(ctx, cm, &writeOptions{Manager: "test"})
	if st := errorStatus(err); st.Code != http.StatusNotFound {
		t.Errorf("create in a missing namespace: %v (%+v)", err, st)
	}

	_, _, err = s.storeOf(s.reg.Get("", "v1", "namespaces")).Delete(ctx, "", "kube-system", &metav1.DeleteOptions{})
	if st := errorStatus(err); st.Code != http.StatusForbidden {
		t.Errorf("delete of kube-system: %v (%+v)", err, st)
	}
}

// TestInternalWritesRunThePipeline: what the server's own controllers
// write is defaulted and field-managed under their manager, as a client's
// write is.
func TestInternalWritesRunThePipeline(t *testing.T) {
	s, err := New(Config{DisableServiceAccountController: true, DisableRootCAPublisher: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	mustDo(t, s, "POST", "/api/v1/namespaces", `{"metadata":{"name":"pipeline"}}`, http.StatusCreated)
	s.ensureDefaultServiceAccount(ctx, "pipeline")
	s.ensureRootCA(ctx, "pipeline")
	for _, tc := range []struct {
		resource, name string
		managed        bool // a ServiceAccount with only a name owns no field (none on a real cluster either)
	}{
		{"serviceaccounts", DefaultServiceAccountName, false},
		{"configmaps", RootCAConfigMapName, true},
	} {
		obj, err := s.storeOf(s.reg.Get("", "v1", tc.resource)).Get(ctx, "pipeline", tc.name, storage.ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.resource, err)
		}
		mf := obj.GetManagedFields()
		if tc.managed && (len(mf) != 1 || mf[0].Manager != managerControllerManager || mf[0].Operation != metav1.ManagedFieldsOperationUpdate) ||
			!tc.managed && len(mf) != 0 {
			t.Errorf("%s: managedFields %+v, want one Update by %s: %v", tc.resource, mf, managerControllerManager, tc.managed)
		}
		if obj.GetUID() == "" || obj.GetCreationTimestamp().IsZero() {
			t.Errorf("%s: system fields not set: %+v", tc.resource, obj)
		}
	}
}

// TestResourceWarnings: a kind's warnings (Resource.Warnings) are sent with
// the answer of a valid write, on create and on update, dry runs included.
func TestResourceWarnings(t *testing.T) {
	reg := registry.Builtin()
	res := reg.Get("", "v1", "configmaps")
	res.Warnings = func(obj, old registry.Object) []string {
		if old == nil {
			return []string{"created " + obj.GetName()}
		}
		return []string{"updated " + obj.GetName()}
	}
	s, err := New(Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, tc := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"POST", "/api/v1/namespaces/default/configmaps?dryRun=All", `{"metadata":{"name":"w"}}`, http.StatusCreated, `299 - "created w"`},
		{"POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"w"}}`, http.StatusCreated, `299 - "created w"`},
		{"PUT", "/api/v1/namespaces/default/configmaps/w", `{"metadata":{"name":"w"},"data":{"a":"b"}}`, http.StatusOK, `299 - "updated w"`},
		{"POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"Bad_Name"}}`, http.StatusUnprocessableEntity, ""},
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body)))
		if rec.Code != tc.code || rec.Header().Get("Warning") != tc.want {
			t.Errorf("%s %s: %d, Warning %q; want %d, %q", tc.method, tc.path, rec.Code, rec.Header().Get("Warning"), tc.code, tc.want)
		}
	}
}
