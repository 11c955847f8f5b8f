package apiserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strings"

	autoscalingv1 "github.com/kapi-dev/kapi/api/autoscaling/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
	"github.com/kapi-dev/kapi/selector"
)

// The scale subresource (…/NAME/scale) reads and writes an object's replicas
// as an autoscaling/v1 Scale, as kube-apiserver does for Deployments,
// ReplicaSets, StatefulSets and ReplicationControllers, and for custom
// resources whose CRD declares subresources.scale (registry.Resource.Scale).
// GET answers the Scale; PUT changes spec.replicas of the object and nothing
// else (a stale metadata.resourceVersion is 409, as on the object). Scale is
// read from JSON, YAML or protobuf bodies, and answered in any of the three
// for built-in resources; custom resources' Scale is answered in JSON or YAML
// only, as kube-apiserver does (406 when only protobuf is acceptable).
//
// The functions below are shared by every verb on scale: scaleOf reads the
// Scale of a stored object, updateScale applies a new Scale to one; a PATCH
// handler patches the JSON of the current Scale (passed to its next
// function) and hands the result back.

// scalePaths says where a resource keeps what its Scale shows, as field paths.
type scalePaths struct {
	specReplicas, statusReplicas []string
	// selectorString is the path of a serialised label selector (custom
	// resources' labelSelectorPath).
	selectorString []string
	// selectorObject is the path of a metav1.LabelSelector (apps kinds);
	// selectorMap of a map of labels (ReplicationControllers).
	selectorObject, selectorMap []string
}

// scaleGroupKind names Scale in validation errors.
var scaleGroupKind = metav1.GroupKind{Group: "autoscaling", Kind: "Scale"}

// scalePathsOf returns where res keeps its scale, or nil if it has no scale
// subresource.
func scalePathsOf(res *registry.Resource) *scalePaths {
	if sc := res.Scale; sc != nil {
		return &scalePaths{
			specReplicas:   jsonFieldPath(sc.SpecReplicasPath),
			statusReplicas: jsonFieldPath(sc.StatusReplicasPath),
			selectorString: jsonFieldPath(sc.LabelSelectorPath),
		}
	}
	if res.Custom {
		return nil
	}
	base := scalePaths{specReplicas: []string{"spec", "replicas"}, statusReplicas: []string{"status", "replicas"}}
	switch {
	case res.Group == "apps" && (res.Resource == "deployments" || res.Resource == "replicasets" || res.Resource == "statefulsets"):
		base.selectorObject = []string{"spec", "selector"}
		return &base
	case res.Group == "" && res.Resource == "replicationcontrollers":
		base.selectorMap = []string{"spec", "selector"}
		return &base
	}
	return nil
}

// hasScale reports whether res serves the scale subresource.
func hasScale(res *registry.Resource) bool { return scalePathsOf(res) != nil }

// jsonFieldPath splits ".spec.replicas" into its fields (nil for "").
func jsonFieldPath(p string) []string {
	p = strings.TrimPrefix(p, ".")
	if p == "" {
		return nil
	}
	return strings.Split(p, ".")
}

// objectContent returns the JSON form of obj: the map itself for an
// unstructured object (read-only), a decoded copy otherwise.
func objectContent(obj storage.Object) (map[string]any, error) {
	if u, ok := obj.(interface{ UnstructuredContent() map[string]any }); ok {
		return u.UnstructuredContent(), nil
	}
	b, err := kjson.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := kjson.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func nestedValue(m map[string]any, path []string) (any, bool) {
	if len(path) == 0 {
		return nil, false
	}
	var cur any = m
	for _, f := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[f]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// replicasAt reads an integer at path (0 when absent or not a number).
func replicasAt(m map[string]any, path []string) int32 {
	v, ok := nestedValue(m, path)
	if !ok {
		return 0
	}
	var f float64
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case int32:
		f = float64(n)
	case int:
		f = float64(n)
	case float64:
		f = n
	default:
		return 0
	}
	if f > math.MaxInt32 || f < math.MinInt32 {
		return 0
	}
	return int32(f)
}

// scaleOf builds the Scale of a stored object of res.
func scaleOf(res *registry.Resource, obj storage.Object) (*autoscalingv1.Scale, error) {
	paths := scalePathsOf(res)
	if paths == nil {
		return nil, fmt.Errorf("apiserver: %s has no scale subresource", res.Resource)
	}
	m, err := objectContent(obj)
	if err != nil {
		return nil, err
	}
	sc := &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{Kind: "Scale", APIVersion: autoscalingv1.GroupVersion},
		ObjectMeta: metav1.ObjectMeta{
			Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: obj.GetUID(),
			ResourceVersion: obj.GetResourceVersion(), CreationTimestamp: obj.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: replicasAt(m, paths.specReplicas)},
		Status: autoscalingv1.ScaleStatus{Replicas: replicasAt(m, paths.statusReplicas)},
	}
	switch {
	case paths.selectorString != nil:
		if v, ok := nestedValue(m, paths.selectorString); ok {
			sc.Status.Selector, _ = v.(string)
		}
	case paths.selectorObject != nil:
		if v, ok := nestedValue(m, paths.selectorObject); ok && v != nil {
			b, err := kjson.Marshal(v)
			if err != nil {
				return nil, err
			}
			var ls metav1.LabelSelector
			if err := kjson.Unmarshal(b, &ls); err != nil {
				return nil, err
			}
			sel, err := selector.FromLabelSelector(&ls)
			if err != nil {
				return nil, err
			}
			sc.Status.Selector = sel.String()
		}
	case paths.selectorMap != nil:
		if v, ok := nestedValue(m, paths.selectorMap); ok {
			labels, _ := v.(map[string]any)
			set := selector.Set{}
			for k, x := range labels {
				set[k], _ = x.(string)
			}
			sc.Status.Selector = selector.SelectorFromSet(set).String()
		}
	}
	return sc, nil
}

// withReplicas returns a copy of cur (an object of res) with its desired
// replicas set to n.
func withReplicas(res *registry.Resource, cur storage.Object, n int32) (storage.Object, error) {
	path := scalePathsOf(res).specReplicas
	if len(path) == 0 {
		return nil, errors.New("apiserver: no spec replicas path")
	}
	if _, ok := cur.(interface{ UnstructuredContent() map[string]any }); ok {
		next := res.Copy(cur)
		if err := unstructured.SetNestedField(next.(interface{ UnstructuredContent() map[string]any }).UnstructuredContent(), int64(n), path...); err != nil {
			return nil, err
		}
		return next, nil
	}
	m, err := objectContent(cur)
	if err != nil {
		return nil, err
	}
	if err := unstructured.SetNestedField(m, int64(n), path...); err != nil {
		return nil, err
	}
	b, err := kjson.Marshal(m)
	if err != nil {
		return nil, err
	}
	next := res.New()
	if err := kjson.Unmarshal(b, next); err != nil {
		return nil, err
	}
	return next, nil
}

// specChanged reports whether next's spec differs from cur's.
func specChanged(cur, next storage.Object) bool {
	cu, ok1 := cur.(interface{ UnstructuredContent() map[string]any })
	nu, ok2 := next.(interface{ UnstructuredContent() map[string]any })
	if ok1 && ok2 {
		return !reflect.DeepEqual(cu.UnstructuredContent()["spec"], nu.UnstructuredContent()["spec"])
	}
	return !registry.SpecEqual(cur, next)
}

// getScale reads the Scale of the object at key.
func (s *Server) getScale(ctx context.Context, res *registry.Resource, key string, ro storage.ReadOptions) (*autoscalingv1.Scale, error) {
	obj, err := s.store.Get(ctx, key, ro)
	if err != nil {
		return nil, err
	}
	return scaleOf(res, obj)
}

// updateScale changes the replicas of the named object to what next says
// given its current Scale (called again if the object changes meanwhile),
// checking the Scale's name, uid and resourceVersion against the object
// (409 on a mismatch) and validating replicas and the new object. Only
// spec.replicas changes; the generation moves with it as on any spec
// change. It is the scale subresource's write over the store
// (resourceStore.update). It returns the new Scale.
func (rs resourceStore) updateScale(ctx context.Context, namespace, name string, next func(cur *autoscalingv1.Scale) (*autoscalingv1.Scale, error), o *writeOptions) (*autoscalingv1.Scale, error) {
	res := rs.res
	try := func(cur storage.Object) (storage.Object, error) {
		if cur == nil {
			return nil, storage.ErrNotFound
		}
		curScale, err := scaleOf(res, cur)
		if err != nil {
			return nil, err
		}
		want, err := next(curScale.DeepCopy())
		if err != nil {
			return nil, err
		}
		if want.Name != "" && want.Name != name {
			return nil, asError(metav1.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", want.Name, name)))
		}
		if rv := want.ResourceVersion; rv != "" && rv != cur.GetResourceVersion() {
			return nil, asError(metav1.NewConflict(res.GroupResource(), name, errors.New(metav1.OptimisticLockErrorMsg)))
		}
		if uid := want.UID; uid != "" && uid != cur.GetUID() {
			return nil, asError(metav1.NewConflict(res.GroupResource(), name,
				fmt.Errorf("Precondition failed: UID in precondition: %s, UID in object meta: %s", uid, cur.GetUID())))
		}
		if st := rs.admitScale(ctx, o, want, curScale, true); st != nil {
			return nil, asError(st)
		}
		if want.Spec.Replicas < 0 {
			return nil, asError(metav1.NewInvalid(scaleGroupKind, name, metav1.FieldErrors{
				metav1.FieldInvalid("spec.replicas", want.Spec.Replicas, "must be greater than or equal to 0")}))
		}
		if st := rs.admitScale(ctx, o, want, curScale, false); st != nil {
			return nil, asError(st)
		}
		if want.Spec.Replicas == curScale.Spec.Replicas {
			if _, ok := nestedValue(mustContent(cur), scalePathsOf(res).specReplicas); ok {
				return cur, nil // nothing changes
			}
		}
		obj, err := withReplicas(res, cur, want.Spec.Replicas)
		if err != nil {
			return nil, err
		}
		if res.Generation && specChanged(cur, obj) {
			obj.SetGeneration(cur.GetGeneration() + 1)
		}
		rs.track(o, cur, obj) // as kube-apiserver, an entry with subresource "scale"
		if st := rs.validate(o, obj, cur); st != nil {
			return nil, asError(st)
		}
		return obj, nil
	}
	out, _, err := rs.update(ctx, namespace, name, false, nil, o, try)
	if err != nil {
		return nil, err
	}
	return scaleOf(res, out)
}

func mustContent(obj storage.Object) map[string]any {
	m, _ := objectContent(obj)
	return m
}

// serveScale answers the verbs on …/NAME/scale: get and update (patch is
// served by the patch handler through updateScale).
func (h *handler) serveScale() {
	if !hasScale(h.res) {
		h.fail(resourceNotFound())
		return
	}
	offers := scaleOffers(h.res)
	if !h.res.Custom {
		// kube-apiserver's negotiation (negotiate.go), with the metadata
		// conversions of the Scale; a Table of it is not served.
		mt, ok := h.negotiateScale()
		if !ok {
			return
		}
		h.serveScaleAs(mt)
		return
	}
	mt, err := codec.Negotiate(h.r.Header.Get("Accept"), offers)
	if err != nil {
		var na *codec.NotAcceptableError
		if errors.As(err, &na) {
			if h.res.Custom {
				h.s.writeStatus(h.w, h.r, scaleNotAcceptable())
				return
			}
			h.s.writeStatusAs(h.w, offerJSON, metav1.NewNotAcceptable(mediaTypeStrings(offers)))
			return
		}
		mt = offerJSON
	}
	h.serveScaleAs(mt)
}

// negotiateScale is negotiate for the Scale of a built-in resource.
func (h *handler) negotiateScale() (codec.MediaType, bool) {
	accept := h.r.Header.Get("Accept")
	if !codec.AcceptsAnyType(accept, serverOffers) {
		h.s.writeStatusAs(h.w, offerJSON, metav1.NewNotAcceptable(mediaTypeStrings(serverOffers)))
		return codec.MediaType{}, false
	}
	mt, err := codec.NegotiateConversion(accept, serverOffers, func(m codec.MediaType) bool {
		return m.As != codec.AsTable && h.servable(m)
	})
	if err != nil {
		h.fail(metav1.NewNotAcceptableMediaTypes(mediaTypeStrings(serverOffers)))
		return codec.MediaType{}, false
	}
	return mt, true
}

// serveScaleAs serves the scale verbs, answering in mt.
func (h *handler) serveScaleAs(mt codec.MediaType) {
	ctx := h.r.Context()
	switch h.ri.Verb {
	case "get":
		opts, st := queryOptions(h, metav1.DecodeGetOptions, nil, "GetOptions")
		if st != nil {
			h.fail(st)
			return
		}
		ro, st := readOptions(opts.ResourceVersion, "")
		if st != nil {
			h.fail(st)
			return
		}
		sc, err := h.s.getScale(ctx, h.res, h.key(h.ri.Namespace, h.ri.Name), ro)
		if err != nil {
			h.fail(h.storageStatus(err, h.ri.Name))
			return
		}
		h.writeScale(mt, http.StatusOK, sc)
	case "update":
		opts, st := queryOptions(h, metav1.DecodeUpdateOptions, metav1.ValidateUpdateOptions, "UpdateOptions")
		if st != nil {
			h.fail(st)
			return
		}
		h.manager = managerName(opts.FieldManager, h.r.UserAgent())
		in, st := h.decodeScale()
		if st != nil {
			h.fail(st)
			return
		}
		if in.Name != h.ri.Name {
			h.fail(metav1.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", in.Name, h.ri.Name)))
			return
		}
		if in.Namespace != "" && in.Namespace != h.ri.Namespace {
			h.fail(metav1.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"))
			return
		}
		sc, err := h.store().updateScale(ctx, h.ri.Namespace, h.ri.Name, func(*autoscalingv1.Scale) (*autoscalingv1.Scale, error) { return in, nil }, h.writeOptions(h.dryRun(opts.DryRun)))
		if err != nil {
			h.fail(h.storageStatus(err, h.ri.Name))
			return
		}
		h.writeScale(mt, http.StatusOK, sc)
	case "patch":
		ctype, opts, body, st := h.patchRequest([]string{codec.MediaTypeJSONPatch, codec.MediaTypeMergePatch, codec.MediaTypeStrategicMergePatch})
		if st != nil {
			h.fail(st)
			return
		}
		sc, err := h.store().updateScale(ctx, h.ri.Namespace, h.ri.Name, func(cur *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
			cur.TypeMeta = metav1.TypeMeta{Kind: "Scale", APIVersion: autoscalingv1.GroupVersion}
			doc, err := kjson.Marshal(cur)
			if err != nil {
				return nil, err
			}
			patched, err := applyPatch(ctype, doc, body, reflect.TypeFor[autoscalingv1.Scale]())
			if err != nil {
				return nil, asError(h.patchStatus(err))
			}
			var next autoscalingv1.Scale
			if err := kjson.Unmarshal(patched, &next); err != nil {
				return nil, asError(metav1.NewInvalid(scaleGroupKind, h.ri.Name, metav1.FieldErrors{metav1.FieldInvalid("patch", nil, err.Error())}))
			}
			return &next, nil
		}, h.writeOptions(h.dryRun(opts.DryRun)))
		if err != nil {
			h.fail(h.storageStatus(err, h.ri.Name))
			return
		}
		h.writeScale(mt, http.StatusOK, sc)
	default:
		h.methodNotAllowed()
	}
}

// scaleOffers are the representations a Scale of res is answered in: JSON,
// YAML and protobuf, but for custom resources, whose Scale kube-apiserver
// writes in JSON or YAML only.
func scaleOffers(res *registry.Resource) []codec.MediaType {
	if res.Custom {
		return []codec.MediaType{offerJSON, offerYAML}
	}
	return []codec.MediaType{offerJSON, offerYAML, offerProtobuf}
}

// scaleMediaTypes are the media types of Scale request bodies, for every
// resource, in kube-apiserver's order.
var scaleMediaTypes = []string{codec.MediaTypeJSON, codec.MediaTypeYAML, codec.MediaTypeProtobuf}

// scaleNotAcceptable is the 406 kube-apiserver answers a request for a
// custom resource's Scale that accepts none of JSON and YAML: its message
// names the types of the scale codecs, protobuf included, although a
// custom resource's Scale is not written in it.
func scaleNotAcceptable() *metav1.Status {
	return &metav1.Status{
		Status:  metav1.StatusFailure,
		Message: "only the following media types are accepted: " + strings.Join(scaleMediaTypes, ", "),
		Reason:  metav1.StatusReasonNotAcceptable,
		Code:    http.StatusNotAcceptable,
	}
}

// decodeScale decodes a Scale request body (JSON, YAML or protobuf).
func (h *handler) decodeScale() (*autoscalingv1.Scale, *metav1.Status) {
	body, st := h.readBody()
	if st != nil {
		return nil, st
	}
	ct := h.r.Header.Get("Content-Type")
	if ct == "" {
		ct = codec.MediaTypeJSON
	}
	mt, err := codec.ParseMediaType(ct)
	if err != nil || mt.Type != "application" || (mt.Subtype != "json" && mt.Subtype != "yaml" && mt.Subtype != offerProtobuf.Subtype) {
		return nil, metav1.NewUnsupportedMediaType(scaleMediaTypes)
	}
	var sc autoscalingv1.Scale
	if mt.Subtype == offerProtobuf.Subtype {
		tm, err := codec.UnmarshalProtobuf(body, &sc)
		if err != nil {
			return nil, badProtobufObject("Scale", body, err)
		}
		sc.TypeMeta = tm // checked below as a JSON body's
		return checkScaleType(&sc)
	}
	if mt.Subtype == "yaml" {
		if body, err = yamlToJSON(body); err != nil {
			return nil, metav1.NewBadRequest("the object provided is unrecognized (must be of type Scale): " + err.Error())
		}
	}
	if err := kjson.Unmarshal(body, &sc); err != nil {
		return nil, metav1.NewBadRequest("the object provided is unrecognized (must be of type Scale): " + err.Error())
	}
	return checkScaleType(&sc)
}

// checkScaleType refuses a decoded Scale body that names another kind or
// apiVersion.
func checkScaleType(sc *autoscalingv1.Scale) (*autoscalingv1.Scale, *metav1.Status) {
	if sc.Kind != "" && sc.Kind != "Scale" {
		return nil, metav1.NewBadRequest(fmt.Sprintf("the kind in the body (%s) does not match the expected kind (Scale)", sc.Kind))
	}
	if sc.APIVersion != "" && sc.APIVersion != autoscalingv1.GroupVersion {
		return nil, metav1.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", sc.APIVersion, autoscalingv1.GroupVersion))
	}
	return sc, nil
}

// writeScale writes a Scale, or its metadata when mt asks for it.
func (h *handler) writeScale(mt codec.MediaType, code int, sc *autoscalingv1.Scale) {
	switch mt.As {
	case codec.AsPartialObjectMetadata:
		h.s.writePartial(h.w, mt, code, sc)
		return
	case codec.AsPartialObjectMetadataList:
		h.fail(metav1.NewNotAcceptableMessage("you requested PartialObjectMetadataList, but the requested object is not a list (*autoscaling.Scale)"))
		return
	}
	sc.TypeMeta = metav1.TypeMeta{Kind: "Scale", APIVersion: autoscalingv1.GroupVersion}
	if mt.Subtype == offerProtobuf.Subtype {
		b, err := codec.MarshalProtobuf(sc.TypeMeta, sc)
		if err != nil {
			h.fail(metav1.NewInternalError(err))
			return
		}
		h.w.Header().Set("Content-Type", codec.MediaTypeProtobuf)
		h.w.WriteHeader(code)
		_, _ = h.w.Write(b)
		return
	}
	if mt.Subtype == offerYAML.Subtype {
		h.s.writeYAML(h.w, code, sc)
		return
	}
	h.s.writeRawJSON(h.w, code, sc)
}
