package fieldmanager

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/golden"
	"github.com/kapi-dev/kapi/internal/kjson"
)

func configMapManager(t testing.TB, c *clock) *Manager {
	t.Helper()
	s, err := ForType(reflect.TypeFor[corev1.ConfigMap]())
	if err != nil {
		t.Fatal(err)
	}
	return New(s, "v1", c.now)
}

// goldenEntries returns the managedFields of a golden response without
// times.
func goldenEntries(t *testing.T, r golden.Release, name string) []any {
	return withoutTimes(entries(t, goldenObject(t, r, name)))
}

// TestGoldenApplySequence replays golden 73 to 76: alice applies, bob takes
// a field with a merge patch, alice's apply conflicts, alice forces.
func TestGoldenApplySequence(t *testing.T) {
	for _, r := range golden.Releases {
		t.Run(r.Name, func(t *testing.T) {
			c := newClock()
			m := configMapManager(t, c)

			// 73: create by apply.
			applied := obj(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
  labels:
    owner: alice
data:
  k1: v1
  k2: v2
`)
			o73, err := m.Apply(nil, applied, "alice", "", false)
			if err != nil {
				t.Fatal(err)
			}
			mustEqualJSON(t, "73 managedFields", withoutTimes(entries(t, o73)), goldenEntries(t, r, "73-apply-create"))
			if got := entries(t, o73)[0].(map[string]any)["time"]; got != "2026-11-21T19:01:09Z" {
				t.Errorf("73 time = %v", got)
			}
			// The server then adds uid, resourceVersion, creationTimestamp.
			live := goldenObject(t, r, "73-apply-create")
			live["metadata"].(map[string]any)["managedFields"] = entries(t, o73)

			// 74: bob's merge patch of data.k1 (the patched object keeps the
			// managedFields it was read with).
			patched := deepCopy(live).(map[string]any)
			patched["data"].(map[string]any)["k1"] = "bob"
			o74, err := m.Update(live, patched, "bob", "")
			if err != nil {
				t.Fatal(err)
			}
			mustEqualJSON(t, "74 managedFields", withoutTimes(entries(t, o74)), goldenEntries(t, r, "74-update-takes-field"))

			// 75: alice applies k1 again: conflict with bob.
			again := obj(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
data:
  k1: alice-again
`)
			_, err = m.Apply(o74, again, "alice", "", false)
			var ce *ConflictError
			if !errors.As(err, &ce) {
				t.Fatalf("75: err = %v, want a *ConflictError", err)
			}
			st := ce.Status(metav1.GroupResource{Resource: "configmaps"}, "applied")
			got, err := kjson.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			x, err := r.Load("75-apply-conflict")
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.TrimSpace(string(x.ResponseBody)); string(got) != want {
				t.Errorf("75 status:\n got  %s\n want %s", got, want)
			}
			if st.Code != int32(x.Status) {
				t.Errorf("75 code %d, want %d", st.Code, x.Status)
			}

			// 76: forced: alice takes k1, drops k2 and the label she no longer applies.
			o76, err := m.Apply(o74, again, "alice", "", true)
			if err != nil {
				t.Fatal(err)
			}
			want76 := goldenObject(t, r, "76-apply-force")
			mustEqualJSON(t, "76 managedFields", withoutTimes(entries(t, o76)), withoutTimes(entries(t, want76)))
			mustEqualJSON(t, "76 data", o76["data"], want76["data"])
			if _, ok := o76["metadata"].(map[string]any)["labels"]; ok {
				t.Errorf("76: labels kept: %v", o76["metadata"])
			}
			// Inputs are untouched.
			if o74["data"].(map[string]any)["k1"] != "bob" {
				t.Error("Apply modified live")
			}
		})
	}
}

// TestGoldenCreate checks the managedFields of creates against
// kube-apiserver's: the response body minus managedFields is the object the
// field manager saw.
func TestGoldenCreate(t *testing.T) {
	// What kube-apiserver changed after its field manager ran: the service
	// account admission plugin's token volume, the pod status set by the
	// strategy, the service's allocated cluster IPs.
	unwritePod := func(o map[string]any) {
		spec := o["spec"].(map[string]any)
		var vols []any
		for _, v := range spec["volumes"].([]any) {
			if !strings.HasPrefix(v.(map[string]any)["name"].(string), "kube-api-access-") {
				vols = append(vols, v)
			}
		}
		spec["volumes"] = vols
		for _, list := range []string{"containers", "initContainers"} {
			for _, c := range spec[list].([]any) {
				c := c.(map[string]any)
				var mounts []any
				for _, vm := range c["volumeMounts"].([]any) {
					if vm.(map[string]any)["mountPath"] != "/var/run/secrets/kubernetes.io/serviceaccount" {
						mounts = append(mounts, vm)
					}
				}
				if mounts == nil {
					delete(c, "volumeMounts")
				} else {
					c["volumeMounts"] = mounts
				}
			}
		}
		delete(spec, "preemptionPolicy")
		o["status"] = map[string]any{}
	}
	unwriteService := func(o map[string]any) {
		spec := o["spec"].(map[string]any)
		for _, f := range []string{"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} {
			delete(spec, f)
		}
	}
	cases := []struct {
		golden     string
		typ        reflect.Type
		apiVersion string
		unwrite    func(map[string]any)
	}{
		{"06-create-configmap", reflect.TypeFor[corev1.ConfigMap](), "v1", nil},
		{"11-create-pod-rich", reflect.TypeFor[corev1.Pod](), "v1", unwritePod},
		{"25-create-deployment", reflect.TypeFor[appsv1.Deployment](), "apps/v1", nil},
		{"15-create-node", reflect.TypeFor[corev1.Node](), "v1", nil},
		{"18-create-service", reflect.TypeFor[corev1.Service](), "v1", unwriteService},
		{"87-create-widget", nil, "example.com/v1", nil},
	}
	for _, r := range golden.Releases {
		for _, c := range cases {
			t.Run(r.Name+"/"+c.golden, func(t *testing.T) {
				var s *Schema
				var err error
				switch {
				case c.typ != nil:
					s, err = ForType(c.typ)
				default:
					s, err = ForCRD(crdSchema(t))
				}
				if err != nil {
					t.Fatal(err)
				}
				want := goldenObject(t, r, c.golden)
				o := stripServerFields(want)
				if c.unwrite != nil {
					c.unwrite(o)
				}
				m := New(s, c.apiVersion, newClock().now)
				got, err := m.Update(nil, o, "", "")
				if err != nil {
					t.Fatal(err)
				}
				mustEqualJSON(t, "managedFields", withoutTimes(entries(t, got)), withoutTimes(entries(t, want)))
			})
		}
	}
}

// TestGoldenStatusUpdate replays golden 12: a status write by the same
// (unknown) manager gets an entry of its own for subresource status.
// captureTime is the time of the managedFields entry for subresource of a
// captured object.
func captureTime(t *testing.T, o map[string]any, subresource string) time.Time {
	t.Helper()
	for _, e := range entries(t, o) {
		e, _ := e.(map[string]any)
		if e["subresource"] == subresource {
			at, err := time.Parse(time.RFC3339, e["time"].(string))
			if err != nil {
				t.Fatal(err)
			}
			return at
		}
	}
	t.Fatalf("no managedFields entry for %q", subresource)
	return time.Time{}
}

func TestGoldenStatusUpdate(t *testing.T) {
	for _, r := range golden.Releases {
		t.Run(r.Name, func(t *testing.T) {
			s, err := ForType(reflect.TypeFor[corev1.Pod]())
			if err != nil {
				t.Fatal(err)
			}
			live := goldenObject(t, r, "11-create-pod-rich")
			want := goldenObject(t, r, "12-update-pod-status")
			// The update happens when the capture's did (managedFields are
			// ordered by time).
			c := &clock{t: captureTime(t, want, "status")}
			m := New(s, "v1", c.now).WithResetFields("spec", "metadata.deletionTimestamp", "metadata.ownerReferences")
			o := deepCopy(want).(map[string]any)
			o["metadata"].(map[string]any)["managedFields"] = []any{} // ignored for subresources
			got, err := m.Update(live, o, "", "status")
			if err != nil {
				t.Fatal(err)
			}
			mustEqualJSON(t, "managedFields", withoutTimes(entries(t, got)), withoutTimes(entries(t, want)))
		})
	}
}

func TestUpdate(t *testing.T) {
	c := newClock()
	m := configMapManager(t, c)
	cm := func(data string) map[string]any {
		return obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":"u"},"data":`+data+`}`)
	}
	created, err := m.Update(nil, cm(`{"a":"1","b":"2"}`), "creator", "")
	if err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(time.Minute)

	cases := []struct {
		name    string
		managed any // managedFields sent with the update; nil: those read
		data    string
		manager string
		want    string
	}{
		{"change moves ownership", nil, `{"a":"1","b":"changed"}`, "other",
			`[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:a":{}}},"manager":"creator","operation":"Update","time":"2026-11-21T19:01:09Z"},` +
				`{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:b":{}}},"manager":"other","operation":"Update","time":"2026-11-21T19:02:09Z"}]`},
		{"same manager keeps one entry", nil, `{"a":"1","b":"2","c":"3"}`, "creator",
			`[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:a":{},"f:b":{},"f:c":{}}},"manager":"creator","operation":"Update","time":"2026-11-21T19:02:09Z"}]`},
		{"no change keeps time", nil, `{"a":"1","b":"2"}`, "creator",
			`[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:a":{},"f:b":{}}},"manager":"creator","operation":"Update","time":"2026-11-21T19:01:09Z"}]`},
		{"removal takes from owner", nil, `{"a":"1"}`, "other",
			`[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:a":{}}},"manager":"creator","operation":"Update","time":"2026-11-21T19:01:09Z"}]`},
		{"empty manager is unknown", nil, `{"a":"x","b":"2"}`, "",
			`[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:b":{}}},"manager":"creator","operation":"Update","time":"2026-11-21T19:01:09Z"},` +
				`{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}},"manager":"unknown","operation":"Update","time":"2026-11-21T19:02:09Z"}]`},
		{"reset with one empty entry", []any{map[string]any{}}, `{"a":"1","b":"2"}`, "x", `null`},
		{"reset with empty list", []any{}, `{"a":"1","b":"changed"}`, "x", `null`},
		{"invalid list keeps live", []any{map[string]any{"manager": "m"}}, `{"a":"1","b":"2"}`, "creator",
			`[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:a":{},"f:b":{}}},"manager":"creator","operation":"Update","time":"2026-11-21T19:01:09Z"}]`},
		{"client list replaces", []any{map[string]any{"manager": "mine", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{"f:a": map[string]any{}}}}},
			`{"a":"1","b":"2"}`, "creator",
			`[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}},"manager":"mine","operation":"Apply"}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			live := deepCopy(created).(map[string]any)
			o := deepCopy(live).(map[string]any)
			o["data"] = cm(tc.data)["data"]
			if tc.managed != nil {
				o["metadata"].(map[string]any)["managedFields"] = tc.managed
			}
			got, err := m.Update(live, o, tc.manager, "")
			if err != nil {
				t.Fatal(err)
			}
			mustEqualJSON(t, "managedFields", got["metadata"].(map[string]any)["managedFields"], obj(t, `{"x":`+tc.want+`}`)["x"])
		})
	}

	// After a reset, updates are not tracked; an apply starts tracking again
	// with a before-first-apply owner of the existing fields.
	live := deepCopy(created).(map[string]any)
	o := deepCopy(live).(map[string]any)
	o["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{}}
	reset, err := m.Update(live, o, "x", "")
	if err != nil {
		t.Fatal(err)
	}
	o = deepCopy(reset).(map[string]any)
	o["data"].(map[string]any)["z"] = "1"
	untracked, err := m.Update(reset, o, "x", "")
	if err != nil {
		t.Fatal(err)
	}
	if mf := entries(t, untracked); mf != nil {
		t.Errorf("update of an untracked object tracked: %v", mf)
	}
	applied, err := m.Apply(untracked, obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"n":"1"}}`), "ap", "", false)
	if err != nil {
		t.Fatal(err)
	}
	mustEqualJSON(t, "after first apply", withoutTimes(entries(t, applied)), obj(t, `{"x":[
		{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:n":{}}},"manager":"ap","operation":"Apply"},
		{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:a":{},"f:b":{},"f:z":{}}},"manager":"before-first-apply","operation":"Update"}]}`)["x"])
}

func TestApply(t *testing.T) {
	s, err := ForType(reflect.TypeFor[corev1.Pod]())
	if err != nil {
		t.Fatal(err)
	}
	c := newClock()
	m := New(s, "v1", c.now).WithResetFields("status")
	pod := func(containers string) map[string]any {
		return obj(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":`+containers+`}}`)
	}
	type step struct {
		manager string
		update  bool   // an Update of the whole object rather than an Apply
		obj     string // containers
		force   bool
		wantErr string // conflict message
		want    string // containers after
	}
	cases := []struct {
		name  string
		steps []step
		// fields wanted at the end, by manager
		fields map[string]string
	}{
		{"re-apply without a field removes it", []step{
			{manager: "a", obj: `[{"name":"c","image":"i","args":["x"]}]`, want: `[{"name":"c","image":"i","args":["x"]}]`},
			{manager: "a", obj: `[{"name":"c","image":"i"}]`, want: `[{"name":"c","image":"i"}]`},
		}, map[string]string{"a": `{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}}}}`}},
		{"two appliers share a field", []step{
			{manager: "a", obj: `[{"name":"c","image":"i"}]`, want: `[{"name":"c","image":"i"}]`},
			{manager: "b", obj: `[{"name":"c","image":"i"},{"name":"d","image":"j"}]`, want: `[{"name":"c","image":"i"},{"name":"d","image":"j"}]`},
			{manager: "a", obj: `[]`, want: `[{"name":"c","image":"i"},{"name":"d","image":"j"}]`},
		}, map[string]string{"b": `{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}},"k:{\"name\":\"d\"}":{".":{},"f:image":{},"f:name":{}}}}}`}},
		{"conflict lists every field", []step{
			{manager: "a", obj: `[{"name":"c","image":"i","workingDir":"/w"}]`, want: `[{"name":"c","image":"i","workingDir":"/w"}]`},
			{manager: "b", obj: `[{"name":"c","image":"j","workingDir":"/v"}]`,
				wantErr: "Apply failed with 2 conflicts: conflicts with \"a\":\n- .spec.containers[name=\"c\"].image\n- .spec.containers[name=\"c\"].workingDir"},
		}, map[string]string{"a": `{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{},"f:workingDir":{}}}}}`}},
		{"apply after update conflicts, force takes over", []step{
			{manager: "a", obj: `[{"name":"c","image":"i"}]`, want: `[{"name":"c","image":"i"}]`},
			{manager: "u", update: true, obj: `[{"name":"c","image":"k"}]`, want: `[{"name":"c","image":"k"}]`},
			{manager: "a", obj: `[{"name":"c","image":"i"}]`, wantErr: `Apply failed with 1 conflict: conflict with "u" using v1: .spec.containers[name="c"].image`},
			{manager: "a", obj: `[{"name":"c","image":"i"}]`, force: true, want: `[{"name":"c","image":"i"}]`},
		}, map[string]string{"a": `{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}}}}`}},
		{"field owned by an updater is not removed", []step{
			{manager: "a", obj: `[{"name":"c","image":"i"}]`, want: `[{"name":"c","image":"i"}]`},
			{manager: "u", update: true, obj: `[{"name":"c","image":"i","workingDir":"/w"}]`, want: `[{"name":"c","image":"i","workingDir":"/w"}]`},
			{manager: "a", obj: `[{"name":"c","image":"i","workingDir":"/w"}]`, want: `[{"name":"c","image":"i","workingDir":"/w"}]`},
			{manager: "a", obj: `[{"name":"c","image":"i"}]`, want: `[{"name":"c","image":"i","workingDir":"/w"}]`},
		}, map[string]string{"u": `{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{"f:workingDir":{}}}}}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var live map[string]any
			for i, st := range tc.steps {
				var got map[string]any
				var err error
				if st.update {
					o := deepCopy(live).(map[string]any)
					o["spec"] = pod(st.obj)["spec"]
					got, err = m.Update(live, o, st.manager, "")
				} else {
					got, err = m.Apply(live, pod(st.obj), st.manager, "", st.force)
				}
				if st.wantErr != "" {
					var ce *ConflictError
					if !errors.As(err, &ce) || ce.Error() != st.wantErr {
						t.Fatalf("step %d: err = %v, want %q", i, err, st.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				mustEqualJSON(t, fmt.Sprintf("step %d containers", i), got["spec"].(map[string]any)["containers"], obj(t, `{"x":`+st.want+`}`)["x"])
				live = got
				live["metadata"].(map[string]any)["uid"] = "uid-1"
			}
			for manager, want := range tc.fields {
				found := false
				for _, e := range entries(t, live) {
					e := e.(map[string]any)
					if e["manager"] == manager {
						found = true
						mustEqualJSON(t, manager, e["fieldsV1"], obj(t, want))
					}
				}
				if !found {
					t.Errorf("no entry of %s in %v", manager, entries(t, live))
				}
			}
		})
	}
}

func TestApplyInvalid(t *testing.T) {
	m := configMapManager(t, newClock())
	for _, tc := range []struct {
		doc, want string
		code      int32
		reason    metav1.StatusReason
	}{
		{`{"apiVersion":"v2","kind":"ConfigMap"}`, "invalid object type: /v2, Kind=ConfigMap", 400, metav1.StatusReasonBadRequest},
		{`{"apiVersion":"v1","kind":"Secret"}`, "invalid object type: /v1, Kind=Secret", 400, metav1.StatusReasonBadRequest},
		{`{"apiVersion":"v1"}`, "invalid object type: /v1, Kind=", 400, metav1.StatusReasonBadRequest},
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"managedFields":[]}}`, "metadata.managedFields must be nil", 400, metav1.StatusReasonBadRequest},
		// kube-apiserver answers a configuration the schema rejects with a
		// 500 without reason, naming the configuration.
		{`{"apiVersion":"v1","kind":"ConfigMap","nope":1}`, "failed to create typed patch object (/; /v1, Kind=ConfigMap): .nope: field not declared in schema", 500, ""},
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"n","namespace":"ns"},"data":{"a":5}}`,
			"failed to create typed patch object (ns/n; /v1, Kind=ConfigMap): .data.a: expected string, got &value.valueUnstructured{Value:5}", 500, ""},
	} {
		_, err := m.Apply(nil, obj(t, tc.doc), "a", "", false)
		var ie *InvalidApplyError
		if !errors.As(err, &ie) || ie.Error() != tc.want {
			t.Errorf("%s: err = %v, want %q", tc.doc, err, tc.want)
			continue
		}
		if st := ie.Status(); st.Code != tc.code || st.Reason != tc.reason || st.Message != tc.want || st.Details != nil {
			t.Errorf("%s: status %+v", tc.doc, st)
		}
	}
}

func TestCapUpdaters(t *testing.T) {
	c := newClock()
	m := configMapManager(t, c)
	live, err := m.Update(nil, obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":"u"},"data":{"k0":"v"}}`), "m0", "")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 11; i++ {
		c.t = c.t.Add(time.Second)
		o := deepCopy(live).(map[string]any)
		o["data"].(map[string]any)[fmt.Sprintf("k%d", i)] = "v"
		if live, err = m.Update(live, o, fmt.Sprintf("m%d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	es := entries(t, live)
	if len(es) != 10 {
		t.Fatalf("%d entries, want 10", len(es))
	}
	first := es[0].(map[string]any)
	if first["manager"] != "ancient-changes" {
		t.Fatalf("first entry %v", first)
	}
	mustEqualJSON(t, "ancient-changes", first["fieldsV1"], obj(t, `{"f:data":{".":{},"f:k0":{},"f:k1":{},"f:k2":{}}}`))
	if first["time"] != "2026-11-21T19:01:11Z" {
		t.Errorf("bucket time %v", first["time"])
	}
}

func TestConflictMessages(t *testing.T) {
	s, err := ForType(reflect.TypeFor[corev1.ConfigMap]())
	if err != nil {
		t.Fatal(err)
	}
	m := New(s, "v1", newClock().now)
	live := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":"u","managedFields":[
		{"manager":"x","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}},"subresource":"status"},
		{"manager":"y","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:b":{},"f:c":{}}}}]},
		"data":{"a":"1","b":"2","c":"3"}}`)
	_, err = m.Apply(live, obj(t, `{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"9","b":"9","c":"9"}}`), "z", "", false)
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	want := "Apply failed with 3 conflicts: conflicts with \"x\" with subresource \"status\" using v1:\n- .data.a\nconflicts with \"y\":\n- .data.b\n- .data.c"
	if ce.Error() != want {
		t.Errorf("message\n got  %q\n want %q", ce.Error(), want)
	}
	st := ce.Status(metav1.GroupResource{Resource: "configmaps"}, "c")
	if len(st.Details.Causes) != 3 || st.Details.Causes[0].Message != `conflict with "x" with subresource "status" using v1` || st.Details.Causes[2].Field != ".data.c" {
		t.Errorf("causes %+v", st.Details.Causes)
	}
}
