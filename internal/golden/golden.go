// Package golden reads the request/response exchanges captured from a real
// kube-apiserver (testdata/golden, format in its README.md) so tests can compare
// kapi's bytes and status codes with the real ones.
package golden

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// Exchange is one captured request and its response.
type Exchange struct {
	Name string // file name without extension, e.g. "07-get-configmap-json"
	Note string // the leading "# ..." comment lines, if any

	Method, Path  string
	RequestHeader map[string]string
	RequestBody   []byte

	Status         int
	Reason         string
	ResponseHeader map[string]string
	ResponseBody   []byte // the body, read from the .body.pb twin for binary captures
}

// Dir is the absolute path of testdata/golden in this repository.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "golden")
}

// Dir137 is the absolute path of testdata/golden-1.37: captures from
// kube-apiserver v1.37.2.
func Dir137() string { return filepath.Join(filepath.Dir(Dir()), "golden-1.37") }

// Changed137 lists the v1.32 captures whose v1.37.2 twin differs in a way
// kapi follows, with what changed; Load reads those from Dir137, so every
// test that replays a capture compares with the newer server. The
// captures of v1.32 stay for the rest until the whole set moves to 1.37.
var Changed137 = map[string]string{
	"62-dryrun-bad-value":  "a rejected list value is printed as JSON ([\"Some\"]) instead of Go syntax ([]string{\"Some\"}), since v1.33",
	"66-table-deployments": "the Up-to-date, Available and Selector column descriptions are reworded (non-terminating pods; the selector must match the template's labels)",
}

// Load reads the exchange named name (with or without ".txt"), from
// Dir137 if Changed137 names it, else from Dir.
func Load(name string) (*Exchange, error) {
	name = strings.TrimSuffix(name, ".txt")
	dir := Dir()
	if _, ok := Changed137[name]; ok {
		dir = Dir137()
	}
	raw, err := os.ReadFile(filepath.Join(dir, name+".txt"))
	if err != nil {
		return nil, err
	}
	x, err := parse(name, raw)
	if err != nil {
		return nil, fmt.Errorf("golden %s: %w", name, err)
	}
	return x, nil
}

// All loads every exchange, in capture order (by number).
func All() ([]*Exchange, error) {
	paths, err := filepath.Glob(filepath.Join(Dir(), "[0-9]*.txt"))
	if err != nil {
		return nil, err
	}
	// In capture order: by the number before the first '-'.
	num := func(p string) int {
		n, _ := strconv.Atoi(strings.SplitN(filepath.Base(p), "-", 2)[0])
		return n
	}
	sort.Slice(paths, func(i, j int) bool { return num(paths[i]) < num(paths[j]) })
	var out []*Exchange
	for _, p := range paths {
		x, err := Load(filepath.Base(p))
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

var sep = []byte("\n---\n")

func parse(name string, raw []byte) (*Exchange, error) {
	x := &Exchange{Name: name, RequestHeader: map[string]string{}, ResponseHeader: map[string]string{}}
	req, resp, ok := bytes.Cut(raw, sep)
	if !ok {
		return nil, fmt.Errorf("no --- separator")
	}
	var err error
	var notes []string
	for bytes.HasPrefix(req, []byte("#")) {
		line, rest, _ := bytes.Cut(req, []byte("\n"))
		notes = append(notes, strings.TrimSpace(strings.TrimPrefix(string(line), "#")))
		req = rest
	}
	x.Note = strings.Join(notes, "\n")
	var first string
	first, x.RequestBody, err = headerBlock(req, x.RequestHeader)
	if err != nil {
		return nil, err
	}
	x.Method, x.Path, _ = strings.Cut(first, " ")
	var status string
	status, x.ResponseBody, err = headerBlock(resp, x.ResponseHeader)
	if err != nil {
		return nil, err
	}
	code, reason, _ := strings.Cut(status, " ")
	if x.Status, err = strconv.Atoi(code); err != nil {
		return nil, fmt.Errorf("status line %q", status)
	}
	x.Reason = reason
	if x.RequestBody, err = binaryBody(x.RequestBody); err != nil {
		return nil, err
	}
	if x.ResponseBody, err = binaryBody(x.ResponseBody); err != nil {
		return nil, err
	}
	return x, nil
}

// binaryBody reads the file a "<binary body: NAME, N bytes>" pointer names
// (request or response), or returns body as it is.
func binaryBody(body []byte) ([]byte, error) {
	if !bytes.HasPrefix(body, []byte("<binary body: ")) {
		return body, nil
	}
	file, _, _ := strings.Cut(strings.TrimPrefix(string(body), "<binary body: "), ",")
	return os.ReadFile(filepath.Join(Dir(), file))
}

// headerBlock splits "first line\nHeader: v\n...\n\nbody" into its parts. The
// body loses one trailing newline (the capture's line end).
func headerBlock(b []byte, h map[string]string) (string, []byte, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	n := 0
	first := ""
	for sc.Scan() {
		line := sc.Text()
		n += len(line) + 1
		if first == "" {
			first = line
			continue
		}
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			return "", nil, fmt.Errorf("bad header line %q", line)
		}
		h[k] = v
	}
	if n > len(b) {
		n = len(b)
	}
	body := b[n:]
	body = bytes.TrimSuffix(body, []byte("\n"))
	if len(body) == 0 {
		body = nil
	}
	return first, body, nil
}
