package conformance

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"testing"
)

// listAll lists path (which may carry a query) page by page with limit,
// checking that every page has the first page's resourceVersion, that pages
// do not overlap and come in key order, and that the last page has no
// continue token. Continuations carry the path's query without
// resourceVersion and resourceVersionMatch, as the spec requires. It returns
// the items and the list's resourceVersion.
func listAll(t testing.TB, e *env, path string, limit int) ([]obj, string) {
	t.Helper()
	return listPages(t, e, path, limit, "")
}

// listPages is listAll starting from a continue token (if not empty).
func listPages(t testing.TB, e *env, path string, limit int, token string) ([]obj, string) {
	t.Helper()
	u, err := url.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	query := u.Query()
	query.Set("limit", strconv.Itoa(limit))
	if token != "" {
		query.Set("continue", token)
	}
	first := expect(t, e.get(t, u.Path+"?"+query.Encode()), http.StatusOK)
	query.Del("resourceVersion")
	query.Del("resourceVersionMatch")
	listRV := rv(first)
	all := items(t, first)
	page := first
	for i := 0; str(page, "metadata", "continue") != ""; i++ {
		if i > 10000 {
			t.Fatalf("list %s: too many pages", path)
		}
		if n := len(items(t, page)); n > limit {
			t.Fatalf("list %s: page of %d items with limit %d", path, n, limit)
		}
		query.Set("continue", str(page, "metadata", "continue"))
		page = expect(t, e.get(t, u.Path+"?"+query.Encode()), http.StatusOK)
		if rv(page) != listRV {
			t.Fatalf("list %s: page resourceVersion %s, first page %s", path, rv(page), listRV)
		}
		all = append(all, items(t, page)...)
	}
	if has(page, "metadata", "remainingItemCount") {
		t.Errorf("list %s: last page has remainingItemCount %v", path, page["metadata"])
	}
	keys := make([]string, len(all))
	for i, it := range all {
		keys[i] = str(it, "metadata", "namespace") + "/" + name(it)
	}
	if !sort.StringsAreSorted(keys) {
		t.Errorf("list %s: items not in key order: %v", path, keys)
	}
	for i := 1; i < len(keys); i++ {
		if keys[i] == keys[i-1] {
			t.Errorf("list %s: %s appears twice", path, keys[i])
		}
	}
	return all, listRV
}

// TestListResourceVersion checks every cell of the spec's list table:
// resourceVersion unset, "0" or a value, crossed with resourceVersionMatch
// unset, NotOlderThan or Exact, with and without limit; the continue row; and
// the invalid combinations (golden 36–39) and a version the server has not
// reached (golden 40).
func TestListResourceVersion(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	base := e.baseline(t, ns)
	a := e.createCM(t, ns, "a", nil, map[string]string{"v": "1"})
	b := e.createCM(t, ns, "b", nil, nil)
	c := e.createCM(t, ns, "c", nil, nil)
	pivot := rv(c) // the namespace holds a, b, c at this revision
	d := e.createCM(t, ns, "d", nil, nil)
	a2 := e.updateData(t, ns, a, map[string]string{"v": "2"})

	s0 := withBaseline(versions([]obj{a, b, c}), base)     // at pivot
	s1 := withBaseline(versions([]obj{a, b, c, d}), base)  // after d
	s2 := withBaseline(versions([]obj{a2, b, c, d}), base) // latest
	// anyState is every state the namespace went through, fresh included.
	anyState := []map[string]string{base, withBaseline(versions([]obj{a}), base), withBaseline(versions([]obj{a, b}), base), s0, s1, s2}
	notOlder := []map[string]string{s0, s1, s2}
	latest := []map[string]string{s2}
	exact := []map[string]string{s0}

	type cell struct {
		rv, match string
		limit     bool
		semantic  string
		states    []map[string]string // allowed results
		listRV    string              // the list's resourceVersion must be this, if set
		golden    string              // or the request fails like this capture
		gap       string              // a known server gap
	}
	cells := []cell{
		{"", "", false, "Most Recent", latest, "", "", ""},
		{"", "", true, "Most Recent", latest, "", "", ""},
		{"", "NotOlderThan", false, "Invalid", nil, "", "37-list-rvmatch-without-rv", ""},
		{"", "NotOlderThan", true, "Invalid", nil, "", "37-list-rvmatch-without-rv", ""},
		{"", "Exact", false, "Invalid", nil, "", "37-list-rvmatch-without-rv", ""},
		{"", "Exact", true, "Invalid", nil, "", "37-list-rvmatch-without-rv", ""},
		{"0", "", false, "Any", anyState, "", "", ""},
		{"0", "", true, "Any", anyState, "", "", ""},
		{"0", "NotOlderThan", false, "Any", anyState, "", "", ""},
		{"0", "NotOlderThan", true, "Any", anyState, "", "", ""},
		{"0", "Exact", false, "Invalid", nil, "", "38-list-rvmatch-exact-rv0", ""},
		{"0", "Exact", true, "Invalid", nil, "", "38-list-rvmatch-exact-rv0", ""},
		{pivot, "", false, "Not older than", notOlder, "", "", ""},
		{pivot, "", true, "Exact", exact, pivot, "", ""},
		{pivot, "NotOlderThan", false, "Not older than", notOlder, "", "", ""},
		{pivot, "NotOlderThan", true, "Not older than", notOlder, "", "", ""},
		{pivot, "Exact", false, "Exact", exact, pivot, "", ""},
		{pivot, "Exact", true, "Exact", exact, pivot, "", ""},
	}
	for _, tc := range cells {
		rvName := tc.rv
		switch tc.rv {
		case "":
			rvName = "unset"
		case pivot:
			rvName = "N"
		}
		name := fmt.Sprintf("rv=%s/match=%s/limit=%v", rvName, tc.match, tc.limit)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if tc.gap != "" {
				knownGap(t, tc.gap)
			}
			var kv []string
			if tc.rv != "" {
				kv = append(kv, "resourceVersion", tc.rv)
			}
			if tc.match != "" {
				kv = append(kv, "resourceVersionMatch", tc.match)
			}
			path := cmPath(ns) + q(kv...)
			if tc.golden != "" {
				if tc.limit {
					path += map[bool]string{true: "&", false: "?"}[len(kv) > 0] + "limit=2"
				}
				checkGoldenStatus(t, e.get(t, path), tc.golden)
				return
			}
			var its []obj
			var listRV string
			if tc.limit {
				its, listRV = listAll(t, e, path, 2)
			} else {
				list := expect(t, e.get(t, path), http.StatusOK)
				its, listRV = items(t, list), rv(list)
				if has(list, "metadata", "continue") || has(list, "metadata", "remainingItemCount") {
					t.Errorf("unpaged list has continue/remainingItemCount: %v", list["metadata"])
				}
			}
			got := versions(its)
			ok := false
			for _, s := range tc.states {
				if reflect.DeepEqual(got, s) {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s: got %v, want one of %v", tc.semantic, got, tc.states)
			}
			if tc.listRV != "" && listRV != tc.listRV {
				t.Errorf("%s: list resourceVersion %s, want %s", tc.semantic, listRV, tc.listRV)
			}
			if tc.match == "NotOlderThan" && tc.rv == pivot && rvNum(t, listRV) < rvNum(t, pivot) {
				t.Errorf("%s: list resourceVersion %s is older than %s", tc.semantic, listRV, pivot)
			}
		})
	}

	// The continue row: a token with resourceVersion unset or "0" continues
	// the first page's snapshot; with any other resourceVersion it is refused.
	t.Run("continue", func(t *testing.T) {
		t.Parallel()
		first := expect(t, e.get(t, cmPath(ns)+q("resourceVersion", pivot, "resourceVersionMatch", "Exact", "limit", "2")), http.StatusOK)
		token := str(first, "metadata", "continue")
		if token == "" || rv(first) != pivot {
			t.Fatalf("first page: %v", first["metadata"])
		}
		for _, rvParam := range []string{"", "0"} {
			kv := []string{"limit", "2", "continue", token}
			if rvParam != "" {
				kv = append(kv, "resourceVersion", rvParam)
			}
			page := expect(t, e.get(t, cmPath(ns)+q(kv...)), http.StatusOK)
			rest := withBaseline(nil, s0)
			for _, n := range names(items(t, first)) {
				delete(rest, n)
			}
			if rv(page) != pivot || !reflect.DeepEqual(versions(items(t, page)), rest) || has(page, "metadata", "continue") {
				t.Errorf("continue with resourceVersion %q: %v %v, want the rest of the snapshot at %s: %v", rvParam, page["metadata"], versions(items(t, page)), pivot, rest)
			}
		}
		// golden 36
		checkGoldenStatus(t, e.get(t, cmPath(ns)+q("limit", "2", "resourceVersion", pivot, "continue", token)), "36-list-continue-with-rv")
	})

	t.Run("bad-resourceVersionMatch", func(t *testing.T) {
		t.Parallel()
		checkGoldenStatus(t, e.get(t, cmPath(ns)+q("resourceVersion", "1", "resourceVersionMatch", "Sometimes")), "39-list-bad-rvmatch")
	})

	t.Run("too-large", func(t *testing.T) {
		t.Parallel()
		large := tooLargeRV(t, rv(a2))
		for _, kv := range [][]string{
			{"resourceVersion", large, "resourceVersionMatch", "NotOlderThan"},
			{"resourceVersion", large},
		} {
			checkGoldenStatus(t, e.get(t, cmPath(ns)+q(kv...)), "40-list-too-large-rv", "99999999", large)
		}
	})
}

// TestListExactCompacted lists at a resourceVersion the store has compacted
// away (golden 103: 410 Expired).
func TestListExactCompacted(t *testing.T) {
	t.Parallel()
	e := isolated(t, "forcing compaction of storage")
	ns := e.namespace(t)
	old := e.createCM(t, ns, "old", nil, nil)
	cur := e.updateData(t, ns, old, map[string]string{"v": "2"})
	e.compact(t, rv(cur))
	for _, tc := range []struct{ name, path, gap string }{
		{"match=Exact/limit", "/api/v1/configmaps" + q("resourceVersion", rv(old), "resourceVersionMatch", "Exact", "limit", "1"), ""},
		{"match=Exact", "/api/v1/configmaps" + q("resourceVersion", rv(old), "resourceVersionMatch", "Exact"), ""},
		{"match=/limit", cmPath(ns) + q("resourceVersion", rv(old), "limit", "1"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.gap != "" {
				knownGap(t, tc.gap)
			}
			checkGoldenStatus(t, e.get(t, tc.path), "103-list-exact-compacted-rv")
		})
	}
}
