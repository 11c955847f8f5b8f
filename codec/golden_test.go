package codec_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	autoscalingv1 "github.com/kapi-dev/kapi/api/autoscaling/v1"
	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/golden"
)

// kinds maps a kind to a new typed value of it, for the golden tests.
var kinds = map[string]func() any{
	"Namespace": func() any { return new(corev1.Namespace) }, "NamespaceList": func() any { return new(corev1.NamespaceList) },
	"ConfigMap": func() any { return new(corev1.ConfigMap) }, "ConfigMapList": func() any { return new(corev1.ConfigMapList) },
	"Secret": func() any { return new(corev1.Secret) }, "SecretList": func() any { return new(corev1.SecretList) },
	"ServiceAccount": func() any { return new(corev1.ServiceAccount) }, "ServiceAccountList": func() any { return new(corev1.ServiceAccountList) },
	"Pod": func() any { return new(corev1.Pod) }, "PodList": func() any { return new(corev1.PodList) },
	"Service": func() any { return new(corev1.Service) }, "ServiceList": func() any { return new(corev1.ServiceList) },
	"Node": func() any { return new(corev1.Node) }, "NodeList": func() any { return new(corev1.NodeList) },
	"Event": func() any { return new(corev1.Event) }, "EventList": func() any { return new(corev1.EventList) },
	"Deployment": func() any { return new(appsv1.Deployment) }, "DeploymentList": func() any { return new(appsv1.DeploymentList) },
	"Lease": func() any { return new(coordinationv1.Lease) }, "LeaseList": func() any { return new(coordinationv1.LeaseList) },
	"CustomResourceDefinition":     func() any { return new(apiextensionsv1.CustomResourceDefinition) },
	"CustomResourceDefinitionList": func() any { return new(apiextensionsv1.CustomResourceDefinitionList) },
	"Scale":                        func() any { return new(autoscalingv1.Scale) },
	"Status":                       func() any { return new(metav1.Status) },
	"APIVersions":                  func() any { return new(metav1.APIVersions) },
	"APIGroupList":                 func() any { return new(metav1.APIGroupList) },
	"APIGroup":                     func() any { return new(metav1.APIGroup) },
	"APIResourceList":              func() any { return new(metav1.APIResourceList) },
	"Table":                        func() any { return new(metav1.Table) },
}

func kindOf(t *testing.T, body []byte) string {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(body, &tm); err != nil {
		t.Fatalf("golden body is not JSON: %v", err)
	}
	return tm.Kind
}

// semanticJSONEqual compares two JSON documents as data.
//
// Every value of want must be in got, equal (a null in want may be absent in
// got). got may hold fields want lacks only if they are zero values (null, "",
// 0, false, {} or []): Kubernetes' own Go types add exactly those when they
// re-encode a document (a request's "status": {}, a condition's
// "lastProbeTime": null), so they are not a change of data. Anything else is a
// lost or invented value and fails.
func semanticJSONEqual(t *testing.T, want, got []byte) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want: %v", err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got: %v", err)
	}
	if path, ok := golden.Covers(w, g); !ok {
		t.Errorf("JSON differs after a round trip at %s:\nwant %s\ngot  %s", path, want, got)
	}
}

// roundTripJSON decodes body into its typed kind, re-encodes it and checks that
// nothing was lost or added.
func roundTripJSON(t *testing.T, body []byte) (any, bool) {
	t.Helper()
	kind := kindOf(t, body)
	newObj, ok := kinds[kind]
	if !ok {
		return nil, false
	}
	obj := newObj()
	if err := codec.UnmarshalJSON(body, obj); err != nil {
		t.Fatalf("decode %s: %v", kind, err)
	}
	out, err := codec.MarshalJSON(obj)
	if err != nil {
		t.Fatalf("encode %s: %v", kind, err)
	}
	semanticJSONEqual(t, body, out)
	return obj, true
}

func TestGoldenJSONRoundTrip(t *testing.T) {
	for _, r := range golden.Releases {
		t.Run(r.Name, func(t *testing.T) { testGoldenJSONRoundTrip(t, r) })
	}
}

func testGoldenJSONRoundTrip(t *testing.T, r golden.Release) {
	all, err := r.All()
	if err != nil {
		t.Fatal(err)
	}
	tested := 0
	for _, x := range all {
		for _, side := range []struct {
			name string
			body []byte
			ct   string
		}{{"request", x.RequestBody, x.RequestHeader["Content-Type"]}, {"response", x.ResponseBody, x.ResponseHeader["Content-Type"]}} {
			if len(side.body) == 0 || side.body[0] != '{' || strings.Contains(side.ct, "patch") || strings.Contains(side.ct, "stream=watch") {
				continue
			}
			if x.Status >= 400 && side.name == "request" {
				continue // deliberately malformed requests (e.g. 56-bad-json-body)
			}
			if bytes.Contains(side.body, []byte("\n{\"type\":")) || bytes.HasPrefix(side.body, []byte("{\"type\":")) {
				continue // a watch stream; see TestGoldenWatchJSON
			}
			t.Run(x.Name+"/"+side.name, func(t *testing.T) {
				if _, ok := roundTripJSON(t, side.body); ok {
					tested++
				}
			})
		}
	}
	if tested < 60 {
		t.Errorf("only %d golden JSON bodies round-tripped; expected the captures to cover at least 60", tested)
	}
}

// Protobuf captures and the JSON capture of the same object, where one exists.
var protobufGolden = []struct{ pb, jsonTwin string }{
	{"08-get-configmap-protobuf", "07-get-configmap-json"},
	{"10-get-secret-protobuf", "09-create-secret"},
	{"14-get-pod-protobuf", "13-get-pod-json"},
	{"17-get-node-protobuf", "16-update-node-status"},
	{"19-get-service-protobuf", "18-create-service"},
	{"20-get-serviceaccount-protobuf", ""},
	{"22-get-event-protobuf", "21-create-event"},
	{"24-get-lease-protobuf", "23-create-lease"},
	{"26-get-deployment-protobuf", "25-create-deployment"},
	{"28-get-namespace-protobuf", ""},
	{"32-list-configmaps-protobuf", ""},
	{"34-list-pods-protobuf", "33-list-pods-json"},
	// From kube-apiserver v1.37.2: CRDs (a schema using every JSON wire form
	// a structural schema allows) and Scales.
	{"proto-get-crd-protobuf", "proto-get-crd-json"},
	{"proto-list-crd-protobuf", "proto-list-crd-json"},
	{"proto-create-crd-protobuf", ""},
	{"proto-get-scale-deployment-protobuf", "proto-get-scale-deployment-json"},
	{"proto-update-scale-deployment-protobuf", ""},
}

// TestGoldenProtobufRoundTrip decodes each protobuf capture of each release
// (v1.32.2's normalized to v1.37.2, golden.Differences), encodes it again and
// requires the captured bytes, and the same object as its JSON twin.
func TestGoldenProtobufRoundTrip(t *testing.T) {
	for _, c := range protobufGolden {
		t.Run(c.pb, func(t *testing.T) {
			if !strings.HasPrefix(c.pb, "proto-") {
				golden.Each(t, c.pb, func(t *testing.T, r golden.Release, x *golden.Exchange) {
					var twin *golden.Exchange
					if c.jsonTwin != "" {
						var err error
						if twin, err = r.Load(c.jsonTwin); err != nil {
							t.Fatal(err)
						}
					}
					protobufRoundTrip(t, x, twin)
				})
				return
			}
			x, err := golden.Load(c.pb) // captured from v1.37.2 only
			if err != nil {
				t.Fatal(err)
			}
			var twin *golden.Exchange
			if c.jsonTwin != "" {
				if twin, err = golden.Load(c.jsonTwin); err != nil {
					t.Fatal(err)
				}
			}
			protobufRoundTrip(t, x, twin)
		})
	}
}

func protobufRoundTrip(t *testing.T, x, twin *golden.Exchange) {
	t.Helper()
	u, err := codec.DecodeEnvelope(x.ResponseBody)
	if err != nil {
		t.Fatal(err)
	}
	newObj, ok := kinds[u.TypeMeta.Kind]
	if !ok {
		t.Fatalf("no kind %q", u.TypeMeta.Kind)
	}
	obj := newObj()
	typ, err := codec.UnmarshalProtobuf(x.ResponseBody, obj.(codec.ProtoUnmarshaler))
	if err != nil {
		t.Fatal(err)
	}
	out, err := codec.MarshalProtobuf(typ, obj.(codec.ProtoMarshaler))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, x.ResponseBody) {
		t.Errorf("protobuf re-encoding differs from the capture\nwant %x\ngot  %x", x.ResponseBody, out)
	}
	if twin == nil {
		return
	}
	fromJSON := newObj()
	if err := codec.UnmarshalJSON(twin.ResponseBody, fromJSON); err != nil {
		t.Fatal(err)
	}
	// The envelope carries kind and apiVersion; the object itself does not.
	setTypeMeta(fromJSON, metav1.TypeMeta{})
	if !reflect.DeepEqual(obj, fromJSON) {
		a, _ := codec.MarshalJSON(obj)
		b, _ := codec.MarshalJSON(fromJSON)
		t.Errorf("protobuf and JSON captures decode differently:\nprotobuf %s\njson     %s", a, b)
	}
}

func setTypeMeta(obj any, tm metav1.TypeMeta) {
	v := reflect.ValueOf(obj).Elem().FieldByName("TypeMeta")
	v.Set(reflect.ValueOf(tm))
	items := reflect.ValueOf(obj).Elem().FieldByName("Items")
	if items.IsValid() {
		for i := 0; i < items.Len(); i++ {
			if f := items.Index(i).FieldByName("TypeMeta"); f.IsValid() {
				f.Set(reflect.ValueOf(tm))
			}
		}
	}
}
