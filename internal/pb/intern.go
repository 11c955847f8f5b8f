package pb

import (
	"bytes"
	"hash/maphash"
)

// Bounds of a State's tables. Both are direct-mapped caches (a slot per hash
// value, a newcomer replaces the slot's occupant), so a State never holds more
// than StringSlots strings of at most MaxInternLen bytes and BytesSlots byte
// slices of at most MaxShareLen bytes: about 0.6 MiB for strings and 8 MiB for
// byte slices in the worst case, usually far less. Nothing is global: a
// State lives as long as the decode (one list response, one watch stream)
// that made it.
const (
	// StringSlots is the number of entries of a State's string table.
	StringSlots = 4096
	// MaxInternLen is the longest string looked up in the table; longer
	// ones (annotations, certificates) rarely repeat and are just copied.
	MaxInternLen = 128
	// BytesSlots is the number of entries of a State's byte-slice table.
	BytesSlots = 256
	// MaxShareLen is the longest byte slice looked up in it.
	MaxShareLen = 32 << 10
)

// seed hashes every State's keys. It is set once, never changed.
var seed = maphash.MakeSeed()

// State is what the decoders of one decode stream (a list, a watch) share:
// a table of the short strings already decoded, so that a string repeated
// across objects (label keys and values, namespaces, node and image names,
// condition types, "True") is allocated once; optionally a table of byte
// slices (managedFields' FieldsV1); and decode options. Strings are
// immutable, so sharing them is invisible to callers; shared byte slices
// must be treated as read-only, which is why ShareBytes is opt-in.
//
// A State is not safe for concurrent use: one decode stream, one goroutine.
// The zero value is ready to use.
type State struct {
	// SkipManagedFields makes ObjectMeta's decoder skip managedFields
	// instead of decoding them, for callers that drop them anyway.
	SkipManagedFields bool
	// ShareBytes makes SharedBytes return one slice for equal values.
	ShareBytes bool

	strs  [StringSlots]string
	bytes *[BytesSlots][]byte
}

// String returns b as a string, the one already in the table if an equal
// string is there; otherwise a new string, which then takes its slot.
func (s *State) String(b []byte) string {
	if len(b) < 2 || len(b) > MaxInternLen {
		return string(b) // one-byte strings are never allocated anyway
	}
	i := maphash.Bytes(seed, b) % StringSlots
	if v := s.strs[i]; v == string(b) {
		return v
	}
	v := string(b)
	s.strs[i] = v
	return v
}

// Bytes returns a slice equal to b, shared with earlier calls that returned
// an equal one, or a copy of b that later calls may share. Never nil.
func (s *State) Bytes(b []byte) []byte {
	if len(b) == 0 || len(b) > MaxShareLen {
		return append([]byte{}, b...)
	}
	if s.bytes == nil {
		s.bytes = new([BytesSlots][]byte)
	}
	i := maphash.Bytes(seed, b) % BytesSlots
	if v := s.bytes[i]; bytes.Equal(v, b) {
		return v
	}
	// Capacity is clipped to the length, so that an append to a shared
	// slice copies instead of writing into the others' backing array.
	v := append([]byte{}, b...)
	v = v[:len(v):len(v)]
	s.bytes[i] = v
	return v
}
