package conformance

import (
	"net/http"
	"strconv"
	"testing"
)

// tooLargeRV is a resourceVersion the server cannot have reached: golden 40
// and 41's 99999999 when that is far enough ahead, else far beyond current.
func tooLargeRV(t testing.TB, current string) string {
	t.Helper()
	if n := rvNum(t, current); n > 50_000_000 {
		return strconv.FormatUint(n*4, 10)
	}
	return "99999999"
}

// TestGetResourceVersion checks every column of the spec's get table:
// resourceVersion unset (Most Recent), "0" (Any), a value (Not older than), and
// one the server has not reached (504 after a wait, golden 41).
func TestGetResourceVersion(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	v1 := e.createCM(t, ns, "obj", nil, map[string]string{"v": "1"})
	v2 := e.updateData(t, ns, v1, map[string]string{"v": "2"})
	path := cmPath(ns, "obj")

	for _, tc := range []struct {
		name, rv string
		// allowed are the states the answer may be at.
		allowed []obj
	}{
		{"unset/most-recent", "", []obj{v2}},
		{"0/any", "0", []obj{v1, v2}},
		{"current/not-older-than", rv(v2), []obj{v2}},
		{"older/not-older-than", rv(v1), []obj{v1, v2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := path
			if tc.rv != "" {
				p += q("resourceVersion", tc.rv)
			}
			got := expect(t, e.get(t, p), http.StatusOK)
			ok := false
			for _, a := range tc.allowed {
				if rv(got) == rv(a) && str(got, "data", "v") == str(a, "data", "v") {
					ok = true
				}
			}
			if !ok || str(got, "metadata", "uid") != str(v1, "metadata", "uid") {
				var want []string
				for _, a := range tc.allowed {
					want = append(want, rv(a)+" (v="+str(a, "data", "v")+")")
				}
				t.Errorf("resourceVersion %q: got rv %s (v=%s), want one of %v", tc.rv, rv(got), str(got, "data", "v"), want)
			}
		})
	}

	t.Run("too-large", func(t *testing.T) {
		t.Parallel()
		large := tooLargeRV(t, rv(v2))
		r := e.get(t, path+q("resourceVersion", large))
		checkGoldenStatus(t, r, "41-get-too-large-rv", "99999999", large)
	})
}
