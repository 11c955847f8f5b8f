package main

import (
	"context"
	"log/slog"
	"maps"
	"net/http"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controller"
	"github.com/kapi-dev/kapi/controllerutil"
	"github.com/kapi-dev/kapi/events"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/leaderelection"
	"github.com/kapi-dev/kapi/manager"
	"github.com/kapi-dev/kapi/metrics"
)

const (
	// MirrorLabel marks the ConfigMaps the controller mirrors.
	MirrorLabel = "kapi.dev/mirror"
	// Name names the controller: its Lease, its metrics and its events'
	// reporting controller ("kapi.dev/configmap-mirror").
	Name = "configmap-mirror"
	// Finalizer holds a mirrored ConfigMap until its Secret is deleted.
	Finalizer = "kapi.dev/mirror-cleanup"
)

// Config configures a Mirror. Its zero value watches the client's
// namespace, as replica "configmap-mirror", without metrics or HTTP
// server.
type Config struct {
	// Namespace is where ConfigMaps are mirrored and the Lease is held
	// (default: the client's namespace).
	Namespace string
	// Identity names this replica in the Lease and in its events (default
	// Name). Replicas need distinct identities.
	Identity string
	// Metrics, if set, receives the controller's, its queue's and its
	// informers' reflectors' metrics.
	Metrics *metrics.Exporter
	// MetricsHandler serves /metrics (default nil: not served), such as
	// promhttp.HandlerFor on the registry Metrics was registered in.
	MetricsHandler http.Handler
	// Addr, if set, is the address ("host:port") the manager serves
	// /healthz, /readyz and /metrics on (default "": no HTTP server).
	Addr string
	// Logger receives the controller's logs (default slog.Default()).
	Logger *slog.Logger
}

// Mirror keeps, for every ConfigMap labelled MirrorLabel=true, a Secret of
// the same name holding the same data, controlled by the ConfigMap. A
// finalizer deletes the Secret when the ConfigMap is deleted; events say
// what was mirrored and cleaned up; only the replica holding the Lease
// reconciles. It is a manager.Manager running the informers, the
// controller, the event recorder, leader election and the HTTP server.
type Mirror struct {
	c          *client.Client
	mgr        *manager.Manager
	configMaps informer.Informer[corev1.ConfigMap]
	secrets    informer.Informer[corev1.Secret]
	ctl        *controller.Controller[corev1.ConfigMap]
	rec        *events.Recorder
}

// New builds a Mirror on c; Run runs it.
func New(c *client.Client, cfg Config) (*Mirror, error) {
	if cfg.Namespace == "" {
		cfg.Namespace = c.Namespace()
	}
	if cfg.Identity == "" {
		cfg.Identity = Name
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	rec, err := events.New(c, events.Config{ReportingController: "kapi.dev/" + Name, ReportingInstance: cfg.Identity, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	// Only labelled ConfigMaps are cached; Secrets all are (in namespace).
	factory := informer.FactoryConfig{Namespace: cfg.Namespace, Logger: cfg.Logger, ByObject: []informer.ObjectConfig{
		informer.Object[corev1.ConfigMap]{LabelSelector: MirrorLabel + "=true"},
	}}
	if cfg.Metrics != nil {
		factory.ReflectorMetrics = cfg.Metrics.Reflector // reflector_*{name="v1/configmaps"}
	}
	mgr, err := manager.New(c, manager.Config{
		Factory: factory,
		// The work stops, and the Lease is released, when Run's context
		// is done; a lost lease ends Run with an error.
		LeaderElection: &leaderelection.Config{
			Namespace: cfg.Namespace, Name: Name, Identity: cfg.Identity, ReleaseOnCancel: true,
			OnNewLeader: func(id string) { cfg.Logger.Info("leader", "identity", id, "me", id == cfg.Identity) },
		},
		HealthAddr:  cfg.Addr,
		MetricsAddr: cfg.Addr,
		Metrics:     cfg.MetricsHandler,
		Logger:      cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	m := &Mirror{c: c, mgr: mgr, rec: rec}
	m.configMaps = informer.For[corev1.ConfigMap](mgr.Factory())
	m.secrets = informer.For[corev1.Secret](mgr.Factory())

	ctlCfg := controller.Config{Name: Name, Workers: 2, Logger: cfg.Logger}
	if cfg.Metrics != nil {
		ctlCfg.Metrics, ctlCfg.QueueMetrics = cfg.Metrics.Controller(Name), cfg.Metrics.Queue(Name)
	}
	m.ctl = controller.New[corev1.ConfigMap](mgr.Factory(), controller.ReconcilerFunc(m.reconcile), ctlCfg,
		controller.Predicate[corev1.ConfigMap]{Update: func(old, cm *corev1.ConfigMap) bool {
			return !maps.Equal(old.Data, cm.Data) || (old.DeletionTimestamp == nil) != (cm.DeletionTimestamp == nil)
		}})
	// A Secret changed or deleted behind the controller's back is put
	// right; the Secrets it creates itself need no second look.
	controller.Owns(m.ctl, controller.Predicate[corev1.Secret]{Create: func(*corev1.Secret) bool { return false }})
	// The controller runs while this replica leads; the recorder on every
	// replica, stopped after the controller so that it writes its last
	// events.
	if err := mgr.Add(manager.Controller(m.ctl)); err != nil {
		return nil, err
	}
	if err := mgr.Add(manager.WithoutLeaderElection(manager.RunnableFunc(rec.Run))); err != nil {
		return nil, err
	}
	return m, nil
}

// Run runs the manager: it serves the probes and metrics, fills the
// caches, stands for the Lease and, while this replica holds it, runs the
// controller. It returns nil when ctx is done, after releasing the Lease,
// or an error: the lease was lost (leaderelection.ErrLeaseLost, wrapped)
// or something failed. Either way the process should exit.
func (m *Mirror) Run(ctx context.Context) error { return m.mgr.Start(ctx) }

// Handler serves the manager's /healthz, /readyz and /metrics.
func (m *Mirror) Handler() http.Handler { return m.mgr.Handler() }

// Addr returns the address the HTTP server listens on, once Run has bound
// it ("" without Config.Addr).
func (m *Mirror) Addr() string { return m.mgr.HealthAddr() }

// reconcile mirrors the ConfigMap req under Finalizer: Finalize adds the
// finalizer and calls mirror while the ConfigMap lives, and calls it for a
// cleanup once it is being deleted.
func (m *Mirror) reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	cm, err := m.configMaps.Lister().Namespace(req.Namespace).Get(req.Name)
	if client.IsNotFound(err) {
		return controller.Result{}, nil // gone, its cleanup done (or unlabelled)
	} else if err != nil {
		return controller.Result{}, err
	}
	return controllerutil.Finalize(ctx, client.For[corev1.ConfigMap](m.c), Finalizer, cm, m.mirror)
}

func (m *Mirror) mirror(ctx context.Context, ev controllerutil.Event[corev1.ConfigMap]) (controller.Result, error) {
	cm := ev.Object
	secrets := client.For[corev1.Secret](m.c).Namespace(cm.Namespace)
	if ev.Type == controllerutil.Cleanup {
		s, err := m.secrets.Lister().Namespace(cm.Namespace).Get(cm.Name)
		if err == nil && controllerutil.IsControlledBy(s, cm) {
			err = secrets.Delete(ctx, cm.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
		}
		if err != nil && !client.IsNotFound(err) {
			return controller.Result{}, err
		}
		m.rec.Eventf(cm, nil, events.Normal, "CleanedUp", "Cleanup", "deleted Secret %s", cm.Name)
		return controller.Result{}, nil
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name}}
	result, err := controllerutil.CreateOrPatch(ctx, secrets, secret, func(s *corev1.Secret) error {
		s.Data = make(map[string][]byte, len(cm.Data))
		for k, v := range cm.Data {
			s.Data[k] = []byte(v)
		}
		return controllerutil.SetControllerReference(cm, s, controllerutil.OwnerOptions{Scheme: m.c.Scheme()})
	})
	if err != nil {
		return controller.Result{}, err
	}
	if result != controllerutil.Unchanged {
		m.rec.Eventf(cm, nil, events.Normal, "Mirrored", "Mirror", "Secret %s %s", cm.Name, result)
	}
	return controller.Result{}, nil
}
