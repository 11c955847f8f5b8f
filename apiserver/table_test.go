package apiserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/internal/golden"
)

const tableAccept = "application/json;as=Table;g=meta.k8s.io;v=v1"

// tableServer is a server with a namespace "t", a custom resource
// "widgets.example.com" and a few objects, whose clock stands still at the
// creation time plus age.
func tableServer(t *testing.T, age time.Duration) *Server {
	t.Helper()
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	reg := registry.Builtin()
	widgets := &registry.Resource{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true,
		Custom: true,
		PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
			{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
			{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
			{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
		},
		New:  func() registry.Object { return &unstructured.Unstructured{} },
		Copy: func(o registry.Object) registry.Object { return o.(*unstructured.Unstructured).DeepCopy() },
	}
	widgets.WithTypeMeta = func(o registry.Object) registry.Object {
		u := o.(*unstructured.Unstructured).DeepCopy()
		u.SetAPIVersion("example.com/v1")
		u.SetKind("Widget")
		return u
	}
	if err := reg.Add(widgets); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Registry: reg, Now: now, DisableServiceAccountController: true, DisableRootCAPublisher: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	for _, c := range [][2]string{
		{"/api/v1/namespaces", `{"metadata":{"name":"t"}}`},
		{"/api/v1/namespaces/t/serviceaccounts", `{"metadata":{"name":"default"}}`}, // no controller manager makes it
		{"/api/v1/namespaces/t/configmaps", `{"metadata":{"name":"a"},"data":{"k":"v"}}`},
		{"/api/v1/namespaces/t/configmaps", `{"metadata":{"name":"b"},"data":{"k":"v","l":"w"}}`},
		{"/api/v1/namespaces/t/pods", `{"metadata":{"name":"p"},"spec":{"nodeName":"node-a","containers":[{"name":"app","image":"nginx"}]}}`},
		{"/apis/apps/v1/namespaces/t/deployments", `{"metadata":{"name":"web"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]}}}}`},
		{"/apis/example.com/v1/namespaces/t/widgets", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":3},"status":{"conditions":[{"type":"Ready","status":"True"}]}}`},
	} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest("POST", c[0], strings.NewReader(c[1])))
		if rec.Code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", c[0], rec.Code, rec.Body)
		}
	}
	clock.Add(int64(age))
	return srv
}

func tableGet(srv *Server, path, accept string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

type table struct {
	Kind, APIVersion  string
	Metadata          map[string]any
	ColumnDefinitions []struct {
		Name, Type, Format, Description string
		Priority                        int
	}
	Rows []struct {
		Cells      []any
		Conditions []map[string]any
		Object     map[string]any
	}
}

func decodeTable(t *testing.T, b []byte) table {
	t.Helper()
	var tb table
	if err := json.Unmarshal(b, &tb); err != nil {
		t.Fatalf("not a Table: %v\n%s", err, b)
	}
	if tb.Kind != "Table" {
		t.Fatalf("kind %q, want Table:\n%s", tb.Kind, b)
	}
	return tb
}

func columnNames(tb table) []string {
	var out []string
	for _, c := range tb.ColumnDefinitions {
		out = append(out, c.Name)
	}
	return out
}

func TestTableResponses(t *testing.T) {
	srv := tableServer(t, 5*time.Second)

	t.Run("list", func(t *testing.T) {
		rec := tableGet(srv, "/api/v1/namespaces/t/configmaps", tableAccept)
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%d %s %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		tb := decodeTable(t, rec.Body.Bytes())
		if tb.APIVersion != "meta.k8s.io/v1" || tb.Metadata["resourceVersion"] == "" {
			t.Errorf("apiVersion %q metadata %v", tb.APIVersion, tb.Metadata)
		}
		if got := columnNames(tb); !reflect.DeepEqual(got, []string{"Name", "Data", "Age"}) {
			t.Errorf("columns %v", got)
		}
		if len(tb.Rows) != 2 || !reflect.DeepEqual(tb.Rows[1].Cells, []any{"b", float64(2), "5s"}) {
			t.Fatalf("rows %+v", tb.Rows)
		}
		o := tb.Rows[0].Object
		if o["kind"] != "PartialObjectMetadata" || o["apiVersion"] != "meta.k8s.io/v1" || o["metadata"].(map[string]any)["name"] != "a" {
			t.Errorf("row object %v", o)
		}
		if !bytes.HasSuffix(rec.Body.Bytes(), []byte("}\n")) {
			t.Errorf("no trailing newline")
		}
	})

	t.Run("paged list carries continue", func(t *testing.T) {
		tb := decodeTable(t, tableGet(srv, "/api/v1/namespaces/t/configmaps?limit=1", tableAccept).Body.Bytes())
		if tb.Metadata["continue"] == nil || tb.Metadata["remainingItemCount"] != float64(1) || len(tb.Rows) != 1 {
			t.Errorf("metadata %v rows %d", tb.Metadata, len(tb.Rows))
		}
	})

	t.Run("empty list", func(t *testing.T) {
		rec := tableGet(srv, "/api/v1/namespaces/t/secrets", tableAccept)
		if !strings.Contains(rec.Body.String(), `"rows":[]`) {
			t.Errorf("empty list: %s", rec.Body)
		}
	})

	t.Run("get", func(t *testing.T) {
		rec := tableGet(srv, "/api/v1/namespaces/t/configmaps/a", tableAccept+", application/json")
		tb := decodeTable(t, rec.Body.Bytes())
		if len(tb.Rows) != 1 || tb.Rows[0].Cells[0] != "a" || tb.Metadata["resourceVersion"] != tb.Rows[0].Object["metadata"].(map[string]any)["resourceVersion"] {
			t.Errorf("get table %s", rec.Body)
		}
	})

	t.Run("get missing", func(t *testing.T) {
		if rec := tableGet(srv, "/api/v1/namespaces/t/configmaps/nope", tableAccept); rec.Code != 404 {
			t.Errorf("%d %s", rec.Code, rec.Body)
		}
	})

	t.Run("pods and deployments", func(t *testing.T) {
		tb := decodeTable(t, tableGet(srv, "/api/v1/namespaces/t/pods", tableAccept).Body.Bytes())
		if want := []any{"p", "0/1", "Pending", "0", "5s", "<none>", "node-a", "<none>", "<none>"}; !reflect.DeepEqual(tb.Rows[0].Cells, want) {
			t.Errorf("pod cells %v, want %v", tb.Rows[0].Cells, want)
		}
		tb = decodeTable(t, tableGet(srv, "/apis/apps/v1/namespaces/t/deployments", tableAccept).Body.Bytes())
		if want := []any{"web", "0/2", float64(0), float64(0), "5s", "app", "nginx:1.27", "app=web"}; !reflect.DeepEqual(tb.Rows[0].Cells, want) {
			t.Errorf("deployment cells %v, want %v", tb.Rows[0].Cells, want)
		}
	})

	t.Run("custom resource", func(t *testing.T) {
		tb := decodeTable(t, tableGet(srv, "/apis/example.com/v1/namespaces/t/widgets", tableAccept).Body.Bytes())
		if got := columnNames(tb); !reflect.DeepEqual(got, []string{"Name", "Size", "Ready", "Age"}) {
			t.Errorf("columns %v", got)
		}
		if want := []any{"w1", float64(3), "True", "5s"}; len(tb.Rows) != 1 || !reflect.DeepEqual(tb.Rows[0].Cells, want) {
			t.Errorf("rows %+v, want cells %v", tb.Rows, want)
		}
	})

	t.Run("includeObject", func(t *testing.T) {
		rec := tableGet(srv, "/api/v1/namespaces/t/configmaps/a?includeObject=None", tableAccept)
		if !strings.Contains(rec.Body.String(), `"object":null`) {
			t.Errorf("None: %s", rec.Body)
		}
		tb := decodeTable(t, tableGet(srv, "/api/v1/namespaces/t/configmaps?includeObject=Object", tableAccept).Body.Bytes())
		if o := tb.Rows[0].Object; o["kind"] != "ConfigMap" || o["apiVersion"] != "v1" || o["data"] == nil {
			t.Errorf("Object: %v", o)
		}
		tb = decodeTable(t, tableGet(srv, "/api/v1/namespaces/t/configmaps?includeObject=Metadata", tableAccept).Body.Bytes())
		if o := tb.Rows[0].Object; o["kind"] != "PartialObjectMetadata" || o["data"] != nil {
			t.Errorf("Metadata: %v", o)
		}
		rec = tableGet(srv, "/api/v1/namespaces/t/configmaps?includeObject=All", tableAccept)
		var st metav1.Status
		_ = json.Unmarshal(rec.Body.Bytes(), &st)
		if want := `Unable to convert to Table as requested: includeObject: Invalid value: "All": must be 'Metadata', 'Object', 'None', or empty`; rec.Code != 400 || st.Message != want {
			t.Errorf("bad includeObject: %d %q, want 400 %q", rec.Code, st.Message, want)
		}
	})

	t.Run("v1beta1 and yaml", func(t *testing.T) {
		tb := decodeTable(t, tableGet(srv, "/api/v1/namespaces/t/configmaps", "application/json;as=Table;g=meta.k8s.io;v=v1beta1").Body.Bytes())
		if tb.APIVersion != "meta.k8s.io/v1beta1" || tb.Rows[0].Object["apiVersion"] != "meta.k8s.io/v1beta1" {
			t.Errorf("v1beta1: %s %v", tb.APIVersion, tb.Rows[0].Object)
		}
		rec := tableGet(srv, "/api/v1/namespaces/t/configmaps", "application/yaml;as=Table;g=meta.k8s.io;v=v1")
		if rec.Header().Get("Content-Type") != "application/yaml" || !strings.Contains(rec.Body.String(), "kind: Table") {
			t.Errorf("yaml: %s\n%s", rec.Header().Get("Content-Type"), rec.Body)
		}
	})

	t.Run("negotiation", func(t *testing.T) {
		for _, c := range []struct {
			accept string
			code   int
			kind   string
		}{
			{"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", 200, "Table"},
			// The first entry that fits wins, parameters or not (kube-apiserver).
			{"application/json, " + tableAccept, 200, "ConfigMapList"},
			{"application/json", 200, "ConfigMapList"},
			{"*/*", 200, "ConfigMapList"},
			{"application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1", 406, ""},
			{"application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1, application/json", 200, "ConfigMapList"},
			{"application/json;as=Tabular;g=meta.k8s.io;v=v1", 406, ""},
			{"application/json;as=Table;g=example.com;v=v1", 406, ""},
			{"application/json;as=Table;g=meta.k8s.io;v=v2", 406, ""},
			{"application/json;as=Table", 406, ""},
		} {
			rec := tableGet(srv, "/api/v1/namespaces/t/configmaps", c.accept)
			if rec.Code != c.code {
				t.Errorf("Accept %q: %d, want %d: %s", c.accept, rec.Code, c.code, rec.Body)
				continue
			}
			var m map[string]any
			_ = json.Unmarshal(rec.Body.Bytes(), &m)
			if c.code == 406 {
				if msg, _ := m["message"].(string); msg != "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf" {
					t.Errorf("Accept %q: message %q", c.accept, msg)
				}
				continue
			}
			if m["kind"] != c.kind {
				t.Errorf("Accept %q: kind %v, want %s", c.accept, m["kind"], c.kind)
			}
		}
	})
}

// TestTableWatch checks a watch served as Tables against golden 99: each
// event a Table with one row, the column definitions on the first event
// only.
func TestTableWatch(t *testing.T) {
	srv := tableServer(t, 0)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	req, _ := http.NewRequest("GET", hs.URL+"/api/v1/namespaces/t/configmaps?watch=1&timeoutSeconds=1", nil)
	req.Header.Set("Accept", tableAccept)
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var got []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("event %s: %v", sc.Bytes(), err)
		}
		got = append(got, ev)
	}
	for _, r := range golden.Releases {
		x, err := r.Load("99-watch-table")
		if err != nil {
			t.Fatal(err)
		}
		var want []map[string]any
		for _, line := range bytes.Split(bytes.TrimSpace(x.ResponseBody), []byte("\n")) {
			var ev map[string]any
			if err := json.Unmarshal(line, &ev); err != nil {
				t.Fatal(err)
			}
			want = append(want, ev)
		}
		if len(got) != 2 {
			t.Fatalf("%d events, want 2: %v", len(got), got)
		}
		for i := range got {
			w := want[min(i, len(want)-1)]
			if !reflect.DeepEqual(keysOf(got[i]["object"]), keysOf(w["object"])) {
				t.Errorf("event %d: object keys %v, want %v", i, keysOf(got[i]["object"]), keysOf(w["object"]))
			}
			o := got[i]["object"].(map[string]any)
			wo := w["object"].(map[string]any)
			if got[i]["type"] != "ADDED" || o["kind"] != "Table" || len(o["rows"].([]any)) != 1 {
				t.Errorf("event %d: %v", i, got[i])
			}
			if (o["columnDefinitions"] == nil) != (wo["columnDefinitions"] == nil) {
				t.Errorf("event %d: columnDefinitions %v, golden has %v", i, o["columnDefinitions"], wo["columnDefinitions"])
			}
			row := o["rows"].([]any)[0].(map[string]any)
			if rv := row["object"].(map[string]any)["metadata"].(map[string]any)["resourceVersion"]; o["metadata"].(map[string]any)["resourceVersion"] != rv {
				t.Errorf("event %d: Table resourceVersion %v, object's %v", i, o["metadata"], rv)
			}
		}
	}
}

// TestTableWatchBookmark: a bookmark is an empty Table with the bookmark's
// resourceVersion.
func TestTableWatchBookmark(t *testing.T) {
	srv := tableServer(t, 0)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	req, _ := http.NewRequest("GET", hs.URL+"/api/v1/namespaces/t/configmaps?watch=1&timeoutSeconds=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan", nil)
	req.Header.Set("Accept", tableAccept)
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var types []string
	headers := 0
	for sc.Scan() {
		var ev struct {
			Type   string
			Object table
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		if ev.Object.Kind != "Table" {
			t.Errorf("%s event object kind %q", ev.Type, ev.Object.Kind)
		}
		if len(ev.Object.ColumnDefinitions) > 0 {
			headers++
		}
		// As kube-apiserver: a row printed from the bookmark's empty
		// object, whose metadata carries the initial-events-end annotation.
		if ev.Type == "BOOKMARK" {
			var row struct {
				Cells  []any
				Object struct {
					Kind     string
					Metadata map[string]any
				}
			}
			if len(ev.Object.Rows) == 1 {
				b, _ := json.Marshal(ev.Object.Rows[0])
				_ = json.Unmarshal(b, &row)
			}
			ann, _ := row.Object.Metadata["annotations"].(map[string]any)
			if ev.Object.Metadata["resourceVersion"] == "" || row.Object.Kind != "PartialObjectMetadata" || ann["k8s.io/initial-events-end"] != "true" ||
				!reflect.DeepEqual(row.Cells, []any{"", 0.0, "<unknown>"}) || row.Object.Metadata["resourceVersion"] != ev.Object.Metadata["resourceVersion"] {
				t.Errorf("bookmark %s", sc.Bytes())
			}
		}
	}
	if len(types) < 3 || types[0] != "ADDED" || types[2] != "BOOKMARK" || headers != 1 {
		t.Errorf("events %v, %d with headers", types, headers)
	}
}

func keysOf(v any) []string {
	m, _ := v.(map[string]any)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
