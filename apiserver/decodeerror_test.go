package apiserver

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// TestWrongTypeMessages replays requests whose bodies hold JSON values of
// the wrong type, captured from kube-apiserver v1.37.2
// (testdata/decode-errors), and wants its status codes and messages word
// for word. A patch's message quotes the patched object, whose text is not
// compared: only what follows it.
func TestWrongTypeMessages(t *testing.T) {
	f, err := os.Open("../testdata/decode-errors/wrong-types-1.37.2.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	srv := newTestServer(t)
	if code, b := serve(t, srv, "POST", "/api/v1/namespaces/t/configmaps", `{"metadata":{"name":"existing"}}`); code != http.StatusCreated {
		t.Fatalf("configmap: %d %v", code, b)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var c struct {
			Name, Method, ContentType, Path, Body, Message string
			Code                                           int
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			req := httptest.NewRequest(c.Method, strings.ReplaceAll(c.Path, "NS", "t")+"?fieldValidation=Strict", strings.NewReader(c.Body))
			req.Header.Set("Content-Type", c.ContentType)
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			var st struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
				t.Fatalf("HTTP %d %s: %v", rec.Code, rec.Body, err)
			}
			got, want := st.Message, c.Message
			if c.Method == http.MethodPatch {
				_, got, _ = strings.Cut(got, `}": `)
				_, want, _ = strings.Cut(want, `}": `)
			}
			if rec.Code != c.Code || got != want {
				t.Errorf("HTTP %d %q\nwant %d %q", rec.Code, got, c.Code, want)
			}
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Fatalf("%d captures, want the 54 of the file", n)
	}
}

func TestErrorContext(t *testing.T) {
	cases := []struct {
		pointer []string
		strct   string
		fields  string
	}{
		{[]string{"spec", "containers", "0", "image"}, "Container", "spec.containers.image"},
		{[]string{"metadata", "labels", "app.kubernetes.io/name"}, "ObjectMeta", "metadata.labels"},
		{[]string{"spec", "volumes", "3", "configMap", "items", "0", "path"}, "KeyToPath", "spec.volumes.VolumeSource.configMap.items.path"},
		{[]string{"spec"}, "Pod", "spec"},
		{[]string{"kind"}, "Pod", "TypeMeta.kind"},
		{[]string{"spec", "nosuchfield", "x"}, "Pod", "spec"},
		{nil, "", ""},
	}
	for _, c := range cases {
		s, f := errorContext(reflect.TypeFor[corev1.Pod](), c.pointer)
		if s != c.strct || f != c.fields {
			t.Errorf("errorContext(%q) = %q, %q; want %q, %q", c.pointer, s, f, c.strct, c.fields)
		}
	}
}

// FuzzKubeDecodeError words the decoding failures of arbitrary bodies as
// pods: it never panics, and words every failure.
func FuzzKubeDecodeError(f *testing.F) {
	for _, s := range []string{
		`{"spec":{"containers":[{"image":5}]}}`, `{"metadata":{"labels":{"a.b/c":[1]}}}`,
		`{"spec":{"containers":[{"resources":{"limits":{"cpu":true}}}]}}`, `{"metadata":{"creationTimestamp":"x"}}`,
		`{"spec":{"volumes":[{"configMap":{"items":[{"path":7}]}}]}}`, `[]`, `{"spec":[]}`, `{"metadata":{"deletionTimestamp":{}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := &corev1.Pod{}
		_, err := kjson.UnmarshalKnown(data, p)
		if err == nil {
			return
		}
		if got := kubeDecodeError(p, data, err); got == nil || got.Error() == "" {
			t.Fatalf("no wording for %v", err)
		}
	})
}
