package codec

import (
	"errors"
	"testing"
)

func mustMT(t testing.TB, s string) MediaType {
	t.Helper()
	m, err := ParseMediaType(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestNegotiateConversion holds kube-apiserver v1.37.2's choices (each
// checked with curl against it) for a server offering JSON, YAML and
// protobuf that converts to PartialObjectMetadata(List) in any of them and
// to Table in JSON and YAML.
func TestNegotiateConversion(t *testing.T) {
	offers := []MediaType{mustMT(t, MediaTypeJSON), mustMT(t, MediaTypeYAML), mustMT(t, MediaTypeProtobuf)}
	allow := func(m MediaType) bool {
		switch {
		case m.As == "" && m.Group == "" && m.Version == "":
			return true
		case m.Group != GroupMeta || (m.Version != "v1" && m.Version != "v1beta1"):
			return false
		case m.As == AsTable:
			return m.Subtype == "json" || m.Subtype == "yaml"
		}
		return m.As == AsPartialObjectMetadata || m.As == AsPartialObjectMetadataList
	}
	for _, c := range []struct{ accept, want string }{
		{"", "application/json"},
		{"application/json", "application/json"},
		{"*/*", "application/json"},
		{"application/*", "application/json"},
		{"application/vnd.kubernetes.protobuf, application/json", "application/vnd.kubernetes.protobuf"},
		{MediaTypePartialObjectMetadataJSON, MediaTypePartialObjectMetadataJSON},
		{MediaTypePartialObjectMetadataProtobuf, MediaTypePartialObjectMetadataProtobuf},
		{"application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1", "application/yaml;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1"},
		{"*/*;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", MediaTypePartialObjectMetadataJSON},
		// The first entry that fits wins, parameters or not.
		{"application/json, " + MediaTypePartialObjectMetadataJSON, "application/json"},
		{"application/json;as=Table;g=meta.k8s.io;v=v1, application/json", "application/json;as=Table;g=meta.k8s.io;v=v1"},
		// Entries the server cannot serve are passed over.
		{"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2, application/json", "application/json"},
		{"application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1, application/json", "application/json"},
		{"application/json;as=Tabular;g=meta.k8s.io;v=v1, application/yaml", "application/yaml"},
		// q orders entries; concrete types come before wildcards.
		{"application/json;q=0.5, application/yaml", "application/yaml"},
		{"*/*, application/yaml", "application/yaml"},
		{MediaTypePartialObjectMetadataJSON + ";q=0.1, application/json;q=0.2", "application/json"},
		// q=0 does not exclude an entry (kube-apiserver ignores it).
		{MediaTypePartialObjectMetadataJSON + ";q=0", MediaTypePartialObjectMetadataJSON},
		// A watch stream parameter is fine on JSON and protobuf, not YAML.
		{"application/json;stream=watch;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", MediaTypePartialObjectMetadataJSON},
		{"application/yaml;stream=watch, application/json", "application/json"},
		// Entries that do not parse are ignored.
		{"garbage, application/yaml", "application/yaml"},
	} {
		got, err := NegotiateConversion(c.accept, offers, allow)
		if err != nil {
			t.Errorf("%q: %v", c.accept, err)
			continue
		}
		if got.String() != c.want {
			t.Errorf("%q: %s, want %s", c.accept, got, c.want)
		}
	}
	for _, accept := range []string{
		"application/xml",
		"application/json;as=PartialObjectMetadata",
		"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2",
		"application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1",
		"application/yaml;stream=watch",
		"application/json;stream=other",
		"APPLICATION/JSON",
	} {
		if got, err := NegotiateConversion(accept, offers, allow); !errors.Is(err, ErrNotAcceptable) {
			t.Errorf("%q: %s, %v; want not acceptable", accept, got, err)
		}
	}
	// Without allow, only plain entries count.
	if got, err := NegotiateConversion(MediaTypePartialObjectMetadataJSON+", application/yaml", offers, nil); err != nil || got.String() != "application/yaml" {
		t.Errorf("nil allow: %s, %v", got, err)
	}
}

func TestAcceptsAnyType(t *testing.T) {
	types := []MediaType{mustMT(t, MediaTypeJSON), mustMT(t, MediaTypeYAML)}
	// kube-apiserver v1.37.2's router, checked with curl.
	for accept, want := range map[string]bool{
		"":                            true,
		"*/*":                         true,
		"application/json;as=Tabular": true,
		" application/json ;q=1":      true,
		"application/json ,":          true,
		",application/yaml":           true,
		"text/*, application/yaml":    true,
		"garbage":                     false,
		"APPLICATION/JSON":            false,
		"application/*":               false,
		"text/*":                      false,
		"application/xml, text/html":  false,
	} {
		if got := AcceptsAnyType(accept, types); got != want {
			t.Errorf("%q: %v, want %v", accept, got, want)
		}
	}
}

func FuzzNegotiateConversion(f *testing.F) {
	for _, s := range []string{"", MediaTypePartialObjectMetadataJSON + ", application/json", "*/*;q=0.5, text/*;stream=watch", "a/b;as=\"x\";g=,"} {
		f.Add(s)
	}
	offers := []MediaType{mustMT(f, MediaTypeJSON), mustMT(f, MediaTypeYAML), mustMT(f, MediaTypeProtobuf)}
	f.Fuzz(func(t *testing.T, accept string) {
		got, err := NegotiateConversion(accept, offers, func(m MediaType) bool { return m.As != "Bad" })
		if err == nil && got.As == "Bad" {
			t.Fatalf("%q: disallowed %s", accept, got)
		}
		_ = AcceptsAnyType(accept, offers)
	})
}
