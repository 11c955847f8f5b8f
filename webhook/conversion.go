package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
)

// Why hub and spoke, with functions. A kind served in N versions converts
// between any two; writing each pair is N(N-1) functions, converting through
// one hub version is 2(N-1), and adding a version adds two. controller-runtime
// asks each spoke type for ConvertTo/ConvertFrom methods and the hub for a
// marker method, found by run-time type assertion; here the two directions are
// plain functions checked by the compiler, so types one does not own (another
// module's, generated ones) convert without methods added to them, and a
// missing direction is a compile error, not a failed request.

// Version is one version of a kind and its conversions to and from the hub
// version Hub. Build it with Spoke.
type Version[Hub any] struct {
	kind    func() (client.Kind, bool)
	typ     string
	toHub   func(raw, meta []byte) (*Hub, error)
	fromHub func(hub *Hub, meta []byte) (any, error)
}

// Spoke is the version S of a kind whose hub version is Hub, with up
// converting an S to a Hub and down a Hub to an S. S and Hub must be
// registered in client.DefaultScheme (client.Register) as versions of the same
// group and kind. Each conversion gets a dst that already holds the source's
// apiVersion-less metadata (name, namespace, uid, labels, …), so it fills in
// spec and status; kube-apiserver refuses a conversion that changes metadata
// other than labels and annotations.
func Spoke[S, Hub any, PS client.ObjectPtr[S], PH client.ObjectPtr[Hub]](up func(src *S, dst *Hub) error, down func(src *Hub, dst *S) error) Version[Hub] {
	return Version[Hub]{
		kind: func() (client.Kind, bool) { return client.KindFor[S](client.DefaultScheme()) },
		typ:  fmt.Sprintf("%T", (*S)(nil)),
		toHub: func(raw, meta []byte) (*Hub, error) {
			src := new(S)
			if err := codec.UnmarshalJSON(raw, src); err != nil {
				return nil, err
			}
			dst, err := withMeta[Hub](meta)
			if err != nil {
				return nil, err
			}
			return dst, up(src, dst)
		},
		fromHub: func(hub *Hub, meta []byte) (any, error) {
			dst, err := withMeta[S](meta)
			if err != nil {
				return nil, err
			}
			return dst, down(hub, dst)
		},
	}
}

// withMeta returns a new T holding the metadata meta (a JSON object).
func withMeta[T any](meta []byte) (*T, error) {
	obj := new(T)
	if len(meta) == 0 {
		return obj, nil
	}
	doc := append(append([]byte(`{"metadata":`), meta...), '}')
	if err := codec.UnmarshalJSON(doc, obj); err != nil {
		return nil, fmt.Errorf("copying metadata: %w", err)
	}
	return obj, nil
}

// Conversion is an http.Handler that answers apiextensions.k8s.io
// ConversionReviews for one kind of custom resource served in several versions
// (a CRD whose spec.conversion.strategy is Webhook). Build it with
// NewConversion.
type Conversion struct {
	group, kind string
	versions    map[string]conversionVersion // by apiVersion
	hub         string                       // apiVersion of the hub
}

type conversionVersion struct {
	toHub   func(raw, meta []byte) (any, error)
	fromHub func(hub any, meta []byte) (any, error)
}

var _ http.Handler = (*Conversion)(nil)

// NewConversion returns the conversion webhook of the kind whose hub version
// is Hub and whose other versions are spokes. Every object is converted from
// its version to Hub and from Hub to the version asked (not at all when it is
// already in that version, and only once when one end is Hub). It is an error
// when the types are not registered in client.DefaultScheme as versions of one
// group and kind, or when two are the same version.
func NewConversion[Hub any, PH client.ObjectPtr[Hub]](spokes ...Version[Hub]) (*Conversion, error) {
	hk, ok := client.KindFor[Hub](client.DefaultScheme())
	if !ok {
		return nil, fmt.Errorf("webhook: hub type %T is not registered in client.DefaultScheme", (*Hub)(nil))
	}
	c := &Conversion{group: hk.Group, kind: hk.Kind, hub: apiVersion(hk.Group, hk.Version), versions: map[string]conversionVersion{}}
	c.versions[c.hub] = conversionVersion{
		toHub: func(raw, _ []byte) (any, error) {
			hub := new(Hub)
			return hub, codec.UnmarshalJSON(raw, hub)
		},
		fromHub: func(hub any, _ []byte) (any, error) { return hub, nil },
	}
	for _, s := range spokes {
		k, ok := s.kind()
		if !ok {
			return nil, fmt.Errorf("webhook: spoke type %s is not registered in client.DefaultScheme", s.typ)
		}
		if k.Group != hk.Group || k.Kind != hk.Kind {
			return nil, fmt.Errorf("webhook: spoke type %s is %s, not a version of %s", s.typ, gvkString(k.Group, k.Version, k.Kind), gvkString(hk.Group, hk.Version, hk.Kind))
		}
		v := apiVersion(k.Group, k.Version)
		if _, dup := c.versions[v]; dup {
			return nil, fmt.Errorf("webhook: two types are version %s of %s", v, hk.Kind)
		}
		c.versions[v] = conversionVersion{
			toHub:   func(raw, meta []byte) (any, error) { return s.toHub(raw, meta) },
			fromHub: func(hub any, meta []byte) (any, error) { return s.fromHub(hub.(*Hub), meta) },
		}
	}
	return c, nil
}

func apiVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

// conversionVersions are the ConversionReview versions answered; the two have
// the same shape.
var conversionVersions = []string{"apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"}

// ServeHTTP reads a ConversionReview from r and writes the answer, of the
// version the review was sent with. A request that is not a POST of an
// application/json ConversionReview with a request gets an HTTP error (405,
// 415, 413 or 400).
func (c *Conversion) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in apiextensionsv1.ConversionReview
	version, err := readReview(w, r, &in, func() string { return in.APIVersion }, conversionVersions...)
	if err == nil && in.Request == nil {
		err = &httpError{http.StatusBadRequest, "ConversionReview has no request"}
	}
	if err != nil {
		writeReview(w, nil, err)
		return
	}
	out := apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: version, Kind: "ConversionReview"},
		Response: c.Review(r.Context(), in.Request),
	}
	writeReview(w, &out, nil)
}

// Review converts the objects of req to req.DesiredAPIVersion, in order. It
// answers with req's uid and a Success result, or, if any object cannot be
// converted (unknown version, undecodable, a conversion function's error or
// panic), with a Failure result saying which and why and no objects.
func (c *Conversion) Review(ctx context.Context, req *apiextensionsv1.ConversionRequest) (resp *apiextensionsv1.ConversionResponse) {
	resp = &apiextensionsv1.ConversionResponse{UID: req.UID}
	defer func() {
		if p := recover(); p != nil {
			slog.ErrorContext(ctx, "webhook: conversion panicked", "uid", req.UID, "panic", p, "stack", string(debug.Stack()))
			resp = conversionFailure(req.UID, fmt.Sprintf("conversion webhook panicked: %v", p))
		}
	}()
	to, ok := c.versions[req.DesiredAPIVersion]
	if !ok {
		return conversionFailure(req.UID, fmt.Sprintf("cannot convert to %q: this webhook converts %s in %q", req.DesiredAPIVersion, c.kind, c.versionList()))
	}
	resp.ConvertedObjects = make([]metav1.RawExtension, 0, len(req.Objects))
	for i, obj := range req.Objects {
		raw, err := c.convert(obj.Raw, req.DesiredAPIVersion, to)
		if err != nil {
			return conversionFailure(req.UID, fmt.Sprintf("converting object %d to %s: %v", i, req.DesiredAPIVersion, err))
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, metav1.RawExtension{Raw: raw})
	}
	resp.Result = metav1.Status{Status: metav1.StatusSuccess}
	return resp
}

func conversionFailure(uid metav1.UID, msg string) *apiextensionsv1.ConversionResponse {
	return &apiextensionsv1.ConversionResponse{UID: uid, Result: metav1.Status{Status: metav1.StatusFailure, Message: msg}}
}

func (c *Conversion) versionList() []string {
	var vs []string
	for v := range c.versions {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

// convert converts one object to desired.
func (c *Conversion) convert(raw []byte, desired string, to conversionVersion) ([]byte, error) {
	var head struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.RawExtension `json:"metadata"`
	}
	if err := codec.UnmarshalJSON(raw, &head); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if head.Kind != c.kind {
		return nil, fmt.Errorf("kind is %q, not %q", head.Kind, c.kind)
	}
	from, ok := c.versions[head.APIVersion]
	if !ok {
		return nil, fmt.Errorf("apiVersion %q is not one of %q", head.APIVersion, c.versionList())
	}
	if head.APIVersion == desired {
		return raw, nil
	}
	hub, err := from.toHub(raw, head.Metadata.Raw)
	if err != nil {
		return nil, err
	}
	out, err := to.fromHub(hub, head.Metadata.Raw)
	if err != nil {
		return nil, err
	}
	// The type's encoding writes its TypeMeta, if it has one; set it to the
	// version asked, whatever the conversion left there.
	typeMeta := fmt.Appendf(nil, `{"apiVersion":%q,"kind":%q}`, desired, c.kind)
	if err := codec.UnmarshalJSON(typeMeta, out); err != nil {
		return nil, err
	}
	b, err := codec.MarshalJSON(out)
	if err != nil {
		return nil, err
	}
	var got metav1.TypeMeta
	if err := codec.UnmarshalJSON(b, &got); err != nil || got.APIVersion != desired || got.Kind != c.kind {
		return nil, fmt.Errorf("the Go type of %s does not encode apiVersion and kind (embed metav1.TypeMeta)", desired)
	}
	return b, nil
}
