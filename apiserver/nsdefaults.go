package apiserver

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// What kube-controller-manager's serviceaccount and
// root-ca-certificate-publisher controllers put in every namespace.
const (
	// DefaultServiceAccountName is the service account every active
	// namespace gets (and gets back when it is deleted).
	DefaultServiceAccountName = "default"
	// RootCAConfigMapName is the ConfigMap every active namespace gets,
	// holding the CA bundle that verifies the API server under ca.crt.
	RootCAConfigMapName = "kube-root-ca.crt"
	// rootCADescriptionKey and rootCADescription annotate it, as
	// kube-controller-manager does.
	rootCADescriptionKey = "kubernetes.io/description"
	rootCADescription    = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// namespaceDefaultsEnabled reports whether either controller runs.
func (s *Server) namespaceDefaultsEnabled() bool {
	return !s.cfg.DisableServiceAccountController || !s.cfg.DisableRootCAPublisher
}

// startNamespaceDefaults runs, in a goroutine the server owns (stopped by
// Close), what kube-controller-manager's serviceaccount and
// root-ca-certificate-publisher controllers do: every active namespace has a
// "default" ServiceAccount and a kube-root-ca.crt ConfigMap, created when the
// namespace is and again whenever they are deleted, and the ConfigMap is put
// back when its data or description annotation change. Like those
// controllers it follows a watch, and gives up on a namespace that is being
// deleted. The namespaces that already exist are seen to before it returns,
// so that a new server's system namespaces have them at once.
func (s *Server) startNamespaceDefaults() {
	rev := s.store.Revision()
	all := func(ctx context.Context) {
		list, err := s.store.List(ctx, namespaceKey(""), storage.ListOptions{})
		if err != nil {
			if ctx.Err() == nil {
				s.cfg.Logger.Error("apiserver: namespace defaults", "err", err)
			}
			return
		}
		for _, ns := range list.Items {
			s.ensureNamespaceDefaults(ctx, ns.GetName())
		}
	}
	all(s.ctx)
	// One watch per resource: a store on etcd has kube-apiserver's layout,
	// where a group's resources share no prefix.
	for _, r := range []string{"namespaces", "serviceaccounts", "configmaps"} {
		s.followStore(keyOf("", r, "", ""), rev, time.Second, all, s.namespaceDefaultsEvent)
	}
}

// namespaceDefaultsEvent sees to the namespace an event concerns.
func (s *Server) namespaceDefaultsEvent(ctx context.Context, ev storage.Event) {
	switch o := ev.Object.(type) {
	case *corev1.Namespace:
		if ev.Type != storage.Deleted {
			s.ensureNamespaceDefaults(ctx, o.Name)
		}
	case *corev1.ServiceAccount:
		if ev.Type == storage.Deleted && o.Name == DefaultServiceAccountName {
			s.ensureNamespaceDefaults(ctx, o.Namespace)
		}
	case *corev1.ConfigMap:
		if o.Name == RootCAConfigMapName && (ev.Type == storage.Deleted || !s.rootCACurrent(o)) {
			s.ensureNamespaceDefaults(ctx, o.Namespace)
		}
	}
}

// ensureNamespaceDefaults gives an active namespace what the enabled
// controllers put there. Failures are logged; the next event retries.
func (s *Server) ensureNamespaceDefaults(ctx context.Context, ns string) {
	obj, err := s.store.Get(ctx, namespaceKey(ns), storage.ReadOptions{})
	if err != nil {
		return // gone
	}
	n, ok := obj.(*corev1.Namespace)
	if !ok || n.DeletionTimestamp != nil || n.Status.Phase != corev1.NamespaceActive {
		return
	}
	if !s.cfg.DisableServiceAccountController {
		s.ensureDefaultServiceAccount(ctx, ns)
	}
	if !s.cfg.DisableRootCAPublisher {
		s.ensureRootCA(ctx, ns)
	}
}

func (s *Server) ensureDefaultServiceAccount(ctx context.Context, ns string) {
	res := s.reg.Get("", "v1", "serviceaccounts")
	if res == nil {
		return // a registry without the kind
	}
	rs := s.storeOf(res)
	if _, err := rs.Get(ctx, ns, DefaultServiceAccountName, storage.ReadOptions{}); err == nil {
		return
	}
	sa := res.New()
	sa.SetName(DefaultServiceAccountName)
	sa.SetNamespace(ns)
	_, err := rs.Create(ctx, sa, &writeOptions{Manager: managerControllerManager})
	s.logInternal(ctx, "serviceaccount", ns, err)
}

// rootCAData is the data of kube-root-ca.crt: the server's CA bundle,
// empty when it has none (a server without TLS).
func (s *Server) rootCAData() map[string]string {
	return map[string]string{"ca.crt": string(s.cfg.RootCA)}
}

// rootCACurrent reports whether cm holds what the publisher puts there.
func (s *Server) rootCACurrent(cm *corev1.ConfigMap) bool {
	return maps.Equal(cm.Data, s.rootCAData()) && cm.Annotations[rootCADescriptionKey] != ""
}

func (s *Server) ensureRootCA(ctx context.Context, ns string) {
	res := s.reg.Get("", "v1", "configmaps")
	if res == nil {
		return // a registry without the kind
	}
	rs := s.storeOf(res)
	o := &writeOptions{Manager: managerControllerManager}
	obj, err := rs.Get(ctx, ns, RootCAConfigMapName, storage.ReadOptions{})
	switch {
	case errors.Is(err, storage.ErrNotFound):
		cm := &corev1.ConfigMap{Data: s.rootCAData()}
		cm.Name, cm.Namespace = RootCAConfigMapName, ns
		cm.Annotations = map[string]string{rootCADescriptionKey: rootCADescription}
		_, err := rs.Create(ctx, cm, o)
		s.logInternal(ctx, "root CA configmap", ns, err)
	case err == nil:
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok || s.rootCACurrent(cm) {
			return
		}
		cm = cm.DeepCopy()
		cm.Data = s.rootCAData()
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[rootCADescriptionKey] = rootCADescription
		_, _, err := rs.Update(ctx, ns, RootCAConfigMapName, func(storage.Object) (registry.Object, *metav1.Status) {
			return cm.DeepCopy(), nil
		}, res.AllowCreateOnUpdate, o)
		s.logInternal(ctx, "root CA configmap", ns, err)
	}
}

// logInternal logs a failed write of a controller, unless it failed for a
// reason the controller expects (the object exists, the namespace is gone
// or terminating, a conflict the next event resolves, the server closing).
func (s *Server) logInternal(ctx context.Context, what, ns string, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	st := errorStatus(err)
	switch {
	case st.Code == http.StatusConflict, st.Code == http.StatusNotFound:
		return
	case st.Code == http.StatusForbidden && st.Details != nil && slices.ContainsFunc(st.Details.Causes, func(c metav1.StatusCause) bool {
		return c.Type == "NamespaceTerminating"
	}):
		return
	}
	s.cfg.Logger.Error("apiserver: namespace defaults", "what", what, "namespace", ns, "code", st.Code, "err", err)
}
