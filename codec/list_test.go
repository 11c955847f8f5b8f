package codec_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/golden"
)

func loadBody(t testing.TB, name string) []byte {
	t.Helper()
	x, err := golden.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return x.ResponseBody
}

func TestDecodeJSONListMatchesWholeDecode(t *testing.T) {
	for _, name := range []string{"33-list-pods-json", "29-list-configmaps-limit2"} {
		t.Run(name, func(t *testing.T) {
			body := loadBody(t, name)
			var whole corev1.PodList
			if err := codec.UnmarshalJSON(body, &whole); err != nil {
				t.Fatal(err)
			}
			var items []corev1.Pod
			// One byte per Read: items must still come out whole.
			h, err := codec.DecodeJSONList(iotest.OneByteReader(bytes.NewReader(body)), func(p *corev1.Pod) error {
				items = append(items, *p)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if h.Kind != whole.Kind || h.APIVersion != whole.APIVersion || !reflect.DeepEqual(h.ListMeta, whole.ListMeta) {
				t.Errorf("header %+v, want %+v %+v", h, whole.TypeMeta, whole.ListMeta)
			}
			if len(items) != len(whole.Items) || (len(items) > 0 && !reflect.DeepEqual(items, whole.Items)) {
				t.Errorf("streamed %d items, whole decode %d, or they differ", len(items), len(whole.Items))
			}
		})
	}
}

func TestDecodeProtobufListMatchesWholeDecode(t *testing.T) {
	for _, name := range []string{"34-list-pods-protobuf", "32-list-configmaps-protobuf"} {
		t.Run(name, func(t *testing.T) {
			body := loadBody(t, name)
			var whole corev1.PodList
			if _, err := codec.UnmarshalProtobuf(body, &whole); err != nil && !strings.Contains(name, "configmaps") {
				t.Fatal(err)
			}
			if strings.Contains(name, "configmaps") {
				var cms corev1.ConfigMapList
				if _, err := codec.UnmarshalProtobuf(body, &cms); err != nil {
					t.Fatal(err)
				}
				var got []corev1.ConfigMap
				h, err := codec.DecodeProtobufList(iotest.HalfReader(bytes.NewReader(body)), 0, func(c *corev1.ConfigMap) error {
					got = append(got, *c)
					return nil
				})
				if err != nil || h.Kind != "ConfigMapList" || !reflect.DeepEqual(got, cms.Items) || !reflect.DeepEqual(h.ListMeta, cms.ListMeta) {
					t.Errorf("streamed %d configmaps (%v), header %+v; want %d, %+v", len(got), err, h, len(cms.Items), cms.ListMeta)
				}
				return
			}
			var items []corev1.Pod
			h, err := codec.DecodeProtobufList(iotest.OneByteReader(bytes.NewReader(body)), 0, func(p *corev1.Pod) error {
				items = append(items, *p)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if h.Kind != "PodList" || h.APIVersion != "v1" || !reflect.DeepEqual(h.ListMeta, whole.ListMeta) {
				t.Errorf("header %+v", h)
			}
			if len(items) == 0 || !reflect.DeepEqual(items, whole.Items) {
				t.Errorf("streamed %d items, whole decode %d, or they differ", len(items), len(whole.Items))
			}
		})
	}
}

func TestDecodeListStopAndErrors(t *testing.T) {
	jsonBody := loadBody(t, "33-list-pods-json")
	pbBody := loadBody(t, "34-list-pods-protobuf")
	n := 0
	if _, err := codec.DecodeJSONList(bytes.NewReader(jsonBody), func(*corev1.Pod) error { n++; return codec.ErrStop }); err != nil || n != 1 {
		t.Errorf("ErrStop: %d items, %v", n, err)
	}
	n = 0
	if _, err := codec.DecodeProtobufList(bytes.NewReader(pbBody), 0, func(*corev1.Pod) error { n++; return codec.ErrStop }); err != nil || n != 1 {
		t.Errorf("ErrStop: %d items, %v", n, err)
	}
	boom := errors.New("boom")
	if _, err := codec.DecodeJSONList(bytes.NewReader(jsonBody), func(*corev1.Pod) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("callback error: %v", err)
	}
	if _, err := codec.DecodeProtobufList(bytes.NewReader(pbBody), 100, func(*corev1.Pod) error { return nil }); err == nil {
		t.Error("item larger than the limit: want an error")
	}
	// Every truncation is an error, never a panic or a silent short list.
	for _, cut := range []int{1, 10, len(jsonBody) / 2, len(bytes.TrimSpace(jsonBody)) - 1} {
		if _, err := codec.DecodeJSONList(bytes.NewReader(jsonBody[:cut]), func(*corev1.Pod) error { return nil }); err == nil {
			t.Errorf("JSON cut at %d: want an error", cut)
		}
	}
	for _, cut := range []int{1, 3, 10, len(pbBody) / 2, len(pbBody) - 5} {
		if _, err := codec.DecodeProtobufList(bytes.NewReader(pbBody[:cut]), 0, func(*corev1.Pod) error { return nil }); err == nil {
			t.Errorf("protobuf cut at %d: want an error", cut)
		}
	}
	for _, bad := range []string{`[]`, `"x"`, `{"items":{}}`, `{"items":[1]}`} {
		if _, err := codec.DecodeJSONList(strings.NewReader(bad), func(*corev1.Pod) error { return nil }); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}

// Small seeds, for the reason FuzzDecodeJSONPod gives: a pod, a list of
// two and a node, each in kube-apiserver's protobuf envelope.
func FuzzDecodeProtobufPod(f *testing.F) {
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "n", Labels: map[string]string{"k": "v"}, ResourceVersion: "7"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	list := corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []corev1.Pod{pod, {ObjectMeta: metav1.ObjectMeta{Name: "b"}}}}
	node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: corev1.NodeSpec{PodCIDR: "10.0.0.0/24"}}
	for _, s := range []struct {
		kind string
		obj  codec.ProtoMarshaler
	}{{"Pod", &pod}, {"PodList", &list}, {"Node", &node}} {
		b, err := codec.MarshalProtobuf(metav1.TypeMeta{APIVersion: "v1", Kind: s.kind}, s.obj)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p corev1.Pod
		if _, err := codec.UnmarshalProtobuf(b, &p); err == nil {
			// What decodes must re-encode and decode to the same object.
			out, err := codec.MarshalProtobuf(p.TypeMeta, &p)
			if err != nil {
				t.Fatal(err)
			}
			var q corev1.Pod
			if _, err := codec.UnmarshalProtobuf(out, &q); err != nil {
				t.Fatalf("re-decoding: %v", err)
			}
		}
		var n corev1.Node
		_, _ = codec.UnmarshalProtobuf(b, &n)
		_, _ = codec.DecodeProtobufList(bytes.NewReader(b), 1<<20, func(*corev1.Pod) error { return nil })
	})
}

// The seeds are small objects in the shapes of the captures (a pod, a
// list of two), not the captures themselves: the fuzzer mutates them
// thousands of times a second, where whole response bodies of kilobytes
// left it at a handful of executions a minute.
func FuzzDecodeJSONPod(f *testing.F) {
	f.Add([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"n","labels":{"k":"v"},"resourceVersion":"7"},` +
		`"spec":{"containers":[{"name":"c","image":"x","resources":{"limits":{"cpu":"100m"}}}]},"status":{"phase":"Running"}}`))
	f.Add([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"x"},` +
		`"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b","uid":"u"}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var p corev1.Pod
		if err := codec.UnmarshalJSON(b, &p); err == nil {
			if _, err := codec.MarshalJSON(&p); err != nil {
				t.Fatalf("re-encoding a decoded pod: %v", err)
			}
		}
		_, _ = codec.DecodeJSONList(bytes.NewReader(b), func(*corev1.Pod) error { return nil })
	})
}

// TestDecodeListSkipsItemsThatDoNotFit: an item whose data does not fit the Go
// type is skipped and reported; the items around it are delivered.
func TestDecodeListSkipsItemsThatDoNotFit(t *testing.T) {
	body := `{"kind":"PodList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":7}},{"metadata":{"name":"c"}}],"metadata":{"resourceVersion":"9"}}`
	var got []string
	h, err := codec.DecodeJSONList(strings.NewReader(body), func(p *corev1.Pod) error {
		got = append(got, p.Name)
		return nil
	})
	var ie *codec.ItemErrors
	if !errors.As(err, &ie) || len(ie.Items) != 1 || ie.Items[0].Index != 1 {
		t.Fatalf("err %v, want one skipped item at index 1", err)
	}
	if strings.Join(got, ",") != "a,c" || h.ListMeta.ResourceVersion != "9" {
		t.Errorf("items %v, metadata %+v", got, h.ListMeta)
	}

	// Items that stop fitting anywhere inside (decoding stops at the first
	// error) are skipped to their end, whatever follows in them.
	for _, bad := range []string{
		`5`, `"x"`, `[1,{"a":[2]}]`, `null`,
		`{"metadata":{"labels":{"a":1,"b":"c"},"name":"x"},"spec":{"containers":[{"name":"n"}]}}`,
		`{"spec":{"containers":[{"name":"n","ports":[{"containerPort":"eighty"}],"image":"i"}],"nodeName":"n"},"metadata":{"name":"x"}}`,
		`{"status":{"conditions":{"not":"a list"},"phase":"Running"},"metadata":{"name":"x"}}`,
	} {
		body := `{"items":[{"metadata":{"name":"a"}},` + bad + `,{"metadata":{"name":"c"}}]}`
		got = nil
		_, err := codec.DecodeJSONList(strings.NewReader(body), func(p *corev1.Pod) error {
			got = append(got, p.Name)
			return nil
		})
		if bad == `null` { // a null item is an empty pod, as encoding/json decodes it
			if err != nil || strings.Join(got, ",") != "a,,c" {
				t.Errorf("%s: items %q, err %v", bad, got, err)
			}
			continue
		}
		if !errors.As(err, &ie) || len(ie.Items) != 1 || ie.Items[0].Index != 1 || strings.Join(got, ",") != "a,c" {
			t.Errorf("%s: items %q, err %v; want a,c and item 1 skipped", bad, got, err)
		}
	}

	// Protobuf: a frame that does not decode as a pod.
	list := corev1.PodList{Items: []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, {ObjectMeta: metav1.ObjectMeta{Name: "c"}}}}
	b, err := codec.MarshalProtobuf(metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, &list)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := codec.DecodeEnvelope(b)
	// Splice a malformed item (field 2, 2 bytes: a truncated tag) between the two.
	raw := append([]byte{}, u.Raw...)
	first := 2 + int(raw[1]) // the ListMeta field (tag, 1-byte length, body)
	second := first + 2 + int(raw[first+1])
	raw = append(raw[:second:second], append([]byte{0x12, 0x02, 0x0a, 0xff}, raw[second:]...)...)
	u.Raw = raw
	got = nil
	_, err = codec.DecodeProtobufList(bytes.NewReader(u.AppendEnvelope(nil)), 0, func(p *corev1.Pod) error {
		got = append(got, p.Name)
		return nil
	})
	if !errors.As(err, &ie) || len(ie.Items) != 1 || ie.Items[0].Index != 1 || strings.Join(got, ",") != "a,c" {
		t.Errorf("protobuf: items %v, err %v", got, err)
	}
}

// TestDecodeListBrokenItemsEnd: a syntax error inside the items ends the list
// with an error (it is never mistaken for an item to skip).
func TestDecodeListBrokenItemsEnd(t *testing.T) {
	for _, body := range []string{
		`{"items":[{"metadata":{"name":"a"}}, x]}`,
		`{"items":[{"metadata":{"name":"a"}}, {"metadata":}]}`,
		`{"items":[{"metadata":{"name":"a"}} {"metadata":{}}]}`,
		`{"items":[{"metadata":{"name":7}`,
		`{"items":[1,2,]}`,
	} {
		done := make(chan error, 1)
		go func() {
			_, err := codec.DecodeJSONList(strings.NewReader(body), func(*corev1.Pod) error { return nil })
			done <- err
		}()
		select {
		case err := <-done:
			var ie *codec.ItemErrors
			if err == nil || errors.As(err, &ie) {
				t.Errorf("%s: err %v, want a decoding error", body, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the decoder does not end", body)
		}
	}
}

// TestDecodeJSONListMutations decodes thousands of mutations of a captured
// pod list (bytes replaced, removed or duplicated): every one must end,
// without panicking, with no error, a decoding error, or an *ItemErrors whose
// every skipped item carries its error.
func TestDecodeJSONListMutations(t *testing.T) {
	body := loadBody(t, "33-list-pods-json")
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`{}[]",:0123456789-.eEtrufalsn abcxyz\`)
	for i := range 3000 {
		b := append([]byte(nil), body...)
		for range 1 + rng.IntN(4) {
			p := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				b[p] = alphabet[rng.IntN(len(alphabet))]
			case 1:
				b = append(b[:p], b[p+1:]...)
			default:
				b = append(b[:p], append([]byte{b[p]}, b[p:]...)...)
			}
		}
		_, err := codec.DecodeJSONList(bytes.NewReader(b), func(*corev1.Pod) error { return nil })
		var ie *codec.ItemErrors
		if errors.As(err, &ie) {
			for _, it := range ie.Items {
				if it.Err == nil {
					t.Fatalf("mutation %d: skipped item %d without an error", i, it.Index)
				}
			}
		}
	}
}

// DecodeJSONListInto fills the header as it is read: the items see what
// came before them, and the header is whole at the end.
func TestDecodeJSONListInto(t *testing.T) {
	body := `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"3"},"items":[{"metadata":{"name":"a"}}],"extra":1}`
	var h codec.ListHeader
	var seen []string
	err := codec.DecodeJSONListInto(strings.NewReader(body), codec.DecodeOptions{}, &h, func(p *metav1.PartialObjectMetadata) error {
		seen = append(seen, h.Kind+" "+h.APIVersion+" "+h.ListMeta.ResourceVersion+" "+p.Name)
		return nil
	})
	if err != nil || len(seen) != 1 || seen[0] != "PodList v1 3 a" {
		t.Fatalf("items saw %q, %v", seen, err)
	}
	if h.Kind != "PodList" || h.ListMeta.ResourceVersion != "3" {
		t.Errorf("header %+v", h)
	}
}
