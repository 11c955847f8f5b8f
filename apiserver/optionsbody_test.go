package apiserver

import (
	"net/http"
	"reflect"
	"testing"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
)

func protobufDeleteOptions(t testing.TB, tm metav1.TypeMeta, o *metav1.DeleteOptions) []byte {
	t.Helper()
	b, err := codec.MarshalProtobuf(tm, o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeDeleteOptionsBody holds kube-apiserver v1.37.2's answers to
// DeleteOptions bodies (each message checked against the real server with
// curl).
func TestDecodeDeleteOptionsBody(t *testing.T) {
	rv := "7"
	grace := int64(0)
	bg := metav1.DeletePropagationBackground
	want := metav1.DeleteOptions{GracePeriodSeconds: &grace, Preconditions: &metav1.Preconditions{ResourceVersion: &rv},
		PropagationPolicy: &bg, DryRun: []string{"All"}}
	noKind := func(kind, gv string) string {
		return `no kind "` + kind + `" is registered for version "` + gv + `" in scheme "pkg/runtime/scheme.go:111"`
	}
	const unsupported = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
	for _, tc := range []struct {
		name, ct string
		body     []byte
		want     *metav1.DeleteOptions
		code     int32
		msg      string
	}{
		{"json v1", "application/json", []byte(`{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"preconditions":{"resourceVersion":"7"},"propagationPolicy":"Background","dryRun":["All"]}`), &want, 0, ""},
		{"json without content type", "", []byte(`{"gracePeriodSeconds":0,"preconditions":{"resourceVersion":"7"},"propagationPolicy":"Background","dryRun":["All"]}`), &want, 0, ""},
		{"json parameters and case", "Application/JSON; charset=utf-8", []byte(`{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1","dryRun":["All"]}`), &metav1.DeleteOptions{DryRun: []string{"All"}}, 0, ""},
		{"json any group version", "application/json", []byte(`{"kind":"DeleteOptions","apiVersion":"example.com/v9"}`), &metav1.DeleteOptions{}, 0, ""},
		{"json null", "application/json", []byte(`null`), &metav1.DeleteOptions{}, 0, ""},
		{"json unknown field ignored", "application/json", []byte(`{"bogus":1}`), &metav1.DeleteOptions{}, 0, ""},
		{"yaml", "application/yaml", []byte("kind: DeleteOptions\napiVersion: v1\ngracePeriodSeconds: 0\npreconditions:\n  resourceVersion: \"7\"\npropagationPolicy: Background\ndryRun: [All]\n"), &want, 0, ""},
		{"protobuf v1", "application/vnd.kubernetes.protobuf", protobufDeleteOptions(t, metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}, &want), &want, 0, ""},
		{"protobuf meta.k8s.io/v1", "application/vnd.kubernetes.protobuf", protobufDeleteOptions(t, metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "meta.k8s.io/v1"}, &want), &want, 0, ""},
		{"protobuf group version", "application/vnd.kubernetes.protobuf", protobufDeleteOptions(t, metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "apps/v1"}, &want), &want, 0, ""},
		{"protobuf empty options", "application/vnd.kubernetes.protobuf", protobufDeleteOptions(t, metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}, &metav1.DeleteOptions{}), &metav1.DeleteOptions{}, 0, ""},

		{"json syntax", "application/json", []byte(`{bad`), nil, 400, "couldn't get version/kind; json parse error: invalid character 'b' looking for beginning of object key string"},
		{"json array", "application/json", []byte(`[]`), nil, 400, "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }"},
		{"json blank", "application/json", []byte(` `), nil, 400, "couldn't get version/kind; json parse error: unexpected end of JSON input"},
		{"json wrong type", "application/json", []byte(`{"gracePeriodSeconds":"x"}`), nil, 400, "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64"},
		{"json wrong uid type", "application/json", []byte(`{"preconditions":{"uid":5}}`), nil, 400, "json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid of type types.UID"},
		{"unknown kind", "application/json", []byte(`{"kind":"Pod","apiVersion":"v1"}`), nil, 400, noKind("Pod", "v1")},
		{"unknown kind default version", "application/json", []byte(`{"kind":"Foo"}`), nil, 400, noKind("Foo", "meta.k8s.io/v1")},
		{"meta kind in another version", "application/json", []byte(`{"kind":"ListOptions","apiVersion":"v1"}`), nil, 400, noKind("ListOptions", "v1")},
		{"meta kind", "application/json", []byte(`{"kind":"ListOptions","apiVersion":"meta.k8s.io/v1"}`), nil, 400, "converting (v1.ListOptions) to (v1.DeleteOptions): unknown conversion"},
		{"unversioned kind", "application/json", []byte(`{"kind":"Status","apiVersion":"apps/v1"}`), nil, 400, "converting (v1.Status) to (v1.DeleteOptions): unknown conversion"},
		{"v1beta1 list", "application/json", []byte(`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1beta1"}`), nil, 400, "converting (v1beta1.PartialObjectMetadataList) to (v1.DeleteOptions): unknown conversion"},
		{"yaml syntax", "application/yaml", []byte("a: [\n"), nil, 400, "yaml: line 1: did not find expected node content"},
		{"yaml kind", "application/yaml", []byte("kind: Foo\n"), nil, 400, noKind("Foo", "meta.k8s.io/v1")},
		{"protobuf not an envelope", "application/vnd.kubernetes.protobuf", []byte(`{"kind":"DeleteOptions"}`), nil, 400, "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"},
		{"protobuf magic only", "application/vnd.kubernetes.protobuf", []byte("k8s\x00"), nil, 400, "empty body"},
		{"protobuf truncated envelope", "application/vnd.kubernetes.protobuf", []byte("k8s\x00\xff\xff\xff"), nil, 400, "unexpected EOF"},
		{"protobuf kind", "application/vnd.kubernetes.protobuf", protobufDeleteOptions(t, metav1.TypeMeta{Kind: "Foo", APIVersion: "apps/v1"}, &want), nil, 400, noKind("Foo", "apps/v1")},
		{"text/plain", "text/plain", []byte(`{}`), nil, 415, unsupported},
		{"merge patch", "application/merge-patch+json", []byte(`{}`), nil, 415, unsupported},
		{"cbor", "application/cbor", []byte(`{}`), nil, 415, unsupported},
		{"unparsable", ";;", []byte(`{}`), nil, 415, unsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, st := decodeDeleteOptionsBody(tc.body, tc.ct)
			if tc.want != nil {
				if st != nil {
					t.Fatalf("status %d %q", st.Code, st.Message)
				}
				if !reflect.DeepEqual(&got, tc.want) {
					t.Fatalf("got %+v, want %+v", got, *tc.want)
				}
				return
			}
			if st == nil {
				t.Fatalf("decoded %+v, want %d %q", got, tc.code, tc.msg)
			}
			if st.Code != tc.code || st.Message != tc.msg {
				t.Fatalf("got %d %q\nwant %d %q", st.Code, st.Message, tc.code, tc.msg)
			}
		})
	}
}

// TestDeleteOptionsBodyReplacesQuery: a body's options are the request's,
// its query's are not even read (kube-apiserver); without a body the query
// counts.
func TestDeleteOptionsBodyReplacesQuery(t *testing.T) {
	srv := newTestServer(t)
	for _, name := range []string{"a", "b"} {
		mustDo(t, srv, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"`+name+`"}}`, http.StatusCreated)
	}
	// dryRun=All and a bad gracePeriodSeconds in the query are ignored.
	mustDo(t, srv, "DELETE", "/api/v1/namespaces/default/configmaps/a?dryRun=All&gracePeriodSeconds=x", `{"kind":"DeleteOptions","apiVersion":"v1"}`, http.StatusOK)
	mustDo(t, srv, "GET", "/api/v1/namespaces/default/configmaps/a", "", http.StatusNotFound)
	// Without a body, the query's dryRun counts.
	mustDo(t, srv, "DELETE", "/api/v1/namespaces/default/configmaps/b?dryRun=All", "", http.StatusOK)
	mustDo(t, srv, "GET", "/api/v1/namespaces/default/configmaps/b", "", http.StatusOK)
}

// FuzzDecodeDeleteOptionsBody: any body in any media type is decoded or
// answered with a 400 or 415, never a panic.
func FuzzDecodeDeleteOptionsBody(f *testing.F) {
	f.Add("application/json", []byte(`{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"u"}}`))
	f.Add("application/yaml", []byte("kind: DeleteOptions\ndryRun: [All]\n"))
	f.Add("application/vnd.kubernetes.protobuf", protobufDeleteOptions(f, metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}, &metav1.DeleteOptions{DryRun: []string{"All"}}))
	f.Add("application/vnd.kubernetes.protobuf", []byte("k8s\x00\x0a\x00\x12\x02\x08\x01"))
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		_, st := decodeDeleteOptionsBody(body, ct)
		if st != nil && st.Code != http.StatusBadRequest && st.Code != http.StatusUnsupportedMediaType {
			t.Fatalf("%q %q: %d %s", ct, body, st.Code, st.Message)
		}
	})
}
