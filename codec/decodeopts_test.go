package codec_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/golden"
)

// podListBodies returns a list of n copies of the captured rich pod, in JSON
// and protobuf.
func podListBodies(t *testing.T, n int) (*corev1.PodList, []byte, []byte) {
	t.Helper()
	x, err := golden.Load("13-get-pod-json")
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := codec.UnmarshalJSON(x.ResponseBody, &pod); err != nil {
		t.Fatal(err)
	}
	if len(pod.ManagedFields) == 0 {
		t.Fatal("the captured pod has no managedFields")
	}
	list := &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
	for i := range n {
		p := *pod.DeepCopy()
		p.TypeMeta = metav1.TypeMeta{}
		p.Name = fmt.Sprintf("pod-%d", i)
		list.Items = append(list.Items, p)
	}
	j, err := codec.MarshalJSON(list)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := codec.MarshalProtobuf(list.TypeMeta, list)
	if err != nil {
		t.Fatal(err)
	}
	return list, j, pb
}

// TestDecodeOptions: whatever the options, the streaming list decoders give
// the objects a plain decode gives, but for managedFields when they are
// skipped; ShareFieldsV1 makes equal FieldsV1 share their bytes, and a deep
// copy shares nothing.
func TestDecodeOptions(t *testing.T) {
	want, jsonBody, pbBody := podListBodies(t, 3)
	for _, enc := range []string{"json", "protobuf"} {
		for _, o := range []codec.DecodeOptions{{}, {ShareFieldsV1: true}, {SkipManagedFields: true}, {SkipManagedFields: true, ShareFieldsV1: true}} {
			t.Run(fmt.Sprintf("%s/%+v", enc, o), func(t *testing.T) {
				var got []*corev1.Pod
				keep := func(p *corev1.Pod) error { got = append(got, p); return nil }
				var err error
				if enc == "json" {
					_, err = codec.DecodeJSONListWith(bytes.NewReader(jsonBody), o, keep)
				} else {
					_, err = codec.DecodeProtobufListWith(bytes.NewReader(pbBody), 0, o, keep)
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want.Items) {
					t.Fatalf("%d items, want %d", len(got), len(want.Items))
				}
				for i, p := range got {
					w := want.Items[i].DeepCopy()
					if o.SkipManagedFields {
						w.ManagedFields = nil
					}
					if !reflect.DeepEqual(p, w) {
						t.Errorf("item %d differs from a plain decode", i)
					}
				}
				if o.SkipManagedFields {
					return
				}
				a, b := got[0].ManagedFields[0].FieldsV1.Raw, got[1].ManagedFields[0].FieldsV1.Raw
				if shared := &a[0] == &b[0]; shared != o.ShareFieldsV1 {
					t.Errorf("FieldsV1 of equal items shared = %v, want %v", shared, o.ShareFieldsV1)
				}
				if cap(a) != len(a) && o.ShareFieldsV1 {
					t.Errorf("a shared FieldsV1 has spare capacity: an append would write into the others")
				}
				c := got[0].DeepCopy().ManagedFields[0].FieldsV1.Raw
				if &c[0] == &a[0] {
					t.Errorf("a deep copy shares FieldsV1 bytes with the decoded object")
				}
			})
		}
	}
}

// TestStreamDecoder: watch objects decoded by one StreamDecoder equal
// plain decodes, and the options apply.
func TestStreamDecoder(t *testing.T) {
	want, _, _ := podListBodies(t, 2)
	for _, o := range []codec.DecodeOptions{{}, {ShareFieldsV1: true, SkipManagedFields: true}} {
		sd := codec.NewStreamDecoder(o)
		for i := range want.Items {
			w := want.Items[i].DeepCopy()
			j, err := codec.MarshalJSON(w)
			if err != nil {
				t.Fatal(err)
			}
			pb, err := codec.MarshalProtobuf(metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, w)
			if err != nil {
				t.Fatal(err)
			}
			var fromJSON, fromPB corev1.Pod
			if err := sd.DecodeJSON(j, &fromJSON); err != nil {
				t.Fatal(err)
			}
			tm, err := sd.DecodeProtobuf(pb, &fromPB)
			if err != nil || tm.Kind != "Pod" {
				t.Fatal(tm, err)
			}
			if o.SkipManagedFields {
				w.ManagedFields = nil
			}
			if !reflect.DeepEqual(&fromJSON, w) || !reflect.DeepEqual(&fromPB, w) {
				t.Errorf("%+v: item %d differs from a plain decode", o, i)
			}
		}
	}
}
