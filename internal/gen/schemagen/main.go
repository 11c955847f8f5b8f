// Command schemagen transcribes the Kubernetes API schema into kapi's Go types.
//
// Kubernetes defines its kinds as Go structs whose tags are the wire schema: JSON
// names, omitempty, and protobuf field numbers. kapi must speak exactly that schema,
// so rather than retyping hundreds of structs by hand (and getting some field number
// wrong), schemagen reads the struct declarations of a pinned k8s.io/api release
// from the Go module cache, keeps the transitive closure of the kinds kapi ships,
// and writes them out with kapi's own import paths: field names, types and tags
// only. Documentation, helpers and code are not carried over.
//
// Types with hand-written wire behaviour (Time, MicroTime, Duration, FieldsV1,
// Quantity, IntOrString, RawExtension, the apiextensions JSON unions) are skipped
// here and live in hand-written files next to the output.
//
// Usage (from the repository root; needs the module proxy once):
//
//	go run ./internal/gen/schemagen
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Pinned schema releases.
var modules = map[string]string{
	"k8s.io/api":                     "v0.37.2",
	"k8s.io/apimachinery":            "v0.37.2",
	"k8s.io/apiextensions-apiserver": "v0.37.2",
}

type pkgSpec struct {
	module, dir string // source module and package directory inside it
	k8sPath     string // import path in Kubernetes
	out         string // output directory in kapi
	name        string // Go package name
	alias       string // import alias others use for it
	kapiPath    string
	roots       []string
	files       []string        // source files to read (default: types.go)
	skip        map[string]bool // hand-written in kapi
}

const kapi = "github.com/kapi-dev/kapi/"

var pkgs = []*pkgSpec{
	{
		module: "k8s.io/apimachinery", dir: "pkg/apis/meta/v1",
		k8sPath: "k8s.io/apimachinery/pkg/apis/meta/v1", out: "api/meta/v1", name: "v1", alias: "metav1",
		files: []string{"types.go", "watch.go"},
		roots: []string{"ObjectMeta", "ListMeta", "Status", "WatchEvent", "Table", "PartialObjectMetadata",
			"PartialObjectMetadataList", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList", "APIResource",
			"LabelSelector", "Condition", "List", "RootPaths", "IncludeObjectPolicy"},
		skip: set("Time", "MicroTime", "Duration", "FieldsV1", "TypeMeta",
			// The request option types are hand-written in options.go with their query codecs.
			"ListOptions", "GetOptions", "DeleteOptions", "CreateOptions", "PatchOptions", "ApplyOptions",
			"UpdateOptions", "Preconditions", "DeletionPropagation", "ResourceVersionMatch", "TableOptions"),
	},
	{
		module: "k8s.io/api", dir: "core/v1", k8sPath: "k8s.io/api/core/v1", out: "api/core/v1", name: "v1", alias: "corev1",
		roots: []string{"Namespace", "NamespaceList", "ConfigMap", "ConfigMapList", "Secret", "SecretList",
			"ServiceAccount", "ServiceAccountList", "Pod", "PodList", "Service", "ServiceList", "Node", "NodeList",
			"Event", "EventList", "ObjectReference", "LocalObjectReference", "TypedLocalObjectReference"},
	},
	{
		module: "k8s.io/api", dir: "apps/v1", k8sPath: "k8s.io/api/apps/v1", out: "api/apps/v1", name: "v1", alias: "appsv1",
		roots: []string{"Deployment", "DeploymentList"},
	},
	{
		module: "k8s.io/api", dir: "coordination/v1", k8sPath: "k8s.io/api/coordination/v1", out: "api/coordination/v1", name: "v1", alias: "coordinationv1",
		roots: []string{"Lease", "LeaseList"},
	},
	{
		module: "k8s.io/apiextensions-apiserver", dir: "pkg/apis/apiextensions/v1", k8sPath: "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
		out: "api/apiextensions/v1", name: "v1", alias: "apiextensionsv1",
		files: []string{"types.go", "types_jsonschema.go"},
		roots: []string{"CustomResourceDefinition", "CustomResourceDefinitionList"},
		skip:  set("JSON", "JSONSchemaPropsOrArray", "JSONSchemaPropsOrBool", "JSONSchemaPropsOrStringArray"),
	},
}

// External types that map onto kapi types outside the transcribed packages.
var external = map[string][2]string{ // k8s "path.Name" -> kapi import path, qualified name
	"k8s.io/apimachinery/pkg/api/resource.Quantity":      {kapi + "api/resource", "resource.Quantity"},
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString":    {kapi + "api/intstr", "intstr.IntOrString"},
	"k8s.io/apimachinery/pkg/types.UID":                  {kapi + "api/meta/v1", "metav1.UID"},
	"k8s.io/apimachinery/pkg/runtime.RawExtension":       {kapi + "api/meta/v1", "metav1.RawExtension"},
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":          {kapi + "api/meta/v1", "metav1.Time"},
	"k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime":     {kapi + "api/meta/v1", "metav1.MicroTime"},
	"k8s.io/apimachinery/pkg/apis/meta/v1.Duration":      {kapi + "api/meta/v1", "metav1.Duration"},
	"k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1":      {kapi + "api/meta/v1", "metav1.FieldsV1"},
	"k8s.io/apimachinery/pkg/apis/meta/v1.TypeMeta":      {kapi + "api/meta/v1", "metav1.TypeMeta"},
	"k8s.io/apimachinery/pkg/apis/meta/v1.Preconditions": {kapi + "api/meta/v1", "metav1.Preconditions"},
}

func set(s ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return m
}

type typeDecl struct {
	spec  *ast.TypeSpec
	file  *ast.File
	order int
}

type loaded struct {
	spec   *pkgSpec
	fset   *token.FileSet
	types  map[string]*typeDecl
	consts []*ast.ValueSpec
	keep   map[string]bool
}

func main() {
	log.SetFlags(0)
	dirs := map[string]string{}
	for mod, ver := range modules {
		out, err := exec.Command("go", "mod", "download", "-json", mod+"@"+ver).Output()
		if err != nil {
			log.Fatalf("go mod download %s@%s: %v", mod, ver, err)
		}
		var info struct{ Dir string }
		if err := json.Unmarshal(out, &info); err != nil {
			log.Fatal(err)
		}
		dirs[mod] = info.Dir
	}
	byPath := map[string]*loaded{}
	for _, p := range pkgs {
		p.kapiPath = kapi + p.out
		l := &loaded{spec: p, fset: token.NewFileSet(), types: map[string]*typeDecl{}, keep: map[string]bool{}}
		files := p.files
		if files == nil {
			files = []string{"types.go"}
		}
		order := 0
		for _, f := range files {
			af, err := parser.ParseFile(l.fset, filepath.Join(dirs[p.module], p.dir, f), nil, parser.SkipObjectResolution)
			if err != nil {
				log.Fatal(err)
			}
			for _, d := range af.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, s := range gd.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						l.types[s.Name.Name] = &typeDecl{spec: s, file: af, order: order}
						order++
					case *ast.ValueSpec:
						if gd.Tok == token.CONST && s.Type != nil {
							l.consts = append(l.consts, s)
						}
					}
				}
			}
		}
		byPath[p.k8sPath] = l
	}

	// Transitive closure of the roots.
	type item struct{ path, name string }
	var work []item
	for _, p := range pkgs {
		for _, r := range p.roots {
			work = append(work, item{p.k8sPath, r})
		}
	}
	for len(work) > 0 {
		it := work[len(work)-1]
		work = work[:len(work)-1]
		l := byPath[it.path]
		if l == nil {
			if _, ok := external[it.path+"."+it.name]; ok {
				continue
			}
			log.Fatalf("unmapped external type %s.%s", it.path, it.name)
		}
		if l.keep[it.name] || l.spec.skip[it.name] {
			if l.spec.skip[it.name] {
				if _, ok := external[it.path+"."+it.name]; !ok && l.spec.k8sPath != "k8s.io/apimachinery/pkg/apis/meta/v1" && l.spec.out != "api/apiextensions/v1" {
					log.Fatalf("skipped type %s.%s has no mapping", it.path, it.name)
				}
			}
			continue
		}
		td := l.types[it.name]
		if td == nil {
			log.Fatalf("type %s.%s not found", it.path, it.name)
		}
		l.keep[it.name] = true
		imports := fileImports(td.file)
		walkTypes(td.spec.Type, func(pkg, name string) {
			if pkg == "" {
				work = append(work, item{it.path, name})
			} else {
				work = append(work, item{imports[pkg], name})
			}
		})
	}

	for _, p := range pkgs {
		if err := emit(byPath[p.k8sPath], byPath); err != nil {
			log.Fatalf("%s: %v", p.out, err)
		}
	}
}

// walkTypes calls visit for every named type a type expression refers to.
func walkTypes(e ast.Expr, visit func(pkg, name string)) {
	switch t := e.(type) {
	case *ast.Ident:
		if !isPredeclared(t.Name) {
			visit("", t.Name)
		}
	case *ast.SelectorExpr:
		visit(t.X.(*ast.Ident).Name, t.Sel.Name)
	case *ast.StarExpr:
		walkTypes(t.X, visit)
	case *ast.ArrayType:
		walkTypes(t.Elt, visit)
	case *ast.MapType:
		walkTypes(t.Key, visit)
		walkTypes(t.Value, visit)
	case *ast.StructType:
		for _, f := range t.Fields.List {
			walkTypes(f.Type, visit)
		}
	}
}

func fileImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := filepath.Base(path)
		if im.Name != nil {
			name = im.Name.Name
		}
		m[name] = path
	}
	return m
}

func isPredeclared(s string) bool {
	switch s {
	case "string", "bool", "byte", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16",
		"uint32", "uint64", "float32", "float64", "interface", "any", "error", "rune":
		return true
	}
	return false
}

func emit(l *loaded, all map[string]*loaded) error {
	p := l.spec
	var names []string
	for n := range l.keep {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return l.types[names[i]].order < l.types[names[j]].order })

	usedImports := map[string]string{} // alias -> path
	var body bytes.Buffer
	for _, n := range names {
		td := l.types[n]
		imports := fileImports(td.file)
		typ := rewrite(td.spec.Type, p, imports, all, usedImports)
		stripComments(typ)
		fmt.Fprintf(&body, "\n// %s is the %s %s type of the Kubernetes API.\n", n, groupVersion(p), n)
		fmt.Fprintf(&body, "type %s ", n)
		if err := printer.Fprint(&body, token.NewFileSet(), typ); err != nil {
			return err
		}
		body.WriteString("\n")
	}

	// Typed constants whose type is kept: the enum values users name in code.
	var consts bytes.Buffer
	for _, c := range l.consts {
		id, ok := c.Type.(*ast.Ident)
		if !ok || !l.keep[id.Name] || len(c.Values) != len(c.Names) {
			continue
		}
		for i, n := range c.Names {
			lit, ok := c.Values[i].(*ast.BasicLit)
			if !ok || !n.IsExported() {
				continue
			}
			fmt.Fprintf(&consts, "\t%s %s = %s\n", n.Name, id.Name, lit.Value)
		}
	}

	var out bytes.Buffer
	fmt.Fprintf(&out, "// Code generated by internal/gen/schemagen from the Kubernetes API schema (%s@%s). DO NOT EDIT.\n\n", p.module, modules[p.module])
	fmt.Fprintf(&out, "package %s\n\n", p.name)
	if len(usedImports) > 0 {
		out.WriteString("import (\n")
		var aliases []string
		for a := range usedImports {
			aliases = append(aliases, a)
		}
		sort.Strings(aliases)
		for _, a := range aliases {
			fmt.Fprintf(&out, "\t%s %q\n", a, usedImports[a])
		}
		out.WriteString(")\n")
	}
	out.Write(body.Bytes())
	if consts.Len() > 0 {
		out.WriteString("\n// Enumerated values of the types above, as Kubernetes names them.\nconst (\n")
		out.Write(consts.Bytes())
		out.WriteString(")\n")
	}
	src, err := format.Source(out.Bytes())
	if err != nil {
		os.WriteFile("/tmp/schemagen-bad.go", out.Bytes(), 0o644)
		return fmt.Errorf("format: %w", err)
	}
	return os.WriteFile(filepath.Join(p.out, "zz_generated.types.go"), src, 0o644)
}

func groupVersion(p *pkgSpec) string {
	switch p.out {
	case "api/meta/v1":
		return "meta.k8s.io/v1"
	case "api/core/v1":
		return "core/v1"
	}
	return strings.TrimPrefix(strings.TrimPrefix(p.out, "api/"), "")
}

// rewrite maps package references onto kapi's packages and normalises tags.
func rewrite(e ast.Expr, p *pkgSpec, imports map[string]string, all map[string]*loaded, used map[string]string) ast.Expr {
	var fix func(ast.Expr) ast.Expr
	fix = func(e ast.Expr) ast.Expr {
		switch t := e.(type) {
		case *ast.SelectorExpr:
			x := t.X.(*ast.Ident)
			path := imports[x.Name]
			if m, ok := external[path+"."+t.Sel.Name]; ok {
				if m[0] == p.kapiPath {
					return ast.NewIdent(strings.SplitN(m[1], ".", 2)[1])
				}
				parts := strings.SplitN(m[1], ".", 2)
				used[parts[0]] = m[0]
				return &ast.SelectorExpr{X: ast.NewIdent(parts[0]), Sel: ast.NewIdent(parts[1])}
			}
			l := all[path]
			if l == nil {
				log.Fatalf("unmapped %s.%s", path, t.Sel.Name)
			}
			used[l.spec.alias] = l.spec.kapiPath
			return &ast.SelectorExpr{X: ast.NewIdent(l.spec.alias), Sel: ast.NewIdent(t.Sel.Name)}
		case *ast.StarExpr:
			t.X = fix(t.X)
		case *ast.ArrayType:
			t.Elt = fix(t.Elt)
		case *ast.MapType:
			t.Key = fix(t.Key)
			t.Value = fix(t.Value)
		case *ast.InterfaceType:
			return ast.NewIdent("any")
		case *ast.StructType:
			for _, f := range t.Fields.List {
				f.Type = fix(f.Type)
				if f.Tag != nil {
					f.Tag.Value = normaliseTag(f.Tag.Value, len(f.Names) == 0)
				}
			}
		}
		return e
	}
	return fix(e)
}

// normaliseTag keeps the json and protobuf tags. Embedded structs are marked
// inline explicitly so every JSON library treats them as Kubernetes does.
func normaliseTag(raw string, embedded bool) string {
	s, _ := strconv.Unquote(raw)
	tag := reflect.StructTag(s)
	var parts []string
	js, hasJSON := tag.Lookup("json")
	if embedded && (js == "" || strings.HasPrefix(js, ",")) {
		js = ",inline"
		hasJSON = true
	}
	if hasJSON {
		parts = append(parts, fmt.Sprintf("json:%q", js))
	}
	for _, k := range []string{"protobuf", "protobuf_key", "protobuf_val"} {
		if v, ok := tag.Lookup(k); ok {
			parts = append(parts, fmt.Sprintf("%s:%q", k, v))
		}
	}
	return "`" + strings.Join(parts, " ") + "`"
}

func stripComments(e ast.Expr) {
	ast.Inspect(e, func(n ast.Node) bool {
		if f, ok := n.(*ast.Field); ok {
			f.Doc, f.Comment = nil, nil
		}
		return true
	})
}
