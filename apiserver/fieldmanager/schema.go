package fieldmanager

import (
	"reflect"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	"github.com/kapi-dev/kapi/internal/smdschema"
)

// Schema is the structured-merge-diff schema of one kind: how its fields
// merge (struct, granular or atomic map, associative or atomic list, scalar)
// and what an empty object of the kind looks like. Build it once per kind
// with ForType or ForCRD; it is immutable and safe for concurrent use.
//
// It is defined in internal/smdschema, which the client's typed apply
// (package apply) shares: both sides derive a kind's schema the same way.
type Schema = smdschema.Schema

// ForType derives the Schema of the kind whose Go type is t from its json
// and merge tags; see smdschema.ForType for the rules.
func ForType(t reflect.Type) (*Schema, error) { return smdschema.ForType(t) }

// ForCRD derives the Schema of a custom resource from the openAPIV3Schema of
// its CustomResourceDefinition version; see smdschema.ForCRD for the rules.
// A nil s gives Deduced().
func ForCRD(s *apiextensionsv1.JSONSchemaProps) (*Schema, error) { return smdschema.ForCRD(s) }

// Deduced returns a Schema that knows nothing about the kind: every map is
// granular, every list atomic, every other value a scalar.
func Deduced() *Schema { return smdschema.Deduced() }
