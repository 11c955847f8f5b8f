package main

import (
	"context"
	"errors"
	"log/slog"
	"maps"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controller"
	"github.com/kapi-dev/kapi/controllerutil"
	"github.com/kapi-dev/kapi/events"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/leaderelection"
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
// namespace, as replica "configmap-mirror", without metrics.
type Config struct {
	// Namespace is where ConfigMaps are mirrored and the Lease is held
	// (default: the client's namespace).
	Namespace string
	// Identity names this replica in the Lease and in its events (default
	// Name). Replicas need distinct identities.
	Identity string
	// Metrics, if set, receives the controller's and its queue's metrics.
	Metrics *metrics.Exporter
	// Logger receives the controller's logs (default slog.Default()).
	Logger *slog.Logger
}

// Mirror keeps, for every ConfigMap labelled MirrorLabel=true, a Secret of
// the same name holding the same data, controlled by the ConfigMap. A
// finalizer deletes the Secret when the ConfigMap is deleted; events say
// what was mirrored and cleaned up; only the replica holding the Lease
// reconciles.
type Mirror struct {
	c          *client.Client
	cfg        Config
	factory    *informer.Factory
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
	m := &Mirror{c: c, cfg: cfg, rec: rec}
	// Only labelled ConfigMaps are cached; Secrets all are (in namespace).
	m.factory = informer.NewFactory(c, informer.FactoryConfig{Namespace: cfg.Namespace, Logger: cfg.Logger, ByObject: []informer.ObjectConfig{
		informer.Object[corev1.ConfigMap]{LabelSelector: MirrorLabel + "=true"},
	}})
	m.configMaps = informer.For[corev1.ConfigMap](m.factory)
	m.secrets = informer.For[corev1.Secret](m.factory)

	ctlCfg := controller.Config{Name: Name, Workers: 2, Logger: cfg.Logger}
	if cfg.Metrics != nil {
		ctlCfg.Metrics, ctlCfg.QueueMetrics = cfg.Metrics.Controller(Name), cfg.Metrics.Queue(Name)
	}
	m.ctl = controller.New[corev1.ConfigMap](m.factory, controller.ReconcilerFunc(m.reconcile), ctlCfg,
		controller.Predicate[corev1.ConfigMap]{Update: func(old, cm *corev1.ConfigMap) bool {
			return !maps.Equal(old.Data, cm.Data) || (old.DeletionTimestamp == nil) != (cm.DeletionTimestamp == nil)
		}})
	// A Secret changed or deleted behind the controller's back is put
	// right; the Secrets it creates itself need no second look.
	controller.Owns(m.ctl, controller.Predicate[corev1.Secret]{Create: func(*corev1.Secret) bool { return false }})
	return m, nil
}

// Run stands for the Lease and, while this replica holds it, runs the
// controller and the event recorder. It returns when ctx is done (nil), the
// lease is lost (leaderelection.ErrLeaseLost) or the controller fails.
func (m *Mirror) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var workErr error
	le, err := leaderelection.New(m.c, leaderelection.Config{
		Namespace: m.cfg.Namespace, Name: Name, Identity: m.cfg.Identity, ReleaseOnCancel: true,
		OnStartedLeading: func(ctx context.Context) {
			workErr = m.lead(ctx)
			cancel() // the work is over: so is the candidacy
		},
	})
	if err != nil {
		return err
	}
	err = le.Run(ctx)
	return errors.Join(err, workErr) // Run returns after OnStartedLeading
}

// lead runs the recorder and the controller until ctx is done.
func (m *Mirror) lead(ctx context.Context) error {
	recDone := make(chan error, 1)
	go func() { recDone <- m.rec.Run(ctx) }()
	err := m.ctl.Run(ctx)
	m.factory.Shutdown()
	if ctx.Err() != nil {
		err = nil // a controller stopped before its caches synced
	}
	return errors.Join(err, <-recDone)
}

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
