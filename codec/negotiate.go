package codec

import (
	"cmp"
	"slices"
	"strings"
)

// Conversions a client can ask for in an Accept entry (its as, g and v
// parameters), which a server answers with another kind than the resource's.
const (
	// AsPartialObjectMetadata asks for an object's metadata only, as a
	// meta.k8s.io PartialObjectMetadata.
	AsPartialObjectMetadata = "PartialObjectMetadata"
	// AsPartialObjectMetadataList asks for a list of metadata only, as a
	// meta.k8s.io PartialObjectMetadataList.
	AsPartialObjectMetadataList = "PartialObjectMetadataList"
	// AsTable asks for a server-side printed meta.k8s.io Table.
	AsTable = "Table"
	// GroupMeta is the group of the conversion kinds.
	GroupMeta = "meta.k8s.io"
)

// Media types asking for metadata only, with a plain JSON fallback, as
// client-go's metadata client sends them.
const (
	// MediaTypePartialObjectMetadataJSON asks for a meta.k8s.io/v1
	// PartialObjectMetadata in JSON.
	MediaTypePartialObjectMetadataJSON = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	// MediaTypePartialObjectMetadataProtobuf asks for a meta.k8s.io/v1
	// PartialObjectMetadata in protobuf.
	MediaTypePartialObjectMetadataProtobuf = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	// MediaTypePartialObjectMetadataListJSON asks for a meta.k8s.io/v1
	// PartialObjectMetadataList in JSON.
	MediaTypePartialObjectMetadataListJSON = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	// MediaTypePartialObjectMetadataListProtobuf asks for a meta.k8s.io/v1
	// PartialObjectMetadataList in protobuf.
	MediaTypePartialObjectMetadataListProtobuf = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
)

// NegotiateConversion picks the answer to a request the way kube-apiserver
// does, where an Accept entry may ask for the object converted (its as, g and
// v parameters, such as as=PartialObjectMetadata;g=meta.k8s.io;v=v1).
//
// The Accept entries are tried in order of descending q, concrete types
// before "type/*" before "*/*", and otherwise in header order (parameters do
// not make an entry more specific, and a q of 0 does not exclude it, as in
// kube-apiserver). For each entry the offers are tried in the server's order:
// the first offer whose type and subtype the entry admits wins if allow
// accepts it, given with the entry's As, Group and Version copied into it (a
// nil allow accepts exactly the candidates without a conversion). A stream
// parameter other than "watch", or one on a YAML offer (YAML has no stream
// form), passes the offer over.
//
// The result is the offer with the entry's As, Group and Version. An empty
// Accept header selects the first offer without conversion; entries that do
// not parse, or whose type is not written in lower case, are ignored. When
// nothing is acceptable the error is a
// *NotAcceptableError.
func NegotiateConversion(accept string, offers []MediaType, allow func(MediaType) bool) (MediaType, error) {
	if allow == nil {
		allow = func(m MediaType) bool { return m.As == "" && m.Group == "" && m.Version == "" }
	}
	if len(offers) > 0 && strings.Trim(accept, " \t") == "" {
		return offers[0], nil
	}
	var ranges []MediaType
	for _, r := range parseAcceptLenient(accept) {
		// kube-apiserver compares types as written: an entry in upper case
		// admits nothing.
		if !strings.Contains(accept, r.Type+"/"+r.Subtype) {
			continue
		}
		ranges = append(ranges, r)
	}
	slices.SortStableFunc(ranges, func(a, b MediaType) int {
		if c := cmp.Compare(mtQuality(b.Q), mtQuality(a.Q)); c != 0 {
			return c
		}
		return cmp.Compare(convWildness(a), convWildness(b))
	})
	for _, r := range ranges {
		for _, o := range offers {
			if !convTypeMatch(r, o) {
				continue
			}
			if r.Stream != "" && (r.Stream != "watch" || o.Subtype == "yaml") {
				continue
			}
			cand := o
			cand.As, cand.Group, cand.Version = r.As, r.Group, r.Version
			if allow(cand) {
				return cand, nil
			}
		}
	}
	return MediaType{}, &NotAcceptableError{Accept: accept, Offers: offers}
}

// AcceptsAnyType reports whether the Accept header passes the first check
// kube-apiserver makes of a request to a built-in resource (its router's),
// answered with NotAcceptableMessage when it fails: some entry, its
// parameters cut off and spaces trimmed, is "*/*" or exactly (case
// included) the type/subtype of one of types. Wildcards such as
// "application/*" are not understood there. An empty header passes.
func AcceptsAnyType(accept string, types []MediaType) bool {
	if accept == "" {
		return true
	}
	for entry := range strings.SplitSeq(accept, ",") {
		entry, _, _ = strings.Cut(entry, ";")
		entry = strings.Trim(entry, " ")
		if entry == "*/*" {
			return true
		}
		for _, t := range types {
			if entry == t.Type+"/"+t.Subtype {
				return true
			}
		}
	}
	return false
}

// convWildness is 0 for a concrete type, 1 for "type/*", 2 for "*/*".
func convWildness(m MediaType) int {
	switch {
	case m.Type == "*":
		return 2
	case m.Subtype == "*":
		return 1
	}
	return 0
}

// convTypeMatch reports whether the Accept entry r admits the type and
// subtype of offer o.
func convTypeMatch(r, o MediaType) bool {
	switch {
	case r.Type == "*" && r.Subtype == "*":
		return true
	case r.Subtype == "*":
		return r.Type == o.Type
	}
	return r.Type == o.Type && r.Subtype == o.Subtype
}
