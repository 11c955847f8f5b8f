// Package unstructured holds Kubernetes objects of any kind as JSON values,
// without Go types: it is the object model of the dynamic client, and behaves
// like k8s.io/apimachinery/pkg/apis/meta/v1/unstructured.
//
// # Objects and lists
//
// An [Unstructured] is one object: its Object field is the object's JSON form,
// a map[string]any with "apiVersion", "kind", "metadata" and the kind's own
// fields. *Unstructured implements [metav1.Object], so code written against
// object metadata (caches, informers, owners and finalizers) works on it as on
// a typed object:
//
//	u := &unstructured.Unstructured{}
//	u.SetAPIVersion("example.com/v1")
//	u.SetKind("Widget")
//	u.SetName("w1")
//	u.SetLabels(map[string]string{"app": "web"})
//
// Getters never fail: a field that is missing or of the wrong JSON type reads
// as the zero value. Setters given a zero value ("", 0, nil, the zero time)
// remove the field, as Kubernetes does; nil maps and slices remove theirs but
// empty ones are stored. Owner references and managed-fields entries are
// converted to and from the typed [metav1.OwnerReference] and
// [metav1.ManagedFieldsEntry]; timestamps are stored in the RFC 3339 form of
// [metav1.Time].
//
// An [UnstructuredList] is a list (a PodList, a list of custom resources):
// the list's own fields in Object and its members in Items. It implements
// [metav1.ListInterface]; [UnstructuredList.EachListItem] visits the items.
// [Decode] decodes JSON into whichever of the two it holds, and [Interface] is
// what they have in common.
//
// # JSON values
//
// Values inside Object have the Go types Kubernetes' decoder gives them:
//
//	JSON object   map[string]any
//	JSON array    []any (an empty array is an empty, non-nil slice)
//	JSON string   string
//	JSON number   int64, or float64 (see below)
//	true, false   bool
//	null          nil
//
// Code that builds objects should use the same types; [DeepCopyJSONValue]
// panics on other types such as []string, and the Nested getters report them
// as type errors. [DeepCopyJSON] and the DeepCopy methods copy objects.
//
// # Nested fields
//
// [NestedString], [NestedInt64], [NestedMap] and the other Nested functions
// read a field at a path of map keys, outermost first, and return the value,
// whether it was found, and an error when a value is not of the expected type,
// naming the path:
//
//	replicas, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
//	// err: .spec.replicas accessor error: 3 is of the type string, expected int64
//
// Getters of slices and maps return copies, except [NestedFieldNoCopy].
// [SetNestedField] and the other setters create the maps missing on the way;
// [RemoveNestedField] deletes a field.
//
// # Decoding JSON
//
// The decoder walks the tokens of a github.com/go-json-experiment/json
// jsontext.Decoder straight into maps and slices, without reflection. It
// decodes as Kubernetes' UnstructuredJSONScheme does:
//
//   - Object names are kept exactly as written (matching is case-sensitive);
//     when a name repeats, the last value wins.
//   - A number without a fraction or an exponent that fits in an int64 is an
//     int64; any other number is a float64, including an integer beyond the
//     range of int64 (as Kubernetes does, rather than failing); a number
//     beyond the range of float64 is an error. Note that a float64 with a
//     whole value, such as 1.0, is encoded as 1 and so decodes back as an
//     int64, as in Kubernetes.
//   - Invalid UTF-8 in strings is replaced by U+FFFD, as in encoding/json.
//   - The document must be a single JSON object; anything else, null
//     included, is an error, and so is nesting deeper than 10,000 levels.
//   - The object must have a "kind": an object without one is an error
//     wrapping [ErrMissingKind], as Kubernetes refuses it. (Kubernetes does not
//     require an apiVersion, and neither does this package.)
//
// A list ([UnstructuredList.UnmarshalJSON], or [Decode] given an object with
// an "items" field) has its "items" array decoded to Items. Servers send the
// items of typed lists, like those of a PodList, without apiVersion and kind;
// items lacking both are given the list's apiVersion and its kind without the
// "List" suffix, as Kubernetes does.
//
// Both types also implement the UnmarshalJSONFrom and MarshalJSONTo methods
// of github.com/go-json-experiment/json, which decode from and encode to a
// caller's jsontext.Decoder and Encoder directly, for streams such as watch
// events.
//
// # Encoding JSON
//
// MarshalJSON writes object members sorted by name, as encoding/json does for
// maps, so that equal objects encode to equal bytes. Like the rest of kapi it
// does not escape <, > and &, and it ends with no newline. Numbers are written
// in encoding/json's format; NaN and infinities are errors. Values of types
// other than the JSON ones above are written as Kubernetes JSON would write
// them.
//
// # Differences from Kubernetes
//
// Where Kubernetes uses its runtime package (runtime.Object,
// schema.GroupVersionKind), this package keeps to plain methods and strings:
// EachListItem takes a func(*Unstructured) error, and [SplitAPIVersion] and
// [JoinAPIVersion] stand in for GroupVersionKind. [SetNestedField] and
// [RemoveNestedField] given an empty path report an error or do nothing
// instead of panicking. [Unstructured.SetDeletionTimestamp] given a zero time
// removes the field, where Kubernetes stores an empty string.
package unstructured
