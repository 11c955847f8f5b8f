package apiserver

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/fieldmanager"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// managerKey names the field manager of writes to one resource through one
// endpoint (the resource itself or a subresource).
type managerKey struct {
	res *registry.Resource
	sub string
}

// fieldManager returns the manager that tracks metadata.managedFields for
// writes to res through sub, built once: from the Go type of a built-in kind,
// from the openAPIV3Schema of a custom resource. Writes to the resource do not
// own the status of a kind with a status subresource; writes to /status own
// nothing else.
func (s *Server) fieldManager(res *registry.Resource, sub string) (*fieldmanager.Manager, error) {
	key := managerKey{res, sub}
	if m, ok := s.managers.Load(key); ok {
		return m.(*fieldmanager.Manager), nil
	}
	var schema *fieldmanager.Schema
	var err error
	if res.Custom {
		schema, err = fieldmanager.ForCRD(res.Schema)
	} else {
		schema, err = fieldmanager.ForType(reflect.TypeOf(res.New()).Elem())
	}
	if err != nil {
		return nil, err
	}
	m := fieldmanager.New(schema, res.GroupVersion(), s.cfg.Now).WithKind(res.Kind)
	fields, custom := res.ResetFields[sub]
	switch {
	case custom:
		m = m.WithResetFields(fields...)
	case sub == "status", sub == "approval": // approval writes status.conditions
		m = m.WithResetFields("spec", "metadata")
	case res.StatusSubresource:
		m = m.WithResetFields("status")
	}
	actual, _ := s.managers.LoadOrStore(key, m)
	return actual.(*fieldmanager.Manager), nil
}

// managerName is the field manager a write is recorded for: the fieldManager
// parameter, else the product of the User-Agent ("kubectl" of
// "kubectl/v1.32.2 (linux/amd64)"), as kube-apiserver does.
func managerName(param, userAgent string) string {
	if param != "" {
		return param
	}
	if p, _, _ := strings.Cut(userAgent, "/"); p != "" {
		return p
	}
	return "unknown"
}

// toMap is obj as the JSON object the field manager works on, with its kind
// and apiVersion.
func toMap(res *registry.Resource, obj registry.Object) (map[string]any, error) {
	data, err := kjson.Marshal(res.WithTypeMeta(obj))
	if err != nil {
		return nil, err
	}
	return decodeJSONObject(data)
}

// decodeJSONObject decodes a JSON object keeping numbers exact.
func decodeJSONObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// track records a write that is not an apply in next's managedFields: what
// o.Manager changed from cur (nil on create) owns. kube-apiserver does this
// before admission mutates the object, so the pipeline tracks after
// defaulting and before PrepareForCreate/PrepareForUpdate. Ownership that
// cannot be computed leaves the managedFields as they were, as
// kube-apiserver does.
func (rs resourceStore) track(o *writeOptions, cur, next registry.Object) {
	if o.Applying {
		return
	}
	res := rs.res
	m, err := rs.s.fieldManager(res, o.Subresource)
	if err != nil {
		rs.s.cfg.Logger.Debug("apiserver: field manager", "resource", res.Resource, "err", err)
		return
	}
	var live map[string]any
	if cur != nil {
		if live, err = toMap(res, cur); err != nil {
			return
		}
	}
	obj, err := toMap(res, next)
	if err != nil {
		return
	}
	out, err := m.Update(live, obj, o.Manager, o.Subresource)
	if err != nil {
		rs.s.cfg.Logger.Debug("apiserver: tracking managed fields", "resource", res.Resource, "err", err)
	}
	var entries []metav1.ManagedFieldsEntry
	if meta, ok := out["metadata"].(map[string]any); ok && meta["managedFields"] != nil {
		data, err := json.Marshal(meta["managedFields"])
		if err == nil {
			err = kjson.Unmarshal(data, &entries)
		}
		if err != nil {
			rs.s.cfg.Logger.Debug("apiserver: decoding managed fields", "err", err)
			return
		}
	}
	next.SetManagedFields(entries)
}
