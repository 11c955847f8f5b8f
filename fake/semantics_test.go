package fake_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
)

// What the server decides holds through the fake client: each case is one
// behaviour of the reference server, observed through a Fake.
func TestServerSemantics(t *testing.T) {
	tests := []struct {
		name string
		opts fake.Options
		seed []any
		run  func(ctx context.Context, t *testing.T, f *fake.Fake) error
	}{
		{"resourceVersion conflict", fake.Options{}, []any{configMap("web", "cm", "v", "1")},
			func(ctx context.Context, t *testing.T, f *fake.Fake) error {
				cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
				stale, err := cms.Get(ctx, "cm", metav1.GetOptions{})
				if err != nil {
					return err
				}
				fresh := stale.DeepCopy()
				fresh.Data["v"] = "2"
				if _, err := cms.Update(ctx, fresh, metav1.UpdateOptions{}); err != nil {
					return err
				}
				stale.Data["v"] = "3"
				if _, err := cms.Update(ctx, stale, metav1.UpdateOptions{}); !client.IsConflict(err) {
					return fmt.Errorf("stale update: %v, want a Conflict", err)
				}
				return nil
			}},
		{"generateName", fake.Options{}, nil,
			func(ctx context.Context, t *testing.T, f *fake.Fake) error {
				cms := client.For[corev1.ConfigMap](f.Client())
				var names []string
				for range 3 {
					cm := configMap("", "")
					cm.GenerateName = "job-"
					created, err := cms.Create(ctx, cm, metav1.CreateOptions{})
					if err != nil {
						return err
					}
					names = append(names, created.Name)
				}
				if want := []string{"job-bbbbb", "job-bbbbc", "job-bbbbd"}; !reflect.DeepEqual(names, want) {
					return fmt.Errorf("names %v, want %v", names, want)
				}
				return nil
			}},
		{"label selector", fake.Options{}, []any{pod("web", "a", "app", "web", "tier", "fe"), pod("web", "b", "app", "web"), pod("web", "c", "app", "db")},
			func(ctx context.Context, t *testing.T, f *fake.Fake) error {
				pods := client.For[corev1.Pod](f.Client()).Namespace("web")
				for sel, want := range map[string]string{"app=web": "a,b", "app=web,tier!=fe": "b", "app in (db)": "c", "!tier": "b,c"} {
					list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: sel})
					if err != nil {
						return err
					}
					if got := podNames(list.Items); got != want {
						return fmt.Errorf("%s: %s, want %s", sel, got, want)
					}
				}
				_, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app in (web"})
				if !client.IsBadRequest(err) {
					return fmt.Errorf("bad selector: %v", err)
				}
				return nil
			}},
		{"field selector", fake.Options{}, []any{runningPod("web", "a", "n1"), pod("web", "b"), runningPod("apps", "c", "n2")},
			func(ctx context.Context, t *testing.T, f *fake.Fake) error {
				pods := client.For[corev1.Pod](f.Client()).Namespace("")
				for sel, want := range map[string]string{
					"metadata.name=a":                              "a",
					"status.phase=Running":                         "c,a", // by namespace, then name
					"spec.nodeName=n2":                             "c",
					"metadata.namespace=web,status.phase!=Running": "b",
				} {
					list, err := pods.List(ctx, metav1.ListOptions{FieldSelector: sel})
					if err != nil {
						return err
					}
					if got := podNames(list.Items); got != want {
						return fmt.Errorf("%s: %s, want %s", sel, got, want)
					}
				}
				if _, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.unknown=x"}); !client.IsBadRequest(err) {
					return fmt.Errorf("unknown field: %v", err)
				}
				return nil
			}},
		{"watch from a resourceVersion", fake.Options{}, []any{configMap("web", "a")},
			func(ctx context.Context, t *testing.T, f *fake.Fake) error {
				cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
				start, err := cms.Get(ctx, "a", metav1.GetOptions{})
				if err != nil {
					return err
				}
				// Changes made before the watch starts are replayed from
				// the resourceVersion; nothing before it is.
				if _, err := cms.Create(ctx, configMap("web", "b"), metav1.CreateOptions{}); err != nil {
					return err
				}
				if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
					return err
				}
				w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion})
				if err != nil {
					return err
				}
				defer w.Stop()
				if _, err := cms.Create(ctx, configMap("web", "c"), metav1.CreateOptions{}); err != nil {
					return err
				}
				var got []string
				for range 3 {
					ev := next(t, w)
					got = append(got, fmt.Sprintf("%s %s", ev.Type, ev.Object.Name))
				}
				if want := []string{"ADDED b", "DELETED a", "ADDED c"}; !reflect.DeepEqual(got, want) {
					return fmt.Errorf("events %v, want %v", got, want)
				}
				return nil
			}},
		{"bookmarks", fake.Options{BookmarkInterval: 10 * time.Millisecond}, []any{configMap("web", "a")},
			func(ctx context.Context, t *testing.T, f *fake.Fake) error {
				cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
				list, err := cms.List(ctx, metav1.ListOptions{})
				if err != nil {
					return err
				}
				w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
				if err != nil {
					return err
				}
				defer w.Stop()
				// A bookmark carries a resourceVersion past what the watch
				// has seen (as kube-apiserver's): a write elsewhere makes one.
				other, err := client.For[corev1.ConfigMap](f.Client()).Namespace("default").Create(ctx, configMap("default", "elsewhere"), metav1.CreateOptions{})
				if err != nil {
					return err
				}
				ev := next(t, w)
				if ev.Type != client.EventBookmark || ev.Object.ResourceVersion != other.ResourceVersion {
					return fmt.Errorf("event %s %+v, want a bookmark at %s", ev.Type, ev.Object, other.ResourceVersion)
				}
				return nil
			}},
		{"streaming list ends with an annotated bookmark", fake.Options{}, []any{configMap("web", "a"), configMap("web", "b")},
			func(ctx context.Context, t *testing.T, f *fake.Fake) error {
				cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
				yes := true
				w, err := cms.Watch(ctx, metav1.ListOptions{SendInitialEvents: &yes, AllowWatchBookmarks: true,
					ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
				if err != nil {
					return err
				}
				defer w.Stop()
				var got []string
				for {
					ev := next(t, w)
					if ev.Type == client.EventBookmark {
						if ev.Object.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
							return fmt.Errorf("bookmark without the initial-events-end annotation")
						}
						break
					}
					got = append(got, fmt.Sprintf("%s %s", ev.Type, ev.Object.Name))
				}
				if want := []string{"ADDED a", "ADDED b"}; !reflect.DeepEqual(got, want) {
					return fmt.Errorf("initial events %v, want %v", got, want)
				}
				return nil
			}},
		{"pagination", fake.Options{}, seedConfigMaps("web", 7),
			func(ctx context.Context, t *testing.T, f *fake.Fake) error {
				cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
				first, err := cms.List(ctx, metav1.ListOptions{Limit: 3})
				if err != nil {
					return err
				}
				// Written after the first page: not in the later pages,
				// which are served at the first page's resourceVersion.
				if _, err := cms.Create(ctx, configMap("web", "cm-99"), metav1.CreateOptions{}); err != nil {
					return err
				}
				var pages []string
				page := first
				for {
					pages = append(pages, configMapNames(page.Items))
					if page.Continue == "" {
						break
					}
					if page.ResourceVersion != first.ResourceVersion {
						return fmt.Errorf("page at rv %s, first at %s", page.ResourceVersion, first.ResourceVersion)
					}
					page, err = cms.List(ctx, metav1.ListOptions{Limit: 3, Continue: page.Continue})
					if err != nil {
						return err
					}
				}
				if want := []string{"cm-0,cm-1,cm-2", "cm-3,cm-4,cm-5", "cm-6"}; !reflect.DeepEqual(pages, want) {
					return fmt.Errorf("pages %v, want %v", pages, want)
				}
				if first.RemainingItemCount == nil || *first.RemainingItemCount != 4 {
					return fmt.Errorf("remainingItemCount %v, want 4", first.RemainingItemCount)
				}
				if _, err := cms.List(ctx, metav1.ListOptions{Limit: 3, Continue: "garbage"}); !client.IsBadRequest(err) {
					return fmt.Errorf("bad continue token: %v", err)
				}
				return nil
			}},
		{"finalizers", fake.Options{}, []any{withFinalizers(configMap("web", "held"), "example.com/a", "example.com/b")},
			func(ctx context.Context, t *testing.T, f *fake.Fake) error {
				cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
				if err := cms.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
					return err
				}
				cm, err := cms.Get(ctx, "held", metav1.GetOptions{})
				if err != nil {
					return fmt.Errorf("deleted despite its finalizers: %w", err)
				}
				if cm.DeletionTimestamp == nil {
					return errors.New("no deletionTimestamp")
				}
				cm.Finalizers = append(cm.Finalizers, "example.com/new")
				if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); !client.IsInvalid(err) {
					return fmt.Errorf("adding a finalizer while deleting: %v, want Invalid", err)
				}
				cm.Finalizers = []string{"example.com/b"}
				if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
					return err
				}
				cm.Finalizers = nil
				if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
					return err
				}
				if _, err := cms.Get(ctx, "held", metav1.GetOptions{}); !client.IsNotFound(err) {
					return fmt.Errorf("after the last finalizer: %v, want NotFound", err)
				}
				return nil
			}},
		{"validation and already exists", fake.Options{}, []any{configMap("web", "a")},
			func(ctx context.Context, t *testing.T, f *fake.Fake) error {
				cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
				if _, err := cms.Create(ctx, configMap("web", "a"), metav1.CreateOptions{}); !client.IsAlreadyExists(err) {
					return fmt.Errorf("duplicate: %v", err)
				}
				if _, err := cms.Create(ctx, configMap("web", "UPPER"), metav1.CreateOptions{}); !client.IsInvalid(err) {
					return fmt.Errorf("invalid name: %v", err)
				}
				if _, err := cms.Namespace("nowhere").Create(ctx, configMap("", "a"), metav1.CreateOptions{}); !client.IsNotFound(err) {
					return fmt.Errorf("missing namespace: %v", err)
				}
				return nil
			}},
		{"namespace deletion removes its objects", fake.Options{}, []any{configMap("doomed", "a"), pod("doomed", "p")},
			func(ctx context.Context, t *testing.T, f *fake.Fake) error {
				nss := client.For[corev1.Namespace](f.Client())
				w, err := nss.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=doomed"})
				if err != nil {
					return err
				}
				defer w.Stop()
				next(t, w) // ADDED
				if err := nss.Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
					return err
				}
				for ev := next(t, w); ev.Type != client.EventDeleted; ev = next(t, w) {
				}
				list, err := client.For[corev1.ConfigMap](f.Client()).Namespace("doomed").List(ctx, metav1.ListOptions{})
				if err != nil {
					return err
				}
				if len(list.Items) != 0 {
					return fmt.Errorf("%d configmaps left", len(list.Items))
				}
				return nil
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fake.NewWithOptions(t, tt.opts, tt.seed...)
			if err := tt.run(testContext(t), t, f); err != nil {
				t.Error(err)
			}
		})
	}
}

func runningPod(ns, name, node string) *corev1.Pod {
	p := pod(ns, name)
	p.Spec.NodeName = node
	p.Status.Phase = corev1.PodRunning
	return p
}

func withFinalizers(cm *corev1.ConfigMap, finalizers ...string) *corev1.ConfigMap {
	cm.Finalizers = finalizers
	return cm
}

func seedConfigMaps(ns string, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = configMap(ns, fmt.Sprintf("cm-%d", i))
	}
	return out
}

func podNames(pods []corev1.Pod) string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name
	}
	return strings.Join(names, ",")
}

func configMapNames(cms []corev1.ConfigMap) string {
	names := make([]string, len(cms))
	for i, c := range cms {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}
