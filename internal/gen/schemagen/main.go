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
// Besides the json and protobuf tags, each field carries the merge semantics the
// Kubernetes schema gives it, so that patch and apply code can read them by
// reflection:
//
//	patchStrategy:"merge"     copied verbatim from the Kubernetes tag
//	patchMergeKey:"name"      copied verbatim from the Kubernetes tag
//	listType:"map"            from the field's +listType= marker (atomic, set, map)
//	listMapKey:"port,protocol" from its +listMapKey= markers, in marker order
//	mapType:"atomic"          from its +mapType= marker (atomic, granular)
//	structType:"atomic"       from its +structType= marker, or else the one on the
//	                          declaration of its (element) type
//	optional:"true"           from its +optional (or "false" from +required) marker,
//	                          written only where it overrides what omitempty
//	                          says: Kubernetes' OpenAPI lists a field as required
//	                          unless it is marked +optional or has omitempty, and a
//	                          +required field is required even with omitempty
//	default:"\"TCP\""          from its +default= marker, as JSON (ref(Const) resolved
//	                          to the constant's value)
//
// Markers are also recognised in their +k8s: spelling; duplicates are dropped.
// The tag order is fixed: json, patchStrategy, patchMergeKey, listType,
// listMapKey, mapType, structType, optional, default, protobuf, protobuf_key,
// protobuf_val.
//
// Types with hand-written wire behaviour (Time, MicroTime, Duration, FieldsV1,
// Quantity, IntOrString, RawExtension, the apiextensions JSON unions) are skipped
// here and live in hand-written files next to the output.
//
// Usage (from the repository root; needs the module proxy once):
//
//	go run ./internal/gen/schemagen [-root dir]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
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
	"k8s.io/kube-aggregator":         "v0.37.2",
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
	// all makes every exported type declared in files a root (after roots),
	// so the package has every type k8s.io/api has, kinds and options alike.
	all bool
}

// k8sAPI is the spec of a k8s.io/api package dir ("batch/v1") written to
// api/<group>/<version> with every exported type of its types.go.
func k8sAPI(dir, out, alias string) *pkgSpec {
	return &pkgSpec{module: "k8s.io/api", dir: dir, k8sPath: "k8s.io/api/" + dir, out: out,
		name: filepath.Base(out), alias: alias, all: true}
}

const kapi = "github.com/kapi-dev/kapi/"

var pkgs = []*pkgSpec{
	{
		module: "k8s.io/apimachinery", dir: "pkg/apis/meta/v1",
		k8sPath: "k8s.io/apimachinery/pkg/apis/meta/v1", out: "api/meta/v1", name: "v1", alias: "metav1",
		files: []string{"types.go", "watch.go", "group_version.go"},
		roots: []string{"ObjectMeta", "ListMeta", "Status", "WatchEvent", "Table", "PartialObjectMetadata",
			"PartialObjectMetadataList", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList", "APIResource",
			"LabelSelector", "Condition", "List", "RootPaths", "IncludeObjectPolicy"},
		skip: set("Time", "MicroTime", "Duration", "FieldsV1", "TypeMeta", "GroupResource", "GroupKind",
			// The request option types are hand-written in options.go with their query codecs.
			"ListOptions", "GetOptions", "DeleteOptions", "CreateOptions", "PatchOptions", "ApplyOptions",
			"UpdateOptions", "Preconditions", "DeletionPropagation", "ResourceVersionMatch", "TableOptions"),
	},
	{
		module: "k8s.io/api", dir: "core/v1", k8sPath: "k8s.io/api/core/v1", out: "api/core/v1", name: "v1", alias: "corev1",
		roots: []string{"Namespace", "NamespaceList", "ConfigMap", "ConfigMapList", "Secret", "SecretList",
			"ServiceAccount", "ServiceAccountList", "Pod", "PodList", "Service", "ServiceList", "Node", "NodeList",
			"Event", "EventList", "ObjectReference", "LocalObjectReference", "TypedLocalObjectReference",
			"Endpoints", "EndpointsList"},
		all: true,
	},
	{
		module: "k8s.io/api", dir: "apps/v1", k8sPath: "k8s.io/api/apps/v1", out: "api/apps/v1", name: "v1", alias: "appsv1",
		roots: []string{"Deployment", "DeploymentList"}, all: true,
	},
	{
		module: "k8s.io/api", dir: "discovery/v1", k8sPath: "k8s.io/api/discovery/v1", out: "api/discovery/v1", name: "v1", alias: "discoveryv1",
		roots: []string{"EndpointSlice", "EndpointSliceList"}, all: true,
	},
	{
		module: "k8s.io/api", dir: "coordination/v1", k8sPath: "k8s.io/api/coordination/v1", out: "api/coordination/v1", name: "v1", alias: "coordinationv1",
		roots: []string{"Lease", "LeaseList"}, all: true,
	},
	k8sAPI("admission/v1", "api/admission/v1", "admissionv1"),
	k8sAPI("admissionregistration/v1", "api/admissionregistration/v1", "admissionregistrationv1"),
	k8sAPI("authentication/v1", "api/authentication/v1", "authenticationv1"),
	k8sAPI("authorization/v1", "api/authorization/v1", "authorizationv1"),
	k8sAPI("autoscaling/v1", "api/autoscaling/v1", "autoscalingv1"),
	k8sAPI("autoscaling/v2", "api/autoscaling/v2", "autoscalingv2"),
	k8sAPI("batch/v1", "api/batch/v1", "batchv1"),
	k8sAPI("certificates/v1", "api/certificates/v1", "certificatesv1"),
	k8sAPI("events/v1", "api/events/v1", "eventsv1"),
	k8sAPI("flowcontrol/v1", "api/flowcontrol/v1", "flowcontrolv1"),
	k8sAPI("networking/v1", "api/networking/v1", "networkingv1"),
	k8sAPI("node/v1", "api/node/v1", "nodev1"),
	k8sAPI("policy/v1", "api/policy/v1", "policyv1"),
	k8sAPI("rbac/v1", "api/rbac/v1", "rbacv1"),
	k8sAPI("resource/v1", "api/resource/v1", "resourcev1"),
	k8sAPI("scheduling/v1", "api/scheduling/v1", "schedulingv1"),
	k8sAPI("storage/v1", "api/storage/v1", "storagev1"),
	k8sAPI("storagemigration/v1", "api/storagemigration/v1", "storagemigrationv1"),
	// Only the types batch/v1's Job refers to (its alpha workload fields).
	{
		module: "k8s.io/api", dir: "scheduling/v1alpha3", k8sPath: "k8s.io/api/scheduling/v1alpha3",
		out: "api/scheduling/v1alpha3", name: "v1alpha3", alias: "schedulingv1alpha3",
	},
	{
		module: "k8s.io/kube-aggregator", dir: "pkg/apis/apiregistration/v1", k8sPath: "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1",
		out: "api/apiregistration/v1", name: "v1", alias: "apiregistrationv1", all: true,
	},
	{
		module: "k8s.io/api", dir: "apidiscovery/v2", k8sPath: "k8s.io/api/apidiscovery/v2", out: "api/apidiscovery/v2", name: "v2", alias: "apidiscoveryv2",
		roots: []string{"APIGroupDiscoveryList", "APIGroupDiscovery"},
	},
	{
		module: "k8s.io/api", dir: "apidiscovery/v2beta1", k8sPath: "k8s.io/api/apidiscovery/v2beta1", out: "api/apidiscovery/v2beta1", name: "v2beta1", alias: "apidiscoveryv2beta1",
		roots: []string{"APIGroupDiscoveryList", "APIGroupDiscovery"},
	},
	{
		module: "k8s.io/apiextensions-apiserver", dir: "pkg/apis/apiextensions/v1", k8sPath: "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
		out: "api/apiextensions/v1", name: "v1", alias: "apiextensionsv1",
		files: []string{"types.go", "types_jsonschema.go"},
		roots: []string{"CustomResourceDefinition", "CustomResourceDefinitionList", "ConversionReview"},
		skip:  set("JSON", "JSONSchemaPropsOrArray", "JSONSchemaPropsOrBool", "JSONSchemaPropsOrStringArray"),
	},
}

// External types that map onto kapi types outside the transcribed packages.
var external = map[string][2]string{ // k8s "path.Name" -> kapi import path, qualified name
	"k8s.io/apimachinery/pkg/api/resource.Quantity":      {kapi + "api/resource", "resource.Quantity"},
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString":    {kapi + "api/intstr", "intstr.IntOrString"},
	"k8s.io/apimachinery/pkg/types.UID":                  {kapi + "api/meta/v1", "metav1.UID"},
	"k8s.io/apimachinery/pkg/types.NodeName":             {kapi + "api/meta/v1", "metav1.NodeName"},
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
	doc   *ast.CommentGroup // the declaration's comment: TypeSpec.Doc, or the GenDecl's for a lone spec
	file  *ast.File
	order int
}

type loaded struct {
	spec   *pkgSpec
	fset   *token.FileSet
	types  map[string]*typeDecl
	consts []*ast.ValueSpec
	// constImports are the imports of the file of each constant, for
	// values that name another package's constant.
	constImports map[*ast.ValueSpec]map[string]string
	keep         map[string]bool
}

// root is the directory the api/... output paths are relative to.
var root = flag.String("root", ".", "write the generated files under this directory")

func main() {
	log.SetFlags(0)
	flag.Parse()
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
		l := &loaded{spec: p, fset: token.NewFileSet(), types: map[string]*typeDecl{}, keep: map[string]bool{},
			constImports: map[*ast.ValueSpec]map[string]string{}}
		files := p.files
		if files == nil {
			files = []string{"types.go"}
		}
		order := 0
		for _, f := range files {
			af, err := parser.ParseFile(l.fset, filepath.Join(dirs[p.module], p.dir, f), nil, parser.SkipObjectResolution|parser.ParseComments)
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
						doc := s.Doc
						if doc == nil && len(gd.Specs) == 1 {
							doc = gd.Doc
						}
						l.types[s.Name.Name] = &typeDecl{spec: s, doc: doc, file: af, order: order}
						order++
						if p.all && s.Name.IsExported() && !slicesContains(p.roots, s.Name.Name) && !p.skip[s.Name.Name] {
							p.roots = append(p.roots, s.Name.Name)
						}
					case *ast.ValueSpec:
						// Typed constants, and those typed by a
						// conversion (AddressType(v1.IPv4Protocol)).
						if gd.Tok == token.CONST && (s.Type != nil || len(s.Values) > 0) {
							l.consts = append(l.consts, s)
							l.constImports[s] = fileImports(af)
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
	if err := emitProtoRoots(byPath); err != nil {
		log.Fatalf("protogen roots: %v", err)
	}
}

// emitProtoRoots writes internal/gen/protogen/zz_generated.roots.go: the
// struct types of every package transcribed whole (pkgSpec.all), as values
// protogen walks to write their protobuf and deep-copy methods, and the
// import alias of each package.
func emitProtoRoots(all map[string]*loaded) error {
	var out bytes.Buffer
	out.WriteString("// Code generated by internal/gen/schemagen. DO NOT EDIT.\n\n//go:build kapi_protogen\n\npackage main\n\nimport (\n")
	var specs []*pkgSpec
	for _, p := range pkgs {
		if p.all {
			specs = append(specs, p)
		}
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].alias < specs[j].alias })
	for _, p := range specs {
		fmt.Fprintf(&out, "\t%s %q\n", p.alias, p.kapiPath)
	}
	out.WriteString(")\n\n// schemaAliases are the import aliases of the packages schemagen writes.\nvar schemaAliases = map[string]string{\n")
	byAlias := append([]*pkgSpec(nil), pkgs...)
	sort.Slice(byAlias, func(i, j int) bool { return byAlias[i].alias < byAlias[j].alias })
	for _, p := range byAlias {
		fmt.Fprintf(&out, "\t%q: %q,\n", p.kapiPath, p.alias)
	}
	out.WriteString("}\n\n// schemaRoots are the struct types of the packages schemagen writes whole.\nvar schemaRoots = []any{\n")
	for _, p := range specs {
		l := all[p.k8sPath]
		for _, r := range p.roots {
			td := l.types[r]
			if td == nil || !l.keep[r] {
				continue
			}
			switch td.spec.Type.(type) {
			case *ast.StructType, *ast.SelectorExpr:
				fmt.Fprintf(&out, "\t%s.%s{},\n", p.alias, r)
			}
		}
	}
	out.WriteString("}\n")
	src, err := format.Source(out.Bytes())
	if err != nil {
		return err
	}
	dir := filepath.Join(*root, "internal/gen/protogen")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "zz_generated.roots.go"), src, 0o644)
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
	dir := filepath.Join(*root, p.out)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "zz_generated.types.go"), src, 0o644); err != nil {
		return err
	}
	return emitEnums(l, all, names, dir)
}

// emitEnums writes zz_generated.enums.go: for each kept type declared with
// the +enum marker, an OpenAPIEnum method returning the values of its typed
// constants, sorted, which the Kubernetes OpenAPI lists as the "enum" of
// fields of that type. A package without enums gets no file.
func emitEnums(l *loaded, all map[string]*loaded, names []string, dir string) error {
	p := l.spec
	var body bytes.Buffer
	for _, n := range names {
		td := l.types[n]
		if !hasMarker(td.doc, "enum") {
			continue
		}
		var values []string
		for _, c := range l.consts {
			for i, name := range c.Names {
				if i >= len(c.Values) || !name.IsExported() {
					continue
				}
				v, ok := enumValue(l, all, c, c.Values[i], n)
				if ok && !slicesContains(values, v) {
					values = append(values, v)
				}
			}
		}
		if len(values) == 0 {
			continue
		}
		sort.Strings(values)
		quoted := make([]string, len(values))
		for i, v := range values {
			quoted[i] = strconv.Quote(v)
		}
		fmt.Fprintf(&body, "\n// OpenAPIEnum returns the values the Kubernetes schema enumerates for %s, sorted.\n", n)
		fmt.Fprintf(&body, "func (%s) OpenAPIEnum() []string { return []string{%s} }\n", n, strings.Join(quoted, ", "))
	}
	path := filepath.Join(dir, "zz_generated.enums.go")
	if body.Len() == 0 {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "// Code generated by internal/gen/schemagen from the Kubernetes API schema (%s@%s). DO NOT EDIT.\n\n", p.module, modules[p.module])
	fmt.Fprintf(&out, "package %s\n", p.name)
	out.Write(body.Bytes())
	src, err := format.Source(out.Bytes())
	if err != nil {
		return fmt.Errorf("format enums: %w", err)
	}
	return os.WriteFile(path, src, 0o644)
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
				// Markers are read before the type expression is rewritten: the
				// element type's declaration is looked up in the Kubernetes package.
				m := fieldMarkers(f, len(f.Names) == 0, imports, p, all)
				f.Type = fix(f.Type)
				if f.Tag != nil {
					f.Tag.Value = normaliseTag(f.Tag.Value, len(f.Names) == 0, m)
				}
			}
		}
		return e
	}
	return fix(e)
}

// normaliseTag keeps the json and protobuf tags and adds the merge markers.
// Embedded structs are marked inline explicitly so every JSON library treats them
// as Kubernetes does.
//
// The tags are written in a fixed order: json, patchStrategy, patchMergeKey,
// listType, listMapKey, mapType, structType, then the protobuf tags.
// patchStrategy and patchMergeKey are copied verbatim from the Kubernetes tag;
// the others come from the field's comment markers (see fieldMarkers).
func normaliseTag(raw string, embedded bool, m markers) string {
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
	for _, k := range []string{"patchStrategy", "patchMergeKey"} {
		if v, ok := tag.Lookup(k); ok {
			parts = append(parts, fmt.Sprintf("%s:%q", k, v))
		}
	}
	for _, kv := range [][2]string{
		{"listType", m.listType},
		{"listMapKey", strings.Join(m.listMapKeys, ",")},
		{"mapType", m.mapType},
		{"structType", m.structType},
	} {
		if kv[1] != "" {
			parts = append(parts, fmt.Sprintf("%s:%q", kv[0], kv[1]))
		}
	}
	omitempty := strings.Contains(js, ",omitempty")
	switch {
	case m.optional && !omitempty:
		parts = append(parts, `optional:"true"`)
	case m.required && omitempty && !embedded:
		parts = append(parts, `optional:"false"`)
	}
	if m.def != "" {
		parts = append(parts, fmt.Sprintf("default:%q", m.def))
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

// markers are the merge markers of one field, as the Kubernetes schema states
// them in comments (// +listType=map, // +listMapKey=name, …).
type markers struct {
	listType    string   // atomic, set or map
	listMapKeys []string // in marker order, without duplicates
	mapType     string   // atomic or granular
	structType  string   // atomic or granular
	optional    bool     // +optional
	required    bool     // +required
	def         string   // +default=, as JSON
}

// fieldMarkers reads the +listType, +listMapKey, +mapType and +structType markers
// (also in their +k8s: spelling) of a field. A field without its own +structType
// inherits the one on the declaration of its type, or of its element type for a
// pointer, slice or map field: metav1.LabelSelector and corev1.ObjectReference
// are atomic wherever they are used. An embedded field inherits nothing: its
// fields are inlined into the enclosing struct, whose own marker applies.
func fieldMarkers(f *ast.Field, embedded bool, imports map[string]string, p *pkgSpec, all map[string]*loaded) markers {
	var m markers
	m.optional, m.required = hasMarker(f.Doc, "optional"), hasMarker(f.Doc, "required")
	m.def = defaultMarker(f.Doc, all[p.k8sPath])
	for k, vs := range commentMarkers(f.Doc) {
		switch k {
		case "listType":
			m.listType = vs[len(vs)-1]
		case "listMapKey":
			m.listMapKeys = vs
		case "mapType":
			m.mapType = vs[len(vs)-1]
		case "structType":
			m.structType = vs[len(vs)-1]
		}
	}
	if m.structType == "" && !embedded {
		if td := elementDecl(f.Type, imports, p, all); td != nil {
			if vs := commentMarkers(td.doc)["structType"]; len(vs) > 0 {
				m.structType = vs[len(vs)-1]
			}
		}
	}
	return m
}

// commentMarkers returns the values of the merge markers in a comment, keyed by
// marker name without the optional k8s: prefix, each list in order of first
// appearance without duplicates.
func commentMarkers(doc *ast.CommentGroup) map[string][]string {
	out := map[string][]string{}
	if doc == nil {
		return out
	}
	for _, c := range doc.List {
		line := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
		if !strings.HasPrefix(line, "+") {
			continue
		}
		line = strings.TrimPrefix(strings.TrimPrefix(line, "+"), "k8s:")
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch name {
		case "listType", "listMapKey", "mapType", "structType":
		default:
			continue
		}
		value = strings.TrimSpace(value)
		if uq, err := strconv.Unquote(value); err == nil {
			value = uq
		}
		if value == "" || slicesContains(out[name], value) {
			continue
		}
		out[name] = append(out[name], value)
	}
	return out
}

// hasMarker reports whether a comment holds the bare marker +name (as
// kube-openapi reads +optional and +required: not in their +k8s: spelling).
func hasMarker(doc *ast.CommentGroup, name string) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		line := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
		if line == "+"+name || strings.HasPrefix(line, "+"+name+"=") {
			return true
		}
	}
	return false
}

// defaultMarker returns the value of a +default= marker as JSON: literal
// values as written, ref(Name) as the value of the named constant of l.
func defaultMarker(doc *ast.CommentGroup, l *loaded) string {
	if doc == nil {
		return ""
	}
	for _, c := range doc.List {
		line := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
		v, ok := strings.CutPrefix(line, "+default=")
		if !ok {
			continue
		}
		if name, ok := strings.CutPrefix(v, "ref("); ok && l != nil {
			name = strings.TrimSuffix(name, ")")
			for _, cs := range l.consts {
				for i, n := range cs.Names {
					if lit, ok := cs.Values[i].(*ast.BasicLit); ok && n.Name == name {
						if s, err := strconv.Unquote(lit.Value); err == nil {
							b, _ := json.Marshal(s)
							return string(b)
						}
						return lit.Value
					}
				}
			}
			log.Fatalf("+default=%s: constant not found", v)
		}
		return v
	}
	return ""
}

// enumValue is the string value of a constant of type typ: a literal in a
// declaration of that type, or a conversion typ("x") or typ(pkg.Const) of a
// literal or of a string constant of a transcribed package.
func enumValue(l *loaded, all map[string]*loaded, c *ast.ValueSpec, e ast.Expr, typ string) (string, bool) {
	if c.Type != nil {
		id, ok := c.Type.(*ast.Ident)
		if !ok || id.Name != typ {
			return "", false
		}
	} else {
		call, ok := e.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return "", false
		}
		if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != typ {
			return "", false
		}
		e = call.Args[0]
	}
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(v.Value)
		return s, err == nil
	case *ast.SelectorExpr:
		x, ok := v.X.(*ast.Ident)
		if !ok {
			return "", false
		}
		other := all[l.constImports[c][x.Name]]
		if other == nil {
			return "", false
		}
		for _, oc := range other.consts {
			for i, n := range oc.Names {
				if n.Name == v.Sel.Name && i < len(oc.Values) {
					if lit, ok := oc.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, err := strconv.Unquote(lit.Value)
						return s, err == nil
					}
				}
			}
		}
	}
	return "", false
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// elementDecl finds the declaration of the named type a field holds, looking
// through one pointer, slice or map level, in the transcribed Kubernetes
// packages. Types outside them (hand-written kapi types) have none.
func elementDecl(e ast.Expr, imports map[string]string, p *pkgSpec, all map[string]*loaded) *typeDecl {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
			continue
		case *ast.ArrayType:
			e = t.Elt
			continue
		case *ast.MapType:
			e = t.Value
			continue
		case *ast.Ident:
			if isPredeclared(t.Name) {
				return nil
			}
			if l := all[p.k8sPath]; l != nil {
				return l.types[t.Name]
			}
			return nil
		case *ast.SelectorExpr:
			x, ok := t.X.(*ast.Ident)
			if !ok {
				return nil
			}
			if l := all[imports[x.Name]]; l != nil {
				return l.types[t.Sel.Name]
			}
			return nil
		}
		return nil
	}
}
