package patch_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/apiserver/patch"
)

func TestJSONPatch(t *testing.T) {
	doc := `{"metadata":{"name":"cm","labels":{"a":"1"}},"data":{"n":"9007199254740993"},"list":[1,2,3],"big":12345678901234567890}`
	tests := []struct {
		name, patch, want string
		wantCode          int
		wantMessage       string
	}{
		{name: "add", patch: `[{"op":"add","path":"/metadata/labels/x","value":"y"}]`,
			want: `{"metadata":{"name":"cm","labels":{"a":"1","x":"y"}},"data":{"n":"9007199254740993"},"list":[1,2,3],"big":12345678901234567890}`},
		{name: "remove and replace", patch: `[{"op":"remove","path":"/metadata/labels/a"},{"op":"replace","path":"/list/1","value":20}]`,
			want: `{"metadata":{"name":"cm","labels":{}},"data":{"n":"9007199254740993"},"list":[1,20,3],"big":12345678901234567890}`},
		{name: "test passes, move, copy", patch: `[{"op":"test","path":"/metadata/name","value":"cm"},{"op":"move","from":"/list","path":"/moved"},{"op":"copy","from":"/big","path":"/big2"}]`,
			want: `{"metadata":{"name":"cm","labels":{"a":"1"}},"data":{"n":"9007199254740993"},"moved":[1,2,3],"big":12345678901234567890,"big2":12345678901234567890}`},
		{name: "append with -", patch: `[{"op":"add","path":"/list/-","value":4}]`,
			want: `{"metadata":{"name":"cm","labels":{"a":"1"}},"data":{"n":"9007199254740993"},"list":[1,2,3,4],"big":12345678901234567890}`},
		{name: "test fails", patch: `[{"op":"test","path":"/metadata/name","value":"nope"}]`,
			wantCode: http.StatusUnprocessableEntity, wantMessage: "the server rejected our request due to an error in our request"},
		{name: "missing path", patch: `[{"op":"replace","path":"/spec/x","value":1}]`,
			wantCode: http.StatusUnprocessableEntity, wantMessage: "the server rejected our request due to an error in our request"},
		{name: "remove missing", patch: `[{"op":"remove","path":"/metadata/labels/zz"}]`,
			wantCode: http.StatusUnprocessableEntity},
		{name: "index out of range", patch: `[{"op":"add","path":"/list/9","value":1}]`,
			wantCode: http.StatusUnprocessableEntity},
		{name: "not a patch", patch: `{"op":"add"}`, wantCode: http.StatusBadRequest},
		{name: "not JSON", patch: `[{`, wantCode: http.StatusBadRequest},
		{name: "unknown op", patch: `[{"op":"frob","path":"/a"}]`, wantCode: http.StatusUnprocessableEntity},
		{name: "too many operations", patch: "[" + strings.Repeat(`{"op":"test","path":"/metadata/name","value":"cm"},`, patch.MaxJSONPatchOperations) + `{"op":"test","path":"/metadata/name","value":"cm"}]`,
			wantCode:    http.StatusRequestEntityTooLarge,
			wantMessage: fmt.Sprintf("Request entity too large: The allowed maximum operations in a JSON patch is 10000, got %d", patch.MaxJSONPatchOperations+1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := patch.JSONPatch([]byte(doc), []byte(tt.patch))
			checkResult(t, got, err, tt.want, tt.wantCode, tt.wantMessage)
		})
	}
}

func TestMergePatch(t *testing.T) {
	doc := `{"metadata":{"name":"cm","labels":{"a":"1","b":"2"}},"data":{"a":"x","b":"y"},"list":[1,2],"big":12345678901234567890}`
	tests := []struct {
		name, patch, want string
		wantCode          int
		wantMessage       string
	}{
		{name: "merge and delete", patch: `{"data":{"b":null,"c":"3"}}`,
			want: `{"metadata":{"name":"cm","labels":{"a":"1","b":"2"}},"data":{"a":"x","c":"3"},"list":[1,2],"big":12345678901234567890}`},
		{name: "lists replaced", patch: `{"list":[3]}`,
			want: `{"metadata":{"name":"cm","labels":{"a":"1","b":"2"}},"data":{"a":"x","b":"y"},"list":[3],"big":12345678901234567890}`},
		{name: "no directives", patch: `{"metadata":{"labels":{"$patch":"replace"}}}`,
			want: `{"metadata":{"name":"cm","labels":{"a":"1","b":"2","$patch":"replace"}},"data":{"a":"x","b":"y"},"list":[1,2],"big":12345678901234567890}`},
		{name: "not JSON", patch: `{"a":`, wantCode: http.StatusBadRequest, wantMessage: "Invalid JSON Patch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := patch.MergePatch([]byte(doc), []byte(tt.patch))
			checkResult(t, got, err, tt.want, tt.wantCode, tt.wantMessage)
		})
	}
}

func checkResult(t *testing.T, got []byte, err error, want string, wantCode int, wantMessage string) {
	t.Helper()
	if wantCode != 0 {
		var pe *patch.Error
		if !errors.As(err, &pe) {
			t.Fatalf("err = %v (%T), want *patch.Error %d; result %s", err, err, wantCode, got)
		}
		if pe.Code != wantCode {
			t.Errorf("code = %d (%s), want %d", pe.Code, pe.Message, wantCode)
		}
		if wantMessage != "" && pe.Message != wantMessage {
			t.Errorf("message = %q, want %q", pe.Message, wantMessage)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, got, []byte(want)) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
