package patch_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/apiserver/patch"
)

var (
	podType        = reflect.TypeFor[corev1.Pod]()
	deploymentType = reflect.TypeFor[appsv1.Deployment]()
)

// jsonEqual compares two JSON texts as values (numbers by their digits).
func jsonEqual(t *testing.T, got, want []byte) bool {
	t.Helper()
	var g, w any
	dg := json.NewDecoder(bytes.NewReader(got))
	dg.UseNumber()
	if err := dg.Decode(&g); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, got)
	}
	dw := json.NewDecoder(bytes.NewReader(want))
	dw.UseNumber()
	if err := dw.Decode(&w); err != nil {
		t.Fatalf("bad test case JSON: %v\n%s", err, want)
	}
	return reflect.DeepEqual(g, w)
}

func TestStrategic(t *testing.T) {
	tests := []struct {
		name              string
		typ               reflect.Type
		doc, patch, want  string
		wantCode          int
		wantMessageSubstr string
	}{
		// Objects.
		{
			name:  "maps merge recursively, null deletes",
			typ:   podType,
			doc:   `{"metadata":{"name":"p","labels":{"a":"1","b":"2"},"annotations":{"x":"y"}}}`,
			patch: `{"metadata":{"labels":{"b":null,"c":"3"}}}`,
			want:  `{"metadata":{"name":"p","labels":{"a":"1","c":"3"},"annotations":{"x":"y"}}}`,
		},
		{
			name:  "integers survive exactly",
			typ:   podType,
			doc:   `{"spec":{"activeDeadlineSeconds":9007199254740993}}`,
			patch: `{"spec":{"terminationGracePeriodSeconds":9223372036854775807}}`,
			want:  `{"spec":{"activeDeadlineSeconds":9007199254740993,"terminationGracePeriodSeconds":9223372036854775807}}`,
		},
		{
			name:  "null for an absent key is dropped",
			typ:   podType,
			doc:   `{"metadata":{"name":"p"}}`,
			patch: `{"metadata":{"labels":{"gone":null,"a":"1"}}}`,
			want:  `{"metadata":{"name":"p","labels":{"a":"1"}}}`,
		},
		{
			name:  "$patch replace on an object",
			typ:   podType,
			doc:   `{"metadata":{"labels":{"a":"1","b":"2"}}}`,
			patch: `{"metadata":{"labels":{"$patch":"replace","c":"3"}}}`,
			want:  `{"metadata":{"labels":{"c":"3"}}}`,
		},
		{
			name:  "$patch delete on an object leaves it empty",
			typ:   podType,
			doc:   `{"metadata":{"labels":{"a":"1"}},"spec":{"nodeSelector":{"disk":"ssd"}}}`,
			patch: `{"spec":{"nodeSelector":{"$patch":"delete"}}}`,
			want:  `{"metadata":{"labels":{"a":"1"}},"spec":{"nodeSelector":{}}}`,
		},
		{
			name:  "$patch merge is the default",
			typ:   podType,
			doc:   `{"metadata":{"labels":{"a":"1"}}}`,
			patch: `{"metadata":{"labels":{"$patch":"merge","b":"2"}}}`,
			want:  `{"metadata":{"labels":{"a":"1","b":"2"}}}`,
		},
		{
			name:     "unknown $patch value",
			typ:      podType,
			doc:      `{}`,
			patch:    `{"metadata":{"$patch":"frobnicate"}}`,
			wantCode: http.StatusBadRequest,
		},
		// Containers merged by name.
		{
			name:  "containers: change one by name, keep the other",
			typ:   podType,
			doc:   `{"spec":{"containers":[{"name":"a","image":"a:1","args":["x"]},{"name":"b","image":"b:1"}]}}`,
			patch: `{"spec":{"containers":[{"name":"b","image":"b:2"}]}}`,
			want:  `{"spec":{"containers":[{"name":"a","image":"a:1","args":["x"]},{"name":"b","image":"b:2"}]}}`,
		},
		{
			name:  "containers: a new one comes before the document's own",
			typ:   podType,
			doc:   `{"spec":{"containers":[{"name":"a","image":"a:1"}]}}`,
			patch: `{"spec":{"containers":[{"name":"b","image":"b:1"}]}}`,
			want:  `{"spec":{"containers":[{"name":"b","image":"b:1"},{"name":"a","image":"a:1"}]}}`,
		},
		{
			name:  "containers: patch order, server-only items interleaved by document order",
			typ:   podType,
			doc:   `{"spec":{"containers":[{"name":"B","image":"b"},{"name":"C","image":"c"},{"name":"A","image":"a"}]}}`,
			patch: `{"spec":{"containers":[{"name":"A","image":"a2"},{"name":"B","image":"b2"},{"name":"D","image":"d"}]}}`,
			want:  `{"spec":{"containers":[{"name":"C","image":"c"},{"name":"A","image":"a2"},{"name":"B","image":"b2"},{"name":"D","image":"d"}]}}`,
		},
		{
			name:  "containers: $patch delete item",
			typ:   podType,
			doc:   `{"spec":{"containers":[{"name":"a","image":"a"},{"name":"b","image":"b"}]}}`,
			patch: `{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}`,
			want:  `{"spec":{"containers":[{"name":"b","image":"b"}]}}`,
		},
		{
			name:  "containers: $patch replace item replaces the list",
			typ:   podType,
			doc:   `{"spec":{"containers":[{"name":"a","image":"a"},{"name":"b","image":"b"}]}}`,
			patch: `{"spec":{"containers":[{"$patch":"replace"},{"name":"c","image":"c"}]}}`,
			want:  `{"spec":{"containers":[{"name":"c","image":"c"}]}}`,
		},
		{
			name:     "containers: item without merge key",
			typ:      podType,
			doc:      `{"spec":{"containers":[{"name":"a"}]}}`,
			patch:    `{"spec":{"containers":[{"image":"x"}]}}`,
			wantCode: http.StatusBadRequest,
		},
		{
			name:  "containers: $setElementOrder reorders and keeps server-only items",
			typ:   podType,
			doc:   `{"spec":{"containers":[{"name":"b","image":"b"},{"name":"x","image":"x"},{"name":"a","image":"a"}]}}`,
			patch: `{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"},{"name":"c"}],"containers":[{"name":"c","image":"c"}]}}`,
			want:  `{"spec":{"containers":[{"name":"x","image":"x"},{"name":"a","image":"a"},{"name":"b","image":"b"},{"name":"c","image":"c"}]}}`,
		},
		{
			name:  "containers: $setElementOrder alone reorders",
			typ:   podType,
			doc:   `{"spec":{"containers":[{"name":"b","image":"b"},{"name":"a","image":"a"}]}}`,
			patch: `{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}]}}`,
			want:  `{"spec":{"containers":[{"name":"a","image":"a"},{"name":"b","image":"b"}]}}`,
		},
		{
			name:     "containers: $setElementOrder must name the patch items",
			typ:      podType,
			doc:      `{"spec":{"containers":[{"name":"a"}]}}`,
			patch:    `{"spec":{"$setElementOrder/containers":[{"name":"a"}],"containers":[{"name":"c"}]}}`,
			wantCode: http.StatusBadRequest,
		},
		{
			name:     "containers: malformed $setElementOrder",
			typ:      podType,
			doc:      `{"spec":{"containers":[{"name":"a"}]}}`,
			patch:    `{"spec":{"$setElementOrder/containers":{"name":"a"}}}`,
			wantCode: http.StatusBadRequest, wantMessageSubstr: "invalid patch format of setElementOrder list",
		},
		// Nested lists inside containers.
		{
			name:  "ports merged by containerPort",
			typ:   podType,
			doc:   `{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"name":"http"},{"containerPort":443}]}]}}`,
			patch: `{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"name":"web"},{"containerPort":8080}]}]}}`,
			want:  `{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"name":"web"},{"containerPort":8080},{"containerPort":443}]}]}}`,
		},
		{
			name:  "env merged by name, value deleted with null",
			typ:   podType,
			doc:   `{"spec":{"containers":[{"name":"a","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}]}}`,
			patch: `{"spec":{"containers":[{"name":"a","env":[{"name":"A","value":null,"valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},{"name":"B","$patch":"delete"}]}]}}`,
			want:  `{"spec":{"containers":[{"name":"a","env":[{"name":"A","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]}]}}`,
		},
		{
			name:  "env with $setElementOrder (kubectl apply)",
			typ:   podType,
			doc:   `{"spec":{"containers":[{"name":"a","env":[{"name":"ENV2","value":"bar"},{"name":"ENV5","value":"s2"},{"name":"ENV1","value":"foo"},{"name":"ENV3","value":"baz"},{"name":"ENV4","value":"s1"}]}]}}`,
			patch: `{"spec":{"containers":[{"name":"a","$setElementOrder/env":[{"name":"ENV1"},{"name":"ENV2"},{"name":"ENV6"}],"env":[{"name":"ENV3","$patch":"delete"},{"name":"ENV6","value":"new"}]}]}}`,
			want:  `{"spec":{"containers":[{"name":"a","env":[{"name":"ENV5","value":"s2"},{"name":"ENV1","value":"foo"},{"name":"ENV2","value":"bar"},{"name":"ENV6","value":"new"},{"name":"ENV4","value":"s1"}]}]}}`,
		},
		{
			name:  "resources: quantities are opaque, limits map merged",
			typ:   podType,
			doc:   `{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"1","memory":"1Gi"}}}]}}`,
			patch: `{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"500m"}}}]}}`,
			want:  `{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"500m","memory":"1Gi"}}}]}}`,
		},
		// Volumes: merge by name with retainKeys.
		{
			name:  "volumes: $retainKeys drops the old source",
			typ:   podType,
			doc:   `{"spec":{"volumes":[{"name":"v","emptyDir":{}},{"name":"w","configMap":{"name":"c"}}]}}`,
			patch: `{"spec":{"volumes":[{"name":"v","$retainKeys":["name","hostPath"],"hostPath":{"path":"/data"}}]}}`,
			want:  `{"spec":{"volumes":[{"name":"v","hostPath":{"path":"/data"}},{"name":"w","configMap":{"name":"c"}}]}}`,
		},
		{
			name:  "volumes: without $retainKeys sources accumulate",
			typ:   podType,
			doc:   `{"spec":{"volumes":[{"name":"v","emptyDir":{}}]}}`,
			patch: `{"spec":{"volumes":[{"name":"v","hostPath":{"path":"/data"}}]}}`,
			want:  `{"spec":{"volumes":[{"name":"v","emptyDir":{},"hostPath":{"path":"/data"}}]}}`,
		},
		{
			name:     "volumes: patch sets a key $retainKeys does not list",
			typ:      podType,
			doc:      `{"spec":{"volumes":[{"name":"v","emptyDir":{}}]}}`,
			patch:    `{"spec":{"volumes":[{"name":"v","$retainKeys":["name"],"hostPath":{"path":"/data"}}]}}`,
			wantCode: http.StatusUnprocessableEntity, wantMessageSubstr: "patch content doesn't match retainKeys list",
		},
		{
			name:     "malformed $retainKeys",
			typ:      podType,
			doc:      `{}`,
			patch:    `{"spec":{"volumes":[{"name":"v","$retainKeys":"name"}]}}`,
			wantCode: http.StatusBadRequest, wantMessageSubstr: "invalid patch format of retainKeys",
		},
		{
			name:  "deployment strategy: $retainKeys drops rollingUpdate",
			typ:   deploymentType,
			doc:   `{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":1}}}}`,
			patch: `{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`,
			want:  `{"spec":{"strategy":{"type":"Recreate"}}}`,
		},
		// Primitive lists.
		{
			name:  "finalizers: union, new first",
			typ:   podType,
			doc:   `{"metadata":{"finalizers":["a","b"]}}`,
			patch: `{"metadata":{"finalizers":["c","a"]}}`,
			want:  `{"metadata":{"finalizers":["c","a","b"]}}`,
		},
		{
			name:  "finalizers: patch naming existing ones keeps document order",
			typ:   podType,
			doc:   `{"metadata":{"finalizers":["a","b"]}}`,
			patch: `{"metadata":{"finalizers":["b","c"]}}`,
			want:  `{"metadata":{"finalizers":["a","b","c"]}}`,
		},
		{
			name:  "finalizers: $deleteFromPrimitiveList",
			typ:   podType,
			doc:   `{"metadata":{"finalizers":["a","b","c"]}}`,
			patch: `{"metadata":{"$deleteFromPrimitiveList/finalizers":["b","zzz"]}}`,
			want:  `{"metadata":{"finalizers":["a","c"]}}`,
		},
		{
			name:  "finalizers: delete, add and order together",
			typ:   podType,
			doc:   `{"metadata":{"finalizers":["b","e","a","c","d"]}}`,
			patch: `{"metadata":{"$setElementOrder/finalizers":["a","b","f"],"$deleteFromPrimitiveList/finalizers":["c"],"finalizers":["f"]}}`,
			want:  `{"metadata":{"finalizers":["e","a","b","f","d"]}}`,
		},
		{
			name:     "finalizers: malformed $deleteFromPrimitiveList",
			typ:      podType,
			doc:      `{"metadata":{"finalizers":["a"]}}`,
			patch:    `{"metadata":{"$deleteFromPrimitiveList/finalizers":"a"}}`,
			wantCode: http.StatusBadRequest, wantMessageSubstr: "invalid patch format of primitive list",
		},
		{
			name:  "finalizers: null removes the list",
			typ:   podType,
			doc:   `{"metadata":{"finalizers":["a"]}}`,
			patch: `{"metadata":{"finalizers":null}}`,
			want:  `{"metadata":{}}`,
		},
		// Owner references by uid.
		{
			name:  "ownerReferences merged by uid",
			typ:   podType,
			doc:   `{"metadata":{"ownerReferences":[{"uid":"1","name":"rs1","kind":"ReplicaSet","apiVersion":"apps/v1"},{"uid":"2","name":"rs2","kind":"ReplicaSet","apiVersion":"apps/v1"}]}}`,
			patch: `{"metadata":{"ownerReferences":[{"uid":"2","controller":true},{"uid":"1","$patch":"delete"}]}}`,
			want:  `{"metadata":{"ownerReferences":[{"uid":"2","name":"rs2","kind":"ReplicaSet","apiVersion":"apps/v1","controller":true}]}}`,
		},
		// Lists without a strategy are replaced.
		{
			name:  "tolerations have no merge key: replaced",
			typ:   podType,
			doc:   `{"spec":{"tolerations":[{"key":"a","operator":"Exists"},{"key":"b","operator":"Exists"}]}}`,
			patch: `{"spec":{"tolerations":[{"key":"c","operator":"Exists"}]}}`,
			want:  `{"spec":{"tolerations":[{"key":"c","operator":"Exists"}]}}`,
		},
		{
			name:  "container args replaced",
			typ:   podType,
			doc:   `{"spec":{"containers":[{"name":"a","args":["1","2"]}]}}`,
			patch: `{"spec":{"containers":[{"name":"a","args":["3"]}]}}`,
			want:  `{"spec":{"containers":[{"name":"a","args":["3"]}]}}`,
		},
		// Opaque and unknown values.
		{
			name:  "metav1.Time replaced whole",
			typ:   podType,
			doc:   `{"metadata":{"creationTimestamp":"2026-01-01T00:00:00Z"}}`,
			patch: `{"metadata":{"creationTimestamp":"2026-02-02T00:00:00Z"}}`,
			want:  `{"metadata":{"creationTimestamp":"2026-02-02T00:00:00Z"}}`,
		},
		{
			name:  "FieldsV1 replaced whole",
			typ:   podType,
			doc:   `{"metadata":{"managedFields":[{"manager":"m","fieldsV1":{"f:a":{},"f:b":{}}}]}}`,
			patch: `{"metadata":{"managedFields":[{"manager":"m","fieldsV1":{"f:c":{}}}]}}`,
			want:  `{"metadata":{"managedFields":[{"manager":"m","fieldsV1":{"f:c":{}}}]}}`,
		},
		{
			name:  "intstr replaced whole",
			typ:   deploymentType,
			doc:   `{"spec":{"strategy":{"rollingUpdate":{"maxSurge":"25%"}}}}`,
			patch: `{"spec":{"strategy":{"rollingUpdate":{"maxSurge":2}}}}`,
			want:  `{"spec":{"strategy":{"rollingUpdate":{"maxSurge":2}}}}`,
		},
		{
			name:  "unknown fields merge like a merge patch",
			typ:   podType,
			doc:   `{"extra":{"a":[1,2],"b":{"c":1}},"spec":{"unknownList":[1]}}`,
			patch: `{"extra":{"a":[3],"b":{"d":2,"c":null}},"spec":{"unknownList":[2]}}`,
			want:  `{"extra":{"a":[3],"b":{"d":2}},"spec":{"unknownList":[2]}}`,
		},
		{
			name:  "no type: plain merge with object directives",
			typ:   nil,
			doc:   `{"spec":{"size":3,"list":[1,2],"m":{"a":1}}}`,
			patch: `{"spec":{"size":4,"list":[3],"m":{"$patch":"replace","b":2}}}`,
			want:  `{"spec":{"size":4,"list":[3],"m":{"b":2}}}`,
		},
		{
			name:  "type change: object replaces a scalar",
			typ:   nil,
			doc:   `{"a":"x"}`,
			patch: `{"a":{"b":1}}`,
			want:  `{"a":{"b":1}}`,
		},
		{
			name:  "merge list absent from the document",
			typ:   podType,
			doc:   `{"spec":{}}`,
			patch: `{"spec":{"containers":[{"name":"a","image":"a"},{"name":"gone","$patch":"delete"}]}}`,
			want:  `{"spec":{"containers":[{"name":"a","image":"a"}]}}`,
		},
		{
			name: "lists of lists",
			typ: reflect.TypeFor[struct {
				L [][]string `json:"l" patchStrategy:"merge"`
			}](),
			doc:      `{"l":[["a"]]}`,
			patch:    `{"l":[["b"]]}`,
			wantCode: http.StatusUnprocessableEntity, wantMessageSubstr: "lists of lists are not supported",
		},
		// Malformed bodies.
		{name: "patch is an array", typ: podType, doc: `{}`, patch: `[]`, wantCode: http.StatusBadRequest},
		{name: "patch is not JSON", typ: podType, doc: `{}`, patch: `{"a":`, wantCode: http.StatusBadRequest},
		{name: "trailing data", typ: podType, doc: `{}`, patch: `{} {}`, wantCode: http.StatusBadRequest},
		{name: "doc is not JSON", typ: podType, doc: `nope`, patch: `{}`, wantCode: http.StatusInternalServerError},
		{name: "null patch changes nothing", typ: podType, doc: `{"a":1}`, patch: `null`, want: `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := patch.Strategic([]byte(tt.doc), []byte(tt.patch), tt.typ)
			if tt.wantCode != 0 {
				var pe *patch.Error
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v (%T), want *patch.Error %d; result %s", err, err, tt.wantCode, got)
				}
				if pe.Code != tt.wantCode {
					t.Errorf("code = %d (%s), want %d", pe.Code, pe.Message, tt.wantCode)
				}
				if tt.wantMessageSubstr != "" && !bytes.Contains([]byte(pe.Message), []byte(tt.wantMessageSubstr)) {
					t.Errorf("message = %q, want it to contain %q", pe.Message, tt.wantMessageSubstr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Strategic: %v", err)
			}
			if !jsonEqual(t, got, []byte(tt.want)) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestStrategicDoesNotModifyInputs(t *testing.T) {
	doc := []byte(`{"metadata":{"labels":{"a":"1"}}}`)
	p := []byte(`{"metadata":{"labels":{"a":null}}}`)
	docCopy, pCopy := bytes.Clone(doc), bytes.Clone(p)
	if _, err := patch.Strategic(doc, p, podType); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, docCopy) || !bytes.Equal(p, pCopy) {
		t.Error("inputs modified")
	}
}

func TestStrategicKeepsHTMLCharacters(t *testing.T) {
	got, err := patch.Strategic([]byte(`{}`), []byte(`{"metadata":{"annotations":{"a":"<b>&"}}}`), podType)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"metadata":{"annotations":{"a":"<b>&"}}}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// The result decodes into the Go type: the patch produced a valid object.
func TestStrategicResultDecodes(t *testing.T) {
	doc := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"a"}]}}`)
	got, err := patch.Strategic(doc, []byte(`{"spec":{"containers":[{"name":"b","image":"b","ports":[{"containerPort":80}]}]}}`), podType)
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(got, &pod); err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Containers) != 2 || pod.Spec.Containers[0].Name != "b" || pod.Spec.Containers[0].Ports[0].ContainerPort != 80 {
		t.Errorf("containers = %+v", pod.Spec.Containers)
	}
}
