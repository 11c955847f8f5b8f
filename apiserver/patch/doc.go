// Package patch applies the three patch formats of the Kubernetes PATCH verb to
// a JSON document: JSON patch (RFC 6902, application/json-patch+json), JSON
// merge patch (RFC 7386, application/merge-patch+json) and strategic merge patch
// (application/strategic-merge-patch+json). Server-side apply is not here: it is
// a different algorithm (structured-merge-diff) with field ownership.
//
// # JSON patch and merge patch
//
// [JSONPatch] and [MergePatch] are github.com/evanphx/json-patch/v5, the library
// kube-apiserver uses, with kube-apiserver's limits and error mapping: a patch
// that does not decode is 400 Bad Request, a patch that does not apply (a failed
// test operation, a missing path) is 422 with kube-apiserver's message, and more
// than 10,000 operations is 413.
//
// # Strategic merge patch
//
// [Strategic] is written here over decoded JSON (map[string]any, []any, with
// numbers kept as json.Number so integers survive exactly). It is a merge patch
// whose list handling is driven by the Go type of the document: a list field
// tagged patchStrategy:"merge" is merged item by item, items being matched by
// the field's patchMergeKey (lists of primitives, such as finalizers, are
// merged as a set); any other list is replaced. It understands the directives
// of the Kubernetes format:
//
//   - "$patch": "replace" in an object replaces the object with the rest of the
//     patch object; as an item of a merged list it replaces the whole list with
//     the other items.
//   - "$patch": "delete" in an object leaves an empty object; as an item of a
//     merged list it deletes the items with that item's merge key.
//   - "$retainKeys": [...] in an object (fields tagged retainKeys, such as a
//     Deployment's strategy or a volume) drops every key of the document's
//     object not listed; every key the patch sets must be listed (422).
//   - "$deleteFromPrimitiveList/<field>": [...] removes values from a merged
//     list of primitives.
//   - "$setElementOrder/<field>": [...] (sent by kubectl apply) gives the order
//     of the items of a merged list, as merge-key objects or primitive values.
//
// Order of a merged list: the items the patch names (in the order of
// $setElementOrder, else of the patch) are interleaved with the items only the
// document has, which keep their relative order; an item only the document has
// is placed before a patch item only when the document already had it before
// that item. So new items come first, as in kube-apiserver: patching containers
// [a] with [{"name":"b"}] gives [b, a].
//
// Values of types with hand-written JSON (metav1.Time, resource.Quantity,
// intstr.IntOrString, RawExtension, FieldsV1, the apiextensions JSON unions)
// are opaque: a patch replaces them whole. Fields the Go type does not have
// (and everything under a map[string]any or a nil type) are merged as a plain
// merge patch: objects merged, lists replaced, null deletes.
//
// # Differences from kube-apiserver
//
//   - "$patch": "merge" is accepted and means the default behaviour, where
//     Kubernetes refuses it in lists ("merging lists cannot yet be specified")
//     and in objects (unknown patch type).
//   - A patch value for a field the document lacks is applied to an empty value,
//     so its directives are carried out and its nulls dropped instead of being
//     stored verbatim.
//   - Every malformed strategic patch is 400 Bad Request and a patch that
//     contradicts its own $retainKeys or merges lists of lists is 422; where
//     kube-apiserver answers 500 for some malformed patches (a missing merge
//     key, an unknown directive), kapi answers 400.
//   - "$setElementOrder" is checked only for naming every item the patch sets.
package patch
