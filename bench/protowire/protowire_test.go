package protowire

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/golden"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// message is what the generated protobuf code of both kapi and Kubernetes
// has.
type message interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

func k8sDecoder(t *testing.T) runtime.Decoder {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, apiregistrationv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return serializer.NewCodecFactory(s).UniversalDeserializer()
}

// TestProtobufMatchesK8sAPI takes the object of every create-*, full-* and
// answered review-* capture of kube-apiserver v1.37.2 (testdata/golden-1.37/kinds), decodes its
// JSON into k8s.io/api's type and into the type kapi's builtin scheme has for
// its kind, and requires both to marshal to the same protobuf bytes; then
// decodes Kubernetes' bytes into kapi's type and requires them back.
func TestProtobufMatchesK8sAPI(t *testing.T) {
	var paths []string
	for _, glob := range []string{"create-*.txt", "full-*.txt", "review-*.txt"} {
		p, err := filepath.Glob(filepath.Join(golden.KindsDir(), glob))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p...)
	}
	if len(paths) < 120 {
		t.Fatalf("only %d captures", len(paths))
	}
	dec := k8sDecoder(t)
	scheme := client.NewBuiltinScheme()
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".txt")
		t.Run(name, func(t *testing.T) {
			x, err := golden.LoadKind(name)
			if err != nil {
				t.Fatal(err)
			}
			if x.Status != 201 {
				t.Skipf("status %d: a Status, not the kind", x.Status)
			}
			k8sObj, gvk, err := dec.Decode(x.ResponseBody, nil, nil)
			if err != nil {
				t.Fatalf("k8s.io/api decode: %v", err)
			}
			want, err := k8sObj.(message).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			kapiObj, ok := scheme.New(client.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind})
			if !ok {
				t.Fatalf("kapi has no type for %v", gvk)
			}
			if err := codec.UnmarshalJSON(x.ResponseBody, kapiObj); err != nil {
				t.Fatalf("kapi decode: %v", err)
			}
			got, err := kapiObj.(message).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("kapi's %T marshals to\n%x\nk8s.io/api's to\n%x", kapiObj, got, want)
			}
			back, _ := scheme.New(client.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind})
			if err := back.(message).Unmarshal(want); err != nil {
				t.Fatalf("kapi unmarshal of k8s.io/api's bytes: %v", err)
			}
			again, err := back.(message).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, want) {
				t.Errorf("k8s.io/api's bytes through kapi's %T come back as\n%x\nwant\n%x", back, again, want)
			}
		})
	}
}
