package cache

import (
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// MutationDetector is an [Indexer] for tests that catches code modifying
// cached objects in place, the bug that sharing objects (see "Objects are
// shared" in the package documentation) invites. It wraps another Indexer
// and, for every object written through it, keeps a deep copy; an object
// that no longer equals its copy was modified after it was stored.
//
// It compares at two moments, with no goroutine of its own:
//
//   - at each write of a key (Add, Update, Delete, and Replace for every
//     key), for the object about to be replaced or removed, so the common
//     bug of modifying an object from the cache and writing it back is
//     caught on the spot; a mutation found there is passed to the
//     OnMutation function of the [MutationDetectorConfig], which by
//     default panics;
//   - at [MutationDetector.Check], for every object, which returns the
//     mutations as an error; call it at the end of a test, or whenever
//     the code under test has had a chance to misbehave.
//
// Copies come from a DeepCopy method of T (every kind has one) or from
// [MutationDetectorConfig].Copy. Slices and maps that are nil in one and empty in the
// other compare equal. Keeping a copy of every object doubles the memory
// of the cache, and comparing walks the objects by reflection: this is a
// test tool. Write through the detector only (not through the Indexer it
// wraps), or it loses track of objects.
type MutationDetector[T Object] struct {
	inner    Indexer[T]
	copy     func(T) T
	onChange func(error)

	mu sync.Mutex
	// watched maps keys to the object stored through the detector and
	// its copy.
	watched map[objectKey]snapshot[T]
}

type snapshot[T Object] struct {
	cached, copy T
}

// MutationDetectorConfig configures [NewMutationDetector]. Every zero value
// is the documented default.
type MutationDetectorConfig[T any] struct {
	// Copy returns a deep copy of an object: one that shares no memory
	// with its argument that could be modified. The default is T's
	// DeepCopy() T method (every kind has one); set Copy for types without
	// one, such as an interface type argument.
	Copy func(T) T
	// OnMutation receives a *[MutationError] when a write finds that the
	// object it replaces or removes was modified. The default panics, as
	// client-go's detector does: a modified cache cannot be trusted. In a
	// test, pass t.Error (safe from any goroutine):
	//
	//	cache.MutationDetectorConfig[*corev1.Pod]{OnMutation: func(err error) { t.Error(err) }}
	//
	// It is called without the detector's lock held.
	OnMutation func(error)
}

// NewMutationDetector returns a detector over inner, which should be empty
// (objects already in it are not watched). It fails if cfg.Copy is nil and
// T has no DeepCopy() T method.
func NewMutationDetector[T Object](inner Indexer[T], cfg MutationDetectorConfig[T]) (*MutationDetector[T], error) {
	d := &MutationDetector[T]{inner: inner, copy: cfg.Copy, onChange: cfg.OnMutation, watched: make(map[objectKey]snapshot[T])}
	if d.copy == nil {
		var zero T
		if _, ok := any(zero).(interface{ DeepCopy() T }); !ok {
			return nil, fmt.Errorf("cache: NewMutationDetector: %T has no DeepCopy() %[1]T method; set MutationDetectorConfig.Copy", zero)
		}
		d.copy = func(obj T) T { return any(obj).(interface{ DeepCopy() T }).DeepCopy() }
	}
	if d.onChange == nil {
		d.onChange = func(err error) { panic(err) }
	}
	return d, nil
}

var _ Indexer[metav1.Object] = (*MutationDetector[metav1.Object])(nil)

// MutatedObject describes one modified object in a [MutationError].
type MutatedObject struct {
	// Key is the key of the object.
	Key string
	// Field is the Go path of the first difference found between the
	// object and its copy, such as `.ObjectMeta.Labels["app"]`.
	Field string
}

// MutationError reports cached objects that were modified in place.
type MutationError struct {
	// Objects lists the modified objects, by key.
	Objects []MutatedObject
}

// Error lists the modified objects and where they differ.
func (e *MutationError) Error() string {
	var b strings.Builder
	b.WriteString("cache: ")
	if len(e.Objects) == 1 {
		b.WriteString("a cached object was")
	} else {
		b.WriteString(strconv.Itoa(len(e.Objects)) + " cached objects were")
	}
	b.WriteString(" modified in place (objects from a cache are shared; DeepCopy before modifying):")
	for i, m := range e.Objects {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(" " + strconv.Quote(m.Key) + " at " + m.Field)
	}
	return b.String()
}

// mutationError returns the error for found, or nil if it is empty.
func mutationError(found []MutatedObject) error {
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b MutatedObject) int { return strings.Compare(a.Key, b.Key) })
	return &MutationError{Objects: found}
}

// compare returns the modification of the object watched under k, if any.
func (s snapshot[T]) compare(k objectKey) (MutatedObject, bool) {
	path, differs := firstDifference(reflect.ValueOf(s.cached), reflect.ValueOf(s.copy), "", 0)
	if !differs {
		return MutatedObject{}, false
	}
	if path == "" {
		path = "(the object)"
	}
	return MutatedObject{Key: k.String(), Field: path}, true
}

// checkLocked compares the object watched under k, if any.
func (d *MutationDetector[T]) checkLocked(k objectKey, found []MutatedObject) []MutatedObject {
	if s, ok := d.watched[k]; ok {
		if m, bad := s.compare(k); bad {
			found = append(found, m)
		}
	}
	return found
}

// Check compares every watched object with its copy and returns a
// *[MutationError] listing those that were modified, or nil. It does not
// call the OnMutation function.
func (d *MutationDetector[T]) Check() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var found []MutatedObject
	for k := range d.watched {
		found = d.checkLocked(k, found)
	}
	return mutationError(found)
}

// report passes a mutation found by a write to the OnMutation function.
func (d *MutationDetector[T]) report(found []MutatedObject) {
	if err := mutationError(found); err != nil {
		d.onChange(err)
	}
}

// Add checks the object stored under obj's key, then adds obj as the
// wrapped Indexer does and watches it.
func (d *MutationDetector[T]) Add(obj T) error { return d.Update(obj) }

// Update checks the object stored under obj's key, then updates obj as the
// wrapped Indexer does and watches it.
func (d *MutationDetector[T]) Update(obj T) error {
	k, err := keyOf(obj)
	if err != nil {
		return err
	}
	d.mu.Lock()
	found := d.checkLocked(k, nil)
	err = d.inner.Update(obj)
	if err == nil {
		d.watched[k] = snapshot[T]{obj, d.copy(obj)}
	}
	d.mu.Unlock()
	d.report(found)
	return err
}

// Delete checks the object stored under obj's key, then deletes it as the
// wrapped Indexer does.
func (d *MutationDetector[T]) Delete(obj T) error {
	k, err := keyOf(obj)
	if err != nil {
		return err
	}
	d.mu.Lock()
	found := d.checkLocked(k, nil)
	err = d.inner.Delete(obj)
	if err == nil {
		delete(d.watched, k)
	}
	d.mu.Unlock()
	d.report(found)
	return err
}

// Replace checks every watched object, then replaces the contents as the
// wrapped Indexer does and watches the new objects.
func (d *MutationDetector[T]) Replace(items []T) (*ReplaceDiff[T], error) {
	d.mu.Lock()
	var found []MutatedObject
	for k := range d.watched {
		found = d.checkLocked(k, found)
	}
	diff, err := d.inner.Replace(items)
	if err == nil {
		// Keys were validated by the Replace.
		d.watched = make(map[objectKey]snapshot[T], len(items))
		for _, obj := range items {
			d.watched[objectKey{obj.GetNamespace(), obj.GetName()}] = snapshot[T]{obj, d.copy(obj)}
		}
	}
	d.mu.Unlock()
	d.report(found)
	return diff, err
}

// Get is the wrapped Indexer's Get.
func (d *MutationDetector[T]) Get(obj T) (T, bool, error) { return d.inner.Get(obj) }

// GetByKey is the wrapped Indexer's GetByKey.
func (d *MutationDetector[T]) GetByKey(key string) (T, bool) { return d.inner.GetByKey(key) }

// List is the wrapped Indexer's List.
func (d *MutationDetector[T]) List() []T { return d.inner.List() }

// ListKeys is the wrapped Indexer's ListKeys.
func (d *MutationDetector[T]) ListKeys() []string { return d.inner.ListKeys() }

// Len is the wrapped Indexer's Len.
func (d *MutationDetector[T]) Len() int { return d.inner.Len() }

// Index is the wrapped Indexer's Index.
func (d *MutationDetector[T]) Index(indexName string, obj T) ([]T, error) {
	return d.inner.Index(indexName, obj)
}

// ByIndex is the wrapped Indexer's ByIndex.
func (d *MutationDetector[T]) ByIndex(indexName, indexedValue string) ([]T, error) {
	return d.inner.ByIndex(indexName, indexedValue)
}

// IndexKeys is the wrapped Indexer's IndexKeys.
func (d *MutationDetector[T]) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return d.inner.IndexKeys(indexName, indexedValue)
}

// ListIndexFuncValues is the wrapped Indexer's ListIndexFuncValues.
func (d *MutationDetector[T]) ListIndexFuncValues(indexName string) []string {
	return d.inner.ListIndexFuncValues(indexName)
}

// Indexers is the wrapped Indexer's Indexers.
func (d *MutationDetector[T]) Indexers() Indexers[T] { return d.inner.Indexers() }

// AddIndexers is the wrapped Indexer's AddIndexers.
func (d *MutationDetector[T]) AddIndexers(indexers Indexers[T]) error {
	return d.inner.AddIndexers(indexers)
}

func (d *MutationDetector[T]) lookupName(namespace, name string) (T, bool) {
	return lookupName(d.inner, namespace, name)
}

func (d *MutationDetector[T]) filter(namespace string, allNamespaces bool, keep func(T) bool) []T {
	return filter(d.inner, namespace, allNamespaces, keep)
}

// maxCompareDepth bounds the walk of firstDifference, against cycles.
const maxCompareDepth = 64

// firstDifference walks a and b in parallel and returns the path of the
// first difference. Unlike reflect.DeepEqual, it treats nil and empty
// slices and maps as equal, since a deep copy may not keep the
// distinction, and it names where the values differ.
func firstDifference(a, b reflect.Value, path string, depth int) (string, bool) {
	if !a.IsValid() || !b.IsValid() {
		return path, a.IsValid() != b.IsValid()
	}
	if a.Type() != b.Type() {
		return path, true
	}
	if depth > maxCompareDepth {
		return "", false
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return path, a.IsNil() != b.IsNil()
		}
		if a.Pointer() == b.Pointer() {
			return "", false
		}
		return firstDifference(a.Elem(), b.Elem(), path, depth+1)
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return path, a.IsNil() != b.IsNil()
		}
		return firstDifference(a.Elem(), b.Elem(), path, depth+1)
	case reflect.Struct:
		t := a.Type()
		for i := range a.NumField() {
			if p, ok := firstDifference(a.Field(i), b.Field(i), path+"."+t.Field(i).Name, depth+1); ok {
				return p, true
			}
		}
		return "", false
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return path, true
		}
		for i := range a.Len() {
			if p, ok := firstDifference(a.Index(i), b.Index(i), path+"["+strconv.Itoa(i)+"]", depth+1); ok {
				return p, true
			}
		}
		return "", false
	case reflect.Map:
		if a.Len() != b.Len() {
			return path, true
		}
		// Visit keys in a stable order, so the reported path is too.
		keys := slices.SortedFunc(iterKeys(a), func(x, y reflect.Value) int {
			return strings.Compare(formatKey(x), formatKey(y))
		})
		for _, k := range keys {
			p := path + "[" + formatKey(k) + "]"
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				return p, true
			}
			if p, ok := firstDifference(a.MapIndex(k), bv, p, depth+1); ok {
				return p, true
			}
		}
		return "", false
	case reflect.Bool:
		return path, a.Bool() != b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return path, a.Int() != b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return path, a.Uint() != b.Uint()
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return path, x != y && (x == x || y == y) // NaN equals NaN here
	case reflect.Complex64, reflect.Complex128:
		return path, a.Complex() != b.Complex()
	case reflect.String:
		return path, a.String() != b.String()
	default: // Chan, Func, UnsafePointer: compare identity.
		return path, a.Pointer() != b.Pointer()
	}
}

// iterKeys yields the keys of the map m.
func iterKeys(m reflect.Value) iter.Seq[reflect.Value] {
	return func(yield func(reflect.Value) bool) {
		for it := m.MapRange(); it.Next(); {
			if !yield(it.Key()) {
				return
			}
		}
	}
}

// formatKey prints a map key for a path.
func formatKey(k reflect.Value) string {
	switch k.Kind() {
	case reflect.String:
		return strconv.Quote(k.String())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10)
	}
	if k.CanInterface() {
		return fmt.Sprintf("%#v", k.Interface())
	}
	return "?"
}
