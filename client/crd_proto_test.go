package client

import (
	"net/http"
	"testing"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
)

// With protobuf preferred, CRDs are created, read and listed in protobuf, as
// client-go's apiextensions clientset does, and their schemas' JSON values
// survive the trip.
func TestCRDInProtobuf(t *testing.T) {
	s := newTestServer(t)
	c := s.client(t, codec.MediaTypeProtobuf)
	ctx := testContext(t)
	crds := For[apiextensionsv1.CustomResourceDefinition](c)
	schema := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"size":  {Type: "integer", Default: &apiextensionsv1.JSON{Raw: []byte(`1`)}},
			"color": {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"red"`)}, {Raw: []byte(`"blue"`)}}},
		}},
	}}
	created, err := crds.Create(ctx, &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gears.proto.kapi.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "proto.kapi.dev", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gears", Kind: "Gear"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schema}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if x := s.last(http.MethodPost); x.ContentType != codec.MediaTypeProtobuf || x.RespContentType != codec.MediaTypeProtobuf {
		t.Errorf("create sent %q and got %q, want protobuf both ways", x.ContentType, x.RespContentType)
	}
	got, err := crds.Get(ctx, created.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if x := s.last(http.MethodGet); x.RespContentType != codec.MediaTypeProtobuf {
		t.Errorf("get answered %q, want protobuf", x.RespContentType)
	}
	spec := got.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	if d := spec.Properties["size"].Default; d == nil || string(d.Raw) != "1" {
		t.Errorf("default %v", d)
	}
	if e := spec.Properties["color"].Enum; len(e) != 2 || string(e[1].Raw) != `"blue"` {
		t.Errorf("enum %v", e)
	}
	list, err := crds.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != created.Name {
		t.Fatalf("list: %v %v", err, list)
	}
	if x := s.last(http.MethodGet); x.RespContentType != codec.MediaTypeProtobuf {
		t.Errorf("list answered %q, want protobuf", x.RespContentType)
	}
}
