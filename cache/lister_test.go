package cache_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/cache"
	"github.com/kapi-dev/kapi/selector"
)

var corev1Pods = metav1.GroupResource{Resource: "pods"}

// plainIndexer hides the package's fast paths, to test the lister's
// fallbacks for Indexer implementations from elsewhere.
type plainIndexer struct{ cache.Indexer[*corev1.Pod] }

// noNamespaceIndex also lacks the namespace index.
type noNamespaceIndex struct{ cache.Indexer[*corev1.Pod] }

func (n noNamespaceIndex) ByIndex(name, value string) ([]*corev1.Pod, error) {
	if name == cache.NamespaceIndex {
		return nil, fmt.Errorf("wrapped: %w", cache.ErrNoSuchIndex)
	}
	return n.Indexer.ByIndex(name, value)
}

func listerPods() []*corev1.Pod {
	return []*corev1.Pod{
		newPod("prod", "web-1", labels("app", "web", "tier", "frontend"), node("n1")),
		newPod("prod", "web-2", labels("app", "web", "tier", "frontend", "canary", "true"), node("n2")),
		newPod("prod", "db-0", labels("app", "db", "tier", "backend"), node("n1")),
		newPod("dev", "web-1", labels("app", "web", "tier", "frontend"), node("n3")),
		newPod("dev", "nolabels"),
		newPod("", "cluster-thing", labels("app", "web")),
	}
}

type listTest struct {
	name      string
	namespace string // "*" for all namespaces
	sel       string
	want      []string
}

func TestListerList(t *testing.T) {
	tests := []listTest{
		{"everything", "*", "", []string{"cluster-thing", "dev/nolabels", "dev/web-1", "prod/db-0", "prod/web-1", "prod/web-2"}},
		{"by label", "*", "app=web", []string{"cluster-thing", "dev/web-1", "prod/web-1", "prod/web-2"}},
		{"set-based", "*", "tier in (frontend,backend),!canary", []string{"dev/web-1", "prod/db-0", "prod/web-1"}},
		{"not equals matches missing labels", "*", "app!=web", []string{"dev/nolabels", "prod/db-0"}},
		{"no match", "*", "app=nope", nil},
		{"namespace, everything", "prod", "", []string{"prod/db-0", "prod/web-1", "prod/web-2"}},
		{"namespace and label", "prod", "app=web,canary", []string{"prod/web-2"}},
		{"other namespace", "dev", "app=web", []string{"dev/web-1"}},
		{"cluster scope", "", "", []string{"cluster-thing"}},
		{"unknown namespace", "nope", "", nil},
	}
	indexers := map[string]func() cache.Indexer[*corev1.Pod]{
		"indexer":            func() cache.Indexer[*corev1.Pod] { return newPodIndexer() },
		"foreign indexer":    func() cache.Indexer[*corev1.Pod] { return plainIndexer{newPodIndexer()} },
		"no namespace index": func() cache.Indexer[*corev1.Pod] { return noNamespaceIndex{newPodIndexer()} },
		"mutation detector": func() cache.Indexer[*corev1.Pod] {
			d, err := cache.NewMutationDetector(newPodIndexer(), cache.MutationDetectorConfig[*corev1.Pod]{})
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
	}
	for iname, newIndexer := range indexers {
		idx := newIndexer()
		for _, p := range listerPods() {
			if err := idx.Add(p); err != nil {
				t.Fatal(err)
			}
		}
		testListerList(t, iname, cache.NewLister(idx, corev1Pods), tests)
		testListerList(t, iname+", read-only view", cache.NewLister(cache.ReadOnly[*corev1.Pod](idx), corev1Pods), tests)
	}
}

func testListerList(t *testing.T, iname string, l cache.Lister[*corev1.Pod], tests []listTest) {
	for _, tt := range tests {
		t.Run(iname+"/"+tt.name, func(t *testing.T) {
			sel := selector.MustParseLabels(tt.sel)
			var got []*corev1.Pod
			var err error
			if tt.namespace == "*" {
				got, err = l.List(sel)
			} else {
				got, err = l.Namespace(tt.namespace).List(sel)
			}
			if err != nil {
				t.Fatal(err)
			}
			if keys := keysOf(t, got); !slices.Equal(keys, tt.want) {
				t.Errorf("List(%q) = %q, want %q", tt.sel, keys, tt.want)
			}
		})
	}
}

func TestListerGet(t *testing.T) {
	idx := newPodIndexer()
	for _, p := range listerPods() {
		_ = idx.Add(p)
	}
	for _, l := range []cache.Lister[*corev1.Pod]{cache.NewLister(idx, corev1Pods), cache.NewLister[*corev1.Pod](plainIndexer{idx}, corev1Pods), cache.NewLister(cache.ReadOnly[*corev1.Pod](idx), corev1Pods)} {
		tests := []struct {
			ns, name string
			found    bool
		}{
			{"prod", "web-1", true},
			{"dev", "web-1", true},
			{"", "cluster-thing", true},
			{"prod", "cluster-thing", false},
			{"staging", "web-1", false},
			{"", "web-1", false},
			{"prod", "", false},
			{"prod", "a/b", false},
		}
		for _, tt := range tests {
			p, err := l.Get(tt.ns, tt.name)
			p2, err2 := l.Namespace(tt.ns).Get(tt.name)
			if p != p2 || (err == nil) != (err2 == nil) {
				t.Errorf("Get(%q, %q) and Namespace(%q).Get(%q) disagree", tt.ns, tt.name, tt.ns, tt.name)
			}
			if tt.found {
				if err != nil || p.Namespace != tt.ns || p.Name != tt.name {
					t.Errorf("Get(%q, %q) = %v, %v", tt.ns, tt.name, p, err)
				}
				continue
			}
			if !cache.IsNotFound(err) || p != nil {
				t.Errorf("Get(%q, %q) = %v, %v; want NotFound", tt.ns, tt.name, p, err)
			}
		}
	}
}

func TestListerByIndex(t *testing.T) {
	idx := newPodIndexer()
	for _, p := range listerPods() {
		_ = idx.Add(p)
	}
	l := cache.NewLister(idx, corev1Pods)
	got, err := l.ByIndex("byNode", "n1")
	if err != nil {
		t.Fatal(err)
	}
	if keys := keysOf(t, got); !slices.Equal(keys, []string{"prod/db-0", "prod/web-1"}) {
		t.Errorf("ByIndex = %q", keys)
	}
	if _, err := l.ByIndex("nope", "x"); !errors.Is(err, cache.ErrNoSuchIndex) {
		t.Errorf("ByIndex(nope) = %v", err)
	}
}

// statusError stands for the client package's StatusError, which cache
// must not import.
type statusError struct{ st metav1.Status }

func (e statusError) Error() string         { return e.st.Message }
func (e statusError) Status() metav1.Status { return e.st }

func TestNotFoundError(t *testing.T) {
	tests := []struct {
		name     string
		resource metav1.GroupResource
		msg      string
	}{
		{"core", corev1Pods, `pods "web" not found`},
		{"group", metav1.GroupResource{Group: "apps", Resource: "deployments"}, `deployments.apps "web" not found`},
		{"none", metav1.GroupResource{}, `object "web" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := cache.NewLister(newPodIndexer(), tt.resource)
			_, err := l.Namespace("prod").Get("web")
			if err == nil || err.Error() != tt.msg {
				t.Fatalf("error %q, want %q", err, tt.msg)
			}
			var nf *cache.NotFoundError
			if !errors.As(err, &nf) || nf.Namespace != "prod" || nf.Name != "web" || nf.Resource != tt.resource {
				t.Fatalf("error %#v", err)
			}
			// What the client package's IsNotFound looks at.
			var st interface{ Status() metav1.Status }
			if !errors.As(err, &st) {
				t.Fatal("no Status method")
			}
			s := st.Status()
			if s.Code != http.StatusNotFound || s.Reason != metav1.StatusReasonNotFound || s.Message != tt.msg || s.Details.Name != "web" {
				t.Errorf("Status() = %+v", s)
			}
		})
	}
}

func TestIsNotFound(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"other", errors.New("boom"), false},
		{"cache", &cache.NotFoundError{Name: "x"}, true},
		{"wrapped", fmt.Errorf("ctx: %w", &cache.NotFoundError{Name: "x"}), true},
		{"api status", statusError{*metav1.NewNotFound(corev1Pods, "x")}, true},
		{"api 404 without reason", statusError{metav1.Status{Code: 404}}, true},
		{"api conflict", statusError{metav1.Status{Code: 409, Reason: metav1.StatusReasonConflict}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cache.IsNotFound(tt.err); got != tt.want {
				t.Errorf("IsNotFound(%v) = %v", tt.err, got)
			}
		})
	}
}

func TestListerClusterScoped(t *testing.T) {
	idx := cache.NewIndexer[*corev1.Namespace](nil)
	for _, n := range []string{"default", "kube-system"} {
		_ = idx.Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"system": fmt.Sprint(n != "default")}}})
	}
	l := cache.NewLister(idx, metav1.GroupResource{Resource: "namespaces"})
	ns, err := l.Get("", "kube-system")
	if err != nil || ns.Name != "kube-system" {
		t.Fatalf("Get = %v, %v", ns, err)
	}
	sys, _ := l.List(selector.MustParseLabels("system=true"))
	if len(sys) != 1 || sys[0].Name != "kube-system" {
		t.Fatalf("List = %v", sys)
	}
}
