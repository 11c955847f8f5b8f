package apiserver

import (
	"os"
	"testing"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// TestDecodeCRDFromKubeAPIServer decodes CustomResourceDefinitions as
// kube-apiserver stores them in etcd (v1beta1 JSON): one captured from
// v1.37.2's etcd (created as v1 with a schema, subresources and a printer
// column per version), and one with what v1beta1 keeps at the top of the
// spec for all versions.
func TestDecodeCRDFromKubeAPIServer(t *testing.T) {
	c := newStorageCodec(registry.Builtin())
	captured, err := os.ReadFile("testdata/crd_v1beta1_in_etcd.json")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := c.Decode("/apiextensions.k8s.io/customresourcedefinitions/gadgets.etcd2.i18.kapi.dev", captured)
	if err != nil {
		t.Fatal(err)
	}
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		t.Fatalf("decoded as %T", obj)
	}
	if crd.APIVersion != "apiextensions.k8s.io/v1" || crd.Spec.Group != "etcd2.i18.kapi.dev" || len(crd.Spec.Versions) != 2 || crd.Spec.Names.Plural != "gadgets" {
		t.Fatalf("decoded CRD: %+v", crd)
	}
	v1 := crd.Spec.Versions[1]
	if v1.Name != "v1" || v1.Schema == nil || v1.Subresources == nil || len(v1.AdditionalPrinterColumns) != 1 ||
		v1.AdditionalPrinterColumns[0].JSONPath != ".spec.replicas" {
		t.Fatalf("version v1: %+v", v1)
	}
	if crd.Spec.Versions[0].Subresources != nil || crd.Spec.Versions[0].Schema == nil {
		t.Fatalf("version v1beta1: %+v", crd.Spec.Versions[0])
	}

	hoisted := `{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1beta1",
	  "metadata":{"name":"things.x.kapi.dev"},
	  "spec":{"group":"x.kapi.dev","version":"v1","names":{"plural":"things","kind":"Thing"},"scope":"Namespaced",
	    "validation":{"openAPIV3Schema":{"type":"object"}},
	    "subresources":{"status":{}},
	    "additionalPrinterColumns":[{"name":"Age","type":"date","JSONPath":".metadata.creationTimestamp"}],
	    "conversion":{"strategy":"Webhook","webhookClientConfig":{"url":"https://x.example/convert"},"conversionReviewVersions":["v1"]}}}`
	obj, err = c.Decode("/apiextensions.k8s.io/customresourcedefinitions/things.x.kapi.dev", []byte(hoisted))
	if err != nil {
		t.Fatal(err)
	}
	crd = obj.(*apiextensionsv1.CustomResourceDefinition)
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("versions: %+v", crd.Spec.Versions)
	}
	v := crd.Spec.Versions[0]
	if v.Name != "v1" || !v.Served || !v.Storage || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil || v.Subresources == nil || v.Subresources.Status == nil ||
		len(v.AdditionalPrinterColumns) != 1 || v.AdditionalPrinterColumns[0].JSONPath != ".metadata.creationTimestamp" {
		t.Fatalf("version: %+v", v)
	}
	conv := crd.Spec.Conversion
	if conv == nil || conv.Webhook == nil || conv.Webhook.ClientConfig == nil || conv.Webhook.ClientConfig.URL == nil ||
		*conv.Webhook.ClientConfig.URL != "https://x.example/convert" || len(conv.Webhook.ConversionReviewVersions) != 1 {
		t.Fatalf("conversion: %+v", conv)
	}
}
