package storage

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// listAll pages through prefix with limit, checking the invariants every page
// of one list shares, and returns the items and the list's revision.
func listAll(t testing.TB, m Interface, prefix string, limit int64, pred func(Object) bool) ([]Object, uint64) {
	t.Helper()
	ctx := context.Background()
	var all []Object
	var rev uint64
	token := ""
	for page := 0; ; page++ {
		res, err := m.List(ctx, prefix, ListOptions{Limit: limit, Continue: token, Predicate: pred})
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if page == 0 {
			rev = res.Revision
		} else if res.Revision != rev {
			t.Fatalf("page %d read at %d, first page at %d", page, res.Revision, rev)
		}
		if int64(len(res.Items)) > limit {
			t.Fatalf("page %d has %d items, limit %d", page, len(res.Items), limit)
		}
		all = append(all, res.Items...)
		if pred != nil && res.RemainingItemCount != nil {
			t.Fatal("RemainingItemCount with a predicate")
		}
		if res.Continue == "" {
			if res.RemainingItemCount != nil {
				t.Fatal("RemainingItemCount on the last page")
			}
			return all, rev
		}
		token = res.Continue
	}
}

func TestListPaging(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{})
	for i := range 23 {
		mustCreate(t, m, "a", fmt.Sprintf("cm-%02d", i), nil)
	}
	for i := range 5 {
		mustCreate(t, m, "b", fmt.Sprintf("cm-%02d", i), nil)
	}
	mustCreate(t, m, "aa", "x", nil) // "/core/configmaps/aa/" must not leak into ".../a/"

	res, err := m.List(ctx, "/core/configmaps/a/", ListOptions{})
	if err != nil || len(res.Items) != 23 || res.Continue != "" || res.RemainingItemCount != nil || res.Revision != 29 {
		t.Fatalf("whole list: %d items, %+v, %v", len(res.Items), res, err)
	}
	if !slices.IsSortedFunc(res.Items, func(a, b Object) int { return strings.Compare(a.GetName(), b.GetName()) }) {
		t.Fatal("not sorted")
	}
	res, err = m.List(ctx, "/core/configmaps/", ListOptions{})
	if err != nil || len(res.Items) != 29 {
		t.Fatalf("all namespaces: %d, %v", len(res.Items), err)
	}
	res, err = m.List(ctx, "/core/configmaps/none/", ListOptions{Limit: 3})
	if err != nil || res.Items == nil || len(res.Items) != 0 || res.Continue != "" {
		t.Fatalf("empty list: %+v %v", res, err)
	}

	wantRemaining := []int64{18, 13, 8, 3, -1}
	token := ""
	var got []string
	for page := 0; ; page++ {
		res, err := m.List(ctx, "/core/configmaps/a/", ListOptions{Limit: 5, Continue: token})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, names(res.Items)...)
		if wantRemaining[page] < 0 {
			if res.RemainingItemCount != nil || res.Continue != "" || len(res.Items) != 3 {
				t.Fatalf("last page: %+v", res)
			}
			break
		}
		if res.RemainingItemCount == nil || *res.RemainingItemCount != wantRemaining[page] {
			t.Fatalf("page %d remaining = %v, want %d", page, res.RemainingItemCount, wantRemaining[page])
		}
		token = res.Continue
	}
	if len(got) != 23 || got[0] != "a/cm-00" || got[22] != "a/cm-22" {
		t.Fatalf("pages: %v", got)
	}

	// A limit that exactly fits: no continue.
	res, err = m.List(ctx, "/core/configmaps/b/", ListOptions{Limit: 5})
	if err != nil || len(res.Items) != 5 || res.Continue != "" || res.RemainingItemCount != nil {
		t.Fatalf("exact fit: %+v %v", res, err)
	}
}

// TestPagedListSnapshot pages through a collection while writers create,
// update and delete in it: the pages together must be exactly the list at the
// first page's revision, and each page's RemainingItemCount exact.
func TestPagedListSnapshot(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{})
	const n = 300
	for i := range n {
		mustCreate(t, m, "ns", fmt.Sprintf("cm-%04d", i), nil)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writes atomic.Int64
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("cm-%04d", r.IntN(2*n))
				k := key("ns", name)
				switch r.IntN(3) {
				case 0:
					m.Create(ctx, k, cm("ns", name, nil))
				case 1:
					m.GuaranteedUpdate(ctx, k, false, nil, func(cur Object) (Object, error) {
						c := cm("ns", name, nil, "w", fmt.Sprint(w))
						c.ResourceVersion = cur.GetResourceVersion()
						return c, nil
					})
				case 2:
					m.Delete(ctx, k, nil, nil)
				}
				writes.Add(1)
			}
		})
	}
	var lastWrites int64
	for round := range 5 {
		// Each round starts once the writers have written since the last
		// one, so that the rounds interleave with writes however the
		// goroutines are scheduled.
		for deadline := time.Now().Add(10 * time.Second); writes.Load() == lastWrites; runtime.Gosched() {
			if time.Now().After(deadline) {
				t.Fatal("no concurrent writes happened")
			}
		}
		lastWrites = writes.Load()
		token := ""
		var items []Object
		var rev uint64
		seen := int64(0)
		for page := 0; ; page++ {
			res, err := m.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 7, Continue: token})
			if err != nil {
				t.Fatal(err)
			}
			if page == 0 {
				rev = res.Revision
			} else if res.Revision != rev {
				t.Fatalf("page %d at revision %d, first at %d", page, res.Revision, rev)
			}
			items = append(items, res.Items...)
			seen += int64(len(res.Items))
			if res.Continue == "" {
				break
			}
			if res.RemainingItemCount == nil {
				t.Fatal("no RemainingItemCount")
			}
			want, err := m.List(ctx, "/core/configmaps/ns/", ListOptions{ReadOptions: ReadOptions{Match: Exact, ResourceVersion: rev}})
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(want.Items))-seen != *res.RemainingItemCount {
				t.Fatalf("round %d page %d: remaining %d, want %d", round, page, *res.RemainingItemCount, int64(len(want.Items))-seen)
			}
			token = res.Continue
		}
		want, err := m.List(ctx, "/core/configmaps/ns/", ListOptions{ReadOptions: ReadOptions{Match: Exact, ResourceVersion: rev}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(items, want.Items, sameStored) {
			t.Fatalf("round %d: pages hold %d items, the list at %d holds %d", round, len(items), rev, len(want.Items))
		}
		for _, it := range items {
			if r := rvOf(rev); len(rv(it)) > len(r) || (len(rv(it)) == len(r) && rv(it) > r) {
				t.Fatalf("item at %s in a list at %d", rv(it), rev)
			}
		}
	}
	close(stop)
	wg.Wait()
}

func TestListPredicate(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{})
	for i := range 30 {
		mustCreate(t, m, "ns", fmt.Sprintf("cm-%02d", i), map[string]string{"third": fmt.Sprint(i%3 == 0)})
	}
	match := func(o Object) bool { return o.GetLabels()["third"] == "true" }
	for _, limit := range []int64{1, 3, 4, 10, 0} {
		var items []Object
		if limit == 0 {
			res, err := m.List(ctx, "/core/configmaps/ns/", ListOptions{Predicate: match})
			if err != nil {
				t.Fatal(err)
			}
			items = res.Items
		} else {
			items, _ = listAll(t, m, "/core/configmaps/ns/", limit, match)
		}
		if len(items) != 10 || items[0].GetName() != "cm-00" || items[9].GetName() != "cm-27" {
			t.Fatalf("limit %d: %v", limit, names(items))
		}
	}
	// The scan goes past non-matching objects to fill the page.
	res, err := m.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 2, Predicate: match})
	if err != nil || strings.Join(names(res.Items), ",") != "ns/cm-00,ns/cm-03" || res.Continue == "" {
		t.Fatalf("first page: %v %v", names(res.Items), err)
	}
	// Nothing matches: one empty page, no token.
	res, err = m.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 2, Predicate: func(Object) bool { return false }})
	if err != nil || len(res.Items) != 0 || res.Continue != "" {
		t.Fatalf("no match: %+v %v", res, err)
	}
	// The last match is the last key: no token.
	res, err = m.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 1, Predicate: func(o Object) bool { return o.GetName() == "cm-29" }})
	if err != nil || len(res.Items) != 1 || res.Continue != "" {
		t.Fatalf("last key: %+v %v", res, err)
	}
}

func TestContinueTokens(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{})
	for i := range 6 {
		mustCreate(t, m, "ns", fmt.Sprintf("cm-%d", i), nil)
	}
	first, err := m.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 2})
	if err != nil || first.Continue == "" {
		t.Fatal(err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(first.Continue)
	if err != nil {
		t.Fatalf("token is not base64url: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("token is not JSON: %v", err)
	}
	reencode := func(change func(map[string]any)) string {
		d := map[string]any{}
		for k, v := range doc {
			d[k] = v
		}
		change(d)
		b, _ := json.Marshal(d)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	other := newStore(t, MemoryConfig{})
	for i := range 6 {
		mustCreate(t, other, "ns", fmt.Sprintf("cm-%d", i), nil)
	}
	otherRes, _ := other.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 2})

	// A Memory signs its tokens; etcd's are kube-apiserver's, which any
	// replica on the cluster takes (the cases marked mac are a Memory's).
	tests := []struct {
		name, prefix, token string
		rv                  uint64
		wantMsg             string
		mac                 bool
	}{
		{"garbage", "", "garbage", 0, "continue key is not valid: invalid character '\\u0081' looking for beginning of value", false},
		{"not base64", "", "%%%", 0, "continue key is not valid: illegal base64 data at input byte 0", false},
		{"kube-apiserver token", "", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjEzLCJzdGFydCI6Ii9wYWdlLTFcdTAwMDAifQ", 0, "continue key is not valid: not issued", true},
		{"tampered revision", "", reencode(func(d map[string]any) { d["rv"] = 3 }), 0, "not issued", true},
		{"tampered start", "", reencode(func(d map[string]any) { d["start"] = "cm-0" }), 0, "not issued", true},
		{"tampered count", "", reencode(func(d map[string]any) { d["n"] = 100 }), 0, "not issued", true},
		{"mac removed", "", reencode(func(d map[string]any) { delete(d, "mac") }), 0, "not issued", true},
		{"other prefix", "/core/configmaps/", first.Continue, 0, "not issued", true},
		{"other store", "", otherRes.Continue, 0, "not issued", true},
		{"with resourceVersion", "", first.Continue, 5, "specifying resource version is not allowed when using continue", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.mac {
				skipOnEtcd(t, "etcd's continue tokens are kube-apiserver's, not signed")
			}
			prefix := tt.prefix
			if prefix == "" {
				prefix = "/core/configmaps/ns/"
			}
			_, err := m.List(ctx, prefix, ListOptions{Limit: 2, Continue: tt.token, ReadOptions: ReadOptions{ResourceVersion: tt.rv}})
			se := wantCode(t, err, CodeInvalidContinue)
			if !strings.Contains(se.Message, tt.wantMsg) || !strings.HasPrefix(err.Error(), se.Message) {
				t.Fatalf("message = %q, want %q", se.Message, tt.wantMsg)
			}
			if !errors.Is(err, ErrInvalidContinue) {
				t.Fatal("not ErrInvalidContinue")
			}
		})
	}
	if *backend == "etcd" {
		// kube-apiserver's token: its fields, the start relative to the prefix.
		if doc["v"] != "meta.k8s.io/v1" || doc["start"] != "cm-1\x00" || doc["rv"] != float64(first.Revision+m.(*shifted).base) {
			t.Fatalf("etcd's token %s is not kube-apiserver's", raw)
		}
		for _, bad := range []string{"../secrets/x", "/a/../../b"} {
			_, err := m.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 2, Continue: reencode(func(d map[string]any) { d["start"] = bad })})
			wantCode(t, err, CodeInvalidContinue)
		}
	}
	if res, err := m.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 2, Continue: first.Continue}); err != nil ||
		strings.Join(names(res.Items), ",") != "ns/cm-2,ns/cm-3" {
		t.Fatalf("valid token: %v %v", res, err)
	}
}

func TestExpiredContinue(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{})
	for i := range 6 {
		mustCreate(t, m, "ns", fmt.Sprintf("cm-%d", i), nil)
	}
	first, err := m.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 2}) // at 6: cm-0, cm-1
	if err != nil {
		t.Fatal(err)
	}
	mustDelete(t, m, "ns", "cm-3")                // 7
	mustCreate(t, m, "ns", "cm-2a", nil)          // 8
	mustUpdate(t, m, "ns", "cm-4", nil, "k", "v") // 9
	// Not compacted yet: the old snapshot is served.
	res, err := m.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 2, Continue: first.Continue})
	if err != nil || strings.Join(names(res.Items), ",") != "ns/cm-2,ns/cm-3" || res.Revision != 6 {
		t.Fatalf("consistent continue: %v %v", names(res.Items), err)
	}
	m.Compact(6) // the token's revision itself stays readable
	if _, err := m.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 2, Continue: first.Continue}); err != nil {
		t.Fatal(err)
	}
	m.Compact(7)
	_, err = m.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 2, Continue: first.Continue})
	se := wantCode(t, err, CodeExpired)
	if se.Continue == "" || se.ResourceVersion != 6 || !errors.Is(err, ErrExpired) {
		t.Fatalf("expired error = %#v", se)
	}
	// The fresh token resumes after cm-1 at the latest revision.
	res, err = m.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 2, Continue: se.Continue})
	if err != nil || strings.Join(names(res.Items), ",") != "ns/cm-2,ns/cm-2a" || res.Revision != 9 {
		t.Fatalf("inconsistent continue: %v at %d, %v", names(res.Items), res.Revision, err)
	}
	if res.RemainingItemCount == nil || *res.RemainingItemCount != 2 {
		t.Fatalf("remaining = %v", res.RemainingItemCount)
	}
	res, err = m.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 2, Continue: res.Continue})
	if err != nil || strings.Join(names(res.Items), ",") != "ns/cm-4,ns/cm-5" || res.Revision != 9 || res.Continue != "" {
		t.Fatalf("last page: %v %v", res, err)
	}
}
