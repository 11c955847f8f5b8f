package conformance

import (
	"net/http"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// deleteOptions are the DeleteOptions fields the cases send.
type deleteOptions struct {
	uid, resourceVersion string // preconditions
	dryRunAll            bool
}

// protoDeleteOptions encodes DeleteOptions in the protobuf envelope, as
// client-go sends them, with this file's own minimal encoder; kind and
// apiVersion go in the envelope.
func protoDeleteOptions(kind, apiVersion string, o deleteOptions) []byte {
	var opts []byte
	if o.uid != "" || o.resourceVersion != "" {
		var pre []byte
		if o.uid != "" {
			pre = protowire.AppendTag(pre, 1, protowire.BytesType)
			pre = protowire.AppendString(pre, o.uid)
		}
		if o.resourceVersion != "" {
			pre = protowire.AppendTag(pre, 2, protowire.BytesType)
			pre = protowire.AppendString(pre, o.resourceVersion)
		}
		opts = protowire.AppendTag(opts, 2, protowire.BytesType) // preconditions
		opts = protowire.AppendBytes(opts, pre)
	}
	if o.dryRunAll {
		opts = protowire.AppendTag(opts, 5, protowire.BytesType) // dryRun
		opts = protowire.AppendString(opts, "All")
	}
	var tm []byte
	tm = protowire.AppendTag(tm, 1, protowire.BytesType)
	tm = protowire.AppendString(tm, apiVersion)
	tm = protowire.AppendTag(tm, 2, protowire.BytesType)
	tm = protowire.AppendString(tm, kind)
	out := []byte("k8s\x00")
	out = protowire.AppendTag(out, 1, protowire.BytesType) // typeMeta
	out = protowire.AppendBytes(out, tm)
	out = protowire.AppendTag(out, 2, protowire.BytesType) // raw
	return protowire.AppendBytes(out, opts)
}

const (
	ctProtobuf       = "application/vnd.kubernetes.protobuf"
	unsupportedTypes = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
	wrongUID         = "00000000-0000-0000-0000-000000000000"
)

// TestDeleteOptionsBody checks that the DeleteOptions body of a delete and
// of a deletecollection is decoded by its Content-Type, as kube-apiserver
// does (client-go and controller-runtime send it in protobuf): protobuf
// (kind DeleteOptions, apiVersion v1, meta.k8s.io/v1 or the resource's own
// group version), YAML and JSON are honoured, for built-in and custom
// resources; another media type is 415; a body that does not decode, or of
// another kind, is 400 with kube-apiserver's message; and a body's options
// replace the query's.
func TestDeleteOptionsBody(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	labels := map[string]string{"delete-options": "yes"}
	for _, n := range []string{"a", "b", "c"} {
		e.createCM(t, ns, n, labels, nil)
	}
	exists := func(t *testing.T, path string, want bool) {
		t.Helper()
		r := e.get(t, path)
		if got := r.Code == http.StatusOK; got != want {
			t.Fatalf("%s exists: %v, want %v:\n%s", path, got, want, r)
		}
	}
	del := func(t *testing.T, path, ct string, body any) *response {
		t.Helper()
		return e.del(t, path, body, "Content-Type", ct)
	}

	t.Run("honoured", func(t *testing.T) {
		for _, c := range []struct {
			name, ct string
			body     any
		}{
			{"protobuf v1", ctProtobuf, protoDeleteOptions("DeleteOptions", "v1", deleteOptions{uid: wrongUID})},
			{"protobuf meta.k8s.io/v1", ctProtobuf, protoDeleteOptions("DeleteOptions", "meta.k8s.io/v1", deleteOptions{uid: wrongUID})},
			{"protobuf other group version", ctProtobuf, protoDeleteOptions("DeleteOptions", "apps/v1", deleteOptions{uid: wrongUID})},
			{"protobuf no kind", ctProtobuf, protoDeleteOptions("", "", deleteOptions{uid: wrongUID})},
			{"yaml", "application/yaml", "kind: DeleteOptions\napiVersion: v1\npreconditions:\n  uid: " + wrongUID + "\n"},
			{"json", "application/json", obj{"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": obj{"uid": wrongUID}}},
			{"json with parameters", "Application/JSON; charset=utf-8", obj{"preconditions": obj{"uid": wrongUID}}},
		} {
			t.Run(c.name, func(t *testing.T) {
				// The precondition holds the object: it was read.
				r := del(t, cmPath(ns, "a"), c.ct, c.body)
				checkStatus(t, r, http.StatusConflict, "Conflict", "the UID in the precondition ("+wrongUID+") does not match the UID in record")
			})
		}
		// A dry run in protobuf leaves the object.
		expect(t, del(t, cmPath(ns, "a"), ctProtobuf, protoDeleteOptions("DeleteOptions", "v1", deleteOptions{dryRunAll: true})), http.StatusOK)
		exists(t, cmPath(ns, "a"), true)
	})

	t.Run("refused", func(t *testing.T) {
		noKind := func(kind, gv string) string {
			return `no kind "` + kind + `" is registered for version "` + gv + `" in scheme "pkg/runtime/scheme.go:111"`
		}
		for _, c := range []struct {
			name, ct string
			body     any
			code     int
			reason   string
			msg      string
		}{
			{"text/plain", "text/plain", `{}`, http.StatusUnsupportedMediaType, "UnsupportedMediaType", unsupportedTypes},
			{"merge patch", "application/merge-patch+json", `{}`, http.StatusUnsupportedMediaType, "UnsupportedMediaType", unsupportedTypes},
			{"json in protobuf", ctProtobuf, `{"kind":"DeleteOptions"}`, http.StatusBadRequest, "BadRequest", "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"},
			{"protobuf magic only", ctProtobuf, "k8s\x00", http.StatusBadRequest, "BadRequest", "empty body"},
			{"protobuf truncated", ctProtobuf, "k8s\x00\xff\xff\xff", http.StatusBadRequest, "BadRequest", "unexpected EOF"},
			{"protobuf other kind", ctProtobuf, protoDeleteOptions("Foo", "apps/v1", deleteOptions{}), http.StatusBadRequest, "BadRequest", noKind("Foo", "apps/v1")},
			{"protobuf meta kind", ctProtobuf, protoDeleteOptions("ListOptions", "meta.k8s.io/v1", deleteOptions{}), http.StatusBadRequest, "BadRequest", "converting (v1.ListOptions) to (v1.DeleteOptions): unknown conversion"},
			{"yaml syntax", "application/yaml", "a: [\n", http.StatusBadRequest, "BadRequest", "yaml: line 1: did not find expected node content"},
			{"yaml other kind", "application/yaml", "kind: Pod\napiVersion: v1\n", http.StatusBadRequest, "BadRequest", noKind("Pod", "v1")},
			{"json syntax", "application/json", `{bad`, http.StatusBadRequest, "BadRequest", "couldn't get version/kind; json parse error: invalid character 'b' looking for beginning of object key string"},
			{"json wrong type", "application/json", `{"gracePeriodSeconds":"x"}`, http.StatusBadRequest, "BadRequest", "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64"},
			{"json unversioned kind", "application/json", `{"kind":"Status","apiVersion":"v1"}`, http.StatusBadRequest, "BadRequest", "converting (v1.Status) to (v1.DeleteOptions): unknown conversion"},
		} {
			t.Run(c.name, func(t *testing.T) {
				checkStatus(t, del(t, cmPath(ns, "a"), c.ct, c.body), c.code, c.reason, c.msg)
				checkStatus(t, del(t, cmPath(ns)+q("labelSelector", "delete-options=yes"), c.ct, c.body), c.code, c.reason, c.msg)
			})
		}
		exists(t, cmPath(ns, "a"), true)
	})

	t.Run("body replaces query", func(t *testing.T) {
		// Neither the query's dryRun nor its unparsable gracePeriodSeconds
		// is read when there is a body.
		e.createCM(t, ns, "q", nil, nil)
		expect(t, del(t, cmPath(ns, "q")+q("dryRun", "All", "gracePeriodSeconds", "x"), "application/json", obj{"kind": "DeleteOptions", "apiVersion": "v1"}), http.StatusOK)
		exists(t, cmPath(ns, "q"), false)
		// Without one, the query counts, whatever the Content-Type says.
		e.createCM(t, ns, "q", nil, nil)
		expect(t, del(t, cmPath(ns, "q")+q("dryRun", "All"), "text/plain", nil), http.StatusOK)
		exists(t, cmPath(ns, "q"), true)
	})

	t.Run("deletecollection", func(t *testing.T) {
		sel := cmPath(ns) + q("labelSelector", "delete-options=yes")
		for _, c := range []struct {
			name, ct string
			body     any
		}{
			{"protobuf", ctProtobuf, protoDeleteOptions("DeleteOptions", "v1", deleteOptions{dryRunAll: true})},
			{"yaml", "application/yaml", "kind: DeleteOptions\napiVersion: v1\ndryRun: [All]\n"},
		} {
			l := expect(t, del(t, sel, c.ct, c.body), http.StatusOK)
			if len(items(t, l)) != 3 {
				t.Errorf("%s dry run: %d items in the answer, want 3", c.name, len(items(t, l)))
			}
			if n := len(items(t, expect(t, e.get(t, sel), http.StatusOK))); n != 3 {
				t.Fatalf("%s dry run deleted: %d left, want 3", c.name, n)
			}
		}
		checkStatus(t, del(t, sel, ctProtobuf, protoDeleteOptions("DeleteOptions", "v1", deleteOptions{resourceVersion: "1"})),
			http.StatusConflict, "Conflict", "the ResourceVersion in the precondition (1) does not match the ResourceVersion in record")
		expect(t, del(t, sel, ctProtobuf, protoDeleteOptions("DeleteOptions", "meta.k8s.io/v1", deleteOptions{})), http.StatusOK)
		if n := len(items(t, expect(t, e.get(t, sel), http.StatusOK))); n != 0 {
			t.Fatalf("after deletecollection: %d left", n)
		}
	})

	t.Run("custom resource", func(t *testing.T) {
		group, _ := e.createCRD(t)
		base := "/apis/" + group + "/v1/namespaces/" + ns + "/widgets"
		w := widget("w1", obj{"size": 1})
		w["apiVersion"] = group + "/v1"
		expect(t, e.post(t, base, w), http.StatusCreated)
		checkStatus(t, del(t, base+"/w1", ctProtobuf, protoDeleteOptions("DeleteOptions", "v1", deleteOptions{uid: wrongUID})),
			http.StatusConflict, "Conflict", "the UID in the precondition ("+wrongUID+") does not match the UID in record")
		checkStatus(t, del(t, base+"/w1", ctProtobuf, protoDeleteOptions("DeleteOptions", group+"/v1", deleteOptions{uid: wrongUID})),
			http.StatusConflict, "Conflict", "the UID in the precondition ("+wrongUID+") does not match the UID in record")
		checkStatus(t, del(t, base+"/w1", "text/plain", `{}`), http.StatusUnsupportedMediaType, "UnsupportedMediaType", unsupportedTypes)
		checkStatus(t, del(t, base+"/w1", "application/json", `{"kind":"Widget","apiVersion":"`+group+`/v1"}`),
			http.StatusBadRequest, "BadRequest", `no kind "Widget" is registered for version "`+group+`/v1" in scheme "pkg/runtime/scheme.go:111"`)
		expect(t, del(t, base, ctProtobuf, protoDeleteOptions("DeleteOptions", "meta.k8s.io/v1", deleteOptions{})), http.StatusOK)
		exists(t, base+"/w1", false)
	})
}
