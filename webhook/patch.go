package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Why a three-way patch. A mutating webhook decodes the object into a Go type,
// changes it and encodes it again; diffing the received bytes against that
// encoding (what most webhook libraries do) also "changes" everything the
// round trip through the Go type changed by itself: fields the type does not
// know are removed (a newer API version, another controller's annotation
// schema), and fields the encoding writes that the object did not have are
// added ("creationTimestamp": null, "status": {}). CreatePatch instead takes
// the handler's change as the difference between the encoding before and after
// the handler ran, replays it onto the received document, and diffs the
// received document against that result: the patch holds only what the
// handler did, and applies cleanly to the object kube-apiserver holds.

// CreatePatch returns the RFC 6902 JSON patch that makes original (the object
// as received) take the change from before to after (the handler's object
// encoded before and after it ran). Values of original that the change does
// not touch are kept, known to the Go type or not. The result is null when
// there is nothing to change. original, before and after must be JSON.
//
// Lists are matched by position when the handler kept their length, so an
// item changed in place keeps the fields the Go type dropped; when the length
// changed, items the handler kept unchanged are matched by value and keep
// them too, and new or changed items are taken as the handler encoded them.
// The patch is minimal per value: a changed field is one replace, an item
// added to or removed from a list one add or remove, not a rewrite of the list.
func CreatePatch(original, before, after []byte) ([]byte, error) {
	orig, err := parseJSON(original, "original")
	if err != nil {
		return nil, err
	}
	b, err := parseJSON(before, "before")
	if err != nil {
		return nil, err
	}
	a, err := parseJSON(after, "after")
	if err != nil {
		return nil, err
	}
	target, ok := replay(orig, true, b, true, a, true)
	if !ok { // the handler cannot remove the whole document; keep it
		target = orig
	}
	var ops []patchOp
	ops = diff(ops, "", orig, target)
	if len(ops) == 0 {
		return nil, nil
	}
	return json.Marshal(ops)
}

func parseJSON(b []byte, what string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // keep int64 and decimal literals exactly
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s is not JSON: %w", what, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s has data after its JSON value", what)
	}
	return v, nil
}

// replay returns orig with the change from before to after applied, and
// whether a value remains. Each value comes with whether it is present.
func replay(orig any, origOK bool, before any, beforeOK bool, after any, afterOK bool) (any, bool) {
	switch {
	case beforeOK && afterOK && reflect.DeepEqual(before, after):
		return orig, origOK // untouched by the handler
	case !afterOK:
		return nil, false // removed by the handler
	case !beforeOK:
		return after, true // added by the handler
	}
	switch a := after.(type) {
	case map[string]any:
		b, ok := before.(map[string]any)
		if !ok {
			return after, true
		}
		base, _ := orig.(map[string]any)
		out := maps.Clone(base)
		if out == nil {
			out = map[string]any{}
		}
		for _, k := range slices.Sorted(maps.Keys(union(b, a))) {
			ov, ook := base[k]
			bv, bok := b[k]
			av, aok := a[k]
			if v, ok := replay(ov, ook, bv, bok, av, aok); ok {
				out[k] = v
			} else {
				delete(out, k)
			}
		}
		return out, true
	case []any:
		b, ok := before.([]any)
		if !ok {
			return after, true
		}
		base, _ := orig.([]any)
		if len(base) != len(b) { // the round trip changed the list itself
			base = nil
		}
		return replayList(base, b, a), true
	}
	return after, true
}

func union(a, b map[string]any) map[string]any {
	u := maps.Clone(a)
	maps.Copy(u, b)
	return u
}

// replayList applies the change from before to after to the list orig (nil
// when it cannot be matched with before).
func replayList(orig, before, after []any) []any {
	out := make([]any, len(after))
	if len(before) == len(after) {
		for i := range after {
			var ov any
			if orig != nil {
				ov = orig[i]
			}
			out[i], _ = replay(ov, orig != nil, before[i], true, after[i], true)
		}
		return out
	}
	copy(out, after)
	if orig == nil || len(before)*len(after) > maxMatchCells {
		return out
	}
	for _, m := range lcs(before, after) {
		out[m[1]] = orig[m[0]]
	}
	return out
}

// maxMatchCells bounds the work of matching list items by value (the table
// of lcs): beyond it, a list whose length the handler changed is taken as the
// handler encoded it.
const maxMatchCells = 1 << 20

// lcs returns the index pairs (in before, in after) of a longest common
// subsequence of equal items.
func lcs(x, y []any) [][2]int {
	n, m := len(x), len(y)
	t := make([][]int, n+1)
	for i := range t {
		t[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if reflect.DeepEqual(x[i], y[j]) {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	var pairs [][2]int
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case reflect.DeepEqual(x[i], y[j]):
			pairs = append(pairs, [2]int{i, j})
			i, j = i+1, j+1
		case t[i+1][j] >= t[i][j+1]:
			i++
		default:
			j++
		}
	}
	return pairs
}

// patchOp is one RFC 6902 operation; remove has no value.
type patchOp struct {
	op    string
	path  string
	value any
}

func (o patchOp) MarshalJSON() ([]byte, error) {
	if o.op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.op, o.path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{o.op, o.path, o.value})
}

// pointerEscaper escapes a key as an RFC 6901 JSON pointer token, in one
// pass (so a "/" turned into "~1" is not escaped again).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// diff appends the operations that turn from into to at path.
func diff(ops []patchOp, path string, from, to any) []patchOp {
	if reflect.DeepEqual(from, to) {
		return ops
	}
	switch t := to.(type) {
	case map[string]any:
		f, ok := from.(map[string]any)
		if !ok {
			break
		}
		for _, k := range slices.Sorted(maps.Keys(union(f, t))) {
			p := path + "/" + pointerEscaper.Replace(k)
			fv, fok := f[k]
			tv, tok := t[k]
			switch {
			case !tok:
				ops = append(ops, patchOp{op: "remove", path: p})
			case !fok:
				ops = append(ops, patchOp{op: "add", path: p, value: tv})
			default:
				ops = diff(ops, p, fv, tv)
			}
		}
		return ops
	case []any:
		f, ok := from.([]any)
		if !ok {
			break
		}
		return diffList(ops, path, f, t)
	}
	return append(ops, patchOp{op: "replace", path: path, value: to})
}

// diffList patches list from into to: the common head and tail are kept, the
// middle is patched item by item, and what one middle has beyond the other is
// added or removed.
func diffList(ops []patchOp, path string, from, to []any) []patchOp {
	head := 0
	for head < len(from) && head < len(to) && reflect.DeepEqual(from[head], to[head]) {
		head++
	}
	tail := 0
	for tail < len(from)-head && tail < len(to)-head && reflect.DeepEqual(from[len(from)-1-tail], to[len(to)-1-tail]) {
		tail++
	}
	f, t := from[head:len(from)-tail], to[head:len(to)-tail]
	common := min(len(f), len(t))
	for i := range common {
		ops = diff(ops, path+"/"+strconv.Itoa(head+i), f[i], t[i])
	}
	for i := common; i < len(t); i++ {
		ops = append(ops, patchOp{op: "add", path: path + "/" + strconv.Itoa(head+i), value: t[i]})
	}
	for range len(f) - common { // each remove shifts the rest down
		ops = append(ops, patchOp{op: "remove", path: path + "/" + strconv.Itoa(head+common)})
	}
	return ops
}
