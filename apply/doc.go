// Package apply is typed server-side apply: configurations that claim
// exactly the fields they set, for every Go type the client knows (kapi's
// built-in kinds and your own custom resource types), and extraction of the
// fields a manager owns from a live object, which round-trips.
//
// # The problem
//
// client.Resource[T].Apply encodes a Go struct, and a struct has no unset
// fields: applying appsv1.Deployment{Spec: {Replicas: 3}} sends
// "selector":null and a template without containers, claims them, and
// conflicts with the manager that owns them (or clears them when forced).
//
// # Configurations
//
// A [Config] is an object of type T and the fields of it that applying
// claims. [Of] claims the fields the object sets, by Go value: non-nil
// pointers, slices, maps and interfaces (empty ones too), struct fields
// that are not their zero value, and the items of the lists and maps it
// claims. Send it with client.Resource[T].ApplyConfig (or
// ApplyConfigStatus for the status subresource):
//
//	deps := client.For[appsv1.Deployment](c).Namespace("web")
//	scale := &appsv1.Deployment{
//		ObjectMeta: metav1.ObjectMeta{Name: "frontend"},
//		Spec:       appsv1.DeploymentSpec{Replicas: new(int32(3))},
//	}
//	d, err := deps.ApplyConfig(ctx, apply.Of(scale), metav1.ApplyOptions{FieldManager: "autoscaler"})
//
// claims .spec.replicas and nothing else. [Config.Claim] adds a field at
// its zero value, named by a pointer into the object, which Go checks:
//
//	cfg, err := apply.Of(d).Claim(&d.Spec.Paused) // "paused": false
//
// [Config.Encode] shows what is sent.
//
// # Extract
//
// [Extract] reads the fields a manager applied (its Apply entry in
// metadata.managedFields) out of a live object into a new object of the
// same type, and returns the Config claiming exactly those fields, zero
// values included. Applying it as that manager changes nothing (same
// object, same managedFields, same resourceVersion; but see Limits); change its Object and
// apply it to change only what the manager owns, as client-go's
// ExtractDeployment is used. [ExtractStatus] does the same for the status
// subresource. Key fields the manager does not own (a port's protocol the
// server defaulted) are left out, so re-applying does not claim them.
//
// # Design
//
// client-go generates an "apply configuration" type per Go type (every
// field a pointer, With* builders, an Extract function per kind): about
// 100,000 lines for the built-in kinds, a second set of types to learn, and
// nothing for a custom resource until its author runs the generator (and
// the OpenAPI schema extract needs). kapi keeps one set of types: a Config
// pairs your ordinary Go object with the set of fields it claims. Of
// derives that set from the object's Go values; Extract from the
// manager's managedFields, using the structured-merge-diff schema the
// reference server derives from the same Go type and its merge tags
// (listType, listMapKey, patchMergeKey, mapType, structType), so the field
// sets agree. It works unchanged for any Go type the client is given.
//
// # Limits
//
//   - Of leaves out a non-pointer field at its zero value (false, 0, ""):
//     claim it with [Config.Claim] (Kubernetes makes most optional fields
//     whose zero value means something pointers). A Config from Extract
//     keeps such fields.
//   - A nil pointer, slice or map is unset: it cannot apply an explicit
//     null.
//   - An empty map or list, or a zero value omitempty leaves out, is not
//     stored by the server: re-applying it is a change for
//     structured-merge-diff, which stamps the manager's entry with the
//     current time (and the resourceVersion moves), as on kube-apiserver.
//     The fields owned stay the same.
//   - Extract needs a Go type with fields: for unstructured.Unstructured it
//     fails (it has no schema); Of sends an unstructured object's map as it
//     is, as Apply does.
//   - For a custom resource, the Go type's merge tags must say what its
//     CRD's x-kubernetes-list-type, x-kubernetes-list-map-keys and
//     x-kubernetes-map-type say, or Extract's field sets differ from the
//     server's.
package apply
