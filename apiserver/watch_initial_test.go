package apiserver

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/golden"
)

// The bookmark that ends the initial events of a streaming list is, but for
// its resourceVersion, the one kube-apiserver v1.37.2 sends (golden 96: only
// the k8s.io/initial-events-end annotation; v1.32.2's normalized to it).
func TestInitialEventsEndBookmarkGolden(t *testing.T) {
	golden.Each(t, "96-watch-sendinitialevents", testInitialEventsEndBookmarkGolden)
}

func testInitialEventsEndBookmarkGolden(t *testing.T, _ golden.Release, x *golden.Exchange) {
	var want map[string]any
	for line := range strings.Lines(string(x.ResponseBody)) {
		if strings.HasPrefix(line, `{"type":"BOOKMARK"`) {
			if err := json.Unmarshal([]byte(line), &want); err != nil {
				t.Fatal(err)
			}
		}
	}
	if want == nil {
		t.Fatal("no BOOKMARK in golden 96")
	}
	srv := newTestServer(t)
	if code, body := serve(t, srv, "POST", "/api/v1/namespaces/t/secrets", `{"metadata":{"name":"s1"}}`); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, body)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	resp, err := http.Get(hs.URL + "/api/v1/namespaces/t/secrets?watch=1&timeoutSeconds=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var got map[string]any
		if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if got["type"] != "BOOKMARK" {
			continue
		}
		rvOf := func(ev map[string]any) map[string]any {
			return ev["object"].(map[string]any)["metadata"].(map[string]any)
		}
		rvOf(got)["resourceVersion"] = rvOf(want)["resourceVersion"]
		if !reflect.DeepEqual(got, want) {
			t.Errorf("bookmark\n%s\nwant (golden 96)\n%s", sc.Text(), x.ResponseBody)
		}
		return
	}
	t.Fatal("no BOOKMARK")
}
