package apiserver

import (
	"encoding/json"
)

// crdV1beta1 is the apiVersion kube-apiserver stores
// CustomResourceDefinitions in etcd with (as JSON), whatever version
// they were written in.
const crdV1beta1 = "apiextensions.k8s.io/v1beta1"

// crdFromV1beta1 turns the JSON of a v1beta1 CustomResourceDefinition, as
// kube-apiserver stores it, into v1's: what v1beta1 keeps for all versions
// at the top of the spec (validation, subresources,
// additionalPrinterColumns, version) goes into each version that has none
// of its own, printer columns' JSONPath becomes jsonPath, and the
// conversion's webhook settings move under conversion.webhook.
func crdFromV1beta1(data []byte) ([]byte, error) {
	var crd map[string]any
	if err := json.Unmarshal(data, &crd); err != nil {
		return nil, err
	}
	crd["apiVersion"] = "apiextensions.k8s.io/v1"
	spec, _ := crd["spec"].(map[string]any)
	if spec == nil {
		return json.Marshal(crd)
	}
	versions, _ := spec["versions"].([]any)
	if len(versions) == 0 {
		if v, ok := spec["version"].(string); ok && v != "" {
			versions = []any{map[string]any{"name": v, "served": true, "storage": true}}
		}
	}
	validation, _ := spec["validation"].(map[string]any)
	for _, v := range versions {
		ver, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if _, ok := ver["schema"]; !ok && validation != nil {
			ver["schema"] = validation
		}
		if _, ok := ver["subresources"]; !ok && spec["subresources"] != nil {
			ver["subresources"] = spec["subresources"]
		}
		if _, ok := ver["additionalPrinterColumns"]; !ok && spec["additionalPrinterColumns"] != nil {
			ver["additionalPrinterColumns"] = spec["additionalPrinterColumns"]
		}
		if cols, ok := ver["additionalPrinterColumns"].([]any); ok {
			out := make([]any, len(cols))
			for i, c := range cols {
				col, ok := c.(map[string]any)
				if !ok {
					out[i] = c
					continue
				}
				cc := make(map[string]any, len(col))
				for k, x := range col {
					if k == "JSONPath" {
						k = "jsonPath"
					}
					cc[k] = x
				}
				out[i] = cc
			}
			ver["additionalPrinterColumns"] = out
		}
	}
	if len(versions) > 0 {
		spec["versions"] = versions
	}
	for _, k := range []string{"version", "validation", "subresources", "additionalPrinterColumns"} {
		delete(spec, k)
	}
	if conv, ok := spec["conversion"].(map[string]any); ok {
		webhook := map[string]any{}
		if cc, ok := conv["webhookClientConfig"]; ok {
			webhook["clientConfig"] = cc
			delete(conv, "webhookClientConfig")
		}
		if rv, ok := conv["conversionReviewVersions"]; ok {
			webhook["conversionReviewVersions"] = rv
			delete(conv, "conversionReviewVersions")
		}
		if len(webhook) > 0 {
			conv["webhook"] = webhook
		}
	}
	return json.Marshal(crd)
}
