package schema

import "sort"

// Default sets, in obj, the default value of every property the schema gives
// one and the object lacks (or holds null for, when the property is not
// nullable), recursively into objects, arrays and additionalProperties, as
// kube-apiserver's structural defaulting does. A default that is not valid
// JSON is skipped. A nil schema sets nothing.
func Default(s *Schema, obj map[string]any) {
	if s == nil || obj == nil {
		return
	}
	defaultValue(s, obj, 0)
}

func defaultValue(s *Schema, x any, depth int) {
	if s == nil || depth > maxDepth {
		return
	}
	switch t := x.(type) {
	case map[string]any:
		names := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			ps := s.Properties[k]
			cur, ok := t[k]
			if (!ok || (cur == nil && !ps.Nullable)) && ps.Default != nil {
				if d, err := DecodeJSON(ps.Default.Raw); err == nil {
					t[k] = d
				}
			}
			if v, ok := t[k]; ok {
				defaultValue(&ps, v, depth+1)
			}
		}
		if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
			for k, v := range t {
				if _, known := s.Properties[k]; !known {
					defaultValue(ap.Schema, v, depth+1)
				}
			}
		}
	case []any:
		if s.Items == nil {
			return
		}
		for i, item := range t {
			is := s.Items.Schema
			if is == nil {
				if i >= len(s.Items.JSONSchemas) {
					continue
				}
				is = &s.Items.JSONSchemas[i]
			}
			if item == nil && !is.Nullable && is.Default != nil {
				if d, err := DecodeJSON(is.Default.Raw); err == nil {
					t[i] = d
					item = d
				}
			}
			defaultValue(is, item, depth+1)
		}
	}
}
