package conformance

import (
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

const tableAccept = "application/json;as=Table;g=meta.k8s.io;v=v1"

// tableColumns is the names of a Table's column definitions.
func tableColumns(tb obj) []string {
	defs, _ := tb["columnDefinitions"].([]any)
	var out []string
	for _, d := range defs {
		out = append(out, str(d.(obj), "name"))
	}
	return out
}

func tableRows(t testing.TB, tb obj) []obj {
	t.Helper()
	rows, ok := tb["rows"].([]any)
	if !ok {
		t.Fatalf("Table has no rows array: %s", compact(tb))
	}
	out := make([]obj, len(rows))
	for i, r := range rows {
		out[i] = r.(obj)
	}
	return out
}

// rowObject is a row's embedded object (nil for "object":null).
func rowObject(r obj) obj { o, _ := r["object"].(obj); return o }

var age = regexp.MustCompile(`^([0-9]+[smhdy])+$`)

// TestTable checks Table responses (the spec's "Receiving resources as
// Tables", golden 63-68, 91 and 99): the columns kubectl shows for pods, one
// row per object, a single object as a one-row Table, includeObject, a watch
// whose events are Tables with the columns on the first event only, and 406
// for a conversion the server does not know.
func TestTable(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.ensureDefaultServiceAccount(t, ns)
	expect(t, e.post(t, "/api/v1/namespaces/"+ns+"/pods", pod("p1", "", map[string]string{"app": "t"})), http.StatusCreated)
	cm := e.createCM(t, ns, "cm1", map[string]string{"table": "yes"}, map[string]string{"a": "1", "b": "2"})

	t.Run("list-pods", func(t *testing.T) {
		r := e.get(t, "/api/v1/namespaces/"+ns+"/pods", "Accept", tableAccept)
		tb := expect(t, r, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Content-Type %q", ct)
		}
		if str(tb, "kind") != "Table" || str(tb, "apiVersion") != "meta.k8s.io/v1" || str(tb, "metadata", "resourceVersion") == "" {
			t.Fatalf("not a Table: %s", truncate(r.Body))
		}
		want := []string{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"}
		if got := tableColumns(tb); !reflect.DeepEqual(got, want) {
			t.Errorf("columns %v, want %v (golden 63)", got, want)
		}
		rows := tableRows(t, tb)
		if len(rows) != 1 {
			t.Fatalf("%d rows, want 1", len(rows))
		}
		cells, _ := rows[0]["cells"].([]any)
		if len(cells) != len(want) || cells[0] != "p1" || cells[1] != "0/1" || cells[2] != "Pending" || cells[3] != "0" {
			t.Errorf("cells %v", cells)
		}
		if s, _ := cells[4].(string); !age.MatchString(s) {
			t.Errorf("age cell %v", cells[4])
		}
		if o := rowObject(rows[0]); str(o, "kind") != "PartialObjectMetadata" || name(o) != "p1" || has(o, "spec") {
			t.Errorf("row object %s", compact(o))
		}
	})

	t.Run("single-object", func(t *testing.T) {
		tb := expect(t, e.get(t, cmPath(ns, "cm1"), "Accept", tableAccept+", application/json"), http.StatusOK)
		if str(tb, "kind") != "Table" || str(tb, "metadata", "resourceVersion") != rv(cm) {
			t.Errorf("golden 68: %s", compact(tb))
		}
		if got := tableColumns(tb); !reflect.DeepEqual(got, []string{"Name", "Data", "Age"}) {
			t.Errorf("columns %v", got)
		}
		rows := tableRows(t, tb)
		if len(rows) != 1 {
			t.Fatalf("%d rows", len(rows))
		}
		if cells := rows[0]["cells"].([]any); len(cells) != 3 || cells[0] != "cm1" || compact(cells[1]) != "2" {
			t.Errorf("cells %v", cells)
		}
	})

	t.Run("includeObject", func(t *testing.T) {
		for _, tc := range []struct {
			include, kind string
		}{{"", "PartialObjectMetadata"}, {"Metadata", "PartialObjectMetadata"}, {"Object", "ConfigMap"}, {"None", ""}} {
			p := cmPath(ns) + q("labelSelector", "table=yes")
			if tc.include != "" {
				p += "&includeObject=" + tc.include
			}
			tb := expect(t, e.get(t, p, "Accept", tableAccept), http.StatusOK)
			rows := tableRows(t, tb)
			if len(rows) != 1 {
				t.Fatalf("includeObject=%s: %d rows", tc.include, len(rows))
			}
			o := rowObject(rows[0])
			switch {
			case tc.kind == "" && o != nil:
				t.Errorf("includeObject=None: object %s", compact(o))
			case tc.kind != "" && str(o, "kind") != tc.kind:
				t.Errorf("includeObject=%s: object kind %q, want %s", tc.include, str(o, "kind"), tc.kind)
			case tc.kind == "ConfigMap" && str(o, "data", "a") != "1":
				t.Errorf("includeObject=Object: %s", compact(o))
			}
		}
		r := e.get(t, cmPath(ns)+q("includeObject", "Everything"), "Accept", tableAccept)
		checkStatus(t, r, http.StatusBadRequest, "BadRequest",
			`Unable to convert to Table as requested: includeObject: Invalid value: "Everything": must be 'Metadata', 'Object', 'None', or empty`)
	})

	t.Run("watch", func(t *testing.T) {
		list := expect(t, e.get(t, cmPath(ns)), http.StatusOK)
		w := e.watch(t, cmPath(ns)+q("watch", "1", "resourceVersion", rv(list), "labelSelector", "table=yes"), "Accept", tableAccept)
		c2 := e.createCM(t, ns, "cm2", map[string]string{"table": "yes"}, nil)
		e.updateData(t, ns, c2, map[string]string{"x": "y"})
		for i, typ := range []string{"ADDED", "MODIFIED"} {
			ev := w.next(t, 10*time.Second)
			if ev.Type != typ || str(ev.Object, "kind") != "Table" {
				t.Fatalf("event %d: %s %s, want %s Table", i, ev.Type, compact(ev.Object), typ)
			}
			rows := tableRows(t, ev.Object)
			if len(rows) != 1 || rows[0]["cells"].([]any)[0] != "cm2" {
				t.Errorf("event %d rows %s", i, compact(rows))
			}
			if hasCols := len(tableColumns(ev.Object)) > 0; hasCols != (i == 0) {
				t.Errorf("event %d: columnDefinitions %v (golden 99: on the first event only)", i, ev.Object["columnDefinitions"])
			}
			if str(ev.Object, "metadata", "resourceVersion") != rv(rowObject(rows[0])) {
				t.Errorf("event %d: Table resourceVersion %s, row object's %s", i, str(ev.Object, "metadata", "resourceVersion"), rv(rowObject(rows[0])))
			}
		}
	})

	t.Run("not-acceptable", func(t *testing.T) {
		// A media type the server has, in a form it cannot serve: the
		// handler's 406, listing the media types (kube-apiserver v1.37.2).
		for _, accept := range []string{
			"application/json;as=Tabular;g=meta.k8s.io;v=v1",
			"application/json;as=Table;g=example.com;v=v1",
			"application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1",
			"application/json;as=Tabular;g=meta.k8s.io;v=v1, application/xml",
		} {
			r := e.get(t, cmPath(ns), "Accept", accept)
			checkStatus(t, r, http.StatusNotAcceptable, "NotAcceptable",
				"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf")
		}
		// No media type the server has: the route's 406, listing its
		// representations (a collection's include the watch streams).
		r := e.get(t, cmPath(ns), "Accept", "application/xml")
		checkStatus(t, r, http.StatusNotAcceptable, "NotAcceptable",
			"406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch")
		// A fallback type in the Accept header is served instead.
		r = e.get(t, cmPath(ns), "Accept", "application/json;as=Tabular;g=meta.k8s.io;v=v1, application/json")
		if l := expect(t, r, http.StatusOK); str(l, "kind") != "ConfigMapList" {
			t.Errorf("fallback: kind %q", str(l, "kind"))
		}
	})
}

// TestTableColumnsV137 checks columns kube-apiserver v1.37 prints
// differently from v1.32 (testdata/golden-1.37/kinds): ServiceAccounts show
// Name and Age only, whatever secrets they list.
func TestTableColumnsV137(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	expect(t, e.post(t, "/api/v1/namespaces/"+ns+"/serviceaccounts", obj{"metadata": obj{"name": "with-secret"},
		"secrets": []any{obj{"name": "s"}}}), http.StatusCreated)
	tb := expect(t, e.get(t, "/api/v1/namespaces/"+ns+"/serviceaccounts/with-secret", "Accept", tableAccept), http.StatusOK)
	if got, want := tableColumns(tb), []string{"Name", "Age"}; !reflect.DeepEqual(got, want) {
		t.Errorf("columns %v, want %v", got, want)
	}
	rows := tableRows(t, tb)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	if cells, _ := rows[0]["cells"].([]any); len(cells) != 2 || cells[0] != "with-secret" {
		t.Errorf("cells %v", cells)
	}
}
