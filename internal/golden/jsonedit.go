package golden

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// node is a JSON value that keeps the order of object members and the bytes
// of every scalar as captured, so that an edited capture differs from the
// original only where it was edited.
type node struct {
	kind byte     // '{', '[', or 0 for a scalar (raw holds it)
	keys []string // object member names, decoded
	vals []*node  // object member values, or array elements
	raw  []byte   // a scalar's bytes, or a member name's bytes (keyRaw)

	keyRaw [][]byte // object member names as captured
}

func parseJSON(b []byte) (*node, error) {
	p := &jsonParser{b: b}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	if p.skip(); p.i != len(p.b) {
		return nil, fmt.Errorf("trailing data at %d", p.i)
	}
	return n, nil
}

type jsonParser struct {
	b []byte
	i int
}

func (p *jsonParser) skip() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\n' || p.b[p.i] == '\t' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *jsonParser) value() (*node, error) {
	p.skip()
	if p.i >= len(p.b) {
		return nil, fmt.Errorf("unexpected end")
	}
	switch c := p.b[p.i]; c {
	case '{', '[':
		n := &node{kind: c}
		p.i++
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		for first := true; ; first = false {
			p.skip()
			if p.i < len(p.b) && p.b[p.i] == end {
				p.i++
				return n, nil
			}
			if !first {
				if p.i >= len(p.b) || p.b[p.i] != ',' {
					return nil, fmt.Errorf("expected , at %d", p.i)
				}
				p.i++
				p.skip()
			}
			if c == '{' {
				k, err := p.str()
				if err != nil {
					return nil, err
				}
				var name string
				if err := json.Unmarshal(k, &name); err != nil {
					return nil, err
				}
				p.skip()
				if p.i >= len(p.b) || p.b[p.i] != ':' {
					return nil, fmt.Errorf("expected : at %d", p.i)
				}
				p.i++
				n.keys, n.keyRaw = append(n.keys, name), append(n.keyRaw, k)
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
	case '"':
		s, err := p.str()
		return &node{raw: s}, err
	default:
		start := p.i
		for p.i < len(p.b) && bytes.IndexByte([]byte(",]} \n\t\r"), p.b[p.i]) < 0 {
			p.i++
		}
		return &node{raw: p.b[start:p.i]}, nil
	}
}

func (p *jsonParser) str() ([]byte, error) {
	start := p.i
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, fmt.Errorf("expected string at %d", p.i)
	}
	for p.i++; p.i < len(p.b); p.i++ {
		switch p.b[p.i] {
		case '\\':
			p.i++
		case '"':
			p.i++
			return p.b[start:p.i], nil
		}
	}
	return nil, fmt.Errorf("unterminated string")
}

// appendJSON writes n compactly.
func (n *node) appendJSON(b []byte) []byte {
	switch n.kind {
	case 0:
		return append(b, n.raw...)
	case '{':
		b = append(b, '{')
		for i := range n.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, n.keyRaw[i]...)
			b = append(b, ':')
			b = n.vals[i].appendJSON(b)
		}
		return append(b, '}')
	default:
		b = append(b, '[')
		for i, v := range n.vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = v.appendJSON(b)
		}
		return append(b, ']')
	}
}

// get returns the member named key of an object, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// del removes the member named key of an object, if any.
func (n *node) del(key string) {
	if n == nil || n.kind != '{' {
		return
	}
	for i, k := range n.keys {
		if k == key {
			n.keys = append(n.keys[:i], n.keys[i+1:]...)
			n.keyRaw = append(n.keyRaw[:i], n.keyRaw[i+1:]...)
			n.vals = append(n.vals[:i], n.vals[i+1:]...)
			return
		}
	}
}

// insertAfter adds the member key = raw to an object after the last of the
// members named in after that it has (first if it has none), or replaces it if
// present.
func (n *node) insertAfter(key string, raw string, after ...string) {
	if v := n.get(key); v != nil {
		*v = node{raw: []byte(raw)}
		return
	}
	at := 0
	for i, k := range n.keys {
		for _, a := range after {
			if k == a {
				at = i + 1
			}
		}
	}
	kr, _ := json.Marshal(key)
	n.keys = append(n.keys[:at], append([]string{key}, n.keys[at:]...)...)
	n.keyRaw = append(n.keyRaw[:at], append([][]byte{kr}, n.keyRaw[at:]...)...)
	n.vals = append(n.vals[:at], append([]*node{{raw: []byte(raw)}}, n.vals[at:]...)...)
}

// at returns the values at path below n: each element names an object member,
// or is "*" for every element of an array.
func (n *node) at(path ...string) []*node {
	if n == nil {
		return nil
	}
	if len(path) == 0 {
		return []*node{n}
	}
	if path[0] == "*" {
		if n.kind != '[' {
			return nil
		}
		var out []*node
		for _, v := range n.vals {
			out = append(out, v.at(path[1:]...)...)
		}
		return out
	}
	return n.get(path[0]).at(path[1:]...)
}

// walk calls f for every object in n, depth first.
func (n *node) walk(f func(obj *node)) {
	if n.kind == '{' {
		f(n)
	}
	for _, v := range n.vals {
		v.walk(f)
	}
}

// editJSON applies edit to each JSON document of body (one, or one per line
// for a watch stream), keeping the layout: an indented document (as the
// captured requests are) is indented again with two spaces.
func editJSON(body []byte, edit func(doc *node)) ([]byte, error) {
	if len(body) == 0 || (body[0] != '{' && body[0] != '[') {
		return body, nil
	}
	docs := [][]byte{body}
	if n, err := parseJSON(body); err != nil || n == nil {
		docs = bytes.Split(body, []byte("\n"))
	}
	var out [][]byte
	for _, d := range docs {
		if len(bytes.TrimSpace(d)) == 0 {
			out = append(out, d)
			continue
		}
		n, err := parseJSON(d)
		if err != nil {
			return nil, err
		}
		edit(n)
		b := n.appendJSON(nil)
		if bytes.Contains(bytes.TrimSpace(d), []byte("\n")) {
			var ind bytes.Buffer
			if err := json.Indent(&ind, b, "", "  "); err != nil {
				return nil, err
			}
			b = ind.Bytes()
		}
		out = append(out, append(b, d[len(bytes.TrimRight(d, " \n\r\t")):]...))
	}
	return bytes.Join(out, []byte("\n")), nil
}
