// Package codec turns Kubernetes objects into bytes and back, in the forms the
// API server speaks: JSON, the protobuf envelope, watch streams in both, and
// lists decoded item by item. It also parses media types and negotiates the
// Accept header.
//
// # JSON
//
// [MarshalJSON], [UnmarshalJSON], [EncodeJSON] and [DecodeJSON] use Kubernetes'
// rules: field names match case-sensitively, omitempty and nil handling follow
// encoding/json, HTML characters are not escaped. Any struct with JSON tags works,
// not only kapi's kinds.
//
// # Protobuf
//
// A protobuf body is the 4-byte magic "k8s\x00" followed by a runtime.Unknown
// message holding the object's kind and apiVersion and its own encoding
// ([DecodeEnvelope], [Unknown.AppendEnvelope]). [MarshalProtobuf] and
// [UnmarshalProtobuf] wrap and unwrap an object that encodes itself
// ([ProtoMarshaler], [ProtoUnmarshaler]: the gogo-protobuf method set that kapi's
// kinds and k8s.io/api's types share). A body without the magic is rejected with
// an [*EnvelopePrefixError].
//
// # Lists
//
// [DecodeJSONList] and [DecodeProtobufList] read a list from an io.Reader and hand
// each item to a callback as soon as it is decoded, so memory stays bounded by
// one item however long the list (BenchmarkListPeakMemory measures it).
//
// The items of one list share a bounded table of the short strings decoded so
// far (label keys and values, namespaces, image names…), so that a string
// repeated across items is allocated once. [DecodeJSONListWith] and
// [DecodeProtobufListWith] take [DecodeOptions] for callers that keep the
// items, such as an informer: managedFields skipped unread, or equal FieldsV1
// sharing their bytes; [StreamDecoder] does the same for the objects of a
// watch. BenchmarkDecodeListStream measures what each saves.
//
// # Watch streams
//
// A JSON watch is a sequence of {"type":…,"object":…} documents
// ([JSONWatchEncoder], [JSONWatchDecoder]); a protobuf watch is a sequence of
// frames, each a 4-byte big-endian length and a metav1.WatchEvent whose object is
// itself an envelope ([ProtobufWatchEncoder], [ProtobufWatchDecoder]). Decoders
// read one frame at a time and return the raw object bytes for the caller to
// decode into its own type.
//
// # Media types
//
// [ParseMediaType], [ParseAccept] and [Negotiate] implement HTTP content
// negotiation as kube-apiserver does it, including the Table form
// (application/json;as=Table;g=meta.k8s.io;v=v1); when nothing is acceptable the
// error renders the message a server sends with 406.
package codec
