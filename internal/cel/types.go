package cel

import (
	"encoding/base64"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
)

// Schema is an openAPIV3Schema node.
type Schema = apiextensionsv1.JSONSchemaProps

// Size bounds of the cost estimates, as kube-apiserver derives them when a
// schema sets no maxLength, maxItems or maxProperties: nothing in a request
// is larger than the request, at most 3 MiB.
const (
	maxRequestSizeBytes = 3 * 1024 * 1024
	// minimum JSON sizes of values
	minStringSize = 2 // ""
	minNumberSize = 1 // 0
	minBoolSize   = 4 // true
	minObjectSize = 2 // {}
	minListSize   = 2 // []
	// size of the longest JSON forms of the time formats
	maxDurationSizeJSON = 32
	jsonDateSize        = 12
	maxDatetimeSizeJSON = 37
)

// declType is the CEL type of one schema node, with what the cost
// estimator and the value conversion need.
type declType struct {
	cel    *types.Type
	schema *Schema
	// fields are an object's properties by escaped name, with their JSON
	// names; root and embedded resources add apiVersion, kind and metadata.
	fields map[string]*declField
	elem   *declType // list items, map values
	key    *declType // map keys
	// maxElements bounds the size: bytes of a string, items of a list,
	// properties of a map.
	maxElements int64
	minSize     int64 // smallest JSON serialization
	format      string
}

type declField struct {
	name string // JSON name
	typ  *declType
}

// kinds of schema nodes, by their CEL type
func (d *declType) isObject() bool { return d.cel.Kind() == types.StructKind }
func (d *declType) isMap() bool    { return d.cel.Kind() == types.MapKind }
func (d *declType) isList() bool   { return d.cel.Kind() == types.ListKind }

var (
	stringType = &declType{cel: types.StringType, minSize: minStringSize}
	dynType    = &declType{cel: types.DynType, minSize: 1, maxElements: maxRequestSizeBytes - 2}
)

// typeBuilder gives each object type of a schema a unique name.
type typeBuilder struct {
	objects map[string]*declType // by CEL type name
	// fullMetadata keeps the metadata a schema declares at a root (a
	// built-in kind's ObjectMeta, for policies) instead of CRD rules' view
	// of it (name and generateName).
	fullMetadata bool
}

// declTypeOf returns the CEL type of s (nil when CEL cannot see the node:
// untyped, or preserve-unknown-fields without a type). root marks the root
// of a resource, whose apiVersion, kind and metadata.name and generateName
// are visible even when the schema leaves them out; name is the CEL type
// name for objects.
func (b *typeBuilder) declTypeOf(s *Schema, name string, root bool, depth int) *declType {
	if s == nil || depth > 64 {
		return nil
	}
	if s.XIntOrString {
		return &declType{cel: types.DynType, schema: s, minSize: 1, maxElements: maxRequestSizeBytes - 2}
	}
	switch s.Type {
	case "array":
		if s.Items == nil || s.Items.Schema == nil {
			return nil
		}
		it := b.declTypeOf(s.Items.Schema, name+".@idx", s.Items.Schema.XEmbeddedResource, depth+1)
		if it == nil {
			return nil
		}
		d := &declType{cel: types.NewListType(it.cel), schema: s, elem: it, minSize: minListSize}
		if s.MaxItems != nil {
			d.maxElements = max(*s.MaxItems, 0)
		} else {
			d.maxElements = (maxRequestSizeBytes - 2) / (it.minSize + 1)
		}
		return d
	case "object":
		if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil && len(s.Properties) == 0 {
			vt := b.declTypeOf(ap.Schema, name+".@idx", ap.Schema.XEmbeddedResource, depth+1)
			if vt == nil {
				return nil
			}
			d := &declType{cel: types.NewMapType(types.StringType, vt.cel), schema: s, elem: vt, key: stringType, minSize: minObjectSize}
			if s.MaxProperties != nil {
				d.maxElements = max(*s.MaxProperties, 0)
			} else {
				// "":v, per property
				d.maxElements = (maxRequestSizeBytes - 2) / (vt.minSize + 4)
			}
			return d
		}
		d := &declType{cel: types.NewObjectType(name), schema: s, fields: map[string]*declField{}, minSize: minObjectSize}
		required := map[string]bool{}
		for _, r := range s.Required {
			required[r] = true
		}
		for k := range s.Properties {
			ps := s.Properties[k]
			esc, ok := Escape(k)
			if !ok {
				continue
			}
			if ft := b.declTypeOf(&ps, name+"."+esc, ps.XEmbeddedResource, depth+1); ft != nil {
				d.fields[esc] = &declField{name: k, typ: ft}
				if required[k] {
					d.minSize += int64(len(k)) + 4 + ft.minSize
				}
			}
		}
		if root {
			for _, f := range []string{"apiVersion", "kind"} {
				if _, ok := d.fields[f]; !ok {
					d.fields[f] = &declField{name: f, typ: &declType{cel: types.StringType, minSize: minStringSize, maxElements: maxRequestSizeBytes - 2}}
				}
			}
			if _, ok := d.fields["metadata"]; ok && b.fullMetadata {
				b.objects[name] = d
				return d
			}
			md := &declType{cel: types.NewObjectType(name + ".metadata"), fields: map[string]*declField{}, minSize: minObjectSize}
			for _, f := range []string{"name", "generateName"} {
				md.fields[f] = &declField{name: f, typ: &declType{cel: types.StringType, minSize: minStringSize, maxElements: maxRequestSizeBytes - 2}}
			}
			d.fields["metadata"] = &declField{name: "metadata", typ: md}
			b.objects[md.cel.TypeName()] = md
		}
		b.objects[name] = d
		return d
	case "string":
		d := &declType{cel: types.StringType, schema: s, minSize: minStringSize, format: s.Format}
		switch s.Format {
		case "byte":
			d.cel = types.BytesType
		case "duration":
			d.cel = types.DurationType
		case "date", "date-time":
			d.cel = types.TimestampType
		}
		switch {
		case s.MaxLength != nil && d.cel == types.StringType:
			// maxLength counts code points, the estimate bytes: up to 4 each
			d.maxElements = max(*s.MaxLength, 0) * 4
		case s.MaxLength != nil && d.cel == types.BytesType:
			d.maxElements = max(*s.MaxLength, 0)
		case s.Format == "duration":
			d.maxElements = maxDurationSizeJSON
		case s.Format == "date":
			d.maxElements = jsonDateSize
		case s.Format == "date-time":
			d.maxElements = maxDatetimeSizeJSON
		case len(s.Enum) > 0 && d.cel == types.StringType:
			for _, e := range s.Enum {
				d.maxElements = max(d.maxElements, int64(len(e.Raw))-2)
			}
		default:
			d.maxElements = maxRequestSizeBytes - 2
		}
		return d
	case "integer":
		return &declType{cel: types.IntType, schema: s, minSize: minNumberSize}
	case "number":
		return &declType{cel: types.DoubleType, schema: s, minSize: minNumberSize}
	case "boolean":
		return &declType{cel: types.BoolType, schema: s, minSize: minBoolSize}
	}
	return nil
}

var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true, "let": true,
	"loop": true, "package": true, "namespace": true, "return": true, "var": true, "void": true, "while": true,
}

var escapable = regexp.MustCompile(`^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$`)

// Escape returns the name by which CEL rules see the property name, as
// kube-apiserver escapes it: a CEL reserved word w becomes __w__, and "__",
// ".", "-" and "/" become __underscores__, __dot__, __dash__ and __slash__.
// It reports false for names CEL cannot see (other characters).
func Escape(name string) (string, bool) {
	if celReserved[name] {
		return "__" + name + "__", true
	}
	if !escapable.MatchString(name) {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '_' && i+1 < len(name) && name[i+1] == '_':
			b.WriteString("__underscores__")
			i++
		case c == '.':
			b.WriteString("__dot__")
		case c == '-':
			b.WriteString("__dash__")
		case c == '/':
			b.WriteString("__slash__")
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// provider resolves the object types of a schema for the type checker.
type provider struct {
	types.Provider
	objects map[string]*declType
}

func (p *provider) FindStructType(name string) (*types.Type, bool) {
	if d, ok := p.objects[name]; ok {
		return types.NewTypeTypeWithParam(d.cel), true
	}
	return p.Provider.FindStructType(name)
}

func (p *provider) FindStructFieldNames(name string) ([]string, bool) {
	if d, ok := p.objects[name]; ok {
		names := make([]string, 0, len(d.fields))
		for k := range d.fields {
			names = append(names, k)
		}
		return names, true
	}
	return p.Provider.FindStructFieldNames(name)
}

func (p *provider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if d, ok := p.objects[name]; ok {
		f, ok := d.fields[field]
		if !ok {
			return nil, false
		}
		// No IsSet and GetFrom: the values are maps, selected as maps.
		return &types.FieldType{Type: f.typ.cel}, true
	}
	return p.Provider.FindStructFieldType(name, field)
}

// toVal converts a JSON value of the node d to a CEL value: objects to maps
// keyed by escaped property names, strings of the formats byte, duration,
// date and date-time to bytes, durations and timestamps, integers and
// numbers to int and double.
func toVal(d *declType, x any) ref.Val {
	if x == nil {
		return types.NullValue
	}
	if d == nil || d.cel == types.DynType && d.schema == nil {
		return jsonVal(x)
	}
	switch d.cel.Kind() {
	case types.StructKind:
		m, ok := x.(map[string]any)
		if !ok {
			return jsonVal(x)
		}
		out := make(map[ref.Val]ref.Val, len(m))
		for k, f := range d.fields {
			if v, ok := m[f.name]; ok {
				out[types.String(k)] = toVal(f.typ, v)
			}
		}
		return types.NewRefValMap(types.DefaultTypeAdapter, out)
	case types.MapKind:
		m, ok := x.(map[string]any)
		if !ok {
			return jsonVal(x)
		}
		out := make(map[ref.Val]ref.Val, len(m))
		for k, v := range m {
			out[types.String(k)] = toVal(d.elem, v)
		}
		return types.NewRefValMap(types.DefaultTypeAdapter, out)
	case types.ListKind:
		a, ok := x.([]any)
		if !ok {
			return jsonVal(x)
		}
		out := make([]ref.Val, len(a))
		for i, v := range a {
			out[i] = toVal(d.elem, v)
		}
		l := types.NewRefValList(types.DefaultTypeAdapter, out)
		if lt := d.schema.XListType; lt != nil && (*lt == "set" || *lt == "map") {
			return &setList{Lister: l, keys: d.schema.XListMapKeys, isMap: *lt == "map"}
		}
		return l
	case types.IntKind:
		switch n := x.(type) {
		case int64:
			return types.Int(n)
		case float64:
			if n == math.Trunc(n) && n >= math.MinInt64 && n < math.MaxInt64 {
				return types.Int(int64(n))
			}
		}
	case types.DoubleKind:
		switch n := x.(type) {
		case int64:
			return types.Double(float64(n))
		case float64:
			return types.Double(n)
		}
	case types.BytesKind:
		if s, ok := x.(string); ok {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return types.NewErr("invalid base64 value: %v", err)
			}
			return types.Bytes(b)
		}
	case types.DurationKind:
		if s, ok := x.(string); ok {
			dur, err := time.ParseDuration(s)
			if err != nil {
				return types.NewErr("invalid duration value: %v", err)
			}
			return types.Duration{Duration: dur}
		}
	case types.TimestampKind:
		if s, ok := x.(string); ok {
			layout := time.RFC3339
			if d.format == "date" {
				layout = "2006-01-02"
			}
			t, err := time.Parse(layout, s)
			if err != nil {
				return types.NewErr("invalid %s value: %v", d.format, err)
			}
			return types.Timestamp{Time: t}
		}
	}
	return jsonVal(x)
}

// jsonVal converts a JSON value without a schema.
func jsonVal(x any) ref.Val {
	switch t := x.(type) {
	case nil:
		return types.NullValue
	case string:
		return types.String(t)
	case bool:
		return types.Bool(t)
	case int64:
		return types.Int(t)
	case float64:
		return types.Double(t)
	case map[string]any:
		out := make(map[ref.Val]ref.Val, len(t))
		for k, v := range t {
			out[types.String(k)] = jsonVal(v)
		}
		return types.NewRefValMap(types.DefaultTypeAdapter, out)
	case []any:
		out := make([]ref.Val, len(t))
		for i, v := range t {
			out[i] = jsonVal(v)
		}
		return types.NewRefValList(types.DefaultTypeAdapter, out)
	}
	return types.DefaultTypeAdapter.NativeToValue(x)
}

// setList is a list of x-kubernetes-list-type set or map: equal to another
// list with the same items in any order, as kube-apiserver compares them.
type setList struct {
	traits.Lister
	keys  []string
	isMap bool
}

func (l *setList) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.False
	}
	if l.Size() != o.Size() {
		return types.False
	}
	n := int(l.Size().(types.Int))
	used := make([]bool, n)
outer:
	for i := 0; i < n; i++ {
		x := l.Get(types.Int(i))
		for j := 0; j < n; j++ {
			if !used[j] && x.Equal(o.Get(types.Int(j))) == types.True {
				used[j] = true
				continue outer
			}
		}
		return types.False
	}
	return types.True
}
