//go:build kapi_protogen

package main

import (
	"bytes"
	"fmt"
	"reflect"
	"time"

	"github.com/kapi-dev/kapi/api/resource"
)

// Deep copies. Every struct type protogen visits (and the JSON-only kinds in
// deepCopyOnly) gets DeepCopyInto and DeepCopy, the methods Kubernetes users
// expect; caches hand out shared objects and callers copy before mutating.

// shallowSafe types hold no memory that a copy could share mutably.
var shallowSafe = map[reflect.Type]bool{
	reflect.TypeFor[time.Time](): true,
	// A Quantity never mutates the big.Int it may point to, so copies may share it.
	reflect.TypeFor[resource.Quantity](): true,
}

// needsDeep reports whether copying a value of t with = would share memory.
func needsDeep(t reflect.Type) bool {
	if shallowSafe[t] {
		return false
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return true
	case reflect.Struct:
		if hasDeepCopyInto(t) {
			return true
		}
		for i := 0; i < t.NumField(); i++ {
			if needsDeep(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

func hasDeepCopyInto(t reflect.Type) bool {
	_, ok := reflect.PointerTo(t).MethodByName("DeepCopyInto")
	return ok
}

// copyValue writes statements copying expression in (of type t) into out, an
// addressable expression already holding a shallow copy.
func (g *gen) copyValue(w *bytes.Buffer, t reflect.Type, in, out, indent string) {
	if !needsDeep(t) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		g.p(w, "%s%s.DeepCopyInto(&%s)", indent, in, out)
	case reflect.Pointer:
		g.p(w, "%sif %s != nil {", indent, in)
		if t.Elem().Kind() == reflect.Struct && needsDeep(t.Elem()) {
			g.p(w, "%s\t%s = new(%s)\n%s\t%s.DeepCopyInto(%s)", indent, out, g.typeName(t.Elem()), indent, in, out)
		} else {
			g.p(w, "%s\tv := *%s\n%s\t%s = &v", indent, in, indent, out)
		}
		g.p(w, "%s}", indent)
	case reflect.Slice:
		g.p(w, "%sif %s != nil {\n%s\t%s = make(%s, len(%s))", indent, in, indent, out, g.typeName(t), in)
		if needsDeep(t.Elem()) {
			g.p(w, "%s\tfor i := range %s {", indent, in)
			g.copyElem(w, t.Elem(), in+"[i]", out+"[i]", indent+"\t\t")
			g.p(w, "%s\t}", indent)
		} else {
			g.p(w, "%s\tcopy(%s, %s)", indent, out, in)
		}
		g.p(w, "%s}", indent)
	case reflect.Map:
		g.p(w, "%sif %s != nil {\n%s\tcp := make(%s, len(%s))\n%s\tfor k, v := range %s {", indent, in, indent, g.typeName(t), in, indent, in)
		if needsDeep(t.Elem()) {
			g.p(w, "%s\t\tvar c %s", indent, g.typeName(t.Elem()))
			g.copyElem(w, t.Elem(), "v", "c", indent+"\t\t")
			g.p(w, "%s\t\tcp[k] = c", indent)
		} else {
			g.p(w, "%s\t\tcp[k] = v", indent)
		}
		g.p(w, "%s\t}\n%s\t%s = cp\n%s}", indent, indent, out, indent)
	case reflect.Interface:
		g.imports["jsonvalue"] = module + "internal/jsonvalue"
		g.p(w, "%s%s = jsonvalue.DeepCopy(%s)", indent, out, in)
	default:
		panic(fmt.Sprintf("deepcopy: unsupported %v", t))
	}
}

// copyElem copies a slice element or map value, whose destination starts empty.
func (g *gen) copyElem(w *bytes.Buffer, t reflect.Type, in, out, indent string) {
	switch t.Kind() {
	case reflect.Struct:
		g.p(w, "%s%s.DeepCopyInto(&%s)", indent, in, out)
	default:
		g.p(w, "%s%s = %s", indent, out, in)
		g.copyValue(w, t, in, out, indent)
	}
}

func (g *gen) deepCopy(t reflect.Type) {
	w := &g.deep
	name := t.Name()
	g.p(w, "// DeepCopyInto copies m into out; they share no memory afterwards.\nfunc (m *%s) DeepCopyInto(out *%s) {\n\t*out = *m", name, name)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		g.copyValue(w, f.Type, "m."+f.Name, "out."+f.Name, "\t")
	}
	g.p(w, "}\n")
	g.p(w, "// DeepCopy returns a copy of m that shares no memory with it.\nfunc (m *%s) DeepCopy() *%s {\n\tif m == nil {\n\t\treturn nil\n\t}\n\tout := new(%s)\n\tm.DeepCopyInto(out)\n\treturn out\n}\n", name, name, name)
}
