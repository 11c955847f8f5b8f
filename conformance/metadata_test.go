package conformance

import (
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kapi-dev/kapi/codec"
)

// Accept headers of metadata-only requests, as client-go's metadata client
// and controller-runtime send them.
const (
	acceptPOM         = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	acceptPOMList     = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	acceptPOMProto    = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	acceptPOMListProt = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	onlyMediaTypes    = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
)

// protoPartialObjectMetadata decodes a meta.v1.PartialObjectMetadata
// (metadata 1) into the shape of its JSON form, with the ObjectMeta fields
// protoObjectMeta knows.
func protoPartialObjectMetadata(b []byte) (obj, error) {
	o := obj{}
	err := protoFields(b, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		if num == 1 {
			m, err := protoObjectMeta(v)
			o["metadata"] = m
			return err
		}
		return nil
	})
	return o, err
}

// protoPartialObjectMetadataList decodes a meta.v1.PartialObjectMetadataList
// (ListMeta 1 with resourceVersion 2, items 2).
func protoPartialObjectMetadataList(b []byte) (resourceVersion string, list []obj, err error) {
	err = protoFields(b, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case 1:
			return protoFields(v, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
				if num == 2 {
					resourceVersion = string(v)
				}
				return nil
			})
		case 2:
			it, err := protoPartialObjectMetadata(v)
			list = append(list, it)
			return err
		}
		return nil
	})
	return resourceVersion, list, err
}

// protoMetaView keeps the metadata fields protoObjectMeta decodes.
func protoMetaView(o obj) obj { return jsonConfigMapView(o)["metadata"].(map[string]any) }

// metadataKind is a resource the metadata cases run on.
type metadataKind struct {
	name       string
	collection string                              // the collection's path
	create     func(t *testing.T, name string) obj // creates an object, labelled
	typeName   string                              // kube-apiserver's Go type of an object
}

// TestPartialObjectMetadata checks metadata-only requests (Accept …
// as=PartialObjectMetadata / PartialObjectMetadataList;g=meta.k8s.io;v=v1)
// on get, list and watch, in JSON and protobuf, for a built-in kind and a
// custom resource: the answer is the object's metadata, whole, under kind
// PartialObjectMetadata; watch events carry it too.
func TestPartialObjectMetadata(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	group, _ := e.createCRD(t)
	kinds := []metadataKind{
		{"configmaps", cmPath(ns), func(t *testing.T, name string) obj {
			return expect(t, e.post(t, cmPath(ns), obj{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": obj{"name": name, "labels": obj{"app": "meta"}, "annotations": obj{"note": "x"}, "finalizers": []any{"example.com/keep"}},
				"data":     obj{"k": "v"}}), http.StatusCreated)
		}, "*core.ConfigMap"},
		{"widgets", "/apis/" + group + "/v1/namespaces/" + ns + "/widgets", func(t *testing.T, name string) obj {
			w := widget(name, obj{"size": 1})
			w["apiVersion"] = group + "/v1"
			w["metadata"] = obj{"name": name, "labels": obj{"app": "meta"}, "annotations": obj{"note": "x"}}
			return expect(t, e.post(t, "/apis/"+group+"/v1/namespaces/"+ns+"/widgets", w), http.StatusCreated)
		}, "*unstructured.Unstructured"},
	}
	t.Run("scale", func(t *testing.T) {
		// A subresource's object converts too.
		expect(t, e.post(t, "/apis/apps/v1/namespaces/"+ns+"/deployments", deployment("d", 1)), http.StatusCreated)
		path := "/apis/apps/v1/namespaces/" + ns + "/deployments/d/scale"
		p := expect(t, e.get(t, path, "Accept", acceptPOM), http.StatusOK)
		if str(p, "kind") != "PartialObjectMetadata" || name(p) != "d" || len(p) != 3 {
			t.Errorf("scale metadata: %s", compact(p))
		}
		checkStatus(t, e.get(t, path, "Accept", acceptPOMList), http.StatusNotAcceptable, "NotAcceptable",
			"you requested PartialObjectMetadataList, but the requested object is not a list (*autoscaling.Scale)")
	})
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			k.create(t, "m1")
			t.Cleanup(func() {
				e.modify(t, k.collection+"/m1", true, func(o obj) { delete(o["metadata"].(map[string]any), "finalizers") })
			})
			path := k.collection + "/m1"
			full := expect(t, e.get(t, path), http.StatusOK)

			t.Run("get json", func(t *testing.T) {
				for _, v := range []string{"v1", "v1beta1"} {
					r := e.get(t, path, "Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v="+v)
					p := expect(t, r, http.StatusOK)
					if str(p, "kind") != "PartialObjectMetadata" || str(p, "apiVersion") != "meta.k8s.io/"+v || len(p) != 3 {
						t.Errorf("%s: %s", v, compact(p))
					}
					if !reflect.DeepEqual(p["metadata"], full["metadata"]) {
						t.Errorf("%s: metadata\n%s\nwant the object's\n%s", v, compact(p["metadata"]), compact(full["metadata"]))
					}
				}
			})
			t.Run("get protobuf", func(t *testing.T) {
				r := e.get(t, path, "Accept", acceptPOMProto)
				if r.Code != http.StatusOK || r.Header.Get("Content-Type") != codec.MediaTypeProtobuf {
					t.Fatalf("want 200 in protobuf:\n%s", r)
				}
				u, err := codec.DecodeEnvelope(r.Body)
				if err != nil {
					t.Fatal(err)
				}
				if u.TypeMeta.Kind != "PartialObjectMetadata" || u.TypeMeta.APIVersion != "meta.k8s.io/v1" {
					t.Errorf("envelope %+v", u.TypeMeta)
				}
				p, err := protoPartialObjectMetadata(u.Raw)
				if err != nil {
					t.Fatal(err)
				}
				if want := protoMetaView(full); !reflect.DeepEqual(p["metadata"], want) {
					t.Errorf("metadata\n%s\nwant\n%s", compact(p["metadata"]), compact(want))
				}
			})
			t.Run("list json", func(t *testing.T) {
				l := expect(t, e.get(t, k.collection, "Accept", acceptPOMList), http.StatusOK)
				if str(l, "kind") != "PartialObjectMetadataList" || str(l, "apiVersion") != "meta.k8s.io/v1" || rv(l) == "" {
					t.Errorf("list %s", compact(l))
				}
				its := items(t, l)
				var found bool
				for _, it := range its {
					if str(it, "kind") != "PartialObjectMetadata" || str(it, "apiVersion") != "meta.k8s.io/v1" || len(it) != 3 {
						t.Errorf("item %s", compact(it))
					}
					if name(it) == "m1" {
						found = true
						if !reflect.DeepEqual(it["metadata"], full["metadata"]) {
							t.Errorf("item metadata %s, want %s", compact(it["metadata"]), compact(full["metadata"]))
						}
					}
				}
				if !found {
					t.Errorf("m1 not listed: %s", compact(l))
				}
			})
			t.Run("list protobuf", func(t *testing.T) {
				r := e.get(t, k.collection, "Accept", acceptPOMListProt)
				if r.Code != http.StatusOK || r.Header.Get("Content-Type") != codec.MediaTypeProtobuf {
					t.Fatalf("want 200 in protobuf:\n%s", r)
				}
				u, err := codec.DecodeEnvelope(r.Body)
				if err != nil {
					t.Fatal(err)
				}
				if u.TypeMeta.Kind != "PartialObjectMetadataList" || u.TypeMeta.APIVersion != "meta.k8s.io/v1" {
					t.Errorf("envelope %+v", u.TypeMeta)
				}
				listRV, its, err := protoPartialObjectMetadataList(u.Raw)
				if err != nil {
					t.Fatal(err)
				}
				if listRV == "" {
					t.Error("no resourceVersion")
				}
				i := slices.IndexFunc(its, func(o obj) bool { return name(o) == "m1" })
				if i < 0 {
					t.Fatalf("m1 not listed: %v", its)
				}
				if want := protoMetaView(full); !reflect.DeepEqual(its[i]["metadata"], want) {
					t.Errorf("metadata\n%s\nwant\n%s", compact(its[i]["metadata"]), compact(want))
				}
			})
			for _, accept := range []string{acceptPOM, acceptPOMProto} {
				t.Run("watch "+accept, func(t *testing.T) {
					start := expect(t, e.get(t, k.collection), http.StatusOK)
					w := e.watch(t, k.collection+q("watch", "1", "resourceVersion", rv(start), "timeoutSeconds", "60"), "Accept", accept)
					o := k.create(t, "w-"+randomSuffix())
					wpath := k.collection + "/" + name(o)
					mod := e.modify(t, wpath, false, func(o obj) {
						o["metadata"].(map[string]any)["labels"] = obj{"app": "changed"}
						delete(o["metadata"].(map[string]any), "finalizers")
					})
					expect(t, e.del(t, wpath, nil), http.StatusOK)
					for i, want := range []struct {
						typ string
						o   obj
					}{{"ADDED", o}, {"MODIFIED", mod}, {"DELETED", mod}} {
						ev := w.next(t, 10*time.Second)
						if isProtobuf(accept) {
							if ev.TypeMeta.Kind != "PartialObjectMetadata" || ev.TypeMeta.APIVersion != "meta.k8s.io/v1" {
								t.Fatalf("event %d: %s %+v", i, ev.Type, ev.TypeMeta)
							}
						} else if str(ev.Object, "kind") != "PartialObjectMetadata" || str(ev.Object, "apiVersion") != "meta.k8s.io/v1" || len(ev.Object) != 3 {
							t.Fatalf("event %d: %s %s", i, ev.Type, compact(ev.Object))
						}
						if ev.Type != want.typ || name(ev.Object) != name(o) {
							t.Fatalf("event %d: %s %s, want %s of %s", i, ev.Type, name(ev.Object), want.typ, name(o))
						}
						if want.typ == "DELETED" {
							continue // carries the deletion's resourceVersion
						}
						wantMeta := want.o["metadata"]
						if isProtobuf(accept) {
							wantMeta = protoMetaView(want.o)
						}
						if !reflect.DeepEqual(ev.Object["metadata"], wantMeta) {
							t.Errorf("event %d metadata\n%s\nwant\n%s", i, compact(ev.Object["metadata"]), compact(wantMeta))
						}
					}
				})
			}

			t.Run("writes", func(t *testing.T) {
				// Writes answer in the conversion asked for too; a delete
				// that removes its object answers a Status, unconverted.
				w := k.create(t, "wr-"+randomSuffix())
				wpath := k.collection + "/" + name(w)
				p := expect(t, e.do(t, http.MethodPatch, wpath, `{"metadata":{"labels":{"patched":"yes"},"finalizers":null}}`,
					"Content-Type", "application/merge-patch+json", "Accept", acceptPOM), http.StatusOK)
				if str(p, "kind") != "PartialObjectMetadata" || str(p, "metadata", "labels", "patched") != "yes" || len(p) != 3 {
					t.Errorf("patch: %s", compact(p))
				}
				r := e.do(t, http.MethodPatch, wpath, `{"metadata":{"labels":{"again":"yes"}}}`,
					"Content-Type", "application/merge-patch+json", "Accept", acceptPOMList)
				if k.typeName == "*core.ConfigMap" {
					checkStatus(t, r, http.StatusNotAcceptable, "NotAcceptable",
						"you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)")
				}
				st := expect(t, e.del(t, wpath, nil, "Accept", acceptPOM), http.StatusOK)
				if str(st, "kind") != "Status" || str(st, "status") != "Success" {
					t.Errorf("delete: %s", compact(st))
				}
				if k.typeName == "*core.ConfigMap" {
					c := expect(t, e.post(t, k.collection, obj{"metadata": obj{"name": "wr-" + randomSuffix()}}, "Accept", acceptPOM), http.StatusCreated)
					if str(c, "kind") != "PartialObjectMetadata" || len(c) != 3 {
						t.Errorf("create: %s", compact(c))
					}
					tb := expect(t, e.post(t, k.collection, obj{"metadata": obj{"name": "wr-" + randomSuffix()}}, "Accept", "application/json;as=Table;g=meta.k8s.io;v=v1"), http.StatusCreated)
					if str(tb, "kind") != "Table" {
						t.Errorf("create as Table: %s", compact(tb))
					}
				}
			})
			t.Run("negotiation", func(t *testing.T) {
				notAList := func(r *response) {
					t.Helper()
					if k.typeName == "*unstructured.Unstructured" {
						// kube-apiserver's answer for custom resources.
						if r.Code != http.StatusInternalServerError || str(decode(t, r.Body), "message") != "content is not a list" {
							t.Errorf("want 500 content is not a list:\n%s", r)
						}
						return
					}
					checkStatus(t, r, http.StatusNotAcceptable, "NotAcceptable",
						"you requested PartialObjectMetadataList, but the requested object is not a list ("+k.typeName+")")
				}
				// A list asked of one object, even with a JSON fallback: no
				// fallback, the conversion is chosen before it fails.
				notAList(e.get(t, path, "Accept", acceptPOMList))
				notAList(e.get(t, path, "Accept", acceptPOMList+", application/json"))
				// An object's metadata asked of a list.
				for _, accept := range []string{acceptPOM, acceptPOM + ", application/json"} {
					checkStatus(t, e.get(t, k.collection, "Accept", accept), http.StatusNotAcceptable, "NotAcceptable",
						"you requested PartialObjectMetadata, but the requested object is a list ("+k.typeName+"List)")
				}
				// The first entry that fits wins: a plain JSON entry first
				// gets the object.
				if o := expect(t, e.get(t, path, "Accept", "application/json, "+acceptPOM), http.StatusOK); str(o, "kind") == "PartialObjectMetadata" {
					t.Errorf("application/json first: %s", compact(o))
				}
				// Versions and groups the server lacks fall back, or are 406.
				for _, accept := range []string{
					"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2",
					"application/json;as=PartialObjectMetadata;g=example.com;v=v1",
					"application/json;as=PartialObjectMetadata",
				} {
					checkStatus(t, e.get(t, path, "Accept", accept), http.StatusNotAcceptable, "NotAcceptable", onlyMediaTypes)
					if o := expect(t, e.get(t, path, "Accept", accept+", application/json"), http.StatusOK); name(o) != "m1" || str(o, "kind") == "PartialObjectMetadata" {
						t.Errorf("%s with a JSON fallback: %s", accept, compact(o))
					}
				}
				// client-go's metadata client: protobuf first, then JSON.
				r := e.get(t, k.collection, "Accept", acceptPOMListProt+","+acceptPOMList+",application/json")
				if r.Code != http.StatusOK || r.Header.Get("Content-Type") != codec.MediaTypeProtobuf {
					t.Errorf("metadata client's list: %s", r)
				}
				// YAML, and a watch in YAML.
				r = e.get(t, path, "Accept", "application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
				if r.Code != http.StatusOK || r.Header.Get("Content-Type") != "application/yaml" {
					t.Errorf("yaml: %s", r)
				}
				r = e.get(t, k.collection+q("watch", "1", "timeoutSeconds", "1"), "Accept", "application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
				checkStatus(t, r, http.StatusNotAcceptable, "NotAcceptable",
					"only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch")
			})
		})
	}
}
