package informer_test

import (
	"slices"
	"sync"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/reflector"
)

// listCounter is a reflector.Metrics that records the lists it is told.
type listCounter struct {
	mu    sync.Mutex
	lists []int
}

func (l *listCounter) Listed(items int, _ bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lists = append(l.lists, items)
}

func (l *listCounter) Watched() {}

func (l *listCounter) listed() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lists)
}

// FactoryConfig.ReflectorMetrics is asked once per informer for its hook,
// with the informer's resource, and each informer's reflector reports to
// its own.
func TestFactoryReflectorMetrics(t *testing.T) {
	e := newEnv(t)
	e.create(t, "a")
	e.create(t, "b")
	var mu sync.Mutex
	hooks := map[string]*listCounter{}
	var asked []string
	f := informer.NewFactory(e.c, informer.FactoryConfig{Namespace: "inf", Logger: quietLogger(),
		ReflectorMetrics: func(resource string) reflector.Metrics {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, resource)
			hooks[resource] = &listCounter{}
			return hooks[resource]
		}})
	informer.For[corev1.ConfigMap](f)
	informer.For[corev1.ConfigMap](f) // shared: not asked again
	informer.For[corev1.Secret](f)
	informer.ForMetadata[corev1.ConfigMap](f)
	f.ForResource(client.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"})
	startFactory(t, f)
	waitCaches(t, f)

	mu.Lock()
	defer mu.Unlock()
	want := []string{"v1/configmaps", "v1/secrets", "metadata v1/configmaps", "v1/deployments.apps"}
	if !slices.Equal(asked, want) {
		t.Fatalf("ReflectorMetrics asked for %q, want %q", asked, want)
	}
	for resource, items := range map[string]int{"v1/configmaps": 2, "v1/secrets": 0, "metadata v1/configmaps": 2, "v1/deployments.apps": 0} {
		if got := hooks[resource].listed(); !slices.Equal(got, []int{items}) {
			t.Errorf("%s's hook told of lists of %v, want one of %d", resource, got, items)
		}
	}
}
