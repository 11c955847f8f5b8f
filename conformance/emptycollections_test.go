package conformance

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestEmptyCollections checks bodies with empty lists and maps, as Helm
// charts write them (`tolerations: []`, `nodeSelector: {}`, a ConfigMap's
// `data: {}`, `annotations: {}`, a webhook's `rules: []`). Built-in objects
// are stored as protobuf, which cannot tell an empty list or map from an
// absent one: they are read back without them (a list the type always
// writes, as an EndpointSlice's endpoints, as null), the same body sent
// again is no change (no new resourceVersion, no MODIFIED event), and a
// later labels-only patch does not move the generation. managedFields list
// only what the type writes when empty. A custom resource, stored as JSON,
// keeps `[]` and `{}`.
func TestEmptyCollections(t *testing.T) {
	e := target
	ns := e.namespace(t)
	podSpec := func() obj {
		return obj{
			"tolerations": []any{}, "volumes": []any{}, "nodeSelector": obj{}, "imagePullSecrets": []any{},
			"containers": []any{obj{"name": "c", "image": "nginx", "env": []any{}, "ports": []any{}, "volumeMounts": []any{}}},
		}
	}
	emptyMeta := func(name string) obj {
		return obj{"name": name, "annotations": obj{}, "labels": obj{"app": "x"}}
	}
	whName := "fix12-empty-" + randomSuffix()
	cases := []struct {
		name string
		path string // the collection
		body obj
		// gone are the paths the object is read back without; null those it
		// is read back with null; noFields the managedFields entries that
		// must not be recorded.
		gone, null [][]string
		noFields   []string
		controlled bool // a controller of the cluster writes its status
		// strict is a kind whose strategy compares specs with
		// reflect.DeepEqual: the same body is then a change (a new
		// resourceVersion and generation), its empty lists differing from
		// the stored nil ones.
		strict bool
		// patch is the metadata-only patch that must not move the
		// generation (labels unless set).
		patch obj
	}{{
		name: "podtemplate", path: "/api/v1/namespaces/" + ns + "/podtemplates",
		body: obj{"apiVersion": "v1", "kind": "PodTemplate", "metadata": emptyMeta("pt"),
			"template": obj{"metadata": obj{"annotations": obj{}, "labels": obj{}}, "spec": podSpec()}},
		gone: [][]string{{"metadata", "annotations"}, {"template", "metadata", "annotations"}, {"template", "metadata", "labels"},
			{"template", "spec", "tolerations"}, {"template", "spec", "volumes"}, {"template", "spec", "nodeSelector"},
			{"template", "spec", "imagePullSecrets"}},
		noFields: []string{`"f:tolerations"`, `"f:volumes"`, `"f:nodeSelector"`, `"f:env"`, `"f:ports"`, `"f:annotations"`, `"f:volumeMounts"`},
	}, {
		name: "deployment", path: "/apis/apps/v1/namespaces/" + ns + "/deployments",
		body: obj{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": emptyMeta("d"),
			"spec": obj{"replicas": 0, "selector": obj{"matchLabels": obj{"app": "x"}},
				"template": obj{"metadata": obj{"annotations": obj{}, "labels": obj{"app": "x"}}, "spec": podSpec()}}},
		gone: [][]string{{"metadata", "annotations"}, {"spec", "template", "metadata", "annotations"},
			{"spec", "template", "spec", "tolerations"}, {"spec", "template", "spec", "volumes"}, {"spec", "template", "spec", "nodeSelector"}},
		noFields:   []string{`"f:tolerations"`, `"f:volumes"`, `"f:nodeSelector"`, `"f:env"`, `"f:annotations"`},
		controlled: true,
	}, {
		name: "configmap", path: "/api/v1/namespaces/" + ns + "/configmaps",
		body:     obj{"apiVersion": "v1", "kind": "ConfigMap", "metadata": emptyMeta("cm"), "data": obj{}, "binaryData": obj{}},
		gone:     [][]string{{"metadata", "annotations"}, {"data"}, {"binaryData"}},
		noFields: []string{`"f:data"`, `"f:binaryData"`, `"f:annotations"`},
	}, {
		name: "endpointslice", path: "/apis/discovery.k8s.io/v1/namespaces/" + ns + "/endpointslices",
		body: obj{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": emptyMeta("es"),
			"addressType": "IPv4", "endpoints": []any{}, "ports": []any{}},
		gone:  [][]string{{"metadata", "annotations"}},
		null:  [][]string{{"endpoints"}, {"ports"}},
		patch: obj{"metadata": obj{"annotations": obj{"b": "y"}}}, // its labels move its generation
	}, {
		name: "validatingwebhookconfiguration", path: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
		body: obj{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration", "metadata": emptyMeta(whName),
			"webhooks": []any{obj{"name": "fix12.example.com", "rules": []any{}, "sideEffects": "None", "admissionReviewVersions": []any{"v1"},
				"clientConfig": obj{"url": "https://fix12.example.com/validate"}}}},
		gone:     [][]string{{"metadata", "annotations"}},
		noFields: []string{`"f:rules"`},
		strict:   true,
	}, {
		name: "networkpolicy", path: "/apis/networking.k8s.io/v1/namespaces/" + ns + "/networkpolicies",
		body: obj{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": emptyMeta("np"),
			"spec": obj{"podSelector": obj{"matchLabels": obj{}}, "ingress": []any{}, "policyTypes": []any{"Ingress"}}},
		gone:     [][]string{{"metadata", "annotations"}, {"spec", "ingress"}, {"spec", "podSelector", "matchLabels"}},
		noFields: []string{`"f:ingress"`, `"f:matchLabels"`},
		strict:   true,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			created := expect(t, e.post(t, c.path, c.body), http.StatusCreated)
			item := c.path + "/" + name(created)
			t.Cleanup(func() { e.del(t, item, nil) })
			gen, _ := num(created, "metadata", "generation")
			got := expect(t, e.get(t, item), http.StatusOK)
			for what, o := range map[string]obj{"create": created, "get": got} {
				for _, p := range c.gone {
					if v, ok := field(o, p...); ok {
						t.Errorf("%s: %s is %v, want it absent", what, strings.Join(p, "."), compact(v))
					}
				}
				for _, p := range c.null {
					if v, ok := field(o, p...); !ok || v != nil {
						t.Errorf("%s: %s is %v (present %v), want null", what, strings.Join(p, "."), compact(v), ok)
					}
				}
				mf, _ := json.Marshal(o["metadata"].(obj)["managedFields"])
				for _, f := range c.noFields {
					if strings.Contains(string(mf), f) {
						t.Errorf("%s: managedFields record %s: %s", what, f, mf)
					}
				}
			}

			// The same body again is no change: same resourceVersion, and
			// (without a controller writing the object) no event.
			var w *watchStream
			if !c.controlled {
				w = e.watch(t, c.path+q("watch", "1", "resourceVersion", rv(got), "fieldSelector", "metadata.name="+name(got)))
			}
			var same obj
			for attempt := 0; ; attempt++ {
				body := clone(c.body)
				body["metadata"].(obj)["resourceVersion"] = rv(got)
				r := e.put(t, item, body)
				if r.Code == http.StatusConflict && c.controlled && attempt < 10 {
					got = expect(t, e.get(t, item), http.StatusOK) // the controller wrote its status
					continue
				}
				same = expect(t, r, http.StatusOK)
				break
			}
			switch {
			case c.strict:
				gen++
				if rv(same) == rv(got) {
					t.Errorf("the same body again kept resourceVersion %s, want a new one", rv(got))
				}
				if g, _ := num(same, "metadata", "generation"); g != gen {
					t.Errorf("generation %d after the same body again, want %d", g, gen)
				}
			case rv(same) != rv(got):
				t.Errorf("the same body again wrote resourceVersion %s, want %s unchanged", rv(same), rv(got))
			}

			// A metadata-only patch moves the resourceVersion, not the generation.
			patch := c.patch
			if patch == nil {
				patch = obj{"metadata": obj{"labels": obj{"b": "y"}}}
			}
			patched := expect(t, e.do(t, http.MethodPatch, item, patch,
				"Content-Type", "application/merge-patch+json"), http.StatusOK)
			if g, _ := num(patched, "metadata", "generation"); g != gen {
				t.Errorf("generation %d after a metadata-only patch, want %d", g, gen)
			}
			if w != nil {
				if c.strict {
					if ev := w.nextChange(t, 10*time.Second); ev.Type != "MODIFIED" || rv(ev.Object) != rv(same) {
						t.Errorf("first event after the same body again: %s, want MODIFIED rv=%s (the update's)", ev, rv(same))
					}
				}
				if ev := w.nextChange(t, 10*time.Second); ev.Type != "MODIFIED" || rv(ev.Object) != rv(patched) {
					t.Errorf("next event after the same body again: %s, want MODIFIED rv=%s (the patch's)", ev, rv(patched))
				}
			}
		})
	}
}

// TestEmptyCollectionsCustom checks a custom resource's empty lists and
// maps: stored as JSON, those of its content are kept (`tags: []` reads
// back as []), while those of its metadata are dropped as for any object
// (kube-apiserver reads its metadata as a typed ObjectMeta), managedFields
// included; the same body again is no change.
func TestEmptyCollectionsCustom(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	group := "c" + randomSuffix() + ".conformance.kapi.dev"
	crd := widgetCRD(group)
	versions, _ := field(crd, "spec", "versions")
	for _, v := range versions.([]any) {
		props, _ := field(v.(obj), "schema", "openAPIV3Schema", "properties", "spec", "properties")
		props.(obj)["tags"] = obj{"type": "array", "items": obj{"type": "string"}}
		props.(obj)["extra"] = obj{"type": "object", "additionalProperties": obj{"type": "string"}}
	}
	name := "widgets." + group
	expect(t, e.post(t, crdPath, crd), http.StatusCreated)
	t.Cleanup(func() { e.del(t, crdPath+"/"+name, nil) })
	e.waitCollection(t, crdPath+q("fieldSelector", "metadata.name="+name), "the CRD to be Established", 30*time.Second,
		func(objs map[string]obj) bool {
			for _, o := range objs {
				return conditionStatus(o, "Established") == "True"
			}
			return false
		})
	base := "/apis/" + group + "/v1/namespaces/" + ns + "/widgets"
	body := func() obj {
		return obj{"apiVersion": group + "/v1", "kind": "Widget",
			"metadata": obj{"name": "w", "annotations": obj{}, "labels": obj{}, "finalizers": []any{}},
			"spec":     obj{"size": 1, "tags": []any{}, "extra": obj{}}}
	}
	var created *response
	// A just-established CRD may take a moment to be served everywhere.
	e.waitCondition(t, "the widget to be created", func() bool {
		created = e.post(t, base, body())
		return created.Code != http.StatusNotFound
	})
	c := expect(t, created, http.StatusCreated)
	got := expect(t, e.get(t, base+"/w"), http.StatusOK)
	for what, o := range map[string]obj{"create": c, "get": got} {
		for _, k := range []string{"annotations", "labels", "finalizers"} {
			if has(o, "metadata", k) {
				t.Errorf("%s: metadata.%s kept: %s", what, k, compact(o["metadata"]))
			}
		}
		if v, _ := field(o, "spec", "tags"); compact(v) != "[]" {
			t.Errorf("%s: spec.tags %s, want []", what, compact(v))
		}
		if v, _ := field(o, "spec", "extra"); compact(v) != "{}" {
			t.Errorf("%s: spec.extra %s, want {}", what, compact(v))
		}
		mf := compact(o["metadata"].(obj)["managedFields"])
		if strings.Contains(mf, `"f:metadata"`) || !strings.Contains(mf, `"f:tags"`) {
			t.Errorf("%s: managedFields %s: want spec.tags and no metadata", what, mf)
		}
	}
	again := body()
	again["metadata"].(obj)["resourceVersion"] = rv(got)
	if same := expect(t, e.put(t, base+"/w", again), http.StatusOK); rv(same) != rv(got) {
		t.Errorf("the same body again wrote resourceVersion %s, want %s unchanged", rv(same), rv(got))
	}
	patched := expect(t, e.do(t, http.MethodPatch, base+"/w", obj{"metadata": obj{"labels": obj{"b": "y"}}},
		"Content-Type", "application/merge-patch+json"), http.StatusOK)
	if g, _ := num(patched, "metadata", "generation"); g != 1 {
		t.Errorf("generation %d after a labels-only patch, want 1", g)
	}
}
