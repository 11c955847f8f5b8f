package golden

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KindsDir is the absolute path of testdata/golden-1.37/kinds: what
// kube-apiserver v1.37.2 answers, per resource, to creates, invalid objects,
// immutable-field updates and Table GETs (its README.md says what varies).
func KindsDir() string { return filepath.Join(V137.Dir(), "kinds") }

// LoadKind reads the kinds capture named name (with or without ".txt").
func LoadKind(name string) (*Exchange, error) {
	name = strings.TrimSuffix(name, ".txt")
	raw, err := os.ReadFile(filepath.Join(KindsDir(), name+".txt"))
	if err != nil {
		return nil, err
	}
	x, err := parse(KindsDir(), name, raw)
	if err != nil {
		return nil, fmt.Errorf("golden kinds %s: %w", name, err)
	}
	return x, nil
}

// KindsOrder returns the kinds captures' names (without ".txt") in capture
// order, as the index of KindsDir's README.md lists them ("- `NAME.txt`: ...").
func KindsOrder() ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(KindsDir(), "README.md"))
	if err != nil {
		return nil, err
	}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "- `")
		if !ok {
			continue
		}
		file, _, ok := strings.Cut(rest, "`")
		if name, txt := strings.CutSuffix(file, ".txt"); ok && txt {
			names = append(names, name)
		}
	}
	return names, sc.Err()
}
