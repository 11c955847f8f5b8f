package conformance

import (
	"net/http"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kapi-dev/kapi/codec"
)

// protoConfigMapBody encodes a v1 ConfigMap (name, resourceVersion, data) in
// the protobuf envelope, with this file's own minimal encoder.
func protoConfigMapBody(name, resourceVersion string, data map[string]string) []byte {
	var meta []byte
	meta = protowire.AppendTag(meta, 1, protowire.BytesType) // name
	meta = protowire.AppendString(meta, name)
	if resourceVersion != "" {
		meta = protowire.AppendTag(meta, 6, protowire.BytesType)
		meta = protowire.AppendString(meta, resourceVersion)
	}
	var cm []byte
	cm = protowire.AppendTag(cm, 1, protowire.BytesType) // metadata
	cm = protowire.AppendBytes(cm, meta)
	for k, v := range data { // data: map<string,string>
		var entry []byte
		entry = protowire.AppendTag(entry, 1, protowire.BytesType)
		entry = protowire.AppendString(entry, k)
		entry = protowire.AppendTag(entry, 2, protowire.BytesType)
		entry = protowire.AppendString(entry, v)
		cm = protowire.AppendTag(cm, 2, protowire.BytesType)
		cm = protowire.AppendBytes(cm, entry)
	}
	var tm []byte
	tm = protowire.AppendTag(tm, 1, protowire.BytesType)
	tm = protowire.AppendString(tm, "v1")
	tm = protowire.AppendTag(tm, 2, protowire.BytesType)
	tm = protowire.AppendString(tm, "ConfigMap")
	out := []byte("k8s\x00")
	out = protowire.AppendTag(out, 1, protowire.BytesType) // typeMeta
	out = protowire.AppendBytes(out, tm)
	out = protowire.AppendTag(out, 2, protowire.BytesType) // raw
	return protowire.AppendBytes(out, cm)
}

// TestProtobufWrites sends and receives protobuf on every write verb of a
// built-in kind: create and update with protobuf bodies, a patch (JSON body)
// answered in protobuf, and a delete whose Status comes back in protobuf.
func TestProtobufWrites(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	proto := []string{"Content-Type", codec.MediaTypeProtobuf, "Accept", codec.MediaTypeProtobuf}

	r := e.post(t, cmPath(ns), protoConfigMapBody("pb", "", map[string]string{"a": "1"}), proto...)
	if r.Code != http.StatusCreated || !isProtobuf(r.Header.Get("Content-Type")) {
		t.Fatalf("protobuf create: want 201 in protobuf, got\n%s", r)
	}
	_, created := decodeProtoConfigMap(t, r.Body)
	if str(created, "data", "a") != "1" || rv(created) == "" {
		t.Fatalf("protobuf create answered %s", compact(created))
	}

	r = e.put(t, cmPath(ns, "pb"), protoConfigMapBody("pb", rv(created), map[string]string{"a": "2"}), proto...)
	if r.Code != http.StatusOK || !isProtobuf(r.Header.Get("Content-Type")) {
		t.Fatalf("protobuf update: want 200 in protobuf, got\n%s", r)
	}
	if _, updated := decodeProtoConfigMap(t, r.Body); str(updated, "data", "a") != "2" {
		t.Errorf("protobuf update answered %s", compact(updated))
	}
	// A stale resourceVersion in a protobuf body conflicts like a JSON one.
	r = e.put(t, cmPath(ns, "pb"), protoConfigMapBody("pb", rv(created), map[string]string{"a": "3"}), proto...)
	if r.Code != http.StatusConflict {
		t.Errorf("protobuf update at a stale resourceVersion: want 409, got\n%s", r)
	}

	r = e.do(t, http.MethodPatch, cmPath(ns, "pb"), `{"data":{"b":"x"}}`, "Content-Type", mergePatch, "Accept", codec.MediaTypeProtobuf)
	if r.Code != http.StatusOK || !isProtobuf(r.Header.Get("Content-Type")) {
		t.Fatalf("patch answered in protobuf: want 200 in protobuf, got\n%s", r)
	}
	if _, patched := decodeProtoConfigMap(t, r.Body); str(patched, "data", "a") != "2" || str(patched, "data", "b") != "x" {
		t.Errorf("patch answered %s", compact(patched))
	}

	r = e.del(t, cmPath(ns, "pb"), nil, "Accept", codec.MediaTypeProtobuf)
	if r.Code != http.StatusOK || !isProtobuf(r.Header.Get("Content-Type")) {
		t.Fatalf("delete answered in protobuf: want 200 in protobuf, got\n%s", r)
	}
	u, err := codec.DecodeEnvelope(r.Body)
	if err != nil || u.TypeMeta.Kind != "Status" || u.TypeMeta.APIVersion != "v1" {
		t.Errorf("delete answered %+v %v, want a v1 Status envelope", u.TypeMeta, err)
	}
	expect(t, e.get(t, cmPath(ns, "pb")), http.StatusNotFound)
}
