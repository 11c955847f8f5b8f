package schema

import (
	"sort"
	"strconv"
)

// Prune removes from obj, a whole custom resource, the fields s does not
// describe, and returns their paths ("spec.unknown"), sorted, for the
// warnings kube-apiserver sends. apiVersion, kind and metadata are kept. A
// nil schema prunes nothing.
func Prune(s *Schema, obj map[string]any) []string {
	if s == nil || obj == nil {
		return nil
	}
	var pruned []string
	pruneObject(s, "", obj, true, &pruned, 0)
	sort.Strings(pruned)
	return pruned
}

func pruneValue(s *Schema, path string, x any, pruned *[]string, depth int) {
	if s == nil || depth > maxDepth {
		return
	}
	switch t := x.(type) {
	case map[string]any:
		pruneObject(s, path, t, false, pruned, depth)
	case []any:
		if s.Items == nil {
			return
		}
		for i, item := range t {
			p := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case s.Items.Schema != nil:
				pruneValue(s.Items.Schema, p, item, pruned, depth+1)
			case i < len(s.Items.JSONSchemas):
				pruneValue(&s.Items.JSONSchemas[i], p, item, pruned, depth+1)
			}
		}
	}
}

// objectMetaFields are the fields of ObjectMeta: the metadata of an
// embedded resource keeps only these (silently, as kube-apiserver reads it
// into an ObjectMeta and back).
var objectMetaFields = map[string]bool{
	"name": true, "generateName": true, "namespace": true, "selfLink": true, "uid": true, "resourceVersion": true,
	"generation": true, "creationTimestamp": true, "deletionTimestamp": true, "deletionGracePeriodSeconds": true,
	"labels": true, "annotations": true, "ownerReferences": true, "finalizers": true, "managedFields": true,
}

func pruneObject(s *Schema, path string, m map[string]any, root bool, pruned *[]string, depth int) {
	keep := preserves(s)
	if s.XEmbeddedResource && !root {
		if md, ok := m["metadata"].(map[string]any); ok {
			for k := range md {
				if !objectMetaFields[k] {
					delete(md, k)
				}
			}
		}
	}
	for k, x := range m {
		if (root || s.XEmbeddedResource) && metaFields[k] {
			continue
		}
		p := join(path, k)
		if ps, ok := s.Properties[k]; ok {
			pruneValue(&ps, p, x, pruned, depth+1)
			continue
		}
		if ap := s.AdditionalProperties; ap != nil && (ap.Schema != nil || ap.Allows) {
			if ap.Schema != nil {
				pruneValue(ap.Schema, p, x, pruned, depth+1)
			}
			continue
		}
		if keep {
			continue
		}
		delete(m, k)
		*pruned = append(*pruned, p)
	}
}
