package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
)

// The tests of this file run on OpenBolt whatever -backend says: they close
// a durable store and open it again.

// boltPath returns a data file path in the test's temporary directory.
func boltPath(t testing.TB) string { return filepath.Join(t.TempDir(), "data", "kapi.db") }

// dump describes everything a client can observe of m's history: the
// revision, the compacted revision, the list at every readable revision and
// the events a watch from the compacted revision replays (objects and
// previous states).
func dump(t *testing.T, m *Memory) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	desc := func(o Object) string {
		if o == nil {
			return "-"
		}
		c := o.(*corev1.ConfigMap)
		return fmt.Sprintf("%s/%s@%s%v%v", c.Namespace, c.Name, c.ResourceVersion, c.Labels, c.Data)
	}
	rev, compacted := m.Revision(), m.CompactedRevision()
	fmt.Fprintf(&b, "revision %d compacted %d\n", rev, compacted)
	for r := max(compacted, 1); r <= rev; r++ {
		res, err := m.List(ctx, "/core/configmaps/", ListOptions{ReadOptions: ReadOptions{Match: Exact, ResourceVersion: r}})
		if err != nil {
			t.Fatalf("list at %d: %v", r, err)
		}
		fmt.Fprintf(&b, "at %d:", r)
		for _, o := range res.Items {
			b.WriteString(" " + desc(o))
		}
		b.WriteString("\n")
	}
	w := mustWatch(t, m, "/", WatchOptions{ResourceVersion: compacted})
	for range rev - compacted {
		e := mustNext(t, w)
		fmt.Fprintf(&b, "%s %d %s prev %s\n", e.Type, e.Revision, desc(e.Object), desc(e.PrevObject))
	}
	w.Stop()
	return b.String()
}

// writeHistory makes creates, updates and deletes, some of keys deleted and
// created again.
func writeHistory(t *testing.T, m *Memory, round int) {
	for i := range 6 {
		mustCreate(t, m, "ns", fmt.Sprintf("r%d-%d", round, i), map[string]string{"i": fmt.Sprint(i)}, "k", "v")
	}
	mustUpdate(t, m, "ns", fmt.Sprintf("r%d-0", round), map[string]string{"changed": "yes"}, "k", "v2")
	mustDelete(t, m, "ns", fmt.Sprintf("r%d-1", round))
	mustCreate(t, m, "ns", fmt.Sprintf("r%d-1", round), nil, "again", "yes")
	mustDelete(t, m, "ns", fmt.Sprintf("r%d-2", round))
	mustUpdate(t, m, "other", "shared", nil, "round", fmt.Sprint(round))
}

func TestBoltRestartKeepsHistory(t *testing.T) {
	path := boltPath(t)
	cfg := MemoryConfig{CompactInterval: -1, Now: newFakeClock().Now}
	m := openBolt(t, path, cfg)
	mustCreate(t, m, "other", "shared", nil)
	writeHistory(t, m, 0)
	m.Compact(5)
	writeHistory(t, m, 1)
	before := dump(t, m)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	m = openBolt(t, path, cfg)
	defer m.Close()
	if after := dump(t, m); after != before {
		t.Fatalf("history after a restart:\n%s\nbefore:\n%s", after, before)
	}
	// The revisions go on from where they were.
	rev := m.Revision()
	if c := mustCreate(t, m, "ns", "after", nil); rv(c) != rvOf(rev+1) {
		t.Fatalf("first write after the restart at %s, want %d", rv(c), rev+1)
	}
	// The compaction holds: below it, 410.
	_, err := m.Get(context.Background(), key("ns", "r0-0"), ReadOptions{Match: Exact, ResourceVersion: 4})
	wantCode(t, err, CodeExpired)
	_, err = m.Watch(context.Background(), "/", WatchOptions{ResourceVersion: 4})
	wantCode(t, err, CodeExpired)
}

func TestBoltWatchAndContinueAcrossRestart(t *testing.T) {
	ctx := context.Background()
	path := boltPath(t)
	cfg := MemoryConfig{CompactInterval: -1, Now: newFakeClock().Now}
	m := openBolt(t, path, cfg)
	for i := range 5 {
		mustCreate(t, m, "ns", fmt.Sprint(i), nil)
	}
	page, err := m.List(ctx, "/core/configmaps/", ListOptions{Limit: 2})
	if err != nil || page.Continue == "" {
		t.Fatalf("first page: %v %v", page, err)
	}
	seen := m.Revision()
	mustUpdate(t, m, "ns", "3", nil, "k", "v") // after the first page: not in the list
	m.Close()

	m = openBolt(t, path, cfg)
	defer m.Close()
	// The token still authenticates and the list goes on at its revision.
	rest, err := m.List(ctx, "/core/configmaps/", ListOptions{Limit: 10, Continue: page.Continue})
	if err != nil {
		t.Fatalf("continue after restart: %v", err)
	}
	if got := strings.Join(names(rest.Items), ","); got != "ns/2,ns/3,ns/4" || rest.Revision != seen || rv(rest.Items[1]) != "4" {
		t.Fatalf("rest = %s at %d (ns/3 at %s), want ns/2,ns/3,ns/4 at %d", got, rest.Revision, rv(rest.Items[1]), seen)
	}
	// A watch from the revision the client had resumes with what followed,
	// then goes on live.
	w := mustWatch(t, m, "/", WatchOptions{ResourceVersion: seen})
	expectEvents(t, w, evSummary{Modified, "3", seen + 1})
	mustDelete(t, m, "ns", "0")
	expectEvents(t, w, evSummary{Deleted, "0", seen + 2})
}

func TestBoltCompactionAcrossRestart(t *testing.T) {
	path := boltPath(t)
	clock := newFakeClock()
	cfg := MemoryConfig{CompactInterval: -1, Now: clock.Now, MaxEvents: 8, HistoryWindow: time.Minute}
	m := openBolt(t, path, cfg)
	for i := range 12 { // the count cap compacts to 4
		mustCreate(t, m, "ns", fmt.Sprint(i), nil)
	}
	clock.Advance(2 * time.Minute)
	mustUpdate(t, m, "ns", "0", nil, "k", "v") // 13, recent
	if m.CompactedRevision() != 5 {
		t.Fatalf("compacted = %d, want 5", m.CompactedRevision())
	}
	m.Close()

	m = openBolt(t, path, cfg)
	if m.CompactedRevision() != 5 || m.Revision() != 13 {
		t.Fatalf("after restart: compacted %d revision %d, want 5 and 13", m.CompactedRevision(), m.Revision())
	}
	// The events' times were kept: compaction by age drops the old ones only.
	m.compactExpired()
	if m.CompactedRevision() != 12 {
		t.Fatalf("compacted by age to %d, want 12", m.CompactedRevision())
	}
	before := dump(t, m)
	m.Close()
	m = openBolt(t, path, cfg)
	defer m.Close()
	if after := dump(t, m); after != before {
		t.Fatalf("after compaction and restart:\n%s\nbefore:\n%s", after, before)
	}
	o, err := m.Get(context.Background(), key("ns", "5"), ReadOptions{})
	if err != nil || rv(o) != "6" {
		t.Fatalf("object compacted into the state: %v %v", o, err)
	}
}

// TestBoltGroupCommit holds the journal's first commit until more writers
// are queued: they all share the next transaction.
func TestBoltGroupCommit(t *testing.T) {
	m := openBolt(t, boltPath(t), MemoryConfig{})
	defer m.Close()
	j := m.journal.(*boltJournal)
	release := make(chan struct{})
	held := make(chan struct{})
	var once sync.Once
	hold := func() { once.Do(func() { close(held); <-release }) }
	j.beforeCommit.Store(&hold)
	var commits int
	count := func() { commits++ }
	j.afterCommit.Store(&count)

	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	wg.Go(func() {
		_, err := m.Create(context.Background(), key("ns", "first"), cm("ns", "first", nil))
		errs <- err
	})
	<-held
	for i := range writers {
		wg.Go(func() {
			_, err := m.Create(context.Background(), key("ns", fmt.Sprint(i)), cm("ns", fmt.Sprint(i), nil))
			errs <- err
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for queued := 0; queued < writers; {
		j.mu.Lock()
		queued = len(j.pending)
		j.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("%d writers queued", queued)
		}
		runtime.Gosched()
	}
	if m.Revision() != 0 {
		t.Fatalf("revision %d published before it is durable", m.Revision())
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if commits != 2 || m.Revision() != writers+1 {
		t.Fatalf("%d commits for %d writes (revision %d), want 2", commits, writers+1, m.Revision())
	}
}

// TestBoltFailedCommit closes the file under the store: the write is
// neither acknowledged nor visible, and later writes fail too.
func TestBoltFailedCommit(t *testing.T) {
	ctx := context.Background()
	m := openBolt(t, boltPath(t), MemoryConfig{})
	defer m.Close()
	mustCreate(t, m, "ns", "kept", nil)
	w := mustWatch(t, m, "/", WatchOptions{})
	j := m.journal.(*boltJournal)
	j.db.Close()
	if _, err := m.Create(ctx, key("ns", "lost"), cm("ns", "lost", nil)); err == nil || !strings.Contains(err.Error(), "data file failed") {
		t.Fatalf("create on a failed file: %v", err)
	}
	if _, err := m.Get(ctx, key("ns", "lost"), ReadOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unacknowledged write is visible: %v", err)
	}
	if m.Revision() != 1 {
		t.Fatalf("revision %d", m.Revision())
	}
	if _, err := m.GuaranteedUpdate(ctx, key("ns", "kept"), false, nil, func(Object) (Object, error) {
		return cm("ns", "kept", nil, "k", "v"), nil
	}); err == nil {
		t.Fatal("update after the failure succeeded")
	}
	select {
	case e := <-w.ResultChan():
		t.Fatalf("watch saw %+v", summarize(e))
	default:
	}
}

func TestBoltOpenErrors(t *testing.T) {
	cfg := MemoryConfig{CompactInterval: -1}
	t.Run("damaged", func(t *testing.T) {
		path := boltPath(t)
		m := openBolt(t, path, cfg)
		for i := range 50 {
			mustCreate(t, m, "ns", fmt.Sprint(i), nil, "k", strings.Repeat("x", 200))
		}
		m.Close()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Damage the data pages only (bbolt checksums its two meta pages),
		// then the meta pages too.
		// (A panic inside bbolt's Open leaks its file lock in this process:
		// each case has its own file.)
		for _, from := range []int{2 * os.Getpagesize(), 0} {
			damaged := slices.Clone(data)
			for i := from; i < len(damaged); i += 97 {
				damaged[i] ^= 0xff
			}
			path := fmt.Sprintf("%s.%d", path, from)
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err = OpenBolt(BoltConfig{Path: path, Codec: testCodec{}, Memory: cfg})
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("open of a file damaged from %d: %v", from, err)
			}
			t.Logf("damaged from %d: %v", from, err)
		}
	})
	t.Run("not a data file", func(t *testing.T) {
		path := boltPath(t)
		os.MkdirAll(filepath.Dir(path), 0o700)
		os.WriteFile(path, []byte("hello, this is not a database at all, but long enough to look like one\n"), 0o600)
		_, err := OpenBolt(BoltConfig{Path: path, Codec: testCodec{}, Memory: cfg})
		if err == nil || !strings.Contains(err.Error(), "cannot be opened") {
			t.Fatalf("open of a text file: %v", err)
		}
	})
	t.Run("other format", func(t *testing.T) {
		path := boltPath(t)
		m := openBolt(t, path, cfg)
		mustCreate(t, m, "ns", "a", nil)
		m.Close()
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(metaFormat, []byte("99")) })
		db.Close()
		_, err = OpenBolt(BoltConfig{Path: path, Codec: testCodec{}, Memory: cfg})
		if err == nil || !strings.Contains(err.Error(), `format "99"`) {
			t.Fatalf("open of another format: %v", err)
		}
	})
	t.Run("bbolt file of something else", func(t *testing.T) {
		path := boltPath(t)
		os.MkdirAll(filepath.Dir(path), 0o700)
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("x")); return err })
		db.Close()
		_, err = OpenBolt(BoltConfig{Path: path, Codec: testCodec{}, Memory: cfg})
		if err == nil || !strings.Contains(err.Error(), "not a kapi data file") {
			t.Fatalf("open of another bbolt file: %v", err)
		}
	})
	t.Run("undecodable object", func(t *testing.T) {
		path := boltPath(t)
		m := openBolt(t, path, cfg)
		if _, err := m.Create(context.Background(), "/bare/x", cm("", "x", nil)); err != nil {
			t.Fatal(err)
		}
		m.Close()
		_, err := OpenBolt(BoltConfig{Path: path, Codec: testCodec{}, Memory: cfg})
		if err == nil || !strings.Contains(err.Error(), "no type for /bare/x") {
			t.Fatalf("open with an undecodable object: %v", err)
		}
	})
	t.Run("in use", func(t *testing.T) {
		path := boltPath(t)
		m := openBolt(t, path, cfg)
		defer m.Close()
		_, err := OpenBolt(BoltConfig{Path: path, Codec: testCodec{}, Memory: cfg, OpenTimeout: 10 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), "in use") {
			t.Fatalf("second open: %v", err)
		}
	})
	t.Run("config", func(t *testing.T) {
		if _, err := OpenBolt(BoltConfig{Codec: testCodec{}}); err == nil {
			t.Fatal("no path")
		}
		if _, err := OpenBolt(BoltConfig{Path: boltPath(t)}); err == nil {
			t.Fatal("no codec")
		}
	})
}

// TestBoltDecidesOnDurableState holds a Create's commit: a second Create
// of the key, and an update of it, must not answer (a conflict, an update
// of the held object) before the object is durable.
func TestBoltDecidesOnDurableState(t *testing.T) {
	ctx := context.Background()
	m := openBolt(t, boltPath(t), MemoryConfig{})
	defer m.Close()
	j := m.journal.(*boltJournal)
	release, held := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hold := func() { once.Do(func() { close(held); <-release }) }
	j.beforeCommit.Store(&hold)
	var released atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() { mustCreate(t, m, "ns", "a", nil) })
	<-held
	answers := make(chan string, 2)
	wg.Go(func() {
		_, err := m.Create(ctx, key("ns", "a"), cm("ns", "a", nil))
		if !errors.Is(err, ErrAlreadyExists) {
			t.Errorf("second create: %v", err)
		}
		if !released.Load() {
			answers <- "the second create answered before the first was durable"
		}
	})
	wg.Go(func() {
		_, err := m.GuaranteedUpdate(ctx, key("ns", "a"), false, nil, func(cur Object) (Object, error) {
			if !released.Load() {
				answers <- "the update read the object before it was durable"
			}
			return cm("ns", "a", nil, "k", "v"), nil
		})
		if err != nil {
			t.Errorf("update: %v", err)
		}
	})
	// Broken, they answer at once; give them a moment to, then release.
	select {
	case a := <-answers:
		t.Error(a)
	case <-time.After(200 * time.Millisecond):
	}
	released.Store(true)
	close(release)
	wg.Wait()
	close(answers)
	for a := range answers {
		t.Error(a)
	}
}
