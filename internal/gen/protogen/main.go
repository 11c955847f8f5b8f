//go:build kapi_protogen

// Command protogen writes the protobuf Marshal/Unmarshal methods of kapi's API
// types from their `protobuf:"..."` struct tags.
//
// It reflects over the kinds listed in roots and every struct type they reach,
// and writes one zz_generated.proto.go per package. The generated methods have the
// names and signatures of gogo-protobuf's (Size, Marshal, MarshalTo,
// MarshalToSizedBuffer, Unmarshal), so kapi's codec treats its own types and
// k8s.io/api types alike. Output is byte-identical to kube-apiserver's: fields in
// ascending number order, scalars and nested structs always written, pointers,
// byte slices and list elements only when present, map entries sorted by key,
// repeated scalars unpacked (proto2). Unmarshal also accepts packed scalars.
//
// Types with hand-written wire forms (Time, MicroTime, Duration, FieldsV1,
// RawExtension, Quantity, IntOrString) are called, not generated.
//
// The generated files carry the build constraint !kapi_protogen so that the
// generator can always be built, even when they are stale:
//
//	go run -tags kapi_protogen ./internal/gen/protogen
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	apidiscoveryv2 "github.com/kapi-dev/kapi/api/apidiscovery/v2"
	apidiscoveryv2beta1 "github.com/kapi-dev/kapi/api/apidiscovery/v2beta1"
	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	autoscalingv1 "github.com/kapi-dev/kapi/api/autoscaling/v1"
	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	discoveryv1 "github.com/kapi-dev/kapi/api/discovery/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
)

const module = "github.com/kapi-dev/kapi/"

var outRoot = "."

var roots = []any{
	metav1.ObjectMeta{}, metav1.ListMeta{}, metav1.Status{}, metav1.WatchEvent{}, metav1.List{},
	metav1.PartialObjectMetadata{}, metav1.PartialObjectMetadataList{}, metav1.LabelSelector{},
	metav1.Condition{}, metav1.APIVersions{}, metav1.APIGroupList{}, metav1.APIGroup{},
	metav1.APIResourceList{}, metav1.APIResource{}, metav1.DeleteOptions{},
	corev1.Namespace{}, corev1.NamespaceList{}, corev1.ConfigMap{}, corev1.ConfigMapList{},
	corev1.Secret{}, corev1.SecretList{}, corev1.ServiceAccount{}, corev1.ServiceAccountList{},
	corev1.Pod{}, corev1.PodList{}, corev1.Service{}, corev1.ServiceList{}, corev1.Node{},
	corev1.NodeList{}, corev1.Event{}, corev1.EventList{}, corev1.ObjectReference{},
	corev1.LocalObjectReference{}, corev1.TypedLocalObjectReference{},
	corev1.Endpoints{}, corev1.EndpointsList{},
	discoveryv1.EndpointSlice{}, discoveryv1.EndpointSliceList{},
	appsv1.Deployment{}, appsv1.DeploymentList{},
	coordinationv1.Lease{}, coordinationv1.LeaseList{},
	apidiscoveryv2.APIGroupDiscoveryList{}, apidiscoveryv2.APIGroupDiscovery{},
	apidiscoveryv2beta1.APIGroupDiscoveryList{}, apidiscoveryv2beta1.APIGroupDiscovery{},
	autoscalingv1.Scale{},
	apiextensionsv1.CustomResourceDefinition{}, apiextensionsv1.CustomResourceDefinitionList{},
}

// handWritten types implement the methods themselves.
var handWritten = map[reflect.Type]bool{
	reflect.TypeFor[metav1.Time]():         true,
	reflect.TypeFor[metav1.MicroTime]():    true,
	reflect.TypeFor[metav1.Duration]():     true,
	reflect.TypeFor[metav1.FieldsV1]():     true,
	reflect.TypeFor[metav1.RawExtension](): true,
	reflect.TypeFor[metav1.TypeMeta]():     true,
	reflect.TypeFor[resource.Quantity]():   true,
	reflect.TypeFor[intstr.IntOrString]():  true,
	// apiextensions' JSON checks the JSON text it decodes.
	reflect.TypeFor[apiextensionsv1.JSON](): true,
}

var aliases = map[string]string{
	module + "api/meta/v1":              "metav1",
	module + "api/core/v1":              "corev1",
	module + "api/apps/v1":              "appsv1",
	module + "api/autoscaling/v1":       "autoscalingv1",
	module + "api/coordination/v1":      "coordinationv1",
	module + "api/discovery/v1":         "discoveryv1",
	module + "api/resource":             "resource",
	module + "api/intstr":               "intstr",
	module + "api/apiextensions/v1":     "apiextensionsv1",
	module + "api/apidiscovery/v2":      "apidiscoveryv2",
	module + "api/apidiscovery/v2beta1": "apidiscoveryv2beta1",
}

// deepCopyOnly are JSON-only kinds that get deep copies but no protobuf.
var deepCopyOnly = []any{
	metav1.Table{},
}

// ownDeepCopy types copy themselves: the hand-written wire types (plain values
// or with their own DeepCopyInto, as apiextensions' JSON).
var ownDeepCopy = maps.Clone(handWritten)

// walk calls add for every struct type reachable from roots through the fields
// that follow accepts, stopping at the types in stop.
func walk(roots []any, follow func(reflect.StructField) bool, stop map[reflect.Type]bool, add func(reflect.Type)) {
	seen := map[reflect.Type]bool{}
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			if t.Kind() == reflect.Map {
				visit(t.Key())
				if e := t.Elem(); isSliceMessage(e) && !seen[e] && !stop[e] {
					seen[e] = true
					add(e)
				}
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || stop[t] || t.PkgPath() == "" {
			return
		}
		seen[t] = true
		add(t)
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() && follow(f) {
				visit(f.Type)
			}
		}
	}
	for _, r := range roots {
		visit(reflect.TypeOf(r))
	}
}

func main() {
	log.SetFlags(0)
	root := flag.String("root", ".", "repository root to write the generated files under")
	flag.Parse()
	outRoot = *root
	roots = append(roots, schemaRoots...)
	for path, a := range schemaAliases {
		aliases[path] = a
	}
	gens := map[string]*gen{}
	genFor := func(t reflect.Type) *gen {
		g := gens[t.PkgPath()]
		if g == nil {
			g = &gen{pkg: t.PkgPath(), imports: map[string]string{}}
			gens[t.PkgPath()] = g
		}
		return g
	}
	var protoTypes, deepTypes []reflect.Type
	walk(roots, func(f reflect.StructField) bool { return protoTag(f) != nil }, handWritten,
		func(t reflect.Type) { protoTypes = append(protoTypes, t) })
	walk(append(roots, deepCopyOnly...), func(reflect.StructField) bool { return true }, ownDeepCopy,
		func(t reflect.Type) {
			if t.Kind() == reflect.Struct {
				deepTypes = append(deepTypes, t)
			}
		})
	byName := func(ts []reflect.Type) {
		sort.Slice(ts, func(i, j int) bool {
			if ts[i].PkgPath() != ts[j].PkgPath() {
				return ts[i].PkgPath() < ts[j].PkgPath()
			}
			return ts[i].Name() < ts[j].Name()
		})
	}
	byName(protoTypes)
	byName(deepTypes)
	for _, t := range protoTypes {
		if isSliceMessage(t) {
			genFor(t).sliceMessage(t)
			continue
		}
		genFor(t).message(t)
	}
	for _, t := range deepTypes {
		genFor(t).deepCopy(t)
	}
	for _, g := range gens {
		if err := g.write(); err != nil {
			log.Fatalf("%s: %v", g.pkg, err)
		}
	}
}

type tag struct {
	num  int
	wire string
}

func protoTag(f reflect.StructField) *tag {
	v, ok := f.Tag.Lookup("protobuf")
	if !ok || v == "-" || !f.IsExported() {
		return nil
	}
	parts := strings.Split(v, ",")
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		log.Fatalf("bad protobuf tag on %s: %q", f.Name, v)
	}
	return &tag{num: n, wire: parts[0]}
}

type field struct {
	reflect.StructField
	tag
}

type gen struct {
	pkg     string
	imports map[string]string
	size    bytes.Buffer
	marshal bytes.Buffer
	unmarsh bytes.Buffer
	deep    bytes.Buffer
	usesSub bool // the message being written needs a sub-decoder
}

func (g *gen) p(w *bytes.Buffer, format string, args ...any) {
	fmt.Fprintf(w, format, args...)
	w.WriteByte('\n')
}

// typeName spells t as Go source inside g.pkg.
func (g *gen) typeName(t reflect.Type) string {
	if t.Name() != "" {
		if t.PkgPath() == "" || t.PkgPath() == g.pkg {
			return t.Name()
		}
		a, ok := aliases[t.PkgPath()]
		if !ok {
			log.Fatalf("no alias for %s", t.PkgPath())
		}
		g.imports[a] = t.PkgPath()
		return a + "." + t.Name()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + g.typeName(t.Elem())
	case reflect.Slice:
		return "[]" + g.typeName(t.Elem())
	case reflect.Map:
		return "map[" + g.typeName(t.Key()) + "]" + g.typeName(t.Elem())
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return "any"
		}
	}
	log.Fatalf("cannot spell %v", t)
	return ""
}

func isBytes(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8
}

// isSliceMessage reports whether t is a named slice type of an API package
// (authentication's ExtraValue []string). As a map value, gogo-protobuf
// writes such a type as a message of its own whose field 1 holds the
// elements; as a field it is a plain repeated field.
func isSliceMessage(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Name() != "" && t.PkgPath() != "" && !isBytes(t)
}

// sliceMessage writes the methods of a named slice type (see isSliceMessage):
// the elements are repeated field 1 of the message.
func (g *gen) sliceMessage(t reflect.Type) {
	name := t.Name()
	s, m, u := &g.size, &g.marshal, &g.unmarsh
	g.p(s, "// Size returns the protobuf encoded size of m.\nfunc (m %s) Size() (n int) {\n\tfor k := range m {\n\t\tn += %s\n\t}\n\treturn n\n}\n", name, g.sizeOf(t.Elem(), "m[k]", 1))
	g.p(m, "// Marshal encodes m as protobuf.\nfunc (m %[1]s) Marshal() ([]byte, error) {\n\tb := make([]byte, m.Size())\n\tn, err := m.MarshalToSizedBuffer(b)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\treturn b[len(b)-n:], nil\n}\n", name)
	g.p(m, "// MarshalTo encodes m into the front of b, which must hold m.Size() bytes.\nfunc (m %[1]s) MarshalTo(b []byte) (int, error) {\n\treturn m.MarshalToSizedBuffer(b[:m.Size()])\n}\n", name)
	g.p(m, "// MarshalToSizedBuffer encodes m at the end of b and returns its length.\nfunc (m %s) MarshalToSizedBuffer(b []byte) (int, error) {\n\ti := len(b)\n\tfor k := len(m) - 1; k >= 0; k-- {", name)
	g.putValue(m, t.Elem(), "m[k]", 1, "\t\t")
	g.p(m, "\t}\n\treturn len(b) - i, nil\n}\n")
	g.p(u, "// Unmarshal decodes protobuf bytes into m.\nfunc (m *%[1]s) Unmarshal(b []byte) error {\n\treturn m.UnmarshalFrom(pb.NewDecoder(b, %[1]q))\n}\n", name)
	g.p(u, "// UnmarshalFrom decodes the message d reads into m.\nfunc (m *%s) UnmarshalFrom(d *pb.Decoder) error {\n\td.SetName(%q)\n\tfor d.Next() {\n\t\tswitch d.Field() {\n\t\tcase 1:\n\t\t\t*m = append(*m, %s)\n\t\tdefault:\n\t\t\td.Skip()\n\t\t}\n\t}\n\treturn d.Err()\n}\n", name, name, g.readValue(t.Elem()))
}

func isInt(k reflect.Kind) bool {
	return k == reflect.Int32 || k == reflect.Int64 || k == reflect.Uint32 || k == reflect.Uint64 || k == reflect.Int
}

func (g *gen) message(t reflect.Type) {
	var fields []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if tg := protoTag(f); tg != nil {
			fields = append(fields, field{f, *tg})
		}
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].num < fields[j].num })
	name := t.Name()
	s, m, u := &g.size, &g.marshal, &g.unmarsh

	g.p(s, "// Size returns the protobuf encoded size of m.\nfunc (m *%s) Size() (n int) {\n\tif m == nil {\n\t\treturn 0\n\t}", name)
	g.p(m, "// Marshal encodes m as protobuf.\nfunc (m *%[1]s) Marshal() ([]byte, error) {\n\tb := make([]byte, m.Size())\n\tn, err := m.MarshalToSizedBuffer(b)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\treturn b[len(b)-n:], nil\n}\n", name)
	g.p(m, "// MarshalTo encodes m into the front of b, which must hold m.Size() bytes.\nfunc (m *%[1]s) MarshalTo(b []byte) (int, error) {\n\treturn m.MarshalToSizedBuffer(b[:m.Size()])\n}\n", name)
	g.p(m, "// MarshalToSizedBuffer encodes m at the end of b and returns its length.\nfunc (m *%s) MarshalToSizedBuffer(b []byte) (int, error) {\n\ti := len(b)", name)
	g.p(u, "// Unmarshal decodes protobuf bytes into m, which should be zero.\nfunc (m *%[1]s) Unmarshal(b []byte) error {\n\treturn m.UnmarshalFrom(pb.NewDecoder(b, %[1]q))\n}\n", name)
	g.p(u, "// UnmarshalFrom decodes the message d reads into m, which should be zero.\n// Nested messages are decoded with d's state (string table, options).\nfunc (m *%s) UnmarshalFrom(d *pb.Decoder) error {\n\td.SetName(%q)", name, name)
	var body bytes.Buffer
	g.unmarsh, body = body, g.unmarsh
	g.usesSub = false
	for _, f := range fields {
		g.sizeField(f)
		g.unmarshalField(t, f)
	}
	g.unmarsh, body = body, g.unmarsh
	if g.usesSub {
		g.p(u, "\tvar sub pb.Decoder")
	}
	g.p(u, "\tfor d.Next() {\n\t\tswitch d.Field() {")
	u.Write(body.Bytes())
	for k := len(fields) - 1; k >= 0; k-- {
		g.marshalField(fields[k])
	}
	g.p(s, "\treturn n\n}\n")
	g.p(m, "\treturn len(b) - i, nil\n}\n")
	g.p(u, "\t\tdefault:\n\t\t\td.Skip()\n\t\t}\n\t}\n\treturn d.Err()\n}\n")
}

// decodesFrom reports whether t has an UnmarshalFrom(*pb.Decoder) method: every
// generated message, and the hand-written types that implement it.
func decodesFrom(t reflect.Type) bool {
	if !handWritten[t] {
		return true
	}
	_, ok := reflect.PointerTo(t).MethodByName("UnmarshalFrom")
	return ok
}

// unmarshalInto is a statement decoding the current field (a nested message)
// into the struct expression v of type t.
func (g *gen) unmarshalInto(t reflect.Type, v, indent string) string {
	if decodesFrom(t) {
		g.usesSub = true
		return fmt.Sprintf("%[1]sd.Sub(&sub)\n%[1]sd.Wrap(%[2]s.UnmarshalFrom(&sub))", indent, v)
	}
	return fmt.Sprintf("%sd.Wrap(%s.Unmarshal(d.Bytes()))", indent, v)
}

// sizeScalar returns an expression for the size of value expression v of type t,
// tag included, and whether t is a scalar.
func (g *gen) sizeOf(t reflect.Type, v string, tagSize int) string {
	switch {
	case t.Kind() == reflect.String:
		return fmt.Sprintf("%d + pb.SizeBytes(len(%s))", tagSize, v)
	case isBytes(t):
		return fmt.Sprintf("%d + pb.SizeBytes(len(%s))", tagSize, v)
	case t.Kind() == reflect.Bool:
		return fmt.Sprintf("%d + 1", tagSize)
	case isInt(t.Kind()):
		return fmt.Sprintf("%d + pb.SizeVarint(uint64(%s))", tagSize, v)
	case t.Kind() == reflect.Float64:
		return fmt.Sprintf("%d + 8", tagSize)
	case t.Kind() == reflect.Struct || isSliceMessage(t):
		return fmt.Sprintf("%d + pb.SizeBytes(%s.Size())", tagSize, v)
	}
	log.Fatalf("unsupported type %v", t)
	return ""
}

func tagSize(num int) int {
	if num < 16 {
		return 1
	}
	return 2
}

func (g *gen) sizeField(f field) {
	s := &g.size
	t, v, ts := f.Type, "m."+f.Name, tagSize(f.num)
	switch {
	case isBytes(t):
		g.p(s, "\tif %s != nil {\n\t\tn += %s\n\t}", v, g.sizeOf(t, v, ts))
	case t.Kind() == reflect.Pointer:
		if t.Elem().Kind() == reflect.Struct {
			g.p(s, "\tif %s != nil {\n\t\tn += %s\n\t}", v, g.sizeOf(t.Elem(), v, ts))
		} else {
			g.p(s, "\tif %s != nil {\n\t\tn += %s\n\t}", v, g.sizeOf(t.Elem(), "*"+v, ts))
		}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Bool:
		g.p(s, "\tn += len(%s) * %d", v, ts+1)
	case t.Kind() == reflect.Slice:
		g.p(s, "\tfor k := range %s {\n\t\tn += %s\n\t}", v, g.sizeOf(t.Elem(), v+"[k]", ts))
	case t.Kind() == reflect.Map:
		val := "0"
		if isBytes(t.Elem()) {
			g.p(s, "\tfor k, v := range %s {\n\t\te := %s", v, g.sizeOf(t.Key(), "k", 1))
			g.p(s, "\t\tif v != nil {\n\t\t\te += %s\n\t\t}\n\t\tn += %d + pb.SizeBytes(e)\n\t}", g.sizeOf(t.Elem(), "v", 1), ts)
			return
		}
		val = g.sizeOf(t.Elem(), "v", 1)
		g.p(s, "\tfor k, v := range %s {\n\t\tn += %d + pb.SizeBytes(%s + %s)\n\t}", v, ts, g.sizeOf(t.Key(), "k", 1), val)
	default:
		g.p(s, "\tn += %s", g.sizeOf(t, v, ts))
	}
}

// putValue writes value expression v of type t as field num.
func (g *gen) putValue(w *bytes.Buffer, t reflect.Type, v string, num int, indent string) {
	switch {
	case t.Kind() == reflect.String:
		g.p(w, "%si = pb.PutString(b, i, %d, string(%s))", indent, num, v)
	case isBytes(t):
		g.p(w, "%si = pb.PutBytes(b, i, %d, %s)", indent, num, v)
	case t.Kind() == reflect.Bool:
		g.p(w, "%si = pb.PutUvarint(b, i, %d, pb.Bool(%s))", indent, num, v)
	case isInt(t.Kind()):
		g.p(w, "%si = pb.PutUvarint(b, i, %d, uint64(%s))", indent, num, v)
	case t.Kind() == reflect.Float64:
		g.imports["math"] = "math"
		g.p(w, "%si = pb.PutFixed64(b, i, %d, math.Float64bits(float64(%s)))", indent, num, v)
	case t.Kind() == reflect.Struct || isSliceMessage(t):
		g.p(w, "%s{\n%s\tend := i\n%s\tn, err := %s.MarshalToSizedBuffer(b[:i])\n%s\tif err != nil {\n%s\t\treturn 0, err\n%s\t}\n%s\ti = pb.PutMessageHeader(b, i-n, end, %d)\n%s}",
			indent, indent, indent, v, indent, indent, indent, indent, num, indent)
	default:
		log.Fatalf("unsupported type %v", t)
	}
}

func (g *gen) marshalField(f field) {
	w := &g.marshal
	t, v := f.Type, "m."+f.Name
	switch {
	case isBytes(t):
		g.p(w, "\tif %s != nil {", v)
		g.putValue(w, t, v, f.num, "\t\t")
		g.p(w, "\t}")
	case t.Kind() == reflect.Pointer:
		g.p(w, "\tif %s != nil {", v)
		if t.Elem().Kind() == reflect.Struct {
			g.putValue(w, t.Elem(), v, f.num, "\t\t")
		} else {
			g.putValue(w, t.Elem(), "*"+v, f.num, "\t\t")
		}
		g.p(w, "\t}")
	case t.Kind() == reflect.Slice:
		g.p(w, "\tfor k := len(%s) - 1; k >= 0; k-- {", v)
		g.putValue(w, t.Elem(), v+"[k]", f.num, "\t\t")
		g.p(w, "\t}")
	case t.Kind() == reflect.Map:
		g.imports["slices"] = "slices"
		g.p(w, "\tif len(%s) > 0 {", v)
		g.p(w, "\t\tkeys := make([]%s, 0, len(%s))\n\t\tfor k := range %s {\n\t\t\tkeys = append(keys, k)\n\t\t}\n\t\tslices.Sort(keys)", g.typeName(t.Key()), v, v)
		g.p(w, "\t\tfor k := len(keys) - 1; k >= 0; k-- {\n\t\t\tv := %s[keys[k]]\n\t\t\tend := i", v)
		if isBytes(t.Elem()) {
			g.p(w, "\t\t\tif v != nil {")
			g.putValue(w, t.Elem(), "v", 2, "\t\t\t\t")
			g.p(w, "\t\t\t}")
		} else {
			g.putValue(w, t.Elem(), "v", 2, "\t\t\t")
		}
		g.putValue(w, t.Key(), "keys[k]", 1, "\t\t\t")
		g.p(w, "\t\t\ti = pb.PutMessageHeader(b, i, end, %d)\n\t\t}\n\t}", f.num)
	default:
		g.putValue(w, t, v, f.num, "\t")
	}
}

// readValue is an expression decoding the current field as type t.
func (g *gen) readValue(t reflect.Type) string {
	name := g.typeName(t)
	switch {
	case t.Kind() == reflect.String:
		if name == "string" {
			return "d.String()"
		}
		return name + "(d.String())"
	case isBytes(t):
		return "d.CopyBytes()"
	case t.Kind() == reflect.Bool:
		return "d.Uvarint() != 0"
	case isInt(t.Kind()):
		return name + "(d.Uvarint())"
	case t.Kind() == reflect.Float64:
		g.imports["math"] = "math"
		return name + "(math.Float64frombits(d.Fixed64()))"
	}
	log.Fatalf("unsupported type %v", t)
	return ""
}

func (g *gen) unmarshalField(owner reflect.Type, f field) {
	w := &g.unmarsh
	t, v := f.Type, "m."+f.Name
	g.p(w, "\t\tcase %d:", f.num)
	if owner == reflect.TypeFor[metav1.ObjectMeta]() && f.Name == "ManagedFields" {
		// Callers that drop managedFields can have them skipped unread.
		g.p(w, "\t\t\tif d.SkipManagedFields() {\n\t\t\t\td.Skip()\n\t\t\t\tbreak\n\t\t\t}")
	}
	switch {
	case isBytes(t):
		g.p(w, "\t\t\t%s = d.CopyBytes()", v)
	case t.Kind() == reflect.Struct:
		g.p(w, "%s", g.unmarshalInto(t, v, "\t\t\t"))
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		g.p(w, "\t\t\tif %s == nil {\n\t\t\t\t%s = new(%s)\n\t\t\t}\n%s", v, v, g.typeName(t.Elem()), g.unmarshalInto(t.Elem(), v, "\t\t\t"))
	case t.Kind() == reflect.Pointer:
		g.p(w, "\t\t\tv := %s\n\t\t\t%s = &v", g.readValue(t.Elem()), v)
	case t.Kind() == reflect.Slice && isInt(t.Elem().Kind()):
		g.p(w, "\t\t\td.Varints(func(x uint64) { %s = append(%s, %s(x)) })", v, v, g.typeName(t.Elem()))
	case t.Kind() == reflect.Slice:
		// Repeated fields are counted first and allocated once, at their
		// exact length.
		g.p(w, "\t\t\tif %s == nil {\n\t\t\t\t%s = make(%s, 0, d.Count())\n\t\t\t}", v, v, g.typeName(t))
		if t.Elem().Kind() == reflect.Struct {
			g.p(w, "\t\t\t%s = append(%s, %s{})\n%s", v, v, g.typeName(t.Elem()), g.unmarshalInto(t.Elem(), v+"[len("+v+")-1]", "\t\t\t"))
		} else {
			g.p(w, "\t\t\t%s = append(%s, %s)", v, v, g.readValue(t.Elem()))
		}
	case t.Kind() == reflect.Map:
		g.p(w, "\t\t\tif %s == nil {\n\t\t\t\t%s = make(%s, d.Count())\n\t\t\t}", v, v, g.typeName(t))
		g.p(w, "\t\t\tk, val, _, err := d.MapEntry(%q)\n\t\t\tif err != nil {\n\t\t\t\td.Wrap(err)\n\t\t\t\tbreak\n\t\t\t}", owner.Name()+"."+f.Name)
		key := g.typeName(t.Key()) + "(k)"
		if t.Key().Name() == "string" {
			key = "k"
		}
		switch e := t.Elem(); {
		case isBytes(e):
			g.p(w, "\t\t\t%s[%s] = append([]byte{}, val...)", v, key)
		case e.Kind() == reflect.String:
			if g.typeName(e) == "string" {
				g.p(w, "\t\t\t%s[%s] = d.BytesString(val)", v, key)
			} else {
				g.p(w, "\t\t\t%s[%s] = %s(d.BytesString(val))", v, key, g.typeName(e))
			}
		case (e.Kind() == reflect.Struct || isSliceMessage(e)) && decodesFrom(e):
			g.usesSub = true
			g.p(w, "\t\t\tvar mv %s\n\t\t\td.SubBytes(&sub, val)\n\t\t\td.Wrap(mv.UnmarshalFrom(&sub))\n\t\t\t%s[%s] = mv", g.typeName(e), v, key)
		case e.Kind() == reflect.Struct:
			g.p(w, "\t\t\tvar mv %s\n\t\t\td.Wrap(mv.Unmarshal(val))\n\t\t\t%s[%s] = mv", g.typeName(e), v, key)
		default:
			log.Fatalf("unsupported map value %v", e)
		}
	default:
		g.p(w, "\t\t\t%s = %s", v, g.readValue(t))
	}
}

func (g *gen) write() error {
	dir := filepath.Join(outRoot, strings.TrimPrefix(g.pkg, module))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if g.size.Len() > 0 {
		if err := g.file(filepath.Join(dir, "zz_generated.proto.go"), []string{"pb", "math", "slices"}, &g.size, &g.marshal, &g.unmarsh); err != nil {
			return err
		}
	}
	return g.file(filepath.Join(dir, "zz_generated.deepcopy.go"), []string{"jsonvalue"}, &g.deep)
}

// file writes the given bodies with those of g's imports named in wanted (plus
// every package alias, which both kinds of file may use).
func (g *gen) file(path string, wanted []string, bodies ...*bytes.Buffer) error {
	var o bytes.Buffer
	g.p(&o, "// Code generated by internal/gen/protogen. DO NOT EDIT.\n\n//go:build !kapi_protogen\n\npackage %s\n", filepath.Base(g.pkg))
	imports := map[string]string{}
	if wanted[0] == "pb" {
		imports["pb"] = module + "internal/pb"
	}
	for a, path := range g.imports {
		imports[a] = path
	}
	var src bytes.Buffer
	for _, b := range bodies {
		src.Write(b.Bytes())
	}
	var names []string
	for a := range imports {
		names = append(names, a)
	}
	sort.Strings(names)
	g.p(&o, "import (")
	for _, a := range names {
		if !bytes.Contains(src.Bytes(), []byte(a+".")) {
			continue
		}
		if a == imports[a] {
			g.p(&o, "\t%q", a)
		} else {
			g.p(&o, "\t%s %q", a, imports[a])
		}
	}
	g.p(&o, ")\n")
	o.Write(src.Bytes())
	out, err := format.Source(o.Bytes())
	if err != nil {
		os.WriteFile("/tmp/protogen-bad.go", o.Bytes(), 0o644)
		return err
	}
	return os.WriteFile(path, out, 0o644)
}
