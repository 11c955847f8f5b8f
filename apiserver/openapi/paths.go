package openapi

import (
	"strings"

	"github.com/kapi-dev/kapi/apiserver/registry"
)

// param is a query or path parameter of an operation.
type param struct {
	name, in, typ string
}

func query(name, typ string) param { return param{name: name, in: "query", typ: typ} }

// The query parameters of each action, as kube-apiserver documents them
// (names and types; descriptions are left out).
var (
	listParams = []param{query("allowWatchBookmarks", "boolean"), query("continue", "string"),
		query("fieldSelector", "string"), query("labelSelector", "string"), query("limit", "integer"),
		query("resourceVersion", "string"), query("resourceVersionMatch", "string"),
		query("sendInitialEvents", "boolean"), query("shardSelector", "string"), query("timeoutSeconds", "integer"),
		query("watch", "boolean")}
	writeParams  = []param{query("dryRun", "string"), query("fieldManager", "string"), query("fieldValidation", "string")}
	patchParams  = append(append([]param(nil), writeParams...), query("force", "boolean"))
	deleteParams = []param{query("dryRun", "string"), query("gracePeriodSeconds", "integer"),
		query("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean"), query("orphanDependents", "boolean"),
		query("propagationPolicy", "string")}
	// A built-in deletecollection takes the delete options and the list
	// options but the watch ones; a custom resource's lists the list
	// options alone (kube-apiserver documents them so).
	deleteCollectionParams = append(append([]param(nil), deleteParams...), listParams[1:len(listParams)-1]...)
	getCustomParams        = []param{query("resourceVersion", "string")}
)

// operation is one HTTP method on one path.
type operation struct {
	method   string // get, put, post, patch, delete
	id       string // operationId
	action   string // x-kubernetes-action
	params   []param
	body     string // definition of the request body ("" for none)
	patch    bool   // the body is a patch (Patch, in the patch media types)
	response string // definition of the 200 (and 201/202) response
	codes    []string
	watch    bool // the response can also be a watch stream (list)
	// gvk, when set, is the kind the operation reads and writes if it is
	// not the resource's (autoscaling/v1 Scale).
	gvk *[3]string
	// jsonOnly means the responses are never protobuf (Scale).
	jsonOnly bool
}

// opGVK is the x-kubernetes-group-version-kind of op on r.
func opGVK(r *registry.Resource, op operation) schema {
	if op.gvk != nil {
		return schema{"group": op.gvk[0], "version": op.gvk[1], "kind": op.gvk[2]}
	}
	return gvkExt(r, r.Kind)
}

// opProduces are the media types of op's responses.
func opProduces(r *registry.Resource, op operation) []string {
	if op.jsonOnly {
		return []string{"application/json", "application/yaml"}
	}
	return produces(r, op.watch)
}

// pathItem is a path and its operations.
type pathItem struct {
	path   string
	params []param // path-level parameters
	ops    []operation
}

// groupIdent is the group as operation ids spell it: "Core", "Apps",
// "Coordination" (".k8s.io" dropped), "OpenapiKapiExample".
func groupIdent(group string) string {
	if group == "" {
		return "Core"
	}
	group = strings.TrimSuffix(group, ".k8s.io")
	var b strings.Builder
	for _, part := range strings.FieldsFunc(group, func(r rune) bool { return r == '.' || r == '-' }) {
		b.WriteString(upperFirst(part))
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// tag is the operations' tag: "core_v1", "apps_v1".
func tag(group, version string) string { return lowerFirst(groupIdent(group)) + "_" + version }

// gvPath is "api/v1" or "apis/GROUP/VERSION", the key of a group version in
// the v3 index.
func gvPath(group, version string) string {
	if group == "" {
		return "api/" + version
	}
	return "apis/" + group + "/" + version
}

// resourcePaths are the paths of a resource and its subresources with their
// operations, as kube-apiserver lists them (without the deprecated /watch/
// paths and without the scale, binding, eviction, log, exec and proxy
// subresources, whose bodies are other kinds).
func resourcePaths(r *registry.Resource, kindDef, listDef string) []pathItem {
	gi := groupIdent(r.Group) + upperFirst(r.Version)
	base := "/" + gvPath(r.Group, r.Version)
	ns := ""
	scope := ""
	var pathParams []param
	if r.Namespaced {
		ns = "/namespaces/{namespace}"
		scope = "Namespaced"
		pathParams = []param{{name: "namespace", in: "path", typ: "string"}}
	}
	pretty := query("pretty", "string")
	coll := base + ns + "/" + r.Resource
	item := coll + "/{name}"
	nameParam := param{name: "name", in: "path", typ: "string"}
	dcParams, getParams, patchCodes := deleteCollectionParams, []param(nil), []string{"200", "201"}
	if r.Custom {
		dcParams, getParams, patchCodes = listParams, getCustomParams, []string{"200"}
	}
	out := []pathItem{
		{path: coll, params: append(append([]param(nil), pathParams...), pretty), ops: []operation{
			{method: "get", id: "list" + gi + scope + r.Kind, action: "list", params: listParams, response: listDef, codes: []string{"200"}, watch: true},
			{method: "post", id: "create" + gi + scope + r.Kind, action: "post", params: writeParams, body: kindDef, response: kindDef, codes: []string{"200", "201", "202"}},
			{method: "delete", id: "delete" + gi + "Collection" + scope + r.Kind, action: "deletecollection", params: dcParams, body: deleteOptionsName, response: statusName, codes: []string{"200"}},
		}},
		{path: item, params: append([]param{nameParam}, append(append([]param(nil), pathParams...), pretty)...), ops: []operation{
			{method: "get", id: "read" + gi + scope + r.Kind, action: "get", params: getParams, response: kindDef, codes: []string{"200"}},
			{method: "put", id: "replace" + gi + scope + r.Kind, action: "put", params: writeParams, body: kindDef, response: kindDef, codes: []string{"200", "201"}},
			{method: "patch", id: "patch" + gi + scope + r.Kind, action: "patch", params: patchParams, body: patchName, patch: true, response: kindDef, codes: patchCodes},
			{method: "delete", id: "delete" + gi + scope + r.Kind, action: "delete", params: deleteParams, body: deleteOptionsName, response: kindDef, codes: []string{"200", "202"}},
		}},
	}
	if r.Resource == "namespaces" {
		out[0].ops = out[0].ops[:2] // namespaces have no deletecollection
	}
	if r.StatusSubresource {
		out = append(out, pathItem{path: item + "/status", params: out[1].params, ops: []operation{
			{method: "get", id: "read" + gi + scope + r.Kind + "Status", action: "get", params: getParams, response: kindDef, codes: []string{"200"}},
			{method: "put", id: "replace" + gi + scope + r.Kind + "Status", action: "put", params: writeParams, body: kindDef, response: kindDef, codes: []string{"200", "201"}},
			{method: "patch", id: "patch" + gi + scope + r.Kind + "Status", action: "patch", params: patchParams, body: patchName, patch: true, response: kindDef, codes: patchCodes},
		}})
	}
	if r.Namespaced {
		// Its parameters are the path's, not the operation's.
		params := append(append([]param(nil), listParams...), pretty)
		out = append(out, pathItem{path: base + "/" + r.Resource, params: params, ops: []operation{
			{method: "get", id: "list" + gi + r.Kind + "ForAllNamespaces", action: "list", response: listDef, codes: []string{"200"}, watch: true},
		}})
	}
	return out
}

// servedPaths are the paths of a resource that is not stored, with the
// operations of its verbs only, as kube-apiserver documents them: a
// review's or bindings' create, componentstatuses' list and get. A path
// left with one operation takes the operation's parameters, as any such
// path.
func servedPaths(r *registry.Resource, kindDef, listDef string) []pathItem {
	var out []pathItem
	for _, p := range resourcePaths(r, kindDef, listDef)[:2] { // the collection and the item
		var ops []operation
		for _, op := range p.ops {
			if r.HasVerb(actionVerbs[op.action]) {
				ops = append(ops, op)
			}
		}
		if len(ops) == 0 {
			continue
		}
		if len(ops) == 1 {
			p.params = append(append([]param(nil), ops[0].params...), p.params...)
			ops[0].params = nil
		}
		p.ops = ops
		out = append(out, p)
	}
	return out
}

// actionVerbs are the verbs of the x-kubernetes-action of operations.
var actionVerbs = map[string]string{"list": "list", "post": "create", "deletecollection": "deletecollection",
	"get": "get", "put": "update", "patch": "patch", "delete": "delete"}

// scalePath is the scale subresource of r: get, replace and patch of an
// autoscaling/v1 Scale (served as JSON and YAML).
func scalePath(r *registry.Resource, scaleDef string) pathItem {
	gi := groupIdent(r.Group) + upperFirst(r.Version)
	scope, ns := "", ""
	params := []param{{name: "name", in: "path", typ: "string"}}
	if r.Namespaced {
		scope, ns = "Namespaced", "/namespaces/{namespace}"
		params = append(params, param{name: "namespace", in: "path", typ: "string"})
	}
	params = append(params, query("pretty", "string"))
	patchCodes := []string{"200", "201"}
	if r.Custom {
		patchCodes = []string{"200"}
	}
	gvk := &[3]string{"autoscaling", "v1", "Scale"}
	return pathItem{path: "/" + gvPath(r.Group, r.Version) + ns + "/" + r.Resource + "/{name}/scale", params: params, ops: []operation{
		{method: "get", id: "read" + gi + scope + r.Kind + "Scale", action: "get", response: scaleDef, codes: []string{"200"}, gvk: gvk, jsonOnly: true},
		{method: "put", id: "replace" + gi + scope + r.Kind + "Scale", action: "put", params: writeParams, body: scaleDef, response: scaleDef, codes: []string{"200", "201"}, gvk: gvk, jsonOnly: true},
		{method: "patch", id: "patch" + gi + scope + r.Kind + "Scale", action: "patch", params: patchParams, body: patchName, patch: true, response: scaleDef, codes: patchCodes, gvk: gvk, jsonOnly: true},
	}}
}

// patchMediaTypes are the bodies PATCH accepts.
var patchMediaTypes = []string{"application/json-patch+json", "application/merge-patch+json",
	"application/strategic-merge-patch+json", "application/apply-patch+yaml"}

// produces are the media types responses come in (a list's also as a
// watch stream).
func produces(r *registry.Resource, watch bool) []string {
	out := []string{"application/json", "application/yaml"}
	if r.Protobuf {
		out = append(out, "application/vnd.kubernetes.protobuf")
	}
	if watch {
		out = append(out, "application/json;stream=watch")
		if r.Protobuf {
			out = append(out, "application/vnd.kubernetes.protobuf;stream=watch")
		}
	}
	return out
}

func gvkExt(r *registry.Resource, kind string) schema {
	return schema{"group": r.Group, "version": r.Version, "kind": kind}
}

func ref(name string) schema { return schema{"$ref": "#/definitions/" + name} }

// pathV2 renders a path item in the Swagger 2.0 form.
func pathV2(r *registry.Resource, p pathItem) schema {
	item := schema{}
	if len(p.params) > 0 {
		item["parameters"] = paramsV2(p.params)
	}
	for _, op := range p.ops {
		o := schema{
			"consumes":                        []string{"*/*"},
			"produces":                        opProduces(r, op),
			"schemes":                         []string{"https"},
			"tags":                            []string{tag(r.Group, r.Version)},
			"operationId":                     op.id,
			"x-kubernetes-action":             op.action,
			"x-kubernetes-group-version-kind": opGVK(r, op),
		}
		if op.patch {
			o["consumes"] = patchMediaTypes
		}
		var params []any
		if op.body != "" {
			params = append(params, schema{"name": "body", "in": "body", "required": op.method != "delete", "schema": ref(op.body)})
		}
		params = append(params, paramsV2(op.params)...)
		if len(params) > 0 {
			o["parameters"] = params
		}
		resp := schema{"401": schema{"description": "Unauthorized"}}
		for _, c := range op.codes {
			resp[c] = schema{"description": codeText[c], "schema": ref(op.response)}
		}
		o["responses"] = resp
		item[op.method] = o
	}
	return item
}

var codeText = map[string]string{"200": "OK", "201": "Created", "202": "Accepted"}

func paramsV2(ps []param) []any {
	out := make([]any, 0, len(ps))
	for _, p := range ps {
		s := schema{"name": p.name, "in": p.in, "type": p.typ, "uniqueItems": true}
		if p.in == "path" {
			s["required"] = true
		}
		out = append(out, s)
	}
	return out
}

func paramsV3(ps []param) []any {
	out := make([]any, 0, len(ps))
	for _, p := range ps {
		s := schema{"name": p.name, "in": p.in, "schema": schema{"type": p.typ, "uniqueItems": true}}
		if p.in == "path" {
			s["required"] = true
		}
		out = append(out, s)
	}
	return out
}

// pathV3 renders a path item in the OpenAPI 3.0 form.
func pathV3(r *registry.Resource, p pathItem) schema {
	item := schema{}
	if len(p.params) > 0 {
		item["parameters"] = paramsV3(p.params)
	}
	for _, op := range p.ops {
		o := schema{
			"tags":                            []string{tag(r.Group, r.Version)},
			"operationId":                     op.id,
			"x-kubernetes-action":             op.action,
			"x-kubernetes-group-version-kind": opGVK(r, op),
		}
		if len(op.params) > 0 {
			o["parameters"] = paramsV3(op.params)
		}
		if op.body != "" {
			content := schema{}
			if op.patch {
				for _, mt := range patchMediaTypes {
					content[mt] = schema{"schema": ref3(op.body)}
				}
			} else {
				content["*/*"] = schema{"schema": ref3(op.body)}
			}
			o["requestBody"] = schema{"content": content, "required": op.method != "delete"}
		}
		resp := schema{"401": schema{"description": "Unauthorized"}}
		for _, c := range op.codes {
			content := schema{}
			for _, mt := range opProduces(r, op) {
				content[mt] = schema{"schema": ref3(op.response)}
			}
			resp[c] = schema{"description": codeText[c], "content": content}
		}
		o["responses"] = resp
		item[op.method] = o
	}
	return item
}

func ref3(name string) schema { return schema{"$ref": "#/components/schemas/" + name} }
