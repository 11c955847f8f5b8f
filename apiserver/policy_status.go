package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	admissionv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/internal/cel"
)

// # Policy status
//
// What kube-controller-manager's ValidatingAdmissionPolicy status
// controller does is done when a policy is written (policyStore): a policy
// whose status.observedGeneration is not its generation gets its status
// written, with observedGeneration and typeChecking: each validation's
// expression and messageExpression type-checked against the schema of
// every kind its matchConstraints name (wildcards name none), with params
// of the paramKind's schema and the variables typed as their expressions
// give; what does not check is a warning for the field, the issues listed
// per kind ("/v1, Kind=ConfigMap: ERROR: ..."), as the controller words
// them.

// policyStatus writes the status of the policy stored under key (out, as
// just written) when its observedGeneration is behind.
func (w *policyStore) policyStatus(ctx context.Context, key string, out storage.Object) {
	p, ok := out.(*admissionv1.ValidatingAdmissionPolicy)
	if !ok || p.Status.ObservedGeneration == p.Generation || p.DeletionTimestamp != nil {
		return
	}
	tc := w.s.typeCheck(ctx, p)
	next, err := w.Interface.GuaranteedUpdate(ctx, key, false, nil, func(cur storage.Object) (storage.Object, error) {
		c, ok := cur.(*admissionv1.ValidatingAdmissionPolicy)
		if !ok || c.UID != p.UID || c.Generation != p.Generation {
			return cur, nil // changed since: its own write checks it
		}
		n := c.DeepCopy()
		n.Status.ObservedGeneration = p.Generation
		n.Status.TypeChecking = tc
		return n, nil
	})
	if err == nil {
		w.x.put(key, next, false)
	}
}

// typeCheck type-checks a policy's validations as the status controller
// does.
func (s *Server) typeCheck(ctx context.Context, p *admissionv1.ValidatingAdmissionPolicy) *admissionv1.TypeChecking {
	tc := &admissionv1.TypeChecking{}
	var names []string
	var schemas []*cel.Schema
	if m := p.Spec.MatchConstraints; m != nil {
		for _, r := range m.ResourceRules {
			for _, g := range r.APIGroups {
				for _, v := range r.APIVersions {
					for _, res := range r.Resources {
						if g == "*" || v == "*" || strings.Contains(res, "*") || strings.Contains(res, "/") {
							continue
						}
						rr := s.reg.Get(g, v, res)
						if rr == nil {
							continue
						}
						name := fmt.Sprintf("%s/%s, Kind=%s", rr.Group, rr.Version, rr.Kind)
						if sch := s.kindSchema(rr); sch != nil && !slices.Contains(names, name) {
							names, schemas = append(names, name), append(schemas, sch)
						}
					}
				}
			}
		}
	}
	if len(names) == 0 {
		return tc
	}
	var params *cel.Schema
	if pk := p.Spec.ParamKind; pk != nil {
		group, version, _ := strings.Cut(pk.APIVersion, "/")
		if version == "" {
			group, version = "", group
		}
		for _, res := range s.reg.ForGroupVersion(group, version) {
			if res.Kind == pk.Kind && !strings.Contains(res.Resource, "/") {
				params = s.kindSchema(res)
				break
			}
		}
	}
	vars := make([]cel.PolicyVariable, len(p.Spec.Variables))
	for i, v := range p.Spec.Variables {
		vars[i] = cel.PolicyVariable{Name: v.Name, Expression: v.Expression}
	}
	var exprs, refs []string
	for i, v := range p.Spec.Validations {
		exprs = append(exprs, v.Expression, v.MessageExpression)
		refs = append(refs, fmt.Sprintf("spec.validations[%d].expression", i), fmt.Sprintf("spec.validations[%d].messageExpression", i))
	}
	issues := make([][]string, len(schemas)) // by kind, then expression
	for k, sch := range schemas {
		issues[k] = cel.CheckPolicy(sch, params, vars, exprs)
	}
	for i := range exprs {
		perKind := make([]string, len(names))
		for k := range names {
			perKind[k] = issues[k][i]
		}
		if w := cel.TypeCheckWarning(names, perKind); w != "" {
			tc.ExpressionWarnings = append(tc.ExpressionWarnings, admissionv1.ExpressionWarning{FieldRef: refs[i], Warning: w})
		}
	}
	return tc
}

// kindSchema is the schema of res's kind: a custom resource's
// openAPIV3Schema, a built-in kind's OpenAPI v3 definition with its
// references resolved; nil when there is none.
func (s *Server) kindSchema(res *registry.Resource) *cel.Schema {
	if res.Custom {
		return res.Schema
	}
	docs, _, err := s.openAPIDocs()
	if err != nil {
		return nil
	}
	path := "api/" + res.Version
	if res.Group != "" {
		path = "apis/" + res.Group + "/" + res.Version
	}
	doc := docs.V3[path]
	if doc == nil {
		return nil
	}
	var d struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if json.Unmarshal(doc.JSON, &d) != nil {
		return nil
	}
	defs := d.Components.Schemas
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		def := defs[name]
		gvks, _ := def["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			if gm, ok := g.(map[string]any); ok && gm["group"] == res.Group && gm["version"] == res.Version && gm["kind"] == res.Kind {
				b, err := json.Marshal(resolveRefs(def, defs, 0))
				if err != nil {
					return nil
				}
				var out apiextensionsv1.JSONSchemaProps
				if json.Unmarshal(b, &out) != nil {
					return nil
				}
				return &out
			}
		}
	}
	return nil
}

// resolveRefs replaces the references of an OpenAPI v3 schema node with
// the definitions they name (allOf of one reference included), to a depth
// of 16 references (deeper is left untyped).
func resolveRefs(n any, defs map[string]map[string]any, depth int) any {
	m, ok := n.(map[string]any)
	if !ok {
		return n
	}
	if ref, ok := m["$ref"].(string); ok {
		def := defs[strings.TrimPrefix(ref, "#/components/schemas/")]
		if def == nil || depth >= 16 {
			return map[string]any{}
		}
		return resolveRefs(def, defs, depth+1)
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch k {
		case "properties":
			props := map[string]any{}
			if pm, ok := v.(map[string]any); ok {
				for pk, pv := range pm {
					props[pk] = resolveRefs(pv, defs, depth)
				}
			}
			out[k] = props
		case "items", "additionalProperties":
			out[k] = resolveRefs(v, defs, depth)
		case "allOf":
			if list, ok := v.([]any); ok && len(list) == 1 {
				if r, ok := resolveRefs(list[0], defs, depth).(map[string]any); ok {
					for rk, rv := range r {
						if _, set := m[rk]; !set {
							out[rk] = rv
						}
					}
				}
				continue
			}
			out[k] = v
		case "x-kubernetes-group-version-kind", "description", "default", "x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key", "x-kubernetes-unions":
			// not what the checker reads
		default:
			out[k] = v
		}
	}
	return out
}
