package apiserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
)

// Endpoints and EndpointSlices are created as kube-apiserver v1.37.2 creates
// them (testdata/golden-1.37/kinds: its defaults, the Endpoints deprecation
// warning), but for uids, resourceVersions and times.
func TestEndpointsKindsGolden(t *testing.T) {
	srv := newTestServer(t)
	for _, name := range []string{"create-core-endpoints", "full-core-endpoints", "create-discovery.k8s.io-endpointslices", "full-discovery.k8s.io-endpointslices"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile("../testdata/golden-1.37/kinds/" + name + ".txt")
			if err != nil {
				t.Fatal(err)
			}
			reqPart, respPart, ok := bytes.Cut(raw, []byte("\n---\n"))
			if !ok {
				t.Fatal("no --- separator")
			}
			reqHead, reqBody, _ := bytes.Cut(reqPart, []byte("\n\n"))
			method, path, _ := strings.Cut(strings.SplitN(string(reqHead), "\n", 2)[0], " ")
			respHead, respBody, _ := bytes.Cut(respPart, []byte("\n\n"))
			lines := strings.Split(string(respHead), "\n")
			ns := strings.Split(path, "/")[4] // /api(s)/.../namespaces/NS/...
			if strings.HasPrefix(path, "/apis/") {
				ns = strings.Split(path, "/")[5]
			}
			serve(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"`+ns+`"}}`)

			rec := httptest.NewRecorder()
			req := httptest.NewRequest(method, path, bytes.NewReader(reqBody))
			req.Header.Set("Content-Type", "application/json")
			srv.ServeHTTP(rec, req)
			if rec.Code != http.StatusCreated {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			for _, l := range lines[1:] {
				if k, v, _ := strings.Cut(l, ": "); k == "Warning" && rec.Header().Get("Warning") != v {
					t.Errorf("Warning %q, want %q", rec.Header().Get("Warning"), v)
				}
			}
			var got, want map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(bytes.TrimSpace(respBody), &want); err != nil {
				t.Fatal(err)
			}
			for _, o := range []map[string]any{got, want} {
				meta := o["metadata"].(map[string]any)
				delete(meta, "uid")
				delete(meta, "resourceVersion")
				delete(meta, "creationTimestamp")
				for _, e := range meta["managedFields"].([]any) {
					delete(e.(map[string]any), "time")
					e.(map[string]any)["manager"] = "" // the capture's client named itself "unknown"
				}
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("created\n got  %s\n want %s", g, w)
			}
		})
	}
}
