package main

import (
	"bytes"
	"go/ast"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

func comments(lines ...string) *ast.CommentGroup {
	g := &ast.CommentGroup{}
	for _, l := range lines {
		g.List = append(g.List, &ast.Comment{Text: l})
	}
	return g
}

func TestCommentMarkers(t *testing.T) {
	tests := []struct {
		name string
		doc  *ast.CommentGroup
		want map[string][]string
	}{
		{"none", nil, map[string][]string{}},
		{"prose is ignored", comments("// ports lists the ports.", "// +optional"), map[string][]string{}},
		{
			"list map keys in order, k8s duplicates dropped",
			comments("// +listType=map", "// +listMapKey=containerPort", "// +listMapKey=protocol",
				"// +k8s:listType=map", "// +k8s:listMapKey=containerPort", "// +k8s:listMapKey=protocol"),
			map[string][]string{"listType": {"map"}, "listMapKey": {"containerPort", "protocol"}},
		},
		{"map type", comments("//+mapType=atomic"), map[string][]string{"mapType": {"atomic"}}},
		{"struct type", comments("// +structType=granular"), map[string][]string{"structType": {"granular"}}},
		{"quoted value", comments(`// +listType="set"`), map[string][]string{"listType": {"set"}}},
		{"other markers", comments("// +patchStrategy=merge", "// +k8s:optional", "// +featureGate=X"), map[string][]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := commentMarkers(tt.doc); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("commentMarkers = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOptionalAndDefaultMarkers(t *testing.T) {
	l := &loaded{consts: []*ast.ValueSpec{{
		Names:  []*ast.Ident{ast.NewIdent("CachingReadWrite")},
		Values: []ast.Expr{&ast.BasicLit{Value: `"ReadWrite"`}},
	}}}
	for _, tc := range []struct {
		name               string
		doc                *ast.CommentGroup
		optional, required bool
		def                string
	}{
		{"none", comments("// The name."), false, false, ""},
		{"optional", comments("// +optional"), true, false, ""},
		{"required", comments("// +required"), false, true, ""},
		{"k8s spelling is not read", comments("// +k8s:optional", "// +k8s:required"), false, false, ""},
		{"literal default", comments("// +optional", `// +default="TCP"`), true, false, `"TCP"`},
		{"boolean default", comments("// +default=false"), false, false, "false"},
		{"ref default", comments("// +default=ref(CachingReadWrite)"), false, false, `"ReadWrite"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hasMarker(tc.doc, "optional"); got != tc.optional {
				t.Errorf("optional = %v", got)
			}
			if got := hasMarker(tc.doc, "required"); got != tc.required {
				t.Errorf("required = %v", got)
			}
			if got := defaultMarker(tc.doc, l); got != tc.def {
				t.Errorf("default = %q, want %q", got, tc.def)
			}
		})
	}
}

func TestNormaliseTag(t *testing.T) {
	tests := []struct {
		name     string
		raw      string
		embedded bool
		m        markers
		want     string
	}{
		{
			"json and protobuf only",
			"`json:\"name,omitempty\" protobuf:\"bytes,1,opt,name=name\"`", false, markers{},
			"`json:\"name,omitempty\" protobuf:\"bytes,1,opt,name=name\"`",
		},
		{
			"patch strategy copied, markers in fixed order",
			"`json:\"ports,omitempty\" patchStrategy:\"merge\" patchMergeKey:\"containerPort\" protobuf:\"bytes,6,rep,name=ports\"`",
			false, markers{listType: "map", listMapKeys: []string{"containerPort", "protocol"}},
			"`json:\"ports,omitempty\" patchStrategy:\"merge\" patchMergeKey:\"containerPort\" listType:\"map\" listMapKey:\"containerPort,protocol\" protobuf:\"bytes,6,rep,name=ports\"`",
		},
		{
			"retainKeys verbatim",
			"`json:\"volumes,omitempty\" patchStrategy:\"merge,retainKeys\" patchMergeKey:\"name\" protobuf:\"bytes,1,rep,name=volumes\"`",
			false, markers{listType: "map", listMapKeys: []string{"name"}},
			"`json:\"volumes,omitempty\" patchStrategy:\"merge,retainKeys\" patchMergeKey:\"name\" listType:\"map\" listMapKey:\"name\" protobuf:\"bytes,1,rep,name=volumes\"`",
		},
		{
			"map and struct types",
			"`json:\"x\" protobuf_key:\"bytes,1,opt,name=key\"`", false, markers{mapType: "atomic", structType: "atomic"},
			"`json:\"x\" mapType:\"atomic\" structType:\"atomic\" protobuf_key:\"bytes,1,opt,name=key\"`",
		},
		{
			"+optional without omitempty",
			"`json:\"apiGroup\" protobuf:\"bytes,1,opt,name=apiGroup\"`", false, markers{optional: true},
			"`json:\"apiGroup\" optional:\"true\" protobuf:\"bytes,1,opt,name=apiGroup\"`",
		},
		{
			"+optional with omitempty says nothing new",
			"`json:\"name,omitempty\"`", false, markers{optional: true},
			"`json:\"name,omitempty\"`",
		},
		{
			"+required with omitempty, and a default",
			"`json:\"keyType,omitempty\" protobuf:\"bytes,2,rep,name=keyType\"`", false, markers{required: true, def: `"TCP"`},
			"`json:\"keyType,omitempty\" optional:\"false\" default:\"\\\"TCP\\\"\" protobuf:\"bytes,2,rep,name=keyType\"`",
		},
		{
			"embedded becomes inline",
			"`json:\",inline\" protobuf:\"bytes,1,opt,name=typeMeta\"`", true, markers{},
			"`json:\",inline\" protobuf:\"bytes,1,opt,name=typeMeta\"`",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := normaliseTag(tt.raw, tt.embedded, tt.m); got != tt.want {
				t.Errorf("normaliseTag =\n %s\nwant\n %s", got, tt.want)
			}
		})
	}
}

// TestOutputIsCommitted regenerates the types from the pinned schema (from the
// module cache) and compares them with the committed files.
func TestOutputIsCommitted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.Command("go", "run", "./internal/gen/schemagen", "-root", out)
	cmd.Dir = repo
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("schemagen cannot run here (needs the pinned modules): %v\n%s", err, b)
	}
	generated, err := filepath.Glob(filepath.Join(out, "api", "*", "*", "zz_generated.types.go"))
	if err != nil || len(generated) != len(pkgs) {
		t.Fatalf("schemagen wrote %d files, want %d (%v)", len(generated), len(pkgs), err)
	}
	enums, _ := filepath.Glob(filepath.Join(out, "api", "*", "*", "zz_generated.enums.go"))
	if len(enums) == 0 {
		t.Error("schemagen wrote no zz_generated.enums.go")
	}
	committed, _ := filepath.Glob(filepath.Join(repo, "api", "*", "*", "zz_generated.enums.go"))
	if len(committed) != len(enums) {
		t.Errorf("%d zz_generated.enums.go committed, schemagen writes %d", len(committed), len(enums))
	}
	generated = append(generated, filepath.Join(out, "internal", "gen", "protogen", "zz_generated.roots.go"))
	for _, g := range append(generated, enums...) {
		rel, _ := filepath.Rel(out, g)
		want, _ := os.ReadFile(g)
		got, err := os.ReadFile(filepath.Join(repo, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go run ./internal/gen/schemagen", rel)
		}
	}
}
