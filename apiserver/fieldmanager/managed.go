package fieldmanager

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/smdschema"
)

// managerID identifies one managedFields entry: one per (manager,
// operation, subresource), and for Update also per apiVersion. Its JSON
// form, with the fields in this order, is the key of the entry in SMD's
// ManagedFields map; sorting keys sorts managers by name first, as
// kube-apiserver's conflict messages do.
type managerID struct {
	Manager     string                            `json:"manager,omitempty"`
	Operation   metav1.ManagedFieldsOperationType `json:"operation,omitempty"`
	APIVersion  string                            `json:"apiVersion,omitempty"`
	Subresource string                            `json:"subresource,omitempty"`
}

func (id managerID) key() string {
	if id.Operation == metav1.ManagedFieldsOperationApply {
		id.APIVersion = "" // an applier is one manager whatever version it applies
	}
	b, _ := json.Marshal(id)
	return string(b)
}

func parseKey(key string) (managerID, bool) {
	var id managerID
	if err := json.Unmarshal([]byte(key), &id); err != nil || id.Operation == "" {
		return managerID{}, false
	}
	return id, true
}

// describe names the manager of key as conflict messages do:
// `"bob" using v1` for an updater, `"alice"` for an applier, with
// ` with subresource "status"` after the name when there is one.
func describe(key string) string {
	id, ok := parseKey(key)
	if !ok {
		return fmt.Sprintf("%q", key)
	}
	s := fmt.Sprintf("%q", id.Manager)
	if id.Subresource != "" {
		s = fmt.Sprintf("%s with subresource %q", s, id.Subresource)
	}
	if id.Operation == metav1.ManagedFieldsOperationUpdate {
		s = fmt.Sprintf("%s using %s", s, id.APIVersion)
	}
	return s
}

// managed is the decoded metadata.managedFields of an object: each manager's
// field set (with its apiVersion and whether it was applied) and the time of
// its entry (nil when the entry had none).
type managed struct {
	fields fieldpath.ManagedFields
	times  map[string]*time.Time
}

func newManaged() *managed {
	return &managed{fields: fieldpath.ManagedFields{}, times: map[string]*time.Time{}}
}

// managedFieldsOf returns obj's metadata.managedFields and whether the field
// is present at all (null counts as absent).
func managedFieldsOf(obj map[string]any) ([]any, bool, error) {
	md, _ := obj["metadata"].(map[string]any)
	v, ok := md["managedFields"]
	if !ok || v == nil {
		return nil, false, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, true, fmt.Errorf("metadata.managedFields must be a list, not %T", v)
	}
	return l, true, nil
}

// isReset reports whether a request's managedFields ask to drop all
// ownership: an empty list, or a list of one empty entry. kube-apiserver
// treats both so (an absent or null list keeps the tracked entries).
func isReset(entries []any, present bool) bool {
	if !present {
		return false
	}
	switch len(entries) {
	case 0:
		return true
	case 1:
		m, ok := entries[0].(map[string]any)
		if !ok {
			return false
		}
		for _, v := range m {
			if !isEmptyJSON(v) {
				return false
			}
		}
		return true
	}
	return false
}

// isEmptyJSON reports whether v is the JSON form of a zero field: null, "",
// or an empty object (an empty fieldsV1).
func isEmptyJSON(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// decodeManaged decodes managedFields entries as kube-apiserver does: each
// needs operation Apply or Update, an apiVersion, fieldsType FieldsV1 and a
// valid fieldsV1; a later entry of the same manager replaces an earlier one.
func decodeManaged(entries []any) (*managed, error) {
	m := newManaged()
	for i, e := range entries {
		em, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("managed fields entry %d is not an object", i)
		}
		str := func(k string) (string, error) {
			switch v := em[k].(type) {
			case nil:
				return "", nil
			case string:
				return v, nil
			default:
				return "", fmt.Errorf("managed fields entry %d: %s is not a string", i, k)
			}
		}
		var id managerID
		var err error
		var fieldsType, ts string
		for k, dst := range map[string]*string{"manager": &id.Manager, "apiVersion": &id.APIVersion, "subresource": &id.Subresource, "fieldsType": &fieldsType, "time": &ts} {
			if *dst, err = str(k); err != nil {
				return nil, err
			}
		}
		op, err := str("operation")
		if err != nil {
			return nil, err
		}
		id.Operation = metav1.ManagedFieldsOperationType(op)
		switch id.Operation {
		case metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate:
		default:
			return nil, errors.New("operation must be `Apply` or `Update`")
		}
		if id.APIVersion == "" {
			return nil, errors.New("apiVersion must not be empty")
		}
		switch fieldsType {
		case "FieldsV1":
		case "":
			return nil, fmt.Errorf("missing fieldsType in managed fields entry %d", i)
		default:
			return nil, fmt.Errorf("invalid fieldsType %q in managed fields entry %d", fieldsType, i)
		}
		set := fieldpath.NewSet()
		if fv, ok := em["fieldsV1"]; ok && fv != nil {
			raw, err := json.Marshal(fv)
			if err != nil {
				return nil, fmt.Errorf("managed fields entry %d: %w", i, err)
			}
			if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
				return nil, fmt.Errorf("managed fields entry %d: error decoding set: %w", i, err)
			}
		}
		var tp *time.Time
		if ts != "" {
			t, err := time.Parse(time.RFC3339, ts)
			if err != nil {
				return nil, fmt.Errorf("managed fields entry %d: time: %w", i, err)
			}
			t = t.UTC()
			tp = &t
		}
		key := id.key()
		m.fields[key] = fieldpath.NewVersionedSet(set, fieldpath.APIVersion(id.APIVersion), id.Operation == metav1.ManagedFieldsOperationApply)
		m.times[key] = tp
	}
	return m, nil
}

// encodedEntry is one entry being encoded, with what it sorts by.
type encodedEntry struct {
	id   managerID
	t    *time.Time
	json map[string]any
}

// encode returns the managedFields entries of m in kube-apiserver's order:
// Apply before Update, then by time (seconds), manager, apiVersion and
// subresource. It returns nil when no manager owns anything.
func (m *managed) encode() ([]any, error) {
	if len(m.fields) == 0 {
		return nil, nil
	}
	entries := make([]encodedEntry, 0, len(m.fields))
	for key, vs := range m.fields {
		id, ok := parseKey(key)
		if !ok {
			return nil, fmt.Errorf("invalid manager key %q", key)
		}
		id.APIVersion = string(vs.APIVersion())
		if vs.Applied() {
			id.Operation = metav1.ManagedFieldsOperationApply
		}
		raw, err := vs.Set().ToJSON()
		if err != nil {
			return nil, fmt.Errorf("encoding fields of %s: %w", key, err)
		}
		fields, err := smdschema.DecodeJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("encoding fields of %s: %w", key, err)
		}
		e := map[string]any{
			"manager":    id.Manager,
			"operation":  string(id.Operation),
			"apiVersion": id.APIVersion,
			"fieldsType": "FieldsV1",
			"fieldsV1":   fields,
		}
		if id.Manager == "" {
			delete(e, "manager")
		}
		t := m.times[key]
		if t != nil {
			e["time"] = t.UTC().Format(time.RFC3339)
		}
		if id.Subresource != "" {
			e["subresource"] = id.Subresource
		}
		entries = append(entries, encodedEntry{id: id, t: t, json: e})
	}
	sort.Slice(entries, func(i, j int) bool {
		p, q := entries[i], entries[j]
		if p.id.Operation != q.id.Operation {
			return p.id.Operation < q.id.Operation
		}
		var ps, qs int64
		if p.t != nil {
			ps = p.t.Unix()
		}
		if q.t != nil {
			qs = q.t.Unix()
		}
		if ps != qs {
			return ps < qs
		}
		if p.id.Manager != q.id.Manager {
			return p.id.Manager < q.id.Manager
		}
		if p.id.APIVersion != q.id.APIVersion {
			return p.id.APIVersion < q.id.APIVersion
		}
		return p.id.Subresource < q.id.Subresource
	})
	out := make([]any, len(entries))
	for i, e := range entries {
		out[i] = e.json
	}
	return out, nil
}

// setManagedFields stores entries as obj's metadata.managedFields, removing
// the field when there are none.
func setManagedFields(obj map[string]any, entries []any) {
	md, _ := obj["metadata"].(map[string]any)
	if len(entries) == 0 {
		if md != nil {
			delete(md, "managedFields")
		}
		return
	}
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	md["managedFields"] = entries
}

// withoutManagedFields returns obj, or a shallow copy of obj whose metadata
// copy has no managedFields: what SMD compares, so it does not walk the
// entries.
func withoutManagedFields(obj map[string]any) map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	if _, ok := md["managedFields"]; !ok {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	md2 := make(map[string]any, len(md))
	for k, v := range md {
		if k != "managedFields" {
			md2[k] = v
		}
	}
	out["metadata"] = md2
	return out
}

// deepCopy copies a JSON value.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
