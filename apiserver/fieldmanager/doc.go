// Package fieldmanager tracks which client owns which field of an object
// (metadata.managedFields) and implements server-side apply, on
// sigs.k8s.io/structured-merge-diff/v6, the engine kube-apiserver uses. It
// behaves as kube-apiserver's field manager does, kubectl's
// last-applied-configuration annotation included (see "Client-side apply").
//
// # Schemas
//
// How fields merge comes from a [Schema]: [ForType] derives it from a kapi
// Go type and its merge tags (listType, listMapKey, patchStrategy,
// patchMergeKey, mapType, structType), [ForCRD] from a custom resource's
// openAPIV3Schema, [Deduced] assumes nothing. Build one per kind and reuse
// it.
//
// # Objects
//
// Objects are JSON values as encoding/json decodes them into any:
// map[string]any, []any, string, bool, nil, and numbers as int64 or float64
// (the representation of kapi's unstructured objects). json.Number is
// accepted too and converted. Other Go types (such as []string or
// map[string]string inside an object) are not.
//
// metadata.managedFields entries are written as JSON maps with manager,
// operation, apiVersion, time (RFC 3339, seconds, UTC), fieldsType
// "FieldsV1", fieldsV1 (the field set in SMD's FieldsV1 form, such as
// {"f:data":{".":{},"f:key":{}}}, as a map) and subresource when there is
// one, in kube-apiserver's order (Apply entries first, then by time,
// manager, apiVersion, subresource). A JSON encoder writes the fieldsV1 keys
// sorted, which is kube-apiserver's order except for keyed items whose key
// values are numbers of different lengths.
//
// # Guarantees
//
//   - [Manager.Update] and [Manager.Apply] give the managedFields
//     kube-apiserver gives for the same sequence of writes, up to entry
//     times (from the clock passed to [New]).
//   - An Update never fails for a client's reasons: a client's invalid
//     managedFields are ignored; an error means the object does not match
//     the schema, and the live managedFields are then kept.
//   - An Apply that changes fields other managers own fails with a
//     [*ConflictError] listing every conflict, unless forced; its Status is
//     byte for byte kube-apiserver's (golden 75).
//   - Inputs are not retained: Apply returns a fresh object; Update only sets
//     metadata.managedFields (and converts json.Number) in the object it is
//     given.
//   - A Manager and a Schema are immutable and safe for concurrent use.
//
// # Client-side apply
//
// kubectl's client-side apply writes with the manager
// "kubectl-client-side-apply" and records the configuration it applied in
// the [LastAppliedAnnotation]. As kube-apiserver does, an Apply by the manager
// [KubectlApplyManager] ("kubectl", what `kubectl apply --server-side` and
// `kubectl diff --server-side` use) whose only conflicts are on fields that
// annotation records, and that still hold the recorded values, is applied
// as if forced: it takes them over from whoever owns them. Any other
// conflict is reported alone. An annotation that is not a JSON object of
// the manager's apiVersion and kind matching the schema allows nothing.
// After such an Apply succeeds, an object carrying a non-empty annotation
// gets it rewritten to the applied configuration (without the annotation),
// or loses it when the annotations would then exceed
// [TotalAnnotationSizeLimit]. Other managers opt out of both. The record is
// the configuration as JSON with sorted keys, HTML characters escaped and a
// final newline, as kube-apiserver writes it.
//
// What a write through an endpoint may not own is the caller's to say, with
// [Manager.WithResetFields]; so is the validation of fieldManager (required
// for apply, at most 128 characters) and the registry's defaulting and
// validation of the result.
package fieldmanager
