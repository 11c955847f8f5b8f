package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kapi-dev/kapi/codec"
)

// This file decodes the few protobuf messages the cases need with its own
// minimal code (over protowire), so that the comparison does not rest on
// kapi's generated types. codec is used only for the envelope and the watch
// framing, which its own tests check against the captures.

// protoFields walks the fields of a protobuf message.
func protoFields(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		switch typ {
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			if err := fn(num, typ, v, 0); err != nil {
				return err
			}
		case protowire.VarintType:
			x, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			if err := fn(num, typ, nil, x); err != nil {
				return err
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return nil
}

// protoMapEntry decodes a map entry (key 1, value 2).
func protoMapEntry(b []byte) (k string, v []byte, err error) {
	err = protoFields(b, func(num protowire.Number, _ protowire.Type, val []byte, _ uint64) error {
		switch num {
		case 1:
			k = string(val)
		case 2:
			v = val
		}
		return nil
	})
	return k, v, err
}

// protoTime decodes a meta.v1.Time (seconds 1, nanos 2) as its JSON form.
func protoTime(b []byte) (string, error) {
	var secs uint64
	err := protoFields(b, func(num protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
		if num == 1 {
			secs = x
		}
		return nil
	})
	return time.Unix(int64(secs), 0).UTC().Format(time.RFC3339), err
}

// protoObjectMeta decodes the ObjectMeta fields the cases compare.
func protoObjectMeta(b []byte) (obj, error) {
	m := obj{}
	labels, annotations := obj{}, obj{}
	var finalizers []any
	err := protoFields(b, func(num protowire.Number, _ protowire.Type, v []byte, x uint64) error {
		// Kubernetes writes every scalar field, empty or not; JSON omits
		// the empty ones, and so does this view.
		if (len(v) == 0 && x == 0) && num != 10 {
			return nil
		}
		switch num {
		case 1:
			m["name"] = string(v)
		case 2:
			m["generateName"] = string(v)
		case 3:
			m["namespace"] = string(v)
		case 5:
			m["uid"] = string(v)
		case 6:
			m["resourceVersion"] = string(v)
		case 7:
			m["generation"] = json.Number(fmt.Sprint(int64(x)))
		case 8, 9:
			ts, err := protoTime(v)
			if err != nil {
				return err
			}
			m[map[protowire.Number]string{8: "creationTimestamp", 9: "deletionTimestamp"}[num]] = ts
		case 10:
			m["deletionGracePeriodSeconds"] = json.Number(fmt.Sprint(int64(x)))
		case 11, 12:
			k, val, err := protoMapEntry(v)
			if err != nil {
				return err
			}
			map[protowire.Number]obj{11: labels, 12: annotations}[num][k] = string(val)
		case 14:
			finalizers = append(finalizers, string(v))
		}
		return nil
	})
	if len(labels) > 0 {
		m["labels"] = labels
	}
	if len(annotations) > 0 {
		m["annotations"] = annotations
	}
	if finalizers != nil {
		m["finalizers"] = finalizers
	}
	return m, err
}

// protoConfigMap decodes a core.v1.ConfigMap into the shape of its JSON
// form, restricted to the fields jsonConfigMapView keeps.
func protoConfigMap(b []byte) (obj, error) {
	o := obj{}
	data, binary := obj{}, obj{}
	err := protoFields(b, func(num protowire.Number, _ protowire.Type, v []byte, x uint64) error {
		switch num {
		case 1:
			m, err := protoObjectMeta(v)
			o["metadata"] = m
			return err
		case 2, 3:
			k, val, err := protoMapEntry(v)
			if err != nil {
				return err
			}
			if num == 2 {
				data[k] = string(val)
			} else {
				binary[k] = base64.StdEncoding.EncodeToString(val)
			}
		case 4:
			o["immutable"] = x != 0
		}
		return nil
	})
	if len(data) > 0 {
		o["data"] = data
	}
	if len(binary) > 0 {
		o["binaryData"] = binary
	}
	return o, err
}

// jsonConfigMapView keeps the fields of a JSON ConfigMap that protoConfigMap
// decodes.
func jsonConfigMapView(o obj) obj {
	out := obj{}
	meta := obj{}
	m, _ := o["metadata"].(map[string]any)
	for _, k := range []string{"name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
		"deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "finalizers"} {
		if v, ok := m[k]; ok {
			meta[k] = v
		}
	}
	out["metadata"] = meta
	for _, k := range []string{"data", "binaryData", "immutable"} {
		if v, ok := o[k]; ok {
			out[k] = v
		}
	}
	return out
}

// decodeProtoConfigMap decodes an envelope holding a ConfigMap.
func decodeProtoConfigMap(t testing.TB, b []byte) (codec.Unknown, obj) {
	t.Helper()
	u, err := codec.DecodeEnvelope(b)
	if err != nil {
		t.Fatalf("decoding the envelope: %v", err)
	}
	o, err := protoConfigMap(u.Raw)
	if err != nil {
		t.Fatalf("decoding the ConfigMap: %v", err)
	}
	return u, o
}

// TestProtobufGet gets a ConfigMap as protobuf (golden 08): the envelope
// names kind and apiVersion, and the object is the JSON get's.
func TestProtobufGet(t *testing.T) {
	t.Parallel()
	e := target

	// First check this file's decoder on the capture: golden 08 is golden 07
	// in protobuf.
	g := loadGolden(t, "08-get-configmap-protobuf")
	gu, gobj := decodeProtoConfigMap(t, g.ResponseBody)
	if gu.TypeMeta.Kind != "ConfigMap" || gu.TypeMeta.APIVersion != "v1" || gu.ContentType != "" || gu.ContentEncoding != "" {
		t.Fatalf("golden 08 envelope: %+v", gu)
	}
	if want := jsonConfigMapView(goldenObject(t, "07-get-configmap-json")); !reflect.DeepEqual(gobj, want) {
		t.Fatalf("the test's decoder reads golden 08 as\n%s\nwant golden 07's\n%s", compact(gobj), compact(want))
	}

	ns := e.namespace(t)
	created := expect(t, e.post(t, cmPath(ns), obj{
		"metadata": obj{"name": "cm1", "labels": obj{"app": "web", "tier": "front"}, "annotations": obj{"note": "golden"},
			"finalizers": []any{"example.com/keep"}},
		"data": obj{"a": "1", "b": "two"}, "binaryData": obj{"bin": "AAEC"},
	}), http.StatusCreated)
	t.Cleanup(func() { e.removeFinalizers(t, ns, "cm1") })

	jsonGet := expect(t, e.get(t, cmPath(ns, "cm1")), http.StatusOK)
	r := e.get(t, cmPath(ns, "cm1"), "Accept", g.RequestHeader["Accept"])
	if r.Code != http.StatusOK || r.Header.Get("Content-Type") != g.ResponseHeader["Content-Type"] {
		t.Fatalf("want 200 %s, got:\n%s", g.ResponseHeader["Content-Type"], r)
	}
	if !bytes.HasPrefix(r.Body, []byte("k8s\x00")) {
		t.Fatalf("protobuf body does not start with the magic: %q", truncate(r.Body))
	}
	u, pobj := decodeProtoConfigMap(t, r.Body)
	if u.TypeMeta != gu.TypeMeta || u.ContentType != "" || u.ContentEncoding != "" {
		t.Errorf("envelope %+v, want golden 08's %+v", u, gu)
	}
	if want := jsonConfigMapView(jsonGet); !reflect.DeepEqual(pobj, want) {
		t.Errorf("protobuf object\n%s\ndiffers from the JSON get\n%s", compact(pobj), compact(want))
	}
	if rv(pobj) != rv(created) {
		t.Errorf("protobuf resourceVersion %s, created %s", rv(pobj), rv(created))
	}
}

// TestWatchProtobuf watches as protobuf (golden 94): length-prefixed frames
// of WatchEvent, each object an envelope.
func TestWatchProtobuf(t *testing.T) {
	t.Parallel()
	e := target
	g := loadGolden(t, "94-watch-protobuf-from-rv")

	// This file's reading of golden 94 must match golden 93, the same watch
	// in JSON.
	var want []event
	d := json.NewDecoder(bytes.NewReader(loadGolden(t, "93-watch-json-from-rv").ResponseBody))
	d.UseNumber()
	for {
		var ev struct {
			Type   string
			Object obj
		}
		if err := d.Decode(&ev); err != nil {
			break
		}
		if ev.Type != "BOOKMARK" { // 94 did not ask for bookmarks
			want = append(want, event{Type: ev.Type, Object: jsonConfigMapView(ev.Object)})
		}
	}
	dec := codec.NewProtobufWatchDecoder(bytes.NewReader(g.ResponseBody))
	var got []event
	for {
		typ, env, err := dec.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("golden 94: %v", err)
			}
			break
		}
		_, o := decodeProtoConfigMap(t, env)
		got = append(got, event{Type: typ, Object: o})
	}
	// golden 94 ran after golden 93 from the same resourceVersion: it holds
	// 93's three events, then the same again for a second w-1.
	if len(got) != 6 || !reflect.DeepEqual(got[:3], want) {
		t.Fatalf("the test reads golden 94 as %v, want golden 93's %v first", got, want)
	}
	for i, ev := range got[3:] {
		if ev.Type != want[i].Type || name(ev.Object) != "w-1" {
			t.Fatalf("golden 94 event %d: %v", i+3, ev)
		}
	}

	ns := e.namespace(t)
	list := expect(t, e.get(t, cmPath(ns)), http.StatusOK)
	w := e.watch(t, cmPath(ns)+q("watch", "1", "timeoutSeconds", "30", "resourceVersion", rv(list)), "Accept", g.RequestHeader["Accept"])
	if ct := w.resp.Header.Get("Content-Type"); ct != g.ResponseHeader["Content-Type"] {
		t.Errorf("Content-Type %q, want %q", ct, g.ResponseHeader["Content-Type"])
	}
	c1 := e.createCM(t, ns, "w-1", nil, map[string]string{"v": "1"})
	c2 := e.updateData(t, ns, c1, map[string]string{"v": "2"})
	expect(t, e.del(t, cmPath(ns, "w-1"), nil), http.StatusOK)
	for i, wantType := range []string{"ADDED", "MODIFIED", "DELETED"} {
		ev := w.next(t, 5*time.Second)
		if ev.Type != wantType || ev.TypeMeta.Kind != "ConfigMap" || ev.TypeMeta.APIVersion != "v1" {
			t.Fatalf("frame %d: %s %+v, want %s of a v1 ConfigMap", i, ev.Type, ev.TypeMeta, wantType)
		}
		wantObj := jsonConfigMapView([]obj{c1, c2, c2}[i])
		if i == 2 {
			// A DELETED event carries the last state at the deletion's
			// resourceVersion.
			wantObj["metadata"].(map[string]any)["resourceVersion"] = rv(ev.Object)
			if rv(ev.Object) == rv(c2) {
				t.Errorf("DELETED carries the last update's resourceVersion %s, want the deletion's", rv(c2))
			}
		}
		if !reflect.DeepEqual(ev.Object, wantObj) {
			t.Errorf("frame %d object\n%s\nwant\n%s", i, compact(ev.Object), compact(wantObj))
		}
	}
}

// isProtobuf reports whether a Content-Type is a protobuf one.
func isProtobuf(ct string) bool { return strings.Contains(ct, "application/vnd.kubernetes.protobuf") }
