// Package openapi builds the OpenAPI documents kube-apiserver serves at
// /openapi/v2 (Swagger 2.0) and /openapi/v3 (OpenAPI 3.0, one document per
// group version) from the resources of a registry.
//
// # Schemas
//
// A built-in kind's schema is read by reflection from its Go type, the same
// struct the server decodes into: JSON names from the json tags (embedded
// structs inlined), required fields (those without omitempty), and the merge
// markers schemagen writes as tags (patchStrategy, patchMergeKey, listType,
// listMapKey, mapType, structType) as the x-kubernetes-* extensions. Types
// that marshal themselves (Time, Quantity, IntOrString, …) have the
// definitions Kubernetes gives them. Definitions are named as Kubernetes
// names them (io.k8s.api.core.v1.Pod), and each kind's definition carries
// x-kubernetes-group-version-kind. A custom resource's schema is its
// CustomResourceDefinition version's openAPIV3Schema, with apiVersion, kind
// and metadata added, named after its group reversed
// (com.example.v1.Widget).
//
// Descriptions are left out (kapi's types carry no documentation, and kapi
// does not copy Kubernetes' text), except those a CRD's own schema holds.
// Enum lists come from the OpenAPIEnum methods schemagen writes.
//
// # Paths
//
// Each resource gets its collection, item and status paths with the list,
// create, deletecollection, get, replace, patch and delete operations, their
// query parameters (fieldValidation among them, which kubectl looks for to
// leave validation to the server), request bodies and responses, each
// marked with x-kubernetes-action and x-kubernetes-group-version-kind. The
// deprecated /watch/ paths and the subresources other than status are left
// out.
package openapi

import (
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	openapi_v3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"

	"github.com/kapi-dev/kapi/apiserver/registry"
)

// Documents are the OpenAPI documents of one state of a registry.
type Documents struct {
	// V2 is the Swagger 2.0 document of every resource.
	V2 *Document
	// V3 holds the OpenAPI 3.0 document of each group version, keyed by its
	// path ("api/v1", "apis/apps/v1").
	V3 map[string]*Document
	// V3Index is the /openapi/v3 discovery document: each group version's
	// path with its URL and hash.
	V3Index []byte
}

// Document is one OpenAPI document.
type Document struct {
	// JSON is the document.
	JSON []byte
	// Hash is the upper-case hex SHA-512 of JSON, as kube-apiserver computes
	// its ETags and the v3 index hashes.
	Hash string

	v3        bool
	protoOnce sync.Once
	proto     []byte
	protoErr  error
}

// Proto returns the document in the protobuf form of gnostic's OpenAPI
// models (what kubectl and client-go ask for), built on first use.
//
// The JSON document is parsed with gnostic's own compiler and marshalled
// with google.golang.org/protobuf: gnostic-models is the schema clients
// decode with, so going through it (rather than writing the fields with
// protowire by hand) guarantees the bytes mean to them what the JSON says.
func (d *Document) Proto() ([]byte, error) {
	d.protoOnce.Do(func() {
		var m proto.Message
		var err error
		if d.v3 {
			m, err = openapi_v3.ParseDocument(d.JSON)
		} else {
			m, err = openapi_v2.ParseDocument(d.JSON)
		}
		if err != nil {
			d.protoErr = fmt.Errorf("openapi: parsing the document as gnostic's model: %w", err)
			return
		}
		d.proto, d.protoErr = proto.MarshalOptions{Deterministic: true}.Marshal(m)
	})
	return d.proto, d.protoErr
}

func newDocument(v any, v3 bool) (*Document, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("openapi: encoding document: %w", err)
	}
	sum := sha512.Sum512(js)
	return &Document{JSON: js, Hash: strings.ToUpper(hex.EncodeToString(sum[:])), v3: v3}, nil
}

// info is the documents' info object, as kube-apiserver fills it.
var info = schema{"title": "Kubernetes", "version": "1.37"}

// groupVersion collects what one group version's document holds.
type groupVersion struct {
	group, version string
	paths          map[string]schema // v3 path items
	roots          []string          // definitions its paths refer to
	custom         map[string]schema // v3 definitions of custom kinds
}

// Options are what Build cannot read from a registry.Resource.
type Options struct {
	// Scale reports whether a resource serves the scale subresource (whose
	// paths then get operations on autoscaling/v1 Scale); nil means none
	// does.
	Scale func(*registry.Resource) bool
}

// Build builds the documents of resources (a registry's, see
// registry.Registry.All).
func Build(resources []*registry.Resource, opts Options) (*Documents, error) {
	defs := newDefinitions()
	// Every document can refer to these (delete bodies, errors).
	defs.ref(reflect.TypeFor[deleteOptions]())
	defs.ref(reflect.TypeFor[status]())
	defs.ref(reflect.TypeFor[objectMeta]())
	defs.ref(reflect.TypeFor[listMeta]())

	v2Paths := schema{}
	customV2 := map[string]schema{}
	gvs := map[string]*groupVersion{}
	gvkOf := map[string][]any{} // definition -> x-kubernetes-group-version-kind
	for _, r := range resources {
		key := gvPath(r.Group, r.Version)
		gv := gvs[key]
		if gv == nil {
			gv = &groupVersion{group: r.Group, version: r.Version, paths: map[string]schema{}, custom: map[string]schema{}}
			gvs[key] = gv
		}
		var kindDef, listDef string
		if r.Custom {
			kindDef = customName(r.Group, r.Version, r.Kind)
			listDef = customName(r.Group, r.Version, r.ListKind)
			v2, v3, err := customSchemas(r)
			if err != nil {
				return nil, err
			}
			customV2[kindDef], gv.custom[kindDef] = v2, v3
		} else {
			t := reflect.TypeOf(r.New())
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			kindDef = defs.ref(t)
			listDef = strings.TrimSuffix(kindDef, r.Kind) + r.ListKind
			if !strings.HasSuffix(kindDef, "."+r.Kind) {
				listDef = kindDef + "List"
			}
		}
		gvkOf[kindDef] = appendGVK(gvkOf[kindDef], gvkExt(r, r.Kind))
		if r.NotStored && !r.HasVerb("list") {
			// A resource that is only created (a review, bindings) has
			// no list and one path: the create.
			gv.roots = append(gv.roots, kindDef)
			for _, p := range servedPaths(r, kindDef, "") {
				v2Paths[p.path] = pathV2(r, p)
				gv.paths[p.path] = pathV3(r, p)
			}
			continue
		}
		list := listSchema(kindDef, r.Custom)
		list["x-kubernetes-group-version-kind"] = []any{gvkExt(r, r.ListKind)}
		if r.Custom {
			customV2[listDef], gv.custom[listDef] = toV2(list), list
		} else {
			defs.v2[listDef], defs.v3[listDef] = list, list
		}
		gv.roots = append(gv.roots, kindDef, listDef)
		paths := resourcePaths(r, kindDef, listDef)
		if r.NotStored { // its verbs only (componentstatuses: get and list)
			paths = servedPaths(r, kindDef, listDef)
		}
		if opts.Scale != nil && opts.Scale(r) {
			scaleDef := defs.ref(reflect.TypeFor[scale]())
			paths = append(paths, scalePath(r, scaleDef))
			gv.roots = append(gv.roots, scaleDef)
			gvkOf[scaleDef] = appendGVK(gvkOf[scaleDef], schema{"group": "autoscaling", "version": "v1", "kind": "Scale"})
		}
		for _, p := range paths {
			v2Paths[p.path] = pathV2(r, p)
			gv.paths[p.path] = pathV3(r, p)
		}
	}
	defs.finish()
	// The kinds of package meta every group version serves.
	gvkOf[statusName] = []any{schema{"group": "", "version": "v1", "kind": "Status"}}
	for _, r := range resources {
		gvkOf[deleteOptionsName] = appendGVK(gvkOf[deleteOptionsName], schema{"group": r.Group, "version": r.Version, "kind": "DeleteOptions"})
	}
	for name, gvks := range gvkOf {
		// In group, version, kind order, as Kubernetes lists them.
		sort.SliceStable(gvks, func(i, j int) bool {
			a, b := gvks[i].(schema), gvks[j].(schema)
			for _, k := range []string{"group", "version", "kind"} {
				if a[k] != b[k] {
					return a[k].(string) < b[k].(string)
				}
			}
			return false
		})
		for _, m := range []map[string]schema{defs.v2, defs.v3} {
			if d := m[name]; d != nil {
				d = cloneSchema(d)
				d["x-kubernetes-group-version-kind"] = gvks
				m[name] = d
			}
		}
	}

	// Swagger 2.0: every definition, every path.
	v2Defs := schema{}
	for name, d := range defs.v2 {
		v2Defs[name] = toV2(d)
	}
	for name, d := range customV2 {
		v2Defs[name] = d
	}
	v2, err := newDocument(schema{
		"swagger":             "2.0",
		"info":                info,
		"paths":               v2Paths,
		"definitions":         v2Defs,
		"securityDefinitions": schema{"BearerToken": schema{"type": "apiKey", "name": "authorization", "in": "header"}},
		"security":            []any{schema{"BearerToken": []string{}}},
	}, false)
	if err != nil {
		return nil, err
	}
	docs := &Documents{V2: v2, V3: map[string]*Document{}}

	// OpenAPI 3.0: per group version, the definitions its paths reach.
	index := map[string]any{}
	for key, gv := range gvs {
		all := func(name string) schema {
			if d := gv.custom[name]; d != nil {
				return d
			}
			return defs.v3[name]
		}
		roots := append(gv.roots, deleteOptionsName, statusName, patchName, objectMetaName, listMetaName)
		comps := schema{}
		for _, name := range closure(roots, all) {
			comps[name] = toV3(all(name))
		}
		// A group version's document lists DeleteOptions as its own kind only.
		if d, ok := comps[deleteOptionsName].(schema); ok {
			d["x-kubernetes-group-version-kind"] = []any{schema{"group": gv.group, "version": gv.version, "kind": "DeleteOptions"}}
		}
		paths := schema{}
		for p, item := range gv.paths {
			paths[p] = item
		}
		d, err := newDocument(schema{
			"openapi": "3.0.0",
			"info":    info,
			"paths":   paths,
			"components": schema{
				"schemas":         comps,
				"securitySchemes": schema{"BearerToken": schema{"type": "apiKey", "name": "authorization", "in": "header"}},
			},
		}, true)
		if err != nil {
			return nil, err
		}
		docs.V3[key] = d
		index[key] = schema{"serverRelativeURL": "/openapi/v3/" + key + "?hash=" + d.Hash}
	}
	docs.V3Index, err = json.Marshal(schema{"paths": index})
	if err != nil {
		return nil, fmt.Errorf("openapi: encoding the v3 index: %w", err)
	}
	return docs, nil
}

func appendGVK(list []any, gvk schema) []any {
	for _, x := range list {
		if reflect.DeepEqual(x, gvk) {
			return list
		}
	}
	return append(list, gvk)
}

// listSchema is the definition of the list kind of kindDef (a custom
// resource's list has no default metadata, as kube-apiserver writes it).
func listSchema(kindDef string, custom bool) schema {
	meta := schema{"$ref": "#/definitions/" + listMetaName, "default": schema{}}
	if custom {
		meta = ref(listMetaName)
	}
	return schema{
		"type":     "object",
		"required": []string{"items"},
		"properties": schema{
			"apiVersion": schema{"type": "string"},
			"kind":       schema{"type": "string"},
			"metadata":   meta,
			"items":      schema{"type": "array", "items": ref(kindDef)},
		},
	}
}

// closure returns roots and every definition they refer to, sorted.
func closure(roots []string, def func(string) schema) []string {
	seen := map[string]bool{}
	var visit func(v any)
	add := func(name string) {
		if seen[name] || def(name) == nil {
			return
		}
		seen[name] = true
		visit(def(name))
	}
	visit = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"].(string); ok {
				add(strings.TrimPrefix(r, "#/definitions/"))
			}
			for _, x := range v {
				visit(x)
			}
		case []any:
			for _, x := range v {
				visit(x)
			}
		}
	}
	for _, r := range roots {
		add(r)
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// toV3 rewrites a neutral schema for OpenAPI 3.0: references point into
// components/schemas, and a reference with siblings (a default) moves into
// allOf, as kube-apiserver writes it.
func toV3(s schema) schema {
	out := make(schema, len(s))
	for k, v := range s {
		out[k] = toV3Value(v)
	}
	if r, ok := out["$ref"].(string); ok {
		r = "#/components/schemas/" + strings.TrimPrefix(r, "#/definitions/")
		if len(out) == 1 {
			out["$ref"] = r
		} else {
			delete(out, "$ref")
			out["allOf"] = []any{schema{"$ref": r}}
		}
	}
	return out
}

// toV2 rewrites a neutral schema for Swagger 2.0: references keep no
// default beside them, as kube-apiserver's v2 document has none.
func toV2(s schema) schema {
	out := make(schema, len(s))
	for k, v := range s {
		out[k] = toV2Value(v)
	}
	// (Only a string $ref is a reference: JSONSchemaProps has a property
	// named "$ref".)
	if _, ok := out["$ref"].(string); ok {
		delete(out, "default")
	}
	if _, ok := out["type"].(string); ok && out["type"] != "object" && out["type"] != "array" {
		delete(out, "default")
	}
	return out
}

func toV2Value(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return toV2(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = toV2Value(x)
		}
		return out
	}
	return v
}

func toV3Value(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return toV3(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = toV3Value(x)
		}
		return out
	}
	return v
}
