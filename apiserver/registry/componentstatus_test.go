package registry

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// TestComponentStatuses probes a healthy component, a failing one and one
// that does not listen, as kube-apiserver v1.37.2 reports them (its
// scheduler answered `Get "https://127.0.0.1:10259/healthz": dial tcp
// 127.0.0.1:10259: connect: connection refused`).
func TestComponentStatuses(t *testing.T) {
	ok := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer ok.Close()
	bad := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
	defer bad.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "https://" + l.Addr().String() + "/healthz"
	l.Close()

	got := ComponentStatuses(context.Background(), nil, []ComponentProbe{
		{"scheduler", ok.URL + "/healthz"}, {"controller-manager", bad.URL + "/healthz"}, {"other", closed},
	}, func(context.Context) error { return nil })
	want := []struct {
		name   string
		status corev1.ConditionStatus
		msg    string
	}{
		{"scheduler", corev1.ConditionTrue, "ok"},
		{"controller-manager", corev1.ConditionFalse, "HTTP probe failed with statuscode: 500"},
		{"other", corev1.ConditionFalse, `Get "` + closed + `": dial tcp ` + l.Addr().String() + `: connect: connection refused`},
		{"etcd-0", corev1.ConditionTrue, "ok"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d statuses, want %d", len(got), len(want))
	}
	for i, w := range want {
		c := got[i].Conditions[0]
		if got[i].Name != w.name || c.Type != corev1.ComponentHealthy || c.Status != w.status || c.Message != w.msg || c.Error != "" {
			t.Errorf("status %d = %s %+v, want %+v", i, got[i].Name, c, w)
		}
	}
	down := ComponentStatuses(context.Background(), nil, nil, func(context.Context) error { return errors.New("store closed") })
	if c := down[0].Conditions[0]; down[0].Name != "etcd-0" || c.Status != corev1.ConditionFalse || c.Message != "store closed" {
		t.Errorf("storage down: %+v", down)
	}
}

func TestComponentStatusPrinter(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		conds []corev1.ComponentCondition
		want  []any
	}{
		{[]corev1.ComponentCondition{{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"}}, []any{"c", "Healthy", "ok", ""}},
		{[]corev1.ComponentCondition{{Type: corev1.ComponentHealthy, Status: corev1.ConditionFalse, Message: "m", Error: "e"}}, []any{"c", "Unhealthy", "m", "e"}},
		{nil, []any{"c", "Unknown", "", ""}},
	} {
		cells, _ := componentStatusPrinter.Row(&corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Conditions: tt.conds}, now)
		if !reflect.DeepEqual(cells, tt.want) {
			t.Errorf("cells %v, want %v", cells, tt.want)
		}
	}
}
