package apiserver

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A watch that allows bookmarks gets one shortly before its timeout even when
// the bookmark interval is far longer (kube-apiserver's cacher sends it two
// seconds before the deadline), and none when the timeout is shorter than
// that.
func TestWatchBookmarkBeforeTimeout(t *testing.T) {
	srv, err := New(Config{BookmarkInterval: time.Hour, DisableRootCAPublisher: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		_ = srv.Close()
		hs.Close()
	})
	for _, tc := range []struct {
		timeout   string
		bookmarks int
	}{
		{"3", 1},
		{"2", 0},
	} {
		t.Run("timeoutSeconds="+tc.timeout, func(t *testing.T) {
			start := time.Now()
			resp, err := http.Get(hs.URL + "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=1&timeoutSeconds=" + tc.timeout)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var types []string
			var at time.Duration
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				var ev struct {
					Type   string
					Object map[string]any
				}
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
					t.Fatalf("event %q: %v", sc.Text(), err)
				}
				types = append(types, ev.Type)
				at = time.Since(start)
			}
			n := 0
			for _, ty := range types {
				if ty == "BOOKMARK" {
					n++
				}
			}
			if n != tc.bookmarks || len(types) != n {
				t.Fatalf("events %v, want %d BOOKMARK", types, tc.bookmarks)
			}
			if n > 0 && (at < 500*time.Millisecond || at > 2500*time.Millisecond) {
				t.Errorf("the BOOKMARK came %v after the start, want about 1s (2s before the 3s timeout)", at)
			}
		})
	}
}
