package registry

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// Some of kube-apiserver's immutability errors show what changed: the old
// and new value of a field as the JSON of its internal Go type (goDump),
// indented by one space, compared as a unified diff with three lines of
// context (Kubernetes' diff.Diff, go-difflib underneath).

// goDiff is the unified diff, with three lines of context and no file
// header, of the indented goDump of a and b, as kube-apiserver words the
// change of an immutable field.
func goDiff(a, b any) string {
	return unifiedDiff(splitLines(indentedGoDump(a)), splitLines(indentedGoDump(b)), 3)
}

// indentedGoDump is goDump indented by one space, as json.MarshalIndent
// (Marshal, then Indent) writes it.
func indentedGoDump(v any) string {
	compact := goDump{v}.String()
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(compact), "", " "); err != nil {
		return compact
	}
	return out.String()
}

// splitLines splits s after each newline and ends the last line with one.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	lines[len(lines)-1] += "\n"
	return lines
}

// opCode is a run of lines: equal ('e'), deleted ('d'), inserted ('i') or
// replaced ('r'), a[i1:i2] against b[j1:j2].
type opCode struct {
	tag            byte
	i1, i2, j1, j2 int
}

// lineOpCodes compares a and b as difflib's SequenceMatcher does (the
// diff kube-apiserver's messages come from): the longest matching run of
// lines first, then the same on each side of it, lines that make up more
// than 1% of a long b (200 lines or more) never starting a match.
func lineOpCodes(a, b []string) []opCode {
	b2j := map[string][]int{}
	for j, l := range b {
		b2j[l] = append(b2j[l], j)
	}
	if n := len(b); n >= 200 {
		for l, js := range b2j {
			if len(js) > n/100+1 {
				delete(b2j, l)
			}
		}
	}
	longest := func(alo, ahi, blo, bhi int) (int, int, int) {
		besti, bestj, best := alo, blo, 0
		j2len := map[int]int{}
		for i := alo; i < ahi; i++ {
			next := map[int]int{}
			for _, j := range b2j[a[i]] {
				if j < blo {
					continue
				}
				if j >= bhi {
					break
				}
				k := j2len[j-1] + 1
				next[j] = k
				if k > best {
					besti, bestj, best = i-k+1, j-k+1, k
				}
			}
			j2len = next
		}
		for besti > alo && bestj > blo && a[besti-1] == b[bestj-1] {
			besti, bestj, best = besti-1, bestj-1, best+1
		}
		for besti+best < ahi && bestj+best < bhi && a[besti+best] == b[bestj+best] {
			best++
		}
		return besti, bestj, best
	}
	type block struct{ i, j, k int }
	var blocks []block
	queue := [][4]int{{0, len(a), 0, len(b)}}
	for len(queue) > 0 {
		q := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		i, j, k := longest(q[0], q[1], q[2], q[3])
		if k == 0 {
			continue
		}
		blocks = append(blocks, block{i, j, k})
		if q[0] < i && q[2] < j {
			queue = append(queue, [4]int{q[0], i, q[2], j})
		}
		if i+k < q[1] && j+k < q[3] {
			queue = append(queue, [4]int{i + k, q[1], j + k, q[3]})
		}
	}
	sort.Slice(blocks, func(x, y int) bool {
		if blocks[x].i != blocks[y].i {
			return blocks[x].i < blocks[y].i
		}
		return blocks[x].j < blocks[y].j
	})
	var merged []block
	for _, bl := range blocks {
		if n := len(merged); n > 0 && merged[n-1].i+merged[n-1].k == bl.i && merged[n-1].j+merged[n-1].k == bl.j {
			merged[n-1].k += bl.k
			continue
		}
		merged = append(merged, bl)
	}
	merged = append(merged, block{len(a), len(b), 0})
	var codes []opCode
	i, j := 0, 0
	for _, bl := range merged {
		switch {
		case i < bl.i && j < bl.j:
			codes = append(codes, opCode{'r', i, bl.i, j, bl.j})
		case i < bl.i:
			codes = append(codes, opCode{'d', i, bl.i, j, bl.j})
		case j < bl.j:
			codes = append(codes, opCode{'i', i, bl.i, j, bl.j})
		}
		i, j = bl.i+bl.k, bl.j+bl.k
		if bl.k > 0 {
			codes = append(codes, opCode{'e', bl.i, i, bl.j, j})
		}
	}
	return codes
}

// unifiedDiff formats the differences of a and b as difflib's unified diff
// with n lines of context, without file headers ("" when equal).
func unifiedDiff(a, b []string, n int) string {
	codes := lineOpCodes(a, b)
	if len(codes) == 0 {
		codes = []opCode{{'e', 0, 1, 0, 1}}
	}
	if c := &codes[0]; c.tag == 'e' {
		c.i1, c.j1 = max(c.i1, c.i2-n), max(c.j1, c.j2-n)
	}
	if c := &codes[len(codes)-1]; c.tag == 'e' {
		c.i2, c.j2 = min(c.i2, c.i1+n), min(c.j2, c.j1+n)
	}
	var groups [][]opCode
	var group []opCode
	for _, c := range codes {
		if c.tag == 'e' && c.i2-c.i1 > 2*n {
			group = append(group, opCode{'e', c.i1, min(c.i2, c.i1+n), c.j1, min(c.j2, c.j1+n)})
			groups = append(groups, group)
			group = nil
			c.i1, c.j1 = max(c.i1, c.i2-n), max(c.j1, c.j2-n)
		}
		group = append(group, c)
	}
	if len(group) > 0 && !(len(group) == 1 && group[0].tag == 'e') {
		groups = append(groups, group)
	}
	var out strings.Builder
	for _, g := range groups {
		first, last := g[0], g[len(g)-1]
		out.WriteString("@@ -" + unifiedRange(first.i1, last.i2) + " +" + unifiedRange(first.j1, last.j2) + " @@\n")
		for _, c := range g {
			if c.tag == 'e' {
				for _, l := range a[c.i1:c.i2] {
					out.WriteString(" " + l)
				}
				continue
			}
			if c.tag == 'r' || c.tag == 'd' {
				for _, l := range a[c.i1:c.i2] {
					out.WriteString("-" + l)
				}
			}
			if c.tag == 'r' || c.tag == 'i' {
				for _, l := range b[c.j1:c.j2] {
					out.WriteString("+" + l)
				}
			}
		}
	}
	return out.String()
}

// unifiedRange formats lines [start, stop) as a hunk header does.
func unifiedRange(start, stop int) string {
	beginning, length := start+1, stop-start
	if length == 1 {
		return strconv.Itoa(beginning)
	}
	if length == 0 {
		beginning--
	}
	return strconv.Itoa(beginning) + "," + strconv.Itoa(length)
}
