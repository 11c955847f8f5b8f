// Package golden reads the request/response exchanges captured from real
// kube-apiservers (testdata/golden from v1.32.2, testdata/golden-1.37 from
// v1.37.2, format in testdata/golden/README.md) so tests can compare kapi's
// bytes and status codes with the real ones. kapi follows v1.37.2; the
// differences of v1.32.2 are stated once, in Differences, and Release.Load
// turns a v1.32.2 capture into the v1.37.2 answer.
package golden

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
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

// Dir is the absolute path of testdata/golden in this repository: the
// numbered exchanges captured from kube-apiserver v1.32.2, and the
// unnumbered ones (proto-*, aggregated-*) captured from v1.37.2.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "golden")
}

// A Release is a kube-apiserver release whose numbered exchanges are
// captured in the repository.
type Release struct {
	Name string // "v1.37.2"
	dir  string // under testdata
}

var (
	// V137 is kube-apiserver v1.37.2, the reference kapi follows.
	V137 = Release{Name: "v1.37.2", dir: "golden-1.37"}
	// V132 is kube-apiserver v1.32.2, the first capture.
	V132 = Release{Name: "v1.32.2", dir: "golden"}
	// Releases lists every captured release, the reference first. Tests that
	// replay a numbered case replay it from each.
	Releases = []Release{V137, V132}
)

// Dir is the absolute path of the release's captures.
func (r Release) Dir() string { return filepath.Join(filepath.Dir(Dir()), r.dir) }

// ErrNotCaptured is returned for a case the release has no capture of
// (Differences says which and why).
var ErrNotCaptured = errors.New("not captured from this release")

// ErrNotComparable is returned for a v1.32.2 case whose answer describes the
// release itself (Differences, Use ReleaseOwn): it is no expectation for kapi.
var ErrNotComparable = errors.New("the release's own answer, not comparable with v1.37.2")

// Load reads the exchange named name (with or without ".txt") as captured
// from r, with the parts Nondeterministic names in one order, and, for v1.32.2, turned into what v1.37.2 answers by
// Differences[name].Normalize: the expectation for kapi either way. It
// returns ErrNotCaptured or ErrNotComparable where r's capture of the case
// cannot serve as one.
func (r Release) Load(name string) (*Exchange, error) {
	name = strings.TrimSuffix(name, ".txt")
	d, listed := Differences[name]
	if r == V132 && listed && d.Use == ReleaseOwn {
		return nil, fmt.Errorf("golden %s from %s: %w", name, r.Name, ErrNotComparable)
	}
	x, err := r.Raw(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("golden %s from %s: %w", name, r.Name, ErrNotCaptured)
	}
	if c, ok := Nondeterministic[name]; ok && err == nil {
		if err := c.Canonicalize(x); err != nil {
			return nil, fmt.Errorf("golden %s from %s: %w", name, r.Name, err)
		}
	}
	if err != nil || r != V132 || !listed || d.Normalize == nil {
		return x, err
	}
	if err := d.Normalize(x); err != nil {
		return nil, fmt.Errorf("golden %s from %s: normalizing to v1.37.2: %w", name, r.Name, err)
	}
	return x, nil
}

// Raw reads the exchange named name exactly as captured from r.
func (r Release) Raw(name string) (*Exchange, error) {
	name = strings.TrimSuffix(name, ".txt")
	return load(r.Dir(), name)
}

// All loads every numbered exchange of r that Load serves, in capture order
// (by number).
func (r Release) All() ([]*Exchange, error) {
	paths, err := filepath.Glob(filepath.Join(r.Dir(), "[0-9]*.txt"))
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
		x, err := r.Load(filepath.Base(p))
		if errors.Is(err, ErrNotComparable) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// Load reads the exchange named name (with or without ".txt"): a numbered
// case as captured from v1.37.2 (from v1.32.2 for a case only it captured,
// Use OnlyV132), any other from Dir.
func Load(name string) (*Exchange, error) {
	name = strings.TrimSuffix(name, ".txt")
	if !numbered(name) {
		return load(Dir(), name)
	}
	if Differences[name].Use == OnlyV132 {
		return V132.Load(name)
	}
	return V137.Load(name)
}

// All loads every numbered exchange captured from v1.37.2, in capture order.
func All() ([]*Exchange, error) { return V137.All() }

// Each runs f as a subtest named after each release, with the release and
// the numbered case name loaded from it (Release.Load); a release that did not
// capture the case, or whose capture is its own (ErrNotComparable), is
// logged and left out.
func Each(t *testing.T, name string, f func(t *testing.T, r Release, x *Exchange)) {
	t.Helper()
	ran := 0
	for _, r := range Releases {
		x, err := r.Load(name)
		if errors.Is(err, ErrNotCaptured) || errors.Is(err, ErrNotComparable) {
			t.Logf("%s: %v (%s)", name, err, Differences[name].V132)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ran++
		t.Run(r.Name, func(t *testing.T) { f(t, r, x) })
	}
	if ran == 0 {
		t.Fatalf("golden %s: captured by no release", name)
	}
}

// numbered reports whether name is a numbered case ("07-get-configmap-json").
func numbered(name string) bool {
	n, _, ok := strings.Cut(name, "-")
	_, err := strconv.Atoi(n)
	return ok && err == nil
}

func load(dir, name string) (*Exchange, error) {
	raw, err := os.ReadFile(filepath.Join(dir, name+".txt"))
	if err != nil {
		return nil, err
	}
	x, err := parse(dir, name, raw)
	if err != nil {
		return nil, fmt.Errorf("golden %s: %w", name, err)
	}
	return x, nil
}

var sep = []byte("\n---\n")

func parse(dir, name string, raw []byte) (*Exchange, error) {
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
	if x.RequestBody, err = binaryBody(dir, x.RequestBody); err != nil {
		return nil, err
	}
	if x.ResponseBody, err = binaryBody(dir, x.ResponseBody); err != nil {
		return nil, err
	}
	return x, nil
}

// binaryBody reads the file a "<binary body: NAME, N bytes>" pointer names
// (request or response), or returns body as it is.
func binaryBody(dir string, body []byte) ([]byte, error) {
	if !bytes.HasPrefix(body, []byte("<binary body: ")) {
		return body, nil
	}
	file, _, _ := strings.Cut(strings.TrimPrefix(string(body), "<binary body: "), ",")
	return os.ReadFile(filepath.Join(dir, file))
}

// headerBlock splits "first line\nHeader: v\n...\n\nbody" into its parts
// (lines may end in "\r\n", as case 104's headers do). The body loses one
// trailing newline (the capture's line end).
func headerBlock(b []byte, h map[string]string) (string, []byte, error) {
	rest := b
	first := ""
	for len(rest) > 0 {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		rest = after
		text := strings.TrimSuffix(string(line), "\r")
		if first == "" {
			first = text
			continue
		}
		if text == "" {
			break
		}
		k, v, ok := strings.Cut(text, ": ")
		if !ok {
			return "", nil, fmt.Errorf("bad header line %q", text)
		}
		h[k] = v
	}
	body := bytes.TrimSuffix(rest, []byte("\n"))
	if len(body) == 0 {
		body = nil
	}
	return first, body, nil
}
