package conformance

import (
	"net/http"
	"testing"
)

// TestFieldValidation checks what a server does with fields the kind does not
// know, by the fieldValidation parameter: Warn (the default) drops them with
// a Warning per field (golden 87), Strict refuses the request, Ignore drops
// them silently; patches are checked on their result.
func TestFieldValidation(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	body := func(name string) obj {
		o := configMap(name, nil, map[string]string{"k": "v"})
		o["bogus"] = 1
		o["metadata"].(map[string]any)["extra"] = "x"
		return o
	}
	const warnBogus, warnExtra = `299 - "unknown field \"bogus\""`, `299 - "unknown field \"metadata.extra\""`

	t.Run("warn", func(t *testing.T) {
		t.Parallel()
		r := e.post(t, cmPath(ns), body("warn"))
		o := expect(t, r, http.StatusCreated)
		if w := r.Header.Values("Warning"); len(w) != 2 || w[0] != warnBogus || w[1] != warnExtra {
			t.Errorf("Warning headers %q", w)
		}
		if has(o, "bogus") || has(o, "metadata", "extra") {
			t.Errorf("unknown fields kept: %s", compact(o))
		}
		r = e.patch(t, cmPath(ns, "warn"), mergePatch, `{"bogus":2}`)
		expect(t, r, http.StatusOK)
		if w := r.Header.Values("Warning"); len(w) != 1 || w[0] != warnBogus {
			t.Errorf("Warning headers of a patch adding an unknown field: %q", w)
		}
	})
	t.Run("strict", func(t *testing.T) {
		t.Parallel()
		checkStatus(t, e.post(t, cmPath(ns)+q("fieldValidation", "Strict"), body("strict")), http.StatusBadRequest, "BadRequest",
			`strict decoding error: unknown field "bogus", unknown field "metadata.extra"`)
		expect(t, e.get(t, cmPath(ns, "strict")), http.StatusNotFound)
	})
	t.Run("ignore", func(t *testing.T) {
		t.Parallel()
		r := e.post(t, cmPath(ns)+q("fieldValidation", "Ignore"), body("ignore"))
		expect(t, r, http.StatusCreated)
		if w := r.Header.Values("Warning"); len(w) != 0 {
			t.Errorf("Warning headers with Ignore: %q", w)
		}
	})
}
