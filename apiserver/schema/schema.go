// Package schema applies a CustomResourceDefinition version's openAPIV3Schema
// to custom resources, as kube-apiserver's apiextensions server does: it
// validates an object (Validate), drops the fields the schema does not know
// (Prune) and fills in the schema's default values (Default).
//
// Objects are JSON values as package unstructured holds them: map[string]any,
// []any, string, int64, float64, bool and nil.
//
// # Validation
//
// Validate checks type (string, integer, number, boolean, object, array;
// nullable), required, enum, pattern, the common formats, minimum and maximum
// (exclusive or not), multipleOf, minLength and maxLength, minItems and
// maxItems, uniqueItems, minProperties and maxProperties, properties and
// additionalProperties, allOf, anyOf, oneOf and not, and the Kubernetes
// extensions x-kubernetes-int-or-string, x-kubernetes-preserve-unknown-fields
// and x-kubernetes-embedded-resource. Errors are field errors worded as
// kube-apiserver's (its go-openapi messages, "spec.size in body should be
// greater than or equal to 1"), ready for metav1.NewInvalid; a string
// that does not match its format is a wrong type, as there. CEL rules
// (x-kubernetes-validations) are internal/cel's; ValidateListSetsAndMaps
// checks x-kubernetes-list-type.
//
// # Pruning and defaulting
//
// Prune removes, in place, every field that no properties or
// additionalProperties of the schema describe, unless the schema (or the
// nearest schema above the field) has x-kubernetes-preserve-unknown-fields;
// apiVersion, kind and metadata of the object and of embedded resources are
// kept, the metadata of embedded resources cut to the fields of ObjectMeta. Default sets, in place, the default of every property that is missing
// (or null where the property is not nullable), recursively, as structural
// defaulting does.
//
// None of the functions panics on any schema or value, however malformed; a
// pattern that does not compile or an enum member that is not JSON is
// ignored.
package schema

import (
	"encoding/base64"
	"fmt"
	"math"
	"net"
	"net/mail"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
)

// Schema is an openAPIV3Schema node.
type Schema = apiextensionsv1.JSONSchemaProps

// maxDepth bounds the recursion into values and schemas: deeper values are
// not examined further. The JSON decoders of kapi stop at 10,000 levels.
const maxDepth = 10000

// Validate checks obj, a whole custom resource, against its version's schema.
// The object's apiVersion, kind and metadata are not checked against the
// schema (the server checks metadata as for any object). A nil schema accepts
// anything.
func Validate(s *Schema, obj map[string]any) metav1.FieldErrors {
	if s == nil {
		return nil
	}
	v := &validator{}
	v.object(s, "", obj, true, 0)
	return v.errs
}

// ValidateValue checks one value at path (a field path such as "spec.size",
// "" for a whole document) against s.
func ValidateValue(s *Schema, path string, value any) metav1.FieldErrors {
	if s == nil {
		return nil
	}
	v := &validator{}
	v.value(s, path, value, 0)
	return v.errs
}

type validator struct {
	errs metav1.FieldErrors
}

func (v *validator) add(e *metav1.FieldError) { v.errs = append(v.errs, e) }

// name is the path as go-openapi words it in messages.
func name(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// jsonType is the JSON schema type name of a value.
func jsonType(x any) string {
	switch x := x.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, int32, int, uint64, uint32:
		return "integer"
	case float64:
		return "number"
	case float32:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	default:
		_ = x
		return fmt.Sprintf("%T", x)
	}
}

// toFloat converts a JSON number to float64.
func toFloat(x any) (float64, bool) {
	switch n := x.(type) {
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case int:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	case float64:
		return n, true
	case float32:
		return float64(n), true
	}
	return 0, false
}

// isInteger reports whether x is an integer: an int64, or a float64 with an
// integral value (a JSON number such as 1.0).
func isInteger(x any) bool {
	switch n := x.(type) {
	case int64, int32, int, uint64, uint32:
		return true
	case float64:
		return !math.IsInf(n, 0) && !math.IsNaN(n) && n == math.Trunc(n)
	}
	return false
}

func preserves(s *Schema) bool { return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields }

// typeMatches reports whether x is of the schema type t.
func typeMatches(t string, x any) bool {
	switch t {
	case "":
		return true
	case "integer":
		return isInteger(x)
	case "number":
		_, ok := toFloat(x)
		return ok
	}
	return jsonType(x) == t
}

func (v *validator) typeError(path, want string, x any) {
	got := jsonType(x)
	v.add(metav1.FieldTypeInvalid(path, got, fmt.Sprintf("%s in body must be of type %s: %q", name(path), want, got)))
}

// value validates x at path against s.
func (v *validator) value(s *Schema, path string, x any, depth int) {
	if s == nil || depth > maxDepth {
		return
	}
	if x == nil {
		switch {
		case s.Nullable:
			return
		case s.XIntOrString:
			v.typeError(path, "integer,string", x)
			return
		case s.Type != "":
			v.typeError(path, s.Type, x)
			return
		}
		// An untyped schema (x-kubernetes-preserve-unknown-fields alone)
		// accepts null; enum and the combinators below still apply.
	}
	if s.XIntOrString {
		if !isInteger(x) && jsonType(x) != "string" {
			v.typeError(path, "integer,string", x)
			return
		}
	} else if x != nil && !typeMatches(s.Type, x) {
		v.typeError(path, s.Type, x)
		return
	}
	if len(s.Enum) > 0 {
		v.enum(s, path, x)
	}
	v.combinators(s, path, x, depth)
	switch t := x.(type) {
	case string:
		v.str(s, path, t)
	case map[string]any:
		v.object(s, path, t, false, depth)
	case []any:
		v.array(s, path, t, depth)
	case bool, nil:
	default:
		if f, ok := toFloat(x); ok {
			v.number(s, path, x, f)
		}
	}
}

// combinators applies allOf, anyOf, oneOf and not.
func (v *validator) combinators(s *Schema, path string, x any, depth int) {
	for i := range s.AllOf {
		v.value(&s.AllOf[i], path, x, depth+1)
	}
	if len(s.AnyOf) > 0 {
		ok := false
		for i := range s.AnyOf {
			if len(ValidateValueDepth(&s.AnyOf[i], path, x, depth+1)) == 0 {
				ok = true
				break
			}
		}
		if !ok {
			v.add(metav1.FieldInvalid(path, x, fmt.Sprintf("%s in body must validate at least one schema (anyOf)", name(path))))
		}
	}
	if len(s.OneOf) > 0 {
		n := 0
		for i := range s.OneOf {
			if len(ValidateValueDepth(&s.OneOf[i], path, x, depth+1)) == 0 {
				n++
			}
		}
		if n != 1 {
			v.add(metav1.FieldInvalid(path, x, fmt.Sprintf("%s in body must validate one and only one schema (oneOf)", name(path))))
		}
	}
	if s.Not != nil && len(ValidateValueDepth(s.Not, path, x, depth+1)) == 0 {
		v.add(metav1.FieldInvalid(path, x, fmt.Sprintf("%s in body must not validate the schema (not)", name(path))))
	}
}

// ValidateValueDepth is ValidateValue starting at a recursion depth.
func ValidateValueDepth(s *Schema, path string, x any, depth int) metav1.FieldErrors {
	v := &validator{}
	v.value(s, path, x, depth)
	return v.errs
}

func (v *validator) enum(s *Schema, path string, x any) {
	allowed := make([]string, 0, len(s.Enum))
	for _, e := range s.Enum {
		ev, err := DecodeJSON(e.Raw)
		if err != nil {
			continue
		}
		if Equal(ev, x) {
			return
		}
		if str, ok := ev.(string); ok {
			allowed = append(allowed, str)
		} else {
			allowed = append(allowed, fmt.Sprint(ev))
		}
	}
	if len(allowed) == 0 {
		return // no member decodes: nothing to compare with
	}
	v.add(metav1.FieldNotSupported(path, x, allowed))
}

func (v *validator) str(s *Schema, path, x string) {
	n := int64(utf8.RuneCountInString(x))
	if s.MaxLength != nil && n > *s.MaxLength {
		v.add(metav1.FieldTooLong(path, int(*s.MaxLength)))
	}
	if s.MinLength != nil && n < *s.MinLength {
		v.add(metav1.FieldInvalid(path, x, fmt.Sprintf("%s in body should be at least %d chars long", name(path), *s.MinLength)))
	}
	if s.Pattern != "" {
		if re := compile(s.Pattern); re != nil && !re.MatchString(x) {
			v.add(metav1.FieldInvalid(path, x, fmt.Sprintf("%s in body should match '%s'", name(path), s.Pattern)))
		}
	}
	if s.Format != "" && !formatValid(s.Format, x) {
		v.add(metav1.FieldTypeInvalid(path, x, fmt.Sprintf("%s in body must be of type %s: %q", name(path), s.Format, x)))
	}
}

func (v *validator) number(s *Schema, path string, x any, f float64) {
	if s.Format == "int32" && s.Type == "integer" && (f < math.MinInt32 || f > math.MaxInt32) {
		// go-openapi's words, at no field (kube-apiserver reports it so)
		v.add(metav1.FieldInvalid("<nil>", "", fmt.Sprintf("Checked value must be of type integer with format int32 in %s", name(path))))
	}
	if s.Maximum != nil {
		if s.ExclusiveMaximum && f >= *s.Maximum {
			v.add(metav1.FieldInvalid(path, x, fmt.Sprintf("%s in body should be less than %v", name(path), *s.Maximum)))
		} else if !s.ExclusiveMaximum && f > *s.Maximum {
			v.add(metav1.FieldInvalid(path, x, fmt.Sprintf("%s in body should be less than or equal to %v", name(path), *s.Maximum)))
		}
	}
	if s.Minimum != nil {
		if s.ExclusiveMinimum && f <= *s.Minimum {
			v.add(metav1.FieldInvalid(path, x, fmt.Sprintf("%s in body should be greater than %v", name(path), *s.Minimum)))
		} else if !s.ExclusiveMinimum && f < *s.Minimum {
			v.add(metav1.FieldInvalid(path, x, fmt.Sprintf("%s in body should be greater than or equal to %v", name(path), *s.Minimum)))
		}
	}
	if s.MultipleOf != nil && *s.MultipleOf > 0 {
		q := f / *s.MultipleOf
		if math.IsInf(q, 0) || math.IsNaN(q) || q != math.Trunc(q) {
			v.add(metav1.FieldInvalid(path, x, fmt.Sprintf("%s in body should be a multiple of %v", name(path), *s.MultipleOf)))
		}
	}
}

var metaFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// object validates a JSON object; root (or an embedded resource) leaves its
// apiVersion, kind and metadata to the server.
func (v *validator) object(s *Schema, path string, m map[string]any, root bool, depth int) {
	if s.XEmbeddedResource && !root {
		for _, f := range []string{"apiVersion", "kind"} {
			if str, _ := m[f].(string); str == "" {
				v.add(metav1.FieldRequired(join(path, f), "must not be empty"))
			}
		}
		if md, ok := m["metadata"]; ok && md != nil {
			if _, isMap := md.(map[string]any); !isMap {
				v.typeError(join(path, "metadata"), "object", md)
			}
		}
	}
	for _, r := range s.Required {
		if _, ok := m[r]; !ok {
			v.add(metav1.FieldRequired(join(path, r), ""))
		}
	}
	if s.MaxProperties != nil && int64(len(m)) > *s.MaxProperties {
		v.add(metav1.FieldTooMany(path, len(m), int(*s.MaxProperties)))
	}
	if s.MinProperties != nil && int64(len(m)) < *s.MinProperties {
		v.add(metav1.FieldInvalid(path, m, fmt.Sprintf("%s in body should have at least %d properties", name(path), *s.MinProperties)))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if (root || s.XEmbeddedResource) && metaFields[k] {
			continue
		}
		p := join(path, k)
		if ps, ok := s.Properties[k]; ok {
			v.value(&ps, p, m[k], depth+1)
			continue
		}
		matched := false
		for pat, ps := range s.PatternProperties {
			if re := compile(pat); re != nil && re.MatchString(k) {
				matched = true
				v.value(&ps, p, m[k], depth+1)
			}
		}
		if matched {
			continue
		}
		if ap := s.AdditionalProperties; ap != nil {
			switch {
			case ap.Schema != nil:
				v.value(ap.Schema, p, m[k], depth+1)
			case !ap.Allows:
				v.add(metav1.FieldForbidden(p, fmt.Sprintf("%s in body is a forbidden property", name(p))))
			}
		}
	}
}

func (v *validator) array(s *Schema, path string, a []any, depth int) {
	if s.MaxItems != nil && int64(len(a)) > *s.MaxItems {
		v.add(metav1.FieldTooMany(path, len(a), int(*s.MaxItems)))
	}
	if s.MinItems != nil && int64(len(a)) < *s.MinItems {
		v.add(metav1.FieldInvalid(path, a, fmt.Sprintf("%s in body should have at least %d items", name(path), *s.MinItems)))
	}
	if s.UniqueItems && hasDuplicates(a) {
		v.add(metav1.FieldInvalid(path, a, fmt.Sprintf("%s in body shouldn't contain duplicates", name(path))))
	}
	if s.Items == nil {
		return
	}
	for i, x := range a {
		p := path + "[" + strconv.Itoa(i) + "]"
		switch {
		case s.Items.Schema != nil:
			v.value(s.Items.Schema, p, x, depth+1)
		case i < len(s.Items.JSONSchemas):
			v.value(&s.Items.JSONSchemas[i], p, x, depth+1)
		}
	}
}

func hasDuplicates(a []any) bool {
	for i := range a {
		for j := i + 1; j < len(a); j++ {
			if Equal(a[i], a[j]) {
				return true
			}
		}
	}
	return false
}

// Equal reports whether two JSON values are equal, numbers compared by value
// (1 equals 1.0).
func Equal(a, b any) bool {
	fa, aNum := toFloat(a)
	fb, bNum := toFloat(b)
	if aNum || bNum {
		return aNum && bNum && fa == fb
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok || !Equal(x, y) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !Equal(av[i], bv[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// DecodeJSON decodes one JSON value (an enum member, a default) into the Go
// types of package unstructured: integers as int64.
func DecodeJSON(raw []byte) (any, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("schema: empty JSON value")
	}
	var u unstructured.Unstructured
	b := make([]byte, 0, len(raw)+24)
	b = append(b, `{"kind":"v","value":`...)
	b = append(b, raw...)
	b = append(b, '}')
	if err := u.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	x, ok := u.Object["value"]
	if !ok {
		return nil, fmt.Errorf("schema: no JSON value")
	}
	return x, nil
}

var patterns sync.Map // pattern -> *regexp.Regexp (nil when it does not compile)

// compile returns the compiled pattern, or nil when it is not a valid RE2
// expression. Patterns come from stored CRDs, so the cache is bounded by them.
func compile(p string) *regexp.Regexp {
	if re, ok := patterns.Load(p); ok {
		return re.(*regexp.Regexp)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		re = nil
	}
	patterns.Store(p, re)
	return re
}

var (
	uuidPattern     = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)
	hostnamePattern = regexp.MustCompile(`^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$`)
	datePattern     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

// formatValid checks the string formats kube-apiserver knows; unknown
// formats accept anything.
func formatValid(format, s string) bool {
	switch format {
	case "date-time", "datetime":
		if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return true
		}
		_, err := time.Parse("2006-01-02T15:04:05.999999999Z0700", s)
		return err == nil
	case "date":
		if !datePattern.MatchString(s) {
			return false
		}
		_, err := time.Parse("2006-01-02", s)
		return err == nil
	case "duration":
		_, err := time.ParseDuration(s)
		return err == nil
	case "uuid", "uuid3", "uuid4", "uuid5":
		return uuidPattern.MatchString(s)
	case "ipv4":
		ip := net.ParseIP(s)
		return ip != nil && ip.To4() != nil && !strings.Contains(s, ":")
	case "ipv6":
		ip := net.ParseIP(s)
		return ip != nil && strings.Contains(s, ":")
	case "cidr":
		_, _, err := net.ParseCIDR(s)
		return err == nil
	case "mac":
		_, err := net.ParseMAC(s)
		return err == nil
	case "hostname":
		return len(s) <= 253 && hostnamePattern.MatchString(s)
	case "email":
		_, err := mail.ParseAddress(s)
		return err == nil
	case "uri":
		u, err := url.Parse(s)
		return err == nil && u.IsAbs()
	case "byte":
		_, err := base64.StdEncoding.DecodeString(s)
		return err == nil
	}
	return true
}
