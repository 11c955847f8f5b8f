package client

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	autoscalingv1 "github.com/kapi-dev/kapi/api/autoscaling/v1"
	autoscalingv2 "github.com/kapi-dev/kapi/api/autoscaling/v2"
	batchv1 "github.com/kapi-dev/kapi/api/batch/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	eventsv1 "github.com/kapi-dev/kapi/api/events/v1"
	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
)

// discoveredResource is a resource of a captured APIResourceList.
type discoveredResource struct {
	Name       string   `json:"name"`
	Kind       string   `json:"kind"`
	Namespaced bool     `json:"namespaced"`
	ShortNames []string `json:"shortNames"`
	Categories []string `json:"categories"`
}

// TestBuiltinSchemeMatchesDiscovery checks every resource (not subresource)
// of the legacy discovery captured from kube-apiserver v1.37.2: the builtin
// scheme has a Go type for it, named as its kind, in the package of its group
// version, that encodes itself as protobuf, registered with the captured
// resource name, scope, short names and categories.
func TestBuiltinSchemeMatchesDiscovery(t *testing.T) {
	b, err := os.ReadFile("../testdata/golden-1.37/discovery/legacy.json")
	if err != nil {
		t.Fatal(err)
	}
	var docs map[string]json.RawMessage
	if err := json.Unmarshal(b, &docs); err != nil {
		t.Fatal(err)
	}
	s := NewBuiltinScheme()
	n := 0
	for path, raw := range docs {
		var list struct {
			GroupVersion string               `json:"groupVersion"`
			Resources    []discoveredResource `json:"resources"`
		}
		if path == "/api" || path == "/apis" || json.Unmarshal(raw, &list) != nil || list.GroupVersion == "" {
			continue
		}
		group, version, ok := strings.Cut(list.GroupVersion, "/")
		if !ok {
			group, version = "", list.GroupVersion
		}
		pkg := "core"
		if group != "" {
			pkg, _, _ = strings.Cut(group, ".")
		}
		for _, r := range list.Resources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			n++
			gvk := GroupVersionKind{Group: group, Version: version, Kind: r.Kind}
			typ, ok := s.byGVK[gvk]
			if !ok {
				t.Errorf("%s (%s): no Go type registered", gvk, r.Name)
				continue
			}
			if want := "github.com/kapi-dev/kapi/api/" + pkg + "/" + version; typ.PkgPath() != want || typ.Name() != r.Kind {
				t.Errorf("%s: registered type %s.%s, want %s.%s", gvk, typ.PkgPath(), typ.Name(), want, r.Kind)
			}
			info, _ := s.lookup(typ)
			k := info.kind
			if k.Resource != r.Name || k.Namespaced != r.Namespaced || !slices.Equal(k.ShortNames, r.ShortNames) ||
				!slices.Equal(k.Categories, r.Categories) {
				t.Errorf("%s: registered %+v, discovery says %+v", gvk, k, r)
			}
			if !k.Protobuf || !info.protobuf {
				t.Errorf("%s: protobuf not used (kind %v, type encodes itself %v)", gvk, k.Protobuf, info.protobuf)
			}
		}
	}
	if n < 70 {
		t.Fatalf("only %d resources in the capture", n)
	}
	if got := len(s.Kinds()); got != n {
		t.Errorf("scheme has %d kinds, discovery %d resources", got, n)
	}
}

func TestKindForBuiltinTypes(t *testing.T) {
	s := NewBuiltinScheme()
	for _, tc := range []struct {
		name string
		got  func(*Scheme) (Kind, bool)
		want Kind
	}{
		{"pod", KindFor[corev1.Pod], Kind{Version: "v1", Resource: "pods", Kind: "Pod", ListKind: "PodList",
			Namespaced: true, Protobuf: true, ShortNames: []string{"po"}, Categories: []string{"all"}}},
		{"job", KindFor[batchv1.Job], Kind{Group: "batch", Version: "v1", Resource: "jobs", Kind: "Job", ListKind: "JobList",
			Namespaced: true, Protobuf: true, Categories: []string{"all"}}},
		{"cluster role", KindFor[rbacv1.ClusterRole], Kind{Group: "rbac.authorization.k8s.io", Version: "v1",
			Resource: "clusterroles", Kind: "ClusterRole", ListKind: "ClusterRoleList", Protobuf: true}},
		{"hpa v1", KindFor[autoscalingv1.HorizontalPodAutoscaler], Kind{Group: "autoscaling", Version: "v1",
			Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", ListKind: "HorizontalPodAutoscalerList",
			Namespaced: true, Protobuf: true, ShortNames: []string{"hpa"}, Categories: []string{"all"}}},
		{"hpa v2", KindFor[autoscalingv2.HorizontalPodAutoscaler], Kind{Group: "autoscaling", Version: "v2",
			Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", ListKind: "HorizontalPodAutoscalerList",
			Namespaced: true, Protobuf: true, ShortNames: []string{"hpa"}, Categories: []string{"all"}}},
		{"events.k8s.io event", KindFor[eventsv1.Event], Kind{Group: "events.k8s.io", Version: "v1",
			Resource: "events", Kind: "Event", ListKind: "EventList", Namespaced: true, Protobuf: true, ShortNames: []string{"ev"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.got(s)
			if !ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("KindFor = %+v, %v; want %+v", got, ok, tc.want)
			}
		})
	}
}

func TestKindForReturnsACopy(t *testing.T) {
	s := NewBuiltinScheme()
	k, _ := KindFor[corev1.Pod](s)
	k.ShortNames[0] = "x"
	if k2, _ := KindFor[corev1.Pod](s); k2.ShortNames[0] != "po" {
		t.Errorf("KindFor shares the registration's short names: %v", k2.ShortNames)
	}
}

func TestSchemeNew(t *testing.T) {
	s := NewBuiltinScheme()
	obj, ok := s.New(GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"})
	if _, isJob := obj.(*batchv1.Job); !ok || !isJob {
		t.Errorf("New(batch/v1 Job) = %T, %v", obj, ok)
	}
	if obj, ok := s.New(GroupVersionKind{Group: "batch", Version: "v1", Kind: "Nope"}); ok || obj != nil {
		t.Errorf("New(unknown) = %T, %v", obj, ok)
	}
}
