package apiserver

import (
	"context"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// waitStore waits until cond holds, checking again after every write to the
// store, for up to five seconds.
func waitStore(t *testing.T, srv *Server, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		rev := srv.store.Revision()
		if cond() {
			return
		}
		w, err := srv.store.Watch(ctx, "/", storage.WatchOptions{ResourceVersion: rev})
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		select {
		case <-w.ResultChan():
		case <-ctx.Done():
		}
		w.Stop()
		if ctx.Err() != nil {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func getObject(srv *Server, key string) storage.Object {
	o, err := srv.store.Get(context.Background(), key, storage.ReadOptions{})
	if err != nil {
		return nil
	}
	return o
}

// The serviceaccount and root-ca-certificate-publisher controllers: every
// active namespace gets a "default" ServiceAccount and kube-root-ca.crt
// (with the server's CA), again when they are deleted or the ConfigMap is
// changed; they stop with Close.
func TestNamespaceDefaults(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, err := New(Config{RootCA: []byte("-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n")})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	sa := func(ns string) storage.Object { return getObject(srv, "/core/serviceaccounts/"+ns+"/default") }
	cm := func(ns string) *corev1.ConfigMap {
		o, _ := getObject(srv, "/core/configmaps/"+ns+"/kube-root-ca.crt").(*corev1.ConfigMap)
		return o
	}
	// The system namespaces have them when New returns.
	for _, ns := range SystemNamespaces {
		if sa(ns) == nil || cm(ns) == nil {
			t.Fatalf("%s lacks its default service account or kube-root-ca.crt", ns)
		}
	}
	if c := cm("kube-system"); c.Data["ca.crt"] != string(srv.cfg.RootCA) || c.Annotations[rootCADescriptionKey] != rootCADescription {
		t.Errorf("kube-root-ca.crt %+v", c)
	}
	if s := sa("default").(*corev1.ServiceAccount); len(s.ManagedFields) != 0 {
		t.Errorf("the default service account has managed fields %+v (kube-apiserver drops empty ones)", s.ManagedFields)
	}

	mustServe(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"n"}}`, http.StatusCreated)
	waitStore(t, srv, "the new namespace's defaults", func() bool { return sa("n") != nil && cm("n") != nil })

	old := sa("n").GetUID()
	mustServe(t, srv, "DELETE", "/api/v1/namespaces/n/serviceaccounts/default", "", http.StatusOK)
	waitStore(t, srv, "the service account back", func() bool { s := sa("n"); return s != nil && s.GetUID() != old })

	mustServe(t, srv, "PUT", "/api/v1/namespaces/n/configmaps/kube-root-ca.crt", `{"metadata":{"name":"kube-root-ca.crt"},"data":{"ca.crt":"changed"}}`, http.StatusOK)
	waitStore(t, srv, "kube-root-ca.crt restored", func() bool {
		c := cm("n")
		return c != nil && c.Data["ca.crt"] == string(srv.cfg.RootCA) && c.Annotations[rootCADescriptionKey] != ""
	})
	mustServe(t, srv, "DELETE", "/api/v1/namespaces/n/configmaps/kube-root-ca.crt", "", http.StatusOK)
	waitStore(t, srv, "kube-root-ca.crt back", func() bool { return cm("n") != nil })
}

// Each controller can be switched off; without TLS, ca.crt is empty.
func TestNamespaceDefaultsSwitches(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    Config
		sa, cm bool
	}{
		{"both", Config{}, true, true},
		{"no serviceaccount controller", Config{DisableServiceAccountController: true}, false, true},
		{"no root CA publisher", Config{DisableRootCAPublisher: true}, true, false},
		{"neither", Config{DisableServiceAccountController: true, DisableRootCAPublisher: true}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			gotSA := getObject(srv, "/core/serviceaccounts/kube-system/default") != nil
			c, _ := getObject(srv, "/core/configmaps/kube-system/kube-root-ca.crt").(*corev1.ConfigMap)
			if gotSA != tc.sa || (c != nil) != tc.cm {
				t.Errorf("service account %v, kube-root-ca.crt %v; want %v, %v", gotSA, c != nil, tc.sa, tc.cm)
			}
			if c != nil && c.Data["ca.crt"] != "" {
				t.Errorf("ca.crt %q without a CA, want empty", c.Data["ca.crt"])
			}
		})
	}
}

// A namespace that is being deleted gets nothing back.
func TestNamespaceDefaultsTerminating(t *testing.T) {
	srv, err := New(Config{DisableNamespaceController: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	mustServe(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"n"}}`, http.StatusCreated)
	waitStore(t, srv, "the defaults", func() bool {
		return getObject(srv, "/core/serviceaccounts/n/default") != nil && getObject(srv, "/core/configmaps/n/kube-root-ca.crt") != nil
	})
	mustServe(t, srv, "DELETE", "/api/v1/namespaces/n", "", http.StatusOK)
	mustServe(t, srv, "DELETE", "/api/v1/namespaces/n/serviceaccounts/default", "", http.StatusOK)
	// A write after the deletion: the controller has seen the delete event
	// before this one, and wrote nothing.
	mustServe(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"marker"}}`, http.StatusCreated)
	waitStore(t, srv, "the marker's defaults", func() bool { return getObject(srv, "/core/serviceaccounts/marker/default") != nil })
	if getObject(srv, "/core/serviceaccounts/n/default") != nil {
		t.Error("the terminating namespace got its service account back")
	}
	// Without a namespace controller, it stays Terminating with its content.
	if ns, _ := getObject(srv, "/core/namespaces/n").(*corev1.Namespace); ns == nil || ns.Status.Phase != corev1.NamespaceTerminating ||
		getObject(srv, "/core/configmaps/n/kube-root-ca.crt") == nil {
		t.Errorf("namespace %+v: want it Terminating with its content", ns)
	}
}
