package fieldmanager

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/kapi-dev/kapi/internal/smdschema"
)

// LastAppliedAnnotation is the annotation in which kubectl's client-side
// apply records the configuration it last applied, as JSON.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// KubectlApplyManager is the field manager of `kubectl apply --server-side`
// (and of `kubectl diff --server-side`). Only its applies take over the
// fields recorded in LastAppliedAnnotation and keep the annotation current;
// a client choosing another manager opts out of both, as with
// kube-apiserver.
const KubectlApplyManager = "kubectl"

// TotalAnnotationSizeLimit is the most bytes an object's annotations may
// hold, keys and values together (kube-apiserver's limit, 256 KiB). When
// rewriting LastAppliedAnnotation would make them larger, the annotation is
// dropped instead.
const TotalAnnotationSizeLimit = 256 << 10

// lastAppliedFields returns the fields that live's LastAppliedAnnotation
// records and that still hold the recorded values in live: the fields the
// client-side applier can be taken to own. liveT is live as a typed value.
// An error means there is no usable annotation (absent, empty, not JSON,
// without a kind, of another apiVersion or kind, or not matching the
// schema); no field is then allowed.
func (m *Manager) lastAppliedFields(live map[string]any, liveT *typed.TypedValue) (*fieldpath.Set, error) {
	md, _ := live["metadata"].(map[string]any)
	annotations, _ := md["annotations"].(map[string]any)
	raw, _ := annotations[LastAppliedAnnotation].(string)
	if raw == "" {
		return nil, errors.New("no last applied annotation")
	}
	v, err := decodeJSONDocument([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("failed to decode last applied object: %w", err)
	}
	lastApplied, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("last applied configuration is not an object")
	}
	apiVersion, _ := lastApplied["apiVersion"].(string)
	kind, _ := lastApplied["kind"].(string)
	if kind == "" {
		return nil, errors.New("last applied configuration has no kind")
	}
	if apiVersion != m.apiVersion {
		return nil, fmt.Errorf("last applied configuration is of apiVersion %q, not %q", apiVersion, m.apiVersion)
	}
	want := m.kind
	if want == "" {
		want, _ = live["kind"].(string)
	}
	if want != "" && kind != want {
		return nil, fmt.Errorf("last applied configuration is of kind %q, not %q", kind, want)
	}
	lastT, err := m.typedValue(lastApplied)
	if err != nil {
		return nil, fmt.Errorf("last applied configuration does not match the schema: %w", err)
	}
	set, err := lastT.ToFieldSet()
	if err != nil {
		return nil, fmt.Errorf("failed to get the fields of the last applied configuration: %w", err)
	}
	cmp, err := lastT.Compare(liveT)
	if err != nil {
		return nil, fmt.Errorf("failed to compare the last applied configuration with the object: %w", err)
	}
	// A field whose live value is not the recorded one was changed by
	// someone else since: it is not the client-side applier's to give.
	return set.Difference(cmp.Modified).Difference(cmp.Added).Difference(cmp.Removed), nil
}

// conflictsOutside returns the conflicts whose field is not in allowed.
func conflictsOutside(cs merge.Conflicts, allowed *fieldpath.Set) merge.Conflicts {
	var out merge.Conflicts
	for _, c := range cs {
		if !allowed.Has(c.Path) {
			out = append(out, c)
		}
	}
	return out
}

// syncLastApplied rewrites out's LastAppliedAnnotation, when it has a
// non-empty one, to applied (the configuration as the client sent it) minus
// that annotation, as JSON with sorted keys and a final newline; when the
// annotations would then exceed TotalAnnotationSizeLimit the annotation is
// removed. out is modified in place.
func syncLastApplied(out, applied map[string]any) error {
	md, _ := out["metadata"].(map[string]any)
	annotations, _ := md["annotations"].(map[string]any)
	if s, _ := annotations[LastAppliedAnnotation].(string); s == "" {
		return nil
	}
	value, err := lastAppliedValue(applied)
	if err != nil {
		return err
	}
	annotations[LastAppliedAnnotation] = value
	size := 0
	for k, v := range annotations {
		s, _ := v.(string)
		size += len(k) + len(s)
	}
	if size > TotalAnnotationSizeLimit {
		delete(annotations, LastAppliedAnnotation)
	}
	return nil
}

// lastAppliedValue encodes an apply configuration as kube-apiserver records
// it in LastAppliedAnnotation: without that annotation (annotations that are
// not a map of strings, null included, are left out altogether), keys
// sorted, HTML characters escaped, a newline at the end.
func lastAppliedValue(applied map[string]any) (string, error) {
	c := make(map[string]any, len(applied))
	for k, v := range applied {
		c[k] = v
	}
	if md, ok := applied["metadata"].(map[string]any); ok {
		md2 := make(map[string]any, len(md))
		for k, v := range md {
			md2[k] = v
		}
		c["metadata"] = md2
		if a, present := md["annotations"]; present {
			if strs, ok := stringMap(a); ok {
				delete(strs, LastAppliedAnnotation)
				md2["annotations"] = strs
			} else {
				delete(md2, "annotations")
			}
		}
	}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(c); err != nil {
		return "", fmt.Errorf("failed to encode the last applied configuration: %w", err)
	}
	return b.String(), nil
}

// stringMap returns a copy of v if it is a JSON object of strings.
func stringMap(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		if _, ok := e.(string); !ok {
			return nil, false
		}
		out[k] = e
	}
	return out, true
}

// decodeJSONDocument decodes b, one JSON value with nothing but white space
// after it, with int64 and float64 numbers.
func decodeJSONDocument(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid character after top-level value")
	}
	v, _ = smdschema.Normalize(v)
	return v, nil
}
