package schema

import (
	"maps"
	"slices"
	"strconv"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// ValidateListSetsAndMaps checks the x-kubernetes-list-type of the lists in
// obj: the items of a set must be distinct, those of a map distinct by their
// x-kubernetes-list-map-keys. Each repeated item is a Duplicate error at its
// index, showing the item (set) or its keys (map), as kube-apiserver reports
// them:
//
//	spec.ports[1]: Duplicate value: {"name":"a","proto":"TCP"}
func ValidateListSetsAndMaps(s *Schema, obj map[string]any) metav1.FieldErrors {
	if s == nil {
		return nil
	}
	v := &validator{}
	v.lists(s, "", obj, 0)
	return v.errs
}

func (v *validator) lists(s *Schema, path string, x any, depth int) {
	if s == nil || depth > maxDepth {
		return
	}
	switch t := x.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			p := join(path, k)
			if ps, ok := s.Properties[k]; ok {
				v.lists(&ps, p, t[k], depth+1)
			} else if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
				v.lists(ap.Schema, p, t[k], depth+1)
			}
		}
	case []any:
		if lt := s.XListType; lt != nil {
			switch *lt {
			case "set":
				for i := range t {
					for j := 0; j < i; j++ {
						if Equal(t[i], t[j]) {
							v.add(metav1.FieldDuplicate(path+"["+strconv.Itoa(i)+"]", t[i]))
							break
						}
					}
				}
			case "map":
				keys := make([]map[string]any, len(t))
				for i, item := range t {
					m, ok := item.(map[string]any)
					if !ok {
						continue
					}
					keys[i] = map[string]any{}
					for _, k := range s.XListMapKeys {
						if kv, ok := m[k]; ok {
							keys[i][k] = kv
						}
					}
					for j := 0; j < i; j++ {
						if keys[j] != nil && Equal(keys[i], keys[j]) {
							v.add(metav1.FieldDuplicate(path+"["+strconv.Itoa(i)+"]", keys[i]))
							break
						}
					}
				}
			}
		}
		if s.Items != nil && s.Items.Schema != nil {
			for i, item := range t {
				v.lists(s.Items.Schema, path+"["+strconv.Itoa(i)+"]", item, depth+1)
			}
		}
	}
}
