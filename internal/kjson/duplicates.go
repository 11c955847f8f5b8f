package kjson

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// DuplicateNames lists the names that appear more than once in the same
// object of the JSON value b, once per repetition, in document order, as
// paths the way kube-apiserver's strict decoding names them: members joined
// by ".", list items by "[i]" ("metadata.labels.a", "spec.containers[0].name").
// A value that is not JSON is an error.
func DuplicateNames(b []byte) ([]string, error) {
	var dups []string
	err := WalkNames(b, func(path string, dup bool) {
		if dup {
			dups = append(dups, path)
		}
	})
	if err != nil {
		return nil, err
	}
	return dups, nil
}

// WalkNames calls visit with the path of every object member of the JSON
// value b, in document order (paths as DuplicateNames writes them); dup
// tells that the same object had the name before. A value that is not JSON
// is an error, after the members before the fault were visited.
func WalkNames(b []byte, visit func(path string, dup bool)) error {
	dec := jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	type frame struct {
		path   string
		object bool
		index  int             // next item of a list
		seen   map[string]bool // names of an object so far
		name   string          // the member whose value comes next
	}
	var stack []*frame
	// child is the path of the value about to be read in the innermost
	// container.
	child := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.object {
			if f.path == "" {
				return f.name
			}
			return f.path + "." + f.name
		}
		return f.path + "[" + strconv.Itoa(f.index) + "]"
	}
	// done ends a value in the innermost container.
	done := func() {
		if len(stack) > 0 {
			if f := stack[len(stack)-1]; !f.object {
				f.index++
			}
		}
	}
	for {
		// An object's name comes before its value.
		if n := len(stack); n > 0 && stack[n-1].object && dec.PeekKind() == '"' {
			tok, err := dec.ReadToken()
			if err != nil {
				return err
			}
			f := stack[n-1]
			f.name = tok.String()
			visit(child(), f.seen[f.name])
			f.seen[f.name] = true
		}
		kind := dec.PeekKind()
		switch kind {
		case '{', '[':
			path := child()
			if _, err := dec.ReadToken(); err != nil {
				return err
			}
			f := &frame{path: path, object: kind == '{'}
			if f.object {
				f.seen = map[string]bool{}
			}
			stack = append(stack, f)
		case '}', ']':
			if _, err := dec.ReadToken(); err != nil {
				return err
			}
			stack = stack[:len(stack)-1]
			done()
		default:
			if _, err := dec.ReadToken(); err != nil {
				if errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return err
			}
			done()
		}
		if len(stack) == 0 {
			if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
				if err == nil {
					err = errors.New("kjson: data after the top-level value")
				}
				return err
			}
			return nil
		}
	}
}
