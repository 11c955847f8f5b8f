package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Directive keys of the strategic merge patch format.
const (
	directiveKey           = "$patch"
	retainKeysKey          = "$retainKeys"
	deleteFromListPrefix   = "$deleteFromPrimitiveList/"
	setElementOrderPrefix  = "$setElementOrder/"
	directiveReplace       = "replace"
	directiveDelete        = "delete"
	directiveMerge         = "merge"
	strategyMerge          = "merge"
	strategyReplace        = "replace"
	maxStrategicMergeDepth = 10000
)

// Strategic applies a Kubernetes strategic merge patch to doc, a JSON object of Go type t
// (a struct type such as corev1.Pod; reflect.TypeFor[corev1.Pod]()), using the patchStrategy /
// patchMergeKey struct tags (and retainKeys) to merge lists by key.
//
// The package documentation describes the format and where it differs from
// kube-apiserver. A nil t merges without a schema: objects are merged, lists
// replaced, and directives in objects still apply. doc is not modified. The
// result is compact JSON with object keys in sorted order; integers keep their
// exact digits.
//
// A patch that is not a JSON object, or whose directives are malformed, is a
// 400 *Error; one that contradicts its own $retainKeys or merges lists of lists
// is 422; a doc that is not a JSON object is 500.
func Strategic(doc, patch []byte, t reflect.Type) ([]byte, error) {
	original, err := decodeObject(doc)
	if err != nil {
		return nil, &Error{Code: http.StatusInternalServerError, Message: "invalid JSON document: " + err.Error()}
	}
	p, err := decodeObject(patch)
	if err != nil {
		return nil, badRequest(err.Error())
	}
	m := merger{}
	merged, err := m.mergeObject(original, p, objectOf(t))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(merged); err != nil {
		return nil, &Error{Code: http.StatusInternalServerError, Message: err.Error()}
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// decodeObject decodes one JSON object, numbers as json.Number. null is an
// empty object.
func decodeObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("unexpected end of JSON input")
		}
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid character after top-level value")
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// merger carries the state of one Strategic call.
type merger struct {
	depth int
}

// mergeObject merges patch into original (which it may modify and returns).
func (m *merger) mergeObject(original, patch map[string]any, schema object) (map[string]any, error) {
	m.depth++
	defer func() { m.depth-- }()
	if m.depth > maxStrategicMergeDepth {
		return nil, badRequest("strategic merge patch is nested too deeply")
	}
	if original == nil {
		original = map[string]any{}
	}
	if d, ok := patch[directiveKey]; ok {
		switch d {
		case directiveReplace:
			// The object is the patch object, directives carried out.
			return m.mergeObject(map[string]any{}, without(patch, directiveKey), schema)
		case directiveDelete:
			return map[string]any{}, nil
		case directiveMerge:
			patch = without(patch, directiveKey)
		default:
			return nil, badRequest(fmt.Sprintf("unknown patch type: %v in map", d))
		}
	}
	if rk, ok := patch[retainKeysKey]; ok {
		if err := retainKeys(original, patch, rk); err != nil {
			return nil, err
		}
	}

	keys := make([]string, 0, len(patch))
	for k := range patch {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic errors

	// Directives about lists: removals first, then the order to impose.
	orders := map[string][]any{}
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, deleteFromListPrefix):
			list, ok := patch[k].([]any)
			if !ok {
				return nil, badRequest(msgBadPrimitiveList)
			}
			name := strings.TrimPrefix(k, deleteFromListPrefix)
			if ol, ok := original[name].([]any); ok {
				original[name] = removeValues(ol, list)
			}
		case strings.HasPrefix(k, setElementOrderPrefix):
			list, ok := patch[k].([]any)
			if !ok {
				return nil, badRequest(msgBadSetElementOrder)
			}
			orders[strings.TrimPrefix(k, setElementOrderPrefix)] = list
		}
	}

	for _, k := range keys {
		if k == retainKeysKey || strings.HasPrefix(k, deleteFromListPrefix) || strings.HasPrefix(k, setElementOrderPrefix) {
			continue
		}
		pv := patch[k]
		if pv == nil {
			delete(original, k)
			continue
		}
		ov, had := original[k]
		order, hasOrder := orders[k]
		if !hasOrder {
			order = nil
		}
		v, err := m.mergeValue(ov, had, pv, schema.field(k), order)
		if err != nil {
			return nil, err
		}
		original[k] = v
	}
	// An order for a list the patch does not otherwise touch only reorders it.
	for k, order := range orders {
		if _, inPatch := patch[k]; inPatch {
			continue
		}
		f := schema.field(k)
		ol, ok := original[k].([]any)
		if !ok || shapeOf(f.typ) != shapeList || !f.has(strategyMerge) {
			continue
		}
		v, err := m.mergeList(ol, nil, f, order)
		if err != nil {
			return nil, err
		}
		original[k] = v
	}
	return original, nil
}

// mergeValue merges the patch value pv (not null) into the original value ov
// (had: whether the original has one) of a field.
func (m *merger) mergeValue(ov any, had bool, pv any, f field, order []any) (any, error) {
	sh := shapeOf(f.typ)
	if sh == shapeOpaque || sh == shapeScalar {
		return pv, nil
	}
	switch p := pv.(type) {
	case map[string]any:
		om, ok := ov.(map[string]any)
		if !ok || f.has(strategyReplace) {
			om = map[string]any{}
		}
		return m.mergeObject(om, p, objectOf(f.typ))
	case []any:
		if sh != shapeList || !f.has(strategyMerge) {
			return p, nil
		}
		ol, _ := ov.([]any)
		return m.mergeList(ol, p, f, order)
	}
	return pv, nil
}

// mergeList merges a patch list into a list field with the merge strategy.
func (m *merger) mergeList(original, patch []any, f field, order []any) ([]any, error) {
	elem := deref(f.typ).Elem()
	objects := shapeOf(elem) == shapeStruct
	for _, l := range [][]any{original, patch} {
		for _, v := range l {
			switch v.(type) {
			case []any:
				return nil, unprocessable(msgListOfLists)
			case map[string]any:
				if shapeOf(elem) == shapeUnknown {
					objects = true
				}
			}
		}
	}
	if objects {
		return m.mergeObjectList(original, patch, f, objectOf(elem), order)
	}
	return mergePrimitiveList(original, patch, order)
}

// mergeObjectList merges lists of objects by the field's merge key.
func (m *merger) mergeObjectList(original, patch []any, f field, elem object, order []any) ([]any, error) {
	key := f.mergeKey
	if key == "" {
		return nil, badRequest("cannot merge lists without a merge key")
	}
	result := slices.Clone(original)
	items := make([]map[string]any, 0, len(patch))
	replace := false
	for _, v := range patch {
		item, ok := v.(map[string]any)
		if !ok {
			return nil, badRequest(fmt.Sprintf("the items of a list merged by %q must be objects", key))
		}
		d, hasDirective := item[directiveKey]
		if !hasDirective {
			items = append(items, item)
			continue
		}
		switch d {
		case directiveDelete:
			kv, ok := item[key]
			if !ok {
				return nil, badRequest(fmt.Sprintf("delete directive does not contain merge key %q", key))
			}
			ks := canonical(kv)
			result = slices.DeleteFunc(result, func(o any) bool {
				om, ok := o.(map[string]any)
				return ok && hasKey(om, key, ks)
			})
		case directiveReplace:
			replace = true
		case directiveMerge:
			items = append(items, without(item, directiveKey))
		default:
			return nil, badRequest(fmt.Sprintf("unknown patch type: %v in list item", d))
		}
	}
	if replace {
		out := make([]any, 0, len(items))
		for _, it := range items {
			merged, err := m.mergeObject(map[string]any{}, it, elem)
			if err != nil {
				return nil, err
			}
			out = append(out, merged)
		}
		return out, nil
	}

	// Index of the document's items by merge key.
	index := make(map[string]int, len(result))
	for i, o := range result {
		if om, ok := o.(map[string]any); ok {
			if kv, ok := om[key]; ok {
				if _, dup := index[canonical(kv)]; !dup {
					index[canonical(kv)] = i
				}
			}
		}
	}
	for _, it := range items {
		kv, ok := it[key]
		if !ok {
			return nil, badRequest(fmt.Sprintf("an item of the patch list does not contain the merge key %q", key))
		}
		ks := canonical(kv)
		if i, found := index[ks]; found {
			om, _ := result[i].(map[string]any)
			merged, err := m.mergeObject(om, it, elem)
			if err != nil {
				return nil, err
			}
			result[i] = merged
			continue
		}
		merged, err := m.mergeObject(map[string]any{}, it, elem)
		if err != nil {
			return nil, err
		}
		index[ks] = len(result)
		result = append(result, merged)
	}

	// The keys whose order the patch gives.
	var patchOrder []string
	if order != nil {
		for _, o := range order {
			om, ok := o.(map[string]any)
			if !ok {
				return nil, badRequest(msgBadSetElementOrder)
			}
			kv, ok := om[key]
			if !ok {
				return nil, badRequest(msgBadSetElementOrder)
			}
			patchOrder = append(patchOrder, canonical(kv))
		}
		if err := checkOrderCovers(patchOrder, items, func(it map[string]any) string { return canonical(it[key]) }); err != nil {
			return nil, err
		}
	} else {
		for _, it := range items {
			patchOrder = append(patchOrder, canonical(it[key]))
		}
	}
	keyOf := func(v any) (string, bool) {
		om, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		kv, ok := om[key]
		if !ok {
			return "", false
		}
		return canonical(kv), true
	}
	return arrange(result, original, patchOrder, keyOf), nil
}

// checkOrderCovers reports a $setElementOrder that does not name an item the
// patch sets.
func checkOrderCovers(order []string, items []map[string]any, key func(map[string]any) string) error {
	named := make(map[string]bool, len(order))
	for _, o := range order {
		named[o] = true
	}
	for _, it := range items {
		if !named[key(it)] {
			return badRequest(msgBadSetElementOrder)
		}
	}
	return nil
}

// mergePrimitiveList merges lists of primitives as sets.
func mergePrimitiveList(original, patch []any, order []any) ([]any, error) {
	for _, v := range patch {
		if _, ok := v.(map[string]any); ok {
			return nil, badRequest(msgBadPrimitiveList)
		}
	}
	seen := make(map[string]bool, len(original)+len(patch))
	merged := make([]any, 0, len(original)+len(patch))
	for _, l := range [][]any{original, patch} {
		for _, v := range l {
			k := canonical(v)
			if !seen[k] {
				seen[k] = true
				merged = append(merged, v)
			}
		}
	}
	var patchOrder []string
	if order != nil {
		for _, o := range order {
			switch o.(type) {
			case map[string]any, []any:
				return nil, badRequest(msgBadSetElementOrder)
			}
			patchOrder = append(patchOrder, canonical(o))
		}
		named := make(map[string]bool, len(patchOrder))
		for _, o := range patchOrder {
			named[o] = true
		}
		for _, v := range patch {
			if !named[canonical(v)] {
				return nil, badRequest(msgBadSetElementOrder)
			}
		}
	} else {
		for _, v := range patch {
			patchOrder = append(patchOrder, canonical(v))
		}
	}
	return arrange(merged, original, patchOrder, func(v any) (string, bool) { return canonical(v), true }), nil
}

// arrange orders the merged items of a list: the items patchOrder names, in
// that order, interleaved with the others (the document's own items), which
// keep their order. A document item goes before a patch item when the document
// had both and had it first; otherwise the patch item goes first.
func arrange(merged, original []any, patchOrder []string, keyOf func(any) (string, bool)) []any {
	rank := make(map[string]int, len(patchOrder))
	for i, k := range patchOrder {
		if _, dup := rank[k]; !dup {
			rank[k] = i
		}
	}
	pos := make(map[string]int, len(original))
	for i, v := range original {
		if k, ok := keyOf(v); ok {
			if _, dup := pos[k]; !dup {
				pos[k] = i
			}
		}
	}
	type ranked struct {
		v    any
		rank int
		pos  int // position in the document, -1 if new
	}
	var fromPatch, serverOnly []ranked
	for _, v := range merged {
		k, ok := keyOf(v)
		p, inDoc := pos[k]
		if !ok || !inDoc {
			p = -1
		}
		if r, named := rank[k]; ok && named {
			fromPatch = append(fromPatch, ranked{v, r, p})
		} else {
			serverOnly = append(serverOnly, ranked{v, 0, p})
		}
	}
	slices.SortStableFunc(fromPatch, func(a, b ranked) int { return a.rank - b.rank })
	out := make([]any, 0, len(merged))
	i, j := 0, 0
	for i < len(serverOnly) || j < len(fromPatch) {
		switch {
		case j >= len(fromPatch):
			out = append(out, serverOnly[i].v)
			i++
		case i >= len(serverOnly):
			out = append(out, fromPatch[j].v)
			j++
		case serverOnly[i].pos >= 0 && fromPatch[j].pos >= 0 && serverOnly[i].pos < fromPatch[j].pos:
			out = append(out, serverOnly[i].v)
			i++
		default:
			out = append(out, fromPatch[j].v)
			j++
		}
	}
	return out
}

// retainKeys carries out "$retainKeys": the patch may set only listed keys, and
// the original keeps only listed keys.
func retainKeys(original, patch map[string]any, rk any) error {
	list, ok := rk.([]any)
	if !ok {
		return badRequest(msgBadRetainKeys)
	}
	keep := make(map[string]bool, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			return badRequest(msgBadRetainKeys)
		}
		keep[s] = true
	}
	for k, v := range patch {
		if v == nil || strings.HasPrefix(k, "$") {
			continue
		}
		if !keep[k] {
			return unprocessable(msgRetainKeysMismatch)
		}
	}
	for k := range original {
		if !keep[k] {
			delete(original, k)
		}
	}
	return nil
}

// removeValues returns list without the values in remove.
func removeValues(list, remove []any) []any {
	drop := make(map[string]bool, len(remove))
	for _, v := range remove {
		drop[canonical(v)] = true
	}
	return slices.DeleteFunc(slices.Clone(list), func(v any) bool { return drop[canonical(v)] })
}

// hasKey reports whether object o's merge key has the canonical value ks.
func hasKey(o map[string]any, key, ks string) bool {
	kv, ok := o[key]
	return ok && canonical(kv) == ks
}

// without returns a copy of m without key k.
func without(m map[string]any, k string) map[string]any {
	out := make(map[string]any, len(m))
	for mk, v := range m {
		if mk != k {
			out[mk] = v
		}
	}
	return out
}

// canonical is a string that is equal for equal JSON values: numbers compare by
// value (80 and 80.0 are one key), everything else by its JSON encoding.
func canonical(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case string:
		return strconv.Quote(x)
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			return "n" + strings.TrimPrefix(s, "+")
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return "n" + s
		}
		if f == float64(int64(f)) && f >= -1<<53 && f <= 1<<53 {
			return "n" + strconv.FormatInt(int64(f), 10)
		}
		return "n" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return "j" + string(b)
}
