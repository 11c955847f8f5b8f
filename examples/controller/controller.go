package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/cache"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/workqueue"
)

// MirrorLabel marks the ConfigMaps the controller mirrors.
const MirrorLabel = "kapi.dev/mirror"

// FieldManager is the name the controller writes under.
const FieldManager = "configmap-mirror"

// StatusAnnotation records on a ConfigMap the resourceVersion of it that its
// Secret last mirrored: the controller's status.
const StatusAnnotation = "kapi.dev/mirrored-version"

// Controller keeps, for every ConfigMap labelled MirrorLabel=true in a
// namespace, a Secret of the same name holding the same data and owned by the
// ConfigMap (so that garbage collection removes it with its owner).
type Controller struct {
	c       *client.Client
	cms     informer.Informer[corev1.ConfigMap]
	secrets informer.Informer[corev1.Secret]
	queue   workqueue.RateLimitingQueue[string]
	log     *slog.Logger
}

// FactoryConfig caches what the controller reads in namespace: Secrets, and
// ConfigMaps labelled MirrorLabel=true.
func FactoryConfig(namespace string) informer.FactoryConfig {
	mirrored := informer.Object[corev1.ConfigMap]{LabelSelector: MirrorLabel + "=true"}
	return informer.FactoryConfig{Namespace: namespace, ByObject: []informer.ObjectConfig{mirrored}}
}

// NewController wires the ConfigMap and Secret informers of factory (made
// with FactoryConfig) into a rate-limited work queue of ConfigMap keys.
func NewController(c *client.Client, factory *informer.Factory, log *slog.Logger) (*Controller, error) {
	ctl := &Controller{
		c:       c,
		cms:     informer.For[corev1.ConfigMap](factory),
		secrets: informer.For[corev1.Secret](factory),
		queue:   workqueue.NewRateLimiting[string](nil, workqueue.Config{}),
		log:     log,
	}
	enqueue := func(cm *corev1.ConfigMap) { ctl.queue.Add(cm.Namespace + "/" + cm.Name) }
	if _, err := ctl.cms.AddEventHandler(informer.HandlerFuncs[corev1.ConfigMap]{
		AddFunc:    func(cm *corev1.ConfigMap, _ bool) { enqueue(cm) },
		UpdateFunc: func(_, cm *corev1.ConfigMap) { enqueue(cm) },
		DeleteFunc: func(cm *corev1.ConfigMap, _ bool) { enqueue(cm) },
	}); err != nil {
		return nil, err
	}
	// A Secret changed or deleted behind the controller's back is put right.
	owner := func(s *corev1.Secret) {
		for _, ref := range s.OwnerReferences {
			if ref.Kind == "ConfigMap" && ref.Controller != nil && *ref.Controller {
				ctl.queue.Add(s.Namespace + "/" + ref.Name)
			}
		}
	}
	if _, err := ctl.secrets.AddEventHandler(informer.HandlerFuncs[corev1.Secret]{
		UpdateFunc: func(_, s *corev1.Secret) { owner(s) },
		DeleteFunc: func(s *corev1.Secret, _ bool) { owner(s) },
	}); err != nil {
		return nil, err
	}
	return ctl, nil
}

// Run processes the queue with workers goroutines until ctx is done. The
// informers must have been started and synced.
func (ctl *Controller) Run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctl.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	ctl.queue.ShutDownWithDrain()
	wg.Wait()
}

func (ctl *Controller) processNext(ctx context.Context) bool {
	key, shutdown := ctl.queue.Get()
	if shutdown {
		return false
	}
	defer ctl.queue.Done(key)
	if err := ctl.reconcile(ctx, key); err != nil {
		if ctx.Err() != nil {
			return true // shutting down; the queue drains and stops
		}
		ctl.log.Info("reconcile failed; retrying", "key", key, "err", err, "retries", ctl.queue.NumRequeues(key))
		ctl.queue.AddRateLimited(key)
		return true
	}
	ctl.queue.Forget(key)
	return true
}

// reconcile makes the Secret of the ConfigMap key match it.
func (ctl *Controller) reconcile(ctx context.Context, key string) error {
	ns, name, err := cache.SplitKey(key)
	if err != nil {
		return nil // not ours; nothing will ever make it valid
	}
	cm, err := ctl.cms.Lister().Namespace(ns).Get(name)
	if cache.IsNotFound(err) {
		return nil // the owner is gone: the garbage collector deletes its Secret
	}
	if err != nil {
		return err
	}
	// The Secret is applied (server-side apply) unless the cache shows it
	// already mirrors the ConfigMap: one request whether it is missing,
	// stale or changed behind the controller's back.
	if have, err := ctl.secrets.Lister().Namespace(ns).Get(name); err != nil || !mirrors(have, cm) {
		if _, err := client.For[corev1.Secret](ctl.c).Namespace(ns).Apply(ctx, desiredSecret(cm), metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return fmt.Errorf("applying secret: %w", err)
		}
	}
	// Status: record which version of the ConfigMap is mirrored, on that
	// version only (a newer one brings its own event).
	if cm.Annotations[StatusAnnotation] == cm.ResourceVersion {
		return nil
	}
	patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"annotations":{%q:%q}}}`, cm.ResourceVersion, StatusAnnotation, cm.ResourceVersion)
	_, err = client.For[corev1.ConfigMap](ctl.c).Namespace(ns).Patch(ctx, name, client.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: FieldManager})
	if client.IsConflict(err) {
		return errors.New("the ConfigMap changed meanwhile") // requeued; the next event brings the new version
	}
	return err
}

func desiredSecret(cm *corev1.ConfigMap) *corev1.Secret {
	data := make(map[string][]byte, len(cm.Data))
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	yes := true
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: cm.Name, Namespace: cm.Namespace,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID,
				Controller: &yes, BlockOwnerDeletion: &yes,
			}},
		},
		Data: data,
	}
}

// mirrors reports whether s holds cm's data and is controlled by cm.
func mirrors(s *corev1.Secret, cm *corev1.ConfigMap) bool {
	if len(s.Data) != len(cm.Data) {
		return false
	}
	for k, v := range cm.Data {
		if b, ok := s.Data[k]; !ok || string(b) != v {
			return false
		}
	}
	for _, ref := range s.OwnerReferences {
		if ref.UID == cm.UID && ref.Controller != nil && *ref.Controller {
			return true
		}
	}
	return false
}
