package apiserver

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	apidiscoveryv2 "github.com/kapi-dev/kapi/api/apidiscovery/v2"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/golden"
	"github.com/kapi-dev/kapi/internal/kjson"
	"sigs.k8s.io/yaml"
)

const acceptAggregatedJSON = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"

// The captured aggregated document decodes into kapi's types and encodes
// back to the same bytes, in JSON and in protobuf, and kapi's ETag of it is
// kube-apiserver's.
func TestAggregatedDiscoveryWire(t *testing.T) {
	x, err := golden.Load("aggregated-discovery-api")
	if err != nil {
		t.Fatal(err)
	}
	list := &apidiscoveryv2.APIGroupDiscoveryList{}
	if err := kjson.Unmarshal(x.ResponseBody, list); err != nil {
		t.Fatal(err)
	}
	js, err := kjson.Marshal(list)
	if err != nil || !bytes.Equal(js, bytes.TrimSuffix(x.ResponseBody, []byte("\n"))) {
		t.Errorf("JSON round trip differs (%v):\n got: %.300s\nwant: %.300s", err, js, x.ResponseBody)
	}
	if etag, err := discoveryETag(list); err != nil || etag != x.ResponseHeader["Etag"] {
		t.Errorf("ETag %s (%v), kube-apiserver's %s", etag, err, x.ResponseHeader["Etag"])
	}

	pb, err := golden.Load("aggregated-discovery-api-protobuf")
	if err != nil {
		t.Fatal(err)
	}
	fromPB := &apidiscoveryv2.APIGroupDiscoveryList{}
	tm, err := codec.UnmarshalProtobuf(pb.ResponseBody, fromPB)
	if err != nil || tm != aggregatedTypeMeta {
		t.Fatalf("protobuf: %v, %+v", err, tm)
	}
	fromPB.TypeMeta = list.TypeMeta
	if !reflect.DeepEqual(fromPB, list) {
		t.Errorf("the protobuf capture decodes to another document than the JSON one")
	}
	again, err := codec.MarshalProtobuf(aggregatedTypeMeta, fromPB)
	if err != nil || !bytes.Equal(again, pb.ResponseBody) {
		t.Errorf("protobuf round trip differs: %v", err)
	}
}

func aggregatedGet(t *testing.T, s *Server, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.Header.Set("Accept", acceptAggregatedJSON)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// The same document in every representation, an ETag that changes with the
// resources served, and 304 for a client that has it.
func TestAggregatedDiscoveryRepresentations(t *testing.T) {
	s, _ := newCRDTestServer(t)
	for _, path := range []string{"/api", "/apis"} {
		t.Run(path, func(t *testing.T) {
			w := aggregatedGet(t, s, path)
			if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" ||
				w.Header().Get("Vary") != "Accept" || w.Header().Get("Cache-Control") != "public" || len(w.Header().Get("Etag")) != 130 {
				t.Fatalf("%d %v", w.Code, w.Header())
			}
			want := &apidiscoveryv2.APIGroupDiscoveryList{}
			if err := kjson.Unmarshal(w.Body.Bytes(), want); err != nil {
				t.Fatal(err)
			}
			etag := w.Header().Get("Etag")

			pb := aggregatedGet(t, s, path, "Accept", "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
			got := &apidiscoveryv2.APIGroupDiscoveryList{}
			tm, err := codec.UnmarshalProtobuf(pb.Body.Bytes(), got)
			got.TypeMeta = tm
			if err != nil || !reflect.DeepEqual(got, want) || pb.Header().Get("Etag") != etag ||
				pb.Header().Get("Content-Type") != "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" {
				t.Errorf("protobuf: %v %v\n got: %+v\nwant: %+v", err, pb.Header(), got, want)
			}

			y := aggregatedGet(t, s, path, "Accept", "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
			got = &apidiscoveryv2.APIGroupDiscoveryList{}
			js, err := yaml.YAMLToJSON(y.Body.Bytes())
			if err == nil {
				err = kjson.Unmarshal(js, got)
			}
			if err != nil || !reflect.DeepEqual(got, want) || !strings.HasPrefix(y.Header().Get("Content-Type"), "application/yaml;") {
				t.Errorf("YAML: %v %v", err, y.Header())
			}

			if nm := aggregatedGet(t, s, path, "If-None-Match", etag); nm.Code != http.StatusNotModified || nm.Body.Len() != 0 || nm.Header().Get("Etag") != etag {
				t.Errorf("If-None-Match: %d %v %q", nm.Code, nm.Header(), nm.Body)
			}
			if other := aggregatedGet(t, s, path, "If-None-Match", `"0"`); other.Code != http.StatusOK {
				t.Errorf("another ETag: %d", other.Code)
			}
		})
	}
}

// Custom resources appear in the aggregated document with their CRD and
// leave it with it; the ETag follows.
func TestAggregatedDiscoveryCRDs(t *testing.T) {
	s, _ := newCRDTestServer(t)
	before := aggregatedGet(t, s, "/apis")
	if rec := crdServe(t, s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", gadgetCRD); rec.Code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", rec.Code, rec.Body)
	}
	during := aggregatedGet(t, s, "/apis")
	if during.Header().Get("Etag") == before.Header().Get("Etag") {
		t.Errorf("the ETag did not change with a new CRD")
	}
	list := &apidiscoveryv2.APIGroupDiscoveryList{}
	if err := kjson.Unmarshal(during.Body.Bytes(), list); err != nil {
		t.Fatal(err)
	}
	last := list.Items[len(list.Items)-1] // custom resource groups come after the built-in ones
	if last.Name != "test.kapi.dev" || len(last.Versions) == 0 {
		t.Fatalf("last group %+v", last)
	}
	v := last.Versions[0]
	if v.Version != "v1" || v.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent || len(v.Resources) != 1 {
		t.Fatalf("version %+v", v)
	}
	r := v.Resources[0]
	wantKind := metav1.GroupVersionKind{Group: "test.kapi.dev", Version: "v1", Kind: "Gadget"}
	if r.Resource != "gadgets" || r.SingularResource != "gadget" || r.Scope != apidiscoveryv2.ScopeNamespace || *r.ResponseKind != wantKind ||
		strings.Join(r.Verbs, ",") != "delete,deletecollection,get,list,patch,create,update,watch" {
		t.Errorf("gadgets entry %+v", r)
	}
	scale := metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
	if len(r.Subresources) != 2 || r.Subresources[0].Subresource != "status" || *r.Subresources[0].ResponseKind != wantKind ||
		r.Subresources[1].Subresource != "scale" || *r.Subresources[1].ResponseKind != scale {
		t.Errorf("subresources %+v, want status then scale as kube-apiserver lists a CRD's", r.Subresources)
	}
	if len(last.Versions) != 2 || last.Versions[1].Version != "v1beta1" {
		t.Errorf("versions %+v, want v1 then v1beta1", last.Versions)
	}
	if rec := crdServe(t, s, "DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.test.kapi.dev", ""); rec.Code != http.StatusOK {
		t.Fatalf("delete CRD: %d %s", rec.Code, rec.Body)
	}
	waitFor(t, 10*time.Second, "the CRD's group to leave aggregated discovery", func() bool {
		return !strings.Contains(aggregatedGet(t, s, "/apis").Body.String(), "test.kapi.dev")
	}, s)
}
