package cache

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// entry is one stored object with the values the user-defined indexes
// computed for it. Keeping the values means removing or replacing the
// object never calls an index function again: a removal cannot fail, and
// it stays correct even if the cached object was (wrongly) modified.
type entry[T Object] struct {
	obj T
	// vals[i] holds the values of specs[i]; len(vals) == len(specs).
	vals [][]string
}

// valueSet holds the objects under one indexed value, by key. Holding the
// objects rather than only the keys lets ByIndex answer without a second
// lookup per object.
type valueSet[T Object] map[objectKey]T

// contents is everything a store holds. Objects are kept by namespace, then
// name: the outer map is the built-in NamespaceIndex, so listing a
// namespace walks only its objects, and keying an object needs no string
// building. Inner maps are never empty.
//
// Replace builds a fresh contents without holding the store's lock and
// swaps it in; the old one then belongs to the ReplaceDiff.
type contents[T Object] struct {
	byNamespace map[string]map[string]entry[T]
	count       int
	// indices[i] maps the values of specs[i] to their objects; value sets
	// are never empty.
	indices []map[string]valueSet[T]
}

func newContents[T Object](nIndexes int) *contents[T] {
	c := &contents[T]{
		byNamespace: make(map[string]map[string]entry[T]),
		indices:     make([]map[string]valueSet[T], nIndexes),
	}
	for i := range c.indices {
		c.indices[i] = make(map[string]valueSet[T])
	}
	return c
}

// lookup returns the entry under k.
func (c *contents[T]) lookup(k objectKey) (entry[T], bool) {
	e, ok := c.byNamespace[k.namespace][k.name]
	return e, ok
}

// put stores e under k, updating the indexes, and reports whether an entry
// was replaced.
func (c *contents[T]) put(k objectKey, e entry[T]) bool {
	inner := c.byNamespace[k.namespace]
	if inner == nil {
		inner = make(map[string]entry[T])
		c.byNamespace[k.namespace] = inner
	}
	old, existed := inner[k.name]
	inner[k.name] = e
	if !existed {
		c.count++
	}
	for i, idx := range c.indices {
		var oldVals []string
		if existed {
			oldVals = old.vals[i]
		}
		newVals := e.vals[i]
		if len(oldVals) == 1 && len(newVals) == 1 && oldVals[0] == newVals[0] {
			// The common case: one value, unchanged. Only the object
			// the value set holds changes.
			idx[newVals[0]][k] = e.obj
			continue
		}
		for _, v := range oldVals {
			removeFromIndex(idx, k, v)
		}
		for _, v := range newVals {
			addToIndex(idx, k, v, e.obj)
		}
	}
	return existed
}

// remove deletes the entry under k, if any, with its index values.
func (c *contents[T]) remove(k objectKey) {
	inner := c.byNamespace[k.namespace]
	e, ok := inner[k.name]
	if !ok {
		return
	}
	delete(inner, k.name)
	if len(inner) == 0 {
		// Drop empty namespaces, so that short-lived namespaces do not
		// pile up (the leak of kubernetes/kubernetes#84959).
		delete(c.byNamespace, k.namespace)
	}
	c.count--
	for i, idx := range c.indices {
		for _, v := range e.vals[i] {
			removeFromIndex(idx, k, v)
		}
	}
}

func addToIndex[T Object](idx map[string]valueSet[T], k objectKey, value string, obj T) {
	set := idx[value]
	if set == nil {
		set = make(valueSet[T], 1)
		idx[value] = set
	}
	set[k] = obj
}

func removeFromIndex[T Object](idx map[string]valueSet[T], k objectKey, value string) {
	set := idx[value]
	if set == nil {
		return
	}
	delete(set, k)
	if len(set) == 0 {
		delete(idx, value)
	}
}

// addIndexes computes the indexes of newSpecs, which follow the c's
// current ones, over every object in c, and installs them. If a function
// fails, c is left unchanged.
func (c *contents[T]) addIndexes(newSpecs []indexSpec[T]) error {
	n0 := len(c.indices)
	n := n0 + len(newSpecs)
	type pending struct {
		k    objectKey
		vals [][]string
	}
	// Compute everything first, so that a failure changes nothing.
	pend := make([]pending, 0, c.count)
	buf := make([][]string, c.count*n)
	for ns, inner := range c.byNamespace {
		for name, e := range inner {
			k := objectKey{ns, name}
			vals := buf[:n:n]
			buf = buf[n:]
			copy(vals, e.vals)
			for j, spec := range newSpecs {
				v, err := spec.fn(e.obj)
				if err != nil {
					return &IndexError{Index: spec.name, Key: k.String(), Err: err}
				}
				vals[n0+j] = v
			}
			pend = append(pend, pending{k, vals})
		}
	}
	for range newSpecs {
		c.indices = append(c.indices, make(map[string]valueSet[T]))
	}
	for _, p := range pend {
		inner := c.byNamespace[p.k.namespace]
		e := inner[p.k.name]
		e.vals = p.vals
		inner[p.k.name] = e
		for j := n0; j < n; j++ {
			for _, v := range p.vals[j] {
				addToIndex(c.indices[j], p.k, v, e.obj)
			}
		}
	}
	return nil
}

// threadSafeStore implements Indexer with a map guarded by an RWMutex.
//
// Writers compute index values before taking the lock, so the write lock
// is held only for the map updates; Replace even builds the new contents
// entirely outside the lock and holds it only to swap a pointer.
type threadSafeStore[T Object] struct {
	mu sync.RWMutex
	c  *contents[T]
	// specs holds the user-defined indexes, in the order of c.indices.
	// It is replaced (under mu) by a longer slice when indexes are added,
	// never modified in place, so writers load it without the lock to
	// compute index values, then check under the lock that it did not
	// grow meanwhile.
	specs atomic.Pointer[[]indexSpec[T]]
}

// loadSpecs returns the current user-defined indexes.
func (s *threadSafeStore[T]) loadSpecs() []indexSpec[T] { return *s.specs.Load() }

var _ Indexer[metav1.Object] = (*threadSafeStore[metav1.Object])(nil)

func newThreadSafeStore[T Object](indexers Indexers[T]) *threadSafeStore[T] {
	var specs []indexSpec[T]
	for name, fn := range indexers {
		if name != NamespaceIndex && fn != nil {
			specs = append(specs, indexSpec[T]{name, fn})
		}
	}
	sortSpecs(specs)
	s := &threadSafeStore[T]{c: newContents[T](len(specs))}
	s.specs.Store(&specs)
	return s
}

func (s *threadSafeStore[T]) Add(obj T) error { return s.Update(obj) }

func (s *threadSafeStore[T]) Update(obj T) error {
	k, err := keyOf(obj)
	if err != nil {
		return err
	}
	specs := s.loadSpecs()
	vals, err := indexValues(specs, obj, k, nil)
	if err != nil {
		return err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if now := s.loadSpecs(); len(now) > len(specs) {
		// AddIndexers ran in between: compute the new indexes too.
		more, err := indexValues(now[len(specs):], obj, k, nil)
		if err != nil {
			return err
		}
		vals = append(vals, more...)
	}
	s.c.put(k, entry[T]{obj, vals})
	return nil
}

func (s *threadSafeStore[T]) Delete(obj T) error {
	k, err := keyOf(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.c.remove(k)
	s.mu.Unlock()
	return nil
}

func (s *threadSafeStore[T]) Get(obj T) (item T, exists bool, err error) {
	k, err := keyOf(obj)
	if err != nil {
		return item, false, err
	}
	item, exists = s.lookup(k)
	return item, exists, nil
}

func (s *threadSafeStore[T]) GetByKey(key string) (item T, exists bool) {
	k, ok := parseKey(key)
	if !ok {
		return item, false
	}
	return s.lookup(k)
}

func (s *threadSafeStore[T]) lookup(k objectKey) (T, bool) {
	s.mu.RLock()
	e, ok := s.c.lookup(k)
	s.mu.RUnlock()
	return e.obj, ok
}

func (s *threadSafeStore[T]) List() []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]T, 0, s.c.count)
	for _, inner := range s.c.byNamespace {
		for _, e := range inner {
			out = append(out, e.obj)
		}
	}
	return out
}

func (s *threadSafeStore[T]) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, s.c.count)
	for ns, inner := range s.c.byNamespace {
		for name := range inner {
			out = append(out, JoinKey(ns, name))
		}
	}
	return out
}

func (s *threadSafeStore[T]) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.c.count
}

func (s *threadSafeStore[T]) Replace(items []T) (*ReplaceDiff[T], error) {
	specs := s.loadSpecs()
	c, items, err := buildContents(specs, items)
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	if now := s.loadSpecs(); len(now) > len(specs) {
		// AddIndexers ran while the contents were built.
		if err := c.addIndexes(now[len(specs):]); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
	old := s.c
	s.c = c
	s.mu.Unlock()
	return &ReplaceDiff[T]{old: old.byNamespace, oldCount: old.count, items: items}, nil
}

// buildContents returns new contents holding items, and items without the
// ones a later item with the same key overrides.
func buildContents[T Object](specs []indexSpec[T], items []T) (*contents[T], []T, error) {
	c := newContents[T](len(specs))
	presize(c, items)
	n := len(specs)
	buf := make([][]string, len(items)*n)
	dup := false
	for i, obj := range items {
		k, err := keyOf(obj)
		if err != nil {
			return nil, nil, fmt.Errorf("cache: Replace: item %d: %w", i, err)
		}
		vals, err := indexValues(specs, obj, k, buf)
		if err != nil {
			return nil, nil, err
		}
		buf = buf[n:]
		if c.put(k, entry[T]{obj, vals}) {
			dup = true
		}
	}
	if dup {
		items = lastOfEachKey(items)
	}
	return c, items, nil
}

// presize makes the namespace maps of c large enough for items, so that
// they are allocated once instead of grown by doubling. Servers list
// objects ordered by namespace, so counting runs of equal namespaces needs
// about one map operation per namespace. Nil items are skipped; the caller
// reports them.
func presize[T Object](c *contents[T], items []T) {
	counts := make(map[string]int)
	run, runNS := 0, ""
	for _, obj := range items {
		if isNilObject(obj) {
			continue
		}
		if ns := obj.GetNamespace(); ns != runNS || run == 0 {
			if run > 0 {
				counts[runNS] += run
			}
			run, runNS = 0, ns
		}
		run++
	}
	if run > 0 {
		counts[runNS] += run
	}
	c.byNamespace = make(map[string]map[string]entry[T], len(counts))
	for ns, n := range counts {
		c.byNamespace[ns] = make(map[string]entry[T], n)
	}
}

// lastOfEachKey returns the items that no later item with the same key
// overrides, in their order.
func lastOfEachKey[T Object](items []T) []T {
	seen := make(map[objectKey]struct{}, len(items))
	out := make([]T, 0, len(items))
	for i := len(items) - 1; i >= 0; i-- {
		k := objectKey{items[i].GetNamespace(), items[i].GetName()}
		if _, ok := seen[k]; ok {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, items[i])
	}
	slices.Reverse(out)
	return out
}

// sortSpecs sorts specs by name, so that the order of indexes, and of
// index function calls, does not depend on map iteration.
func sortSpecs[T Object](specs []indexSpec[T]) {
	slices.SortFunc(specs, func(a, b indexSpec[T]) int { return cmp.Compare(a.name, b.name) })
}

// indexOf returns the position of the named user-defined index in specs,
// or -1. The caller holds the lock.
func (s *threadSafeStore[T]) indexOf(name string) int {
	for i, spec := range s.loadSpecs() {
		if spec.name == name {
			return i
		}
	}
	return -1
}

func (s *threadSafeStore[T]) Index(indexName string, obj T) ([]T, error) {
	if isNilObject(obj) {
		return nil, ErrNilObject
	}
	if indexName == NamespaceIndex {
		return s.ByIndex(NamespaceIndex, obj.GetNamespace())
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	i := s.indexOf(indexName)
	if i < 0 {
		return nil, noSuchIndex(indexName)
	}
	values, err := s.loadSpecs()[i].fn(obj)
	if err != nil {
		k, _ := keyOf(obj)
		return nil, &IndexError{Index: indexName, Key: k.String(), Err: err}
	}
	idx := s.c.indices[i]
	switch len(values) {
	case 0:
		return []T{}, nil
	case 1:
		return collect(idx[values[0]]), nil
	}
	// Several values: an object under more than one of them is listed once.
	seen := make(map[objectKey]struct{})
	var out []T
	for _, v := range values {
		for k, o := range idx[v] {
			if _, dup := seen[k]; !dup {
				seen[k] = struct{}{}
				out = append(out, o)
			}
		}
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}

// collect returns the objects of set as a slice.
func collect[T Object](set valueSet[T]) []T {
	out := make([]T, 0, len(set))
	for _, o := range set {
		out = append(out, o)
	}
	return out
}

func (s *threadSafeStore[T]) ByIndex(indexName, indexedValue string) ([]T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if indexName == NamespaceIndex {
		inner := s.c.byNamespace[indexedValue]
		out := make([]T, 0, len(inner))
		for _, e := range inner {
			out = append(out, e.obj)
		}
		return out, nil
	}
	i := s.indexOf(indexName)
	if i < 0 {
		return nil, noSuchIndex(indexName)
	}
	return collect(s.c.indices[i][indexedValue]), nil
}

func (s *threadSafeStore[T]) IndexKeys(indexName, indexedValue string) ([]string, error) {
	s.mu.RLock()
	var keys []string
	if indexName == NamespaceIndex {
		inner := s.c.byNamespace[indexedValue]
		keys = make([]string, 0, len(inner))
		for name := range inner {
			keys = append(keys, JoinKey(indexedValue, name))
		}
	} else {
		i := s.indexOf(indexName)
		if i < 0 {
			s.mu.RUnlock()
			return nil, noSuchIndex(indexName)
		}
		set := s.c.indices[i][indexedValue]
		keys = make([]string, 0, len(set))
		for k := range set {
			keys = append(keys, k.String())
		}
	}
	s.mu.RUnlock()
	slices.Sort(keys)
	return keys, nil
}

func (s *threadSafeStore[T]) ListIndexFuncValues(indexName string) []string {
	s.mu.RLock()
	var values []string
	if indexName == NamespaceIndex {
		values = slices.AppendSeq(make([]string, 0, len(s.c.byNamespace)), maps.Keys(s.c.byNamespace))
	} else if i := s.indexOf(indexName); i >= 0 {
		idx := s.c.indices[i]
		values = slices.AppendSeq(make([]string, 0, len(idx)), maps.Keys(idx))
	}
	s.mu.RUnlock()
	slices.Sort(values)
	return values
}

func (s *threadSafeStore[T]) Indexers() Indexers[T] {
	specs := s.loadSpecs()
	out := make(Indexers[T], len(specs)+1)
	for _, spec := range specs {
		out[spec.name] = spec.fn
	}
	out[NamespaceIndex] = NamespaceIndexFunc[T]
	return out
}

func (s *threadSafeStore[T]) AddIndexers(indexers Indexers[T]) error {
	var added []indexSpec[T]
	for name, fn := range indexers {
		if name == NamespaceIndex {
			continue
		}
		if fn == nil {
			return fmt.Errorf("cache: AddIndexers: index %q has a nil IndexFunc", name)
		}
		added = append(added, indexSpec[T]{name, fn})
	}
	if len(added) == 0 {
		return nil
	}
	sortSpecs(added)

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, spec := range added {
		if s.indexOf(spec.name) >= 0 {
			return fmt.Errorf("cache: AddIndexers: index %q already exists", spec.name)
		}
	}
	if err := s.c.addIndexes(added); err != nil {
		return err
	}
	// Copy on write: writers may be using the old slice outside the lock.
	specs := append(slices.Clip(s.loadSpecs()), added...)
	s.specs.Store(&specs)
	return nil
}

// lookupName returns the object with the given namespace and name, for
// listers, without building a key string.
func (s *threadSafeStore[T]) lookupName(namespace, name string) (T, bool) {
	return s.lookup(objectKey{namespace, name})
}

// filter returns the objects (of namespace, unless allNamespaces) for which
// keep returns true, calling keep under the read lock so that no
// intermediate list is built.
func (s *threadSafeStore[T]) filter(namespace string, allNamespaces bool, keep func(T) bool) []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []T
	if allNamespaces {
		for _, inner := range s.c.byNamespace {
			for _, e := range inner {
				if keep(e.obj) {
					out = append(out, e.obj)
				}
			}
		}
		return out
	}
	for _, e := range s.c.byNamespace[namespace] {
		if keep(e.obj) {
			out = append(out, e.obj)
		}
	}
	return out
}
