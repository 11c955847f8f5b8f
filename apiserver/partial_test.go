package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// The captures in testdata/meta are kube-apiserver v1.37.2's answers to
// metadata-only requests about one ConfigMap (labels, annotations, a
// finalizer, an owner reference, managed fields, and marked for deletion by
// the garbage collector).

func readMeta(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../testdata/meta/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// configMapWithMeta is a ConfigMap carrying the metadata of a captured
// PartialObjectMetadata, as the server would hold it.
func configMapWithMeta(p *metav1.PartialObjectMetadata) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: p.ObjectMeta, Data: map[string]string{"k": "v"}}
}

// TestPartialGolden: the PartialObjectMetadata kapi encodes for an object is
// byte for byte (protobuf) and value for value (JSON) what kube-apiserver
// sends for an object with that metadata, alone, in a list and in watch
// events.
func TestPartialGolden(t *testing.T) {
	mt := offerProtobuf
	mt.As, mt.Group, mt.Version = codec.AsPartialObjectMetadata, codec.GroupMeta, "v1"
	jmt := mt
	jmt.Subtype = offerJSON.Subtype

	t.Run("get protobuf", func(t *testing.T) {
		want := readMeta(t, "get-configmap-partial-protobuf.pb")
		var p metav1.PartialObjectMetadata
		tm, err := codec.UnmarshalProtobuf(want, &p)
		if err != nil || tm.Kind != "PartialObjectMetadata" || tm.APIVersion != "meta.k8s.io/v1" {
			t.Fatalf("%+v %v", tm, err)
		}
		got, err := encodePartial(configMapWithMeta(&p), mt, true)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("protobuf differs\n got %x\nwant %x", got, want)
		}
	})
	t.Run("get json", func(t *testing.T) {
		want := readMeta(t, "get-configmap-partial-json.json")
		var p metav1.PartialObjectMetadata
		if err := kjson.Unmarshal(want, &p); err != nil {
			t.Fatal(err)
		}
		got, err := encodePartial(configMapWithMeta(&p), jmt, false)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, got, want)
	})
	t.Run("list protobuf", func(t *testing.T) {
		want := readMeta(t, "list-configmaps-partial-protobuf.pb")
		var l metav1.PartialObjectMetadataList
		if _, err := codec.UnmarshalProtobuf(want, &l); err != nil || len(l.Items) != 1 {
			t.Fatalf("%v %d items", err, len(l.Items))
		}
		lmt := mt
		lmt.As = codec.AsPartialObjectMetadataList
		buf := httptest.NewRecorder()
		(&Server{}).writePartialList(buf, lmt, &l.ListMeta, []storage.Object{configMapWithMeta(&l.Items[0])})
		if !bytes.Equal(buf.Body.Bytes(), want) {
			t.Errorf("protobuf differs\n got %x\nwant %x", buf.Body.Bytes(), want)
		}
	})
	t.Run("list json", func(t *testing.T) {
		want := readMeta(t, "list-configmaps-partial-json.json")
		var l metav1.PartialObjectMetadataList
		if err := kjson.Unmarshal(want, &l); err != nil || len(l.Items) != 1 {
			t.Fatalf("%v", err)
		}
		lmt := jmt
		lmt.As = codec.AsPartialObjectMetadataList
		buf := httptest.NewRecorder()
		(&Server{}).writePartialList(buf, lmt, &l.ListMeta, []storage.Object{configMapWithMeta(&l.Items[0])})
		sameJSON(t, buf.Body.Bytes(), want)
	})
	t.Run("watch protobuf", func(t *testing.T) {
		d := codec.NewProtobufWatchDecoder(bytes.NewReader(readMeta(t, "watch-configmaps-partial-protobuf.pb")))
		n := 0
		for ; ; n++ {
			typ, env, err := d.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			var p metav1.PartialObjectMetadata
			if _, err := codec.UnmarshalProtobuf(env, &p); err != nil {
				t.Fatal(err)
			}
			got, err := encodePartial(configMapWithMeta(&p), mt, true)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, env) {
				t.Errorf("%s event differs\n got %x\nwant %x", typ, got, env)
			}
		}
		if n != 2 { // ADDED and the end-of-initial-events BOOKMARK
			t.Errorf("%d events", n)
		}
	})
}

func sameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON differs\n got %s\nwant %s", got, want)
	}
}

// TestPartialWatchSharesNoEncoding: watchers of one event in different
// forms (whole object or metadata, JSON or protobuf) each get their own,
// although encodings are shared between watchers (encodecache.go).
func TestPartialWatchSharesNoEncoding(t *testing.T) {
	srv := newTestServer(t)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type watch struct {
		accept string
		dec    func() (string, []byte, error)
	}
	var watches []watch
	for _, accept := range []string{codec.MediaTypeJSON, codec.MediaTypePartialObjectMetadataJSON, codec.MediaTypeProtobuf, codec.MediaTypePartialObjectMetadataProtobuf} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL+"/api/v1/namespaces/t/configmaps?watch=1&resourceVersion=1", nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		w := watch{accept: accept}
		if strings.Contains(accept, "protobuf") {
			d := codec.NewProtobufWatchDecoder(resp.Body)
			w.dec = func() (string, []byte, error) {
				typ, env, err := d.Next()
				if err != nil {
					return "", nil, err
				}
				u, err := codec.DecodeEnvelope(env)
				return typ, []byte(u.TypeMeta.Kind), err
			}
		} else {
			d := json.NewDecoder(resp.Body)
			w.dec = func() (string, []byte, error) {
				var ev struct {
					Type   string
					Object struct{ Kind string }
				}
				err := d.Decode(&ev)
				return ev.Type, []byte(ev.Object.Kind), err
			}
		}
		watches = append(watches, w)
	}
	mustDo(t, srv, "POST", "/api/v1/namespaces/t/configmaps", `{"metadata":{"name":"shared"}}`, http.StatusCreated)
	for _, w := range watches {
		typ, kind, err := w.dec()
		want := "ConfigMap"
		if strings.Contains(w.accept, "PartialObjectMetadata") {
			want = "PartialObjectMetadata"
		}
		if err != nil || typ != "ADDED" || string(kind) != want {
			t.Errorf("%s: %s %s %v, want ADDED %s", w.accept, typ, kind, err, want)
		}
	}
}
