package storage

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// BoltFormat is the version of the data file layout OpenBolt writes and
// reads. A file of another version is refused with an error at open.
const BoltFormat = "1"

// DefaultOpenTimeout is how long OpenBolt waits for the file lock another
// process holds before it fails.
const DefaultOpenTimeout = time.Second

// BoltConfig configures a durable store (OpenBolt). Path and Codec are
// required; every other zero value is a documented default.
type BoltConfig struct {
	// Path is the data file, created (with its directory) if missing.
	Path string
	// Codec encodes objects for the file and decodes them at open.
	Codec Codec
	// Memory configures the in-memory store that serves reads and watches;
	// its history window (HistoryWindow, MaxEvents) is also the file's:
	// the file keeps the versions and events memory keeps, and compacts
	// them when memory does.
	Memory MemoryConfig
	// OpenTimeout bounds the wait for the file's lock, held by another
	// process using the file (default DefaultOpenTimeout).
	OpenTimeout time.Duration
}

// The file's buckets: meta holds the format, the continue-token key and the
// compacted revision; state the objects at the compacted revision by key
// (revision, then the encoded object); log one record per revision after it
// (by big-endian revision: flags, timestamp, key, encoded object).
var (
	bucketMeta  = []byte("kapi")
	bucketState = []byte("state")
	bucketLog   = []byte("log")

	metaFormat    = []byte("format")
	metaMAC       = []byte("continue-key")
	metaCompacted = []byte("compacted")
)

const recordDeleted = 1

// OpenBolt opens (or creates) the durable store at cfg.Path: a Memory whose
// every write is made durable in a go.etcd.io/bbolt file before it is
// acknowledged, published to readers or sent to watchers. Concurrent
// writes share one transaction and one fsync (group commit). At open, the
// objects, revisions, history window (old versions, deletions, events) and
// the key that signs continue tokens are read back, so reads at a past
// revision, continue tokens and watches from a revision work across a
// restart as they do without one.
//
// A file that another process holds is an error after cfg.OpenTimeout; a
// damaged file (bbolt's consistency check, an undecodable record) or one of
// another BoltFormat is an error naming the file: OpenBolt never starts an
// empty store over a file it cannot read. Close closes the file.
func OpenBolt(cfg BoltConfig) (*Memory, error) {
	if cfg.Path == "" {
		return nil, errors.New("storage: BoltConfig.Path is required")
	}
	if cfg.Codec == nil {
		return nil, errors.New("storage: BoltConfig.Codec is required")
	}
	if cfg.OpenTimeout <= 0 {
		cfg.OpenTimeout = DefaultOpenTimeout
	}
	if err := createBolt(cfg.Path); err != nil {
		return nil, err
	}
	db, err := openBoltFile(cfg.Path, cfg.OpenTimeout)
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("storage: %s is in use by another process", cfg.Path)
	}
	if err != nil {
		return nil, fmt.Errorf("storage: %s cannot be opened (damaged, or not a kapi data file): %w", cfg.Path, err)
	}
	m := newMemory(cfg.Memory)
	j := &boltJournal{db: db, m: m, kick: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{})}
	if err := j.load(cfg.Codec); err != nil {
		db.Close()
		return nil, fmt.Errorf("storage: %s: %w", cfg.Path, err)
	}
	m.codec, m.journal = cfg.Codec, j
	if m.compacted > j.compacted { // the count cap compacted while loading
		j.compact(m.compacted)
	}
	go j.run()
	m.start()
	return m, nil
}

// openBoltFile opens the file with bbolt, turning the panics bbolt raises on
// some damaged pages into errors. The freelist is synced: without it, bbolt
// rebuilds it at open by checking the pages in a goroutine of its own, where
// a damaged page panics beyond any recovery.
func openBoltFile(path string, timeout time.Duration) (db *bolt.DB, err error) {
	defer func() {
		if p := recover(); p != nil {
			db, err = nil, fmt.Errorf("damaged file: %v", p)
		}
	}()
	return bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout, FreelistType: bolt.FreelistMapType})
}

// createBolt creates a new data file at path, if there is none, by
// initialising it under a temporary name and renaming it: a crash leaves no
// file at path or a complete one.
func createBolt(path string) error {
	if _, err := os.Stat(path); err == nil || !errors.Is(err, os.ErrNotExist) {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	tmp := path + ".new"
	os.Remove(tmp)
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: DefaultOpenTimeout})
	if err != nil {
		return fmt.Errorf("storage: creating %s: %w", path, err)
	}
	var mac [32]byte
	if _, err := rand.Read(mac[:]); err != nil {
		db.Close()
		return fmt.Errorf("storage: %w", err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		for _, kv := range [][2][]byte{{metaFormat, []byte(BoltFormat)}, {metaMAC, mac[:]}, {metaCompacted, u64(0)}} {
			if err := meta.Put(kv[0], kv[1]); err != nil {
				return err
			}
		}
		if _, err := tx.CreateBucket(bucketState); err != nil {
			return err
		}
		_, err = tx.CreateBucket(bucketLog)
		return err
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("storage: creating %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// boltJournal is the journal of OpenBolt's store: one goroutine (run)
// commits the records queued since its last commit in one transaction.
type boltJournal struct {
	db *bolt.DB
	m  *Memory

	mu        sync.Mutex
	pending   []journalRecord
	compactTo uint64

	kick    chan struct{}
	closing chan struct{}
	done    chan struct{}

	compacted uint64 // the compacted revision in the file (run only, after load)
	failed    bool   // run only
	closeOnce sync.Once
	closeErr  error

	// Test hooks, run by the committer before a transaction (with its
	// records taken) and after it (before publishing).
	beforeCommit, afterCommit atomic.Pointer[func()]
}

func (j *boltJournal) append(rec journalRecord) {
	j.mu.Lock()
	j.pending = append(j.pending, rec)
	j.mu.Unlock()
	j.wake()
}

func (j *boltJournal) compact(rev uint64) {
	j.mu.Lock()
	j.compactTo = max(j.compactTo, rev)
	j.mu.Unlock()
	j.wake()
}

func (j *boltJournal) wake() {
	select {
	case j.kick <- struct{}{}:
	default:
	}
}

func (j *boltJournal) close() error {
	j.closeOnce.Do(func() {
		close(j.closing)
		<-j.done
		j.closeErr = j.db.Close()
	})
	return j.closeErr
}

// run commits until close, then commits what is left and returns.
func (j *boltJournal) run() {
	defer close(j.done)
	var batch []journalRecord
	for {
		select {
		case <-j.kick:
		case <-j.closing:
			for j.commit(&batch) {
			}
			return
		}
		for j.commit(&batch) {
		}
	}
}

// commit writes the pending records and compaction in one transaction and
// publishes them; it reports whether there was anything to commit. batch is
// the slice to reuse for the records.
func (j *boltJournal) commit(batch *[]journalRecord) bool {
	j.mu.Lock()
	recs, compactTo := j.pending, j.compactTo
	j.pending = (*batch)[:0]
	j.mu.Unlock()
	*batch = recs
	if len(recs) == 0 && compactTo <= j.compacted {
		return false
	}
	if j.failed {
		return true // the store refuses writes; these were never acknowledged
	}
	if f := j.beforeCommit.Load(); f != nil {
		(*f)()
	}
	err := j.db.Update(func(tx *bolt.Tx) error {
		log := tx.Bucket(bucketLog)
		log.FillPercent = 1 // revisions only grow
		var buf []byte
		for _, r := range recs {
			buf = appendRecord(buf[:0], r)
			if err := log.Put(u64(r.rev), bytes.Clone(buf)); err != nil {
				return err
			}
		}
		if compactTo > j.compacted {
			return compactTx(tx, compactTo)
		}
		return nil
	})
	var last uint64
	if len(recs) > 0 {
		last = recs[len(recs)-1].rev
	}
	clear(recs) // drop the references to the encoded objects
	if err != nil {
		j.failed = true
		j.m.fail(err)
		return true
	}
	j.compacted = max(j.compacted, compactTo)
	if f := j.afterCommit.Load(); f != nil {
		(*f)()
	}
	if last > 0 {
		j.m.publish(last)
	}
	return true
}

// compactTx folds the log records up to c into the state bucket and drops
// them.
func compactTx(tx *bolt.Tx, c uint64) error {
	log, state := tx.Bucket(bucketLog), tx.Bucket(bucketState)
	var recs []journalRecord
	cur := log.Cursor()
	for k, v := cur.First(); k != nil && binary.BigEndian.Uint64(k) <= c; k, v = cur.Next() {
		r, err := parseRecord(k, v) // copies: the pages may move as the transaction writes
		if err != nil {
			return err
		}
		recs = append(recs, r)
	}
	for _, r := range recs {
		var err error
		if r.deleted {
			err = state.Delete([]byte(r.key))
		} else {
			err = state.Put([]byte(r.key), append(u64(r.rev), r.data...))
		}
		if err == nil {
			err = log.Delete(u64(r.rev))
		}
		if err != nil {
			return err
		}
	}
	return tx.Bucket(bucketMeta).Put(metaCompacted, u64(c))
}

// appendRecord appends r's encoding to b: flags, timestamp, key length,
// key, encoded object.
func appendRecord(b []byte, r journalRecord) []byte {
	var flags byte
	if r.deleted {
		flags |= recordDeleted
	}
	b = append(b, flags)
	b = binary.BigEndian.AppendUint64(b, uint64(r.at))
	b = binary.AppendUvarint(b, uint64(len(r.key)))
	b = append(b, r.key...)
	return append(b, r.data...)
}

// parseRecord decodes the log record of key k; the result shares no memory
// with k or v.
func parseRecord(k, v []byte) (journalRecord, error) {
	if len(k) != 8 || len(v) < 9 {
		return journalRecord{}, fmt.Errorf("malformed log record %x", k)
	}
	r := journalRecord{rev: binary.BigEndian.Uint64(k), deleted: v[0]&recordDeleted != 0,
		at: int64(binary.BigEndian.Uint64(v[1:9]))}
	n, w := binary.Uvarint(v[9:])
	if w <= 0 || uint64(len(v)-9-w) < n {
		return journalRecord{}, fmt.Errorf("malformed log record of revision %d", r.rev)
	}
	r.key = string(v[9+w : 9+w+int(n)])
	r.data = bytes.Clone(v[9+w+int(n):])
	return r, nil
}

// load checks the file's format and restores the store from it, reading
// every page in use: a damaged one fails the load (bbolt panics on some,
// which load recovers from; the load runs on the caller's goroutine).
func (j *boltJournal) load(codec Codec) (err error) {
	defer func() {
		// bbolt panics on some damaged pages rather than returning errors.

		if p := recover(); p != nil {
			err = fmt.Errorf("the data file is damaged: %v", p)
		}
	}()
	var (
		mac       []byte
		compacted uint64
		base      []restoredObject
		recs      []journalRecord
	)
	err = j.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return errors.New("not a kapi data file (no format record)")
		}
		if f := meta.Get(metaFormat); string(f) != BoltFormat {
			return fmt.Errorf("the data file has format %q; this version of kapi reads format %q", f, BoltFormat)
		}
		mac = bytes.Clone(meta.Get(metaMAC))
		c := meta.Get(metaCompacted)
		state, log := tx.Bucket(bucketState), tx.Bucket(bucketLog)
		if len(mac) != 32 || len(c) != 8 || state == nil || log == nil {
			return errors.New("the data file is damaged: missing metadata")
		}
		compacted = binary.BigEndian.Uint64(c)
		err := state.ForEach(func(k, v []byte) error {
			if len(v) < 8 {
				return fmt.Errorf("the data file is damaged: malformed object %q", k)
			}
			rev := binary.BigEndian.Uint64(v)
			obj, err := codec.Decode(string(k), bytes.Clone(v[8:]))
			if err != nil {
				return fmt.Errorf("decoding %s: %w", k, err)
			}
			base = append(base, restoredObject{key: string(k), rev: rev, obj: setRevision(obj, rev)})
			return nil
		})
		if err != nil {
			return err
		}
		return log.ForEach(func(k, v []byte) error {
			r, err := parseRecord(k, v)
			if err != nil {
				return fmt.Errorf("the data file is damaged: %w", err)
			}
			recs = append(recs, r)
			return nil
		})
	})
	if err != nil {
		return err
	}
	j.compacted = compacted
	copy(j.m.macKey[:], mac)
	return j.m.restore(compacted, base, recs, func(r journalRecord) (Object, error) {
		obj, err := codec.Decode(r.key, r.data)
		if err != nil {
			return nil, err
		}
		return setRevision(obj, r.rev), nil
	})
}
