package storage

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Defaults of EtcdConfig.
const (
	// DefaultEtcdPrefix is the key prefix of kube-apiserver's --etcd-prefix.
	DefaultEtcdPrefix = "/registry"
	// DefaultEtcdDialTimeout bounds the first connection to the cluster.
	DefaultEtcdDialTimeout = 20 * time.Second
	// DefaultEtcdCompactInterval is how often the store compacts etcd's
	// history (kube-apiserver's --etcd-compaction-interval).
	DefaultEtcdCompactInterval = 5 * time.Minute
)

// EtcdConfig configures an Etcd store. Endpoints (or Client) and Codec are
// required; every other zero value is a documented default.
type EtcdConfig struct {
	// Endpoints are the URLs of the etcd members (kube-apiserver's
	// --etcd-servers), such as "https://10.0.0.1:2379".
	Endpoints []string
	// TLS, if set, is the client's TLS configuration (--etcd-cafile,
	// --etcd-certfile, --etcd-keyfile).
	TLS *tls.Config
	// Client, if set, is used instead of dialing Endpoints; Close leaves
	// it open.
	Client *clientv3.Client
	// DialTimeout bounds the first connection (default
	// DefaultEtcdDialTimeout).
	DialTimeout time.Duration
	// Prefix is put before every key (default DefaultEtcdPrefix, the
	// "/registry" of kube-apiserver).
	Prefix string
	// Key maps a key (or a collection's prefix) of the Interface to its
	// path under Prefix. It must keep prefixes: Key(p + s) == Key(p) + s
	// for every collection prefix p the store is asked about. Default: the
	// key itself. The API server maps its keys to kube-apiserver's layout
	// ("/core/services/default/x" → "/services/specs/default/x").
	Key func(key string) string
	// Codec encodes objects for etcd and decodes them. Decode gets the
	// etcd key less Prefix (Key's result). The resourceVersion is not
	// stored: it is the key's mod revision.
	Codec Codec
	// TooLargeWait bounds how long a read at a revision etcd has not
	// reached waits for it (default DefaultTooLargeWait; negative fails at
	// once).
	TooLargeWait time.Duration
	// WatchBuffer is how many undelivered events a watcher may hold before
	// it is ended with ErrTooSlow (default DefaultWatchBuffer).
	WatchBuffer int
	// CompactInterval is how often the history is compacted; every store
	// on the cluster takes part, and one compaction happens per interval
	// whatever their number, to the revision the previous interval ended
	// at (kube-apiserver's scheme, on its key compact_rev_key, so that
	// kube-apiserver and kapi share it). Default
	// DefaultEtcdCompactInterval; negative disables it.
	CompactInterval time.Duration
}

// Etcd is an Interface on an etcd cluster, as kube-apiserver's etcd3
// store: an object's resourceVersion is the mod revision of its key, a
// list's is the revision it was read at, creates, updates and deletes are
// transactions that compare the key's mod revision (so that several
// stores, in several processes, on one cluster never lose an update), and
// watches are etcd watches. Reads are linearizable except with Match Any
// (serializable: a member's local state).
//
// Continue tokens are kube-apiserver's (base64 of the JSON {"v", "rv",
// "start"}), not authenticated: any store on the same cluster and prefix
// continues a list another began, as the replicas of kube-apiserver do.
type Etcd struct {
	cfg    EtcdConfig
	cli    *clientv3.Client
	own    bool
	prefix string
	key    func(string) string

	rev       atomic.Uint64 // the highest revision seen
	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
}

var _ Interface = (*Etcd)(nil)

// OpenEtcd connects to the etcd cluster of cfg and starts the compactor.
func OpenEtcd(cfg EtcdConfig) (*Etcd, error) {
	if cfg.Codec == nil {
		return nil, errors.New("storage: EtcdConfig.Codec is required")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultEtcdPrefix
	}
	cfg.Prefix = strings.TrimSuffix(cfg.Prefix, "/")
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultEtcdDialTimeout
	}
	if cfg.TooLargeWait == 0 {
		cfg.TooLargeWait = DefaultTooLargeWait
	}
	if cfg.WatchBuffer <= 0 {
		cfg.WatchBuffer = DefaultWatchBuffer
	}
	if cfg.CompactInterval == 0 {
		cfg.CompactInterval = DefaultEtcdCompactInterval
	}
	e := &Etcd{cfg: cfg, prefix: cfg.Prefix, key: cfg.Key, cli: cfg.Client, done: make(chan struct{})}
	if e.key == nil {
		e.key = func(k string) string { return k }
	}
	if e.cli == nil {
		if len(cfg.Endpoints) == 0 {
			return nil, errors.New("storage: EtcdConfig.Endpoints is empty")
		}
		cli, err := clientv3.New(clientv3.Config{
			Endpoints:   cfg.Endpoints,
			TLS:         cfg.TLS,
			DialTimeout: cfg.DialTimeout,
			Logger:      zap.NewNop(),
		})
		if err != nil {
			return nil, fmt.Errorf("storage: connecting to etcd %v: %w", cfg.Endpoints, err)
		}
		e.cli, e.own = cli, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.DialTimeout)
	defer cancel()
	if _, err := e.currentRevision(ctx); err != nil {
		e.closeClient()
		return nil, fmt.Errorf("storage: reaching etcd %v: %w", cfg.Endpoints, err)
	}
	if cfg.CompactInterval > 0 {
		e.wg.Add(1)
		go e.compactLoop()
	}
	return e, nil
}

func (e *Etcd) closeClient() {
	if e.own {
		_ = e.cli.Close()
	}
}

// Close ends every watch, stops the compactor and closes the client (unless
// EtcdConfig.Client gave it). Methods called after Close fail with ErrClosed.
func (e *Etcd) Close() error {
	e.closeOnce.Do(func() {
		close(e.done)
		e.wg.Wait()
		e.closeClient()
	})
	return nil
}

func (e *Etcd) closed() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// etcdKey is the etcd key of an Interface key or prefix.
func (e *Etcd) etcdKey(key string) string { return e.prefix + e.key(key) }

// seen records a revision etcd answered with.
func (e *Etcd) seen(rev int64) uint64 {
	r := uint64(rev)
	for {
		cur := e.rev.Load()
		if r <= cur || e.rev.CompareAndSwap(cur, r) {
			return r
		}
	}
}

// Revision returns etcd's current revision (a linearizable read); if etcd
// cannot be reached within a few seconds, the highest revision this store
// has seen.
func (e *Etcd) Revision() uint64 {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if rev, err := e.currentRevision(ctx); err == nil {
		return rev
	}
	return e.rev.Load()
}

// currentRevision reads etcd's revision (a linearizable read of one key).
func (e *Etcd) currentRevision(ctx context.Context) (uint64, error) {
	resp, err := e.cli.Get(ctx, e.prefix+"/", clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return e.seen(resp.Header.Revision), nil
}

// Compact discards etcd's history before rev (as the compactor does every
// CompactInterval); the state at rev stays readable.
func (e *Etcd) Compact(rev uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = e.cli.Compact(ctx, int64(rev))
}

// compactRevKey is the key on which the stores of a cluster agree on who
// compacts (kube-apiserver's, outside any prefix).
const compactRevKey = "compact_rev_key"

// compactLoop compacts, every CompactInterval, to the revision recorded
// at the previous interval: the store whose transaction moves
// compactRevKey's version on does it, so that one compaction happens per
// interval however many stores (or kube-apiservers) share the cluster.
func (e *Etcd) compactLoop() {
	defer e.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-e.done
		cancel()
	}()
	t := time.NewTicker(e.cfg.CompactInterval)
	defer t.Stop()
	var version, rev int64
	for {
		select {
		case <-e.done:
			return
		case <-t.C:
		}
		resp, err := e.cli.Txn(ctx).If(clientv3.Compare(clientv3.Version(compactRevKey), "=", version)).
			Then(clientv3.OpPut(compactRevKey, strconv.FormatInt(rev, 10))).
			Else(clientv3.OpGet(compactRevKey)).Commit()
		if err != nil {
			continue
		}
		cur := resp.Header.Revision
		if !resp.Succeeded {
			if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
				version = kvs[0].Version
			}
			rev = cur
			continue
		}
		version++
		if rev > 0 {
			_, _ = e.cli.Compact(ctx, rev)
		}
		rev = cur
	}
}

// etcdError turns a client error into the store's.
func (e *Etcd) etcdError(key string, rev uint64, err error) error {
	if err == nil {
		return nil
	}
	if e.closed() && (errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "client connection is closing")) {
		return ErrClosed
	}
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return &Error{Code: CodeExpired, Key: key, ResourceVersion: rev,
			Message: fmt.Sprintf("resource version %d is too old (etcd compacted its history past it)", rev)}
	case errors.Is(err, rpctypes.ErrFutureRev):
		cur := e.rev.Load()
		return &Error{Code: CodeTooLargeResourceVersion, Key: key, ResourceVersion: cur,
			Message: fmt.Sprintf("Too large resource version: %d, current: %d", rev, cur)}
	}
	return err
}

// encode encodes obj for etcd, without its resourceVersion (the key's mod
// revision is): obj's resourceVersion is cleared.
func (e *Etcd) encode(key string, obj Object) (string, error) {
	obj.SetResourceVersion("")
	data, err := e.cfg.Codec.Encode(key, obj)
	if err != nil {
		return "", &Error{Code: CodeInvalidObject, Key: key, Message: "cannot encode the object for storage", Err: err}
	}
	return string(data), nil
}

// decode decodes a key-value of etcd, stamped with its mod revision.
func (e *Etcd) decode(kv *mvccpb.KeyValue) (Object, error) {
	return e.decodeAt(kv, uint64(kv.ModRevision))
}

func (e *Etcd) decodeAt(kv *mvccpb.KeyValue, rev uint64) (Object, error) {
	k := strings.TrimPrefix(string(kv.Key), e.prefix)
	obj, err := e.cfg.Codec.Decode(k, kv.Value)
	if err != nil {
		return nil, &Error{Code: CodeInvalidObject, Key: string(kv.Key), Message: "cannot decode the object stored in etcd", Err: err}
	}
	return setRevision(obj, rev), nil
}

// ensureRevision waits until etcd reaches rev, for at most TooLargeWait.
func (e *Etcd) ensureRevision(ctx context.Context, rev uint64) error {
	var deadline time.Time
	if e.cfg.TooLargeWait > 0 {
		deadline = time.Now().Add(e.cfg.TooLargeWait)
	}
	delay := 5 * time.Millisecond
	for {
		cur, err := e.currentRevision(ctx)
		if err != nil {
			return e.etcdError("", rev, err)
		}
		if cur >= rev {
			return nil
		}
		if !time.Now().Add(delay).Before(deadline) {
			return &Error{Code: CodeTooLargeResourceVersion, ResourceVersion: cur,
				Message: fmt.Sprintf("Too large resource version: %d, current: %d", rev, cur)}
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-e.done:
			t.Stop()
			return ErrClosed
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// readOps returns the options of a read as opts asks, after waiting for a
// revision etcd has not reached.
func (e *Etcd) readOps(ctx context.Context, opts ReadOptions) (rev uint64, ops []clientv3.OpOption, err error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	if e.closed() {
		return 0, nil, ErrClosed
	}
	switch opts.Match {
	case Latest:
	case Any:
		ops = append(ops, clientv3.WithSerializable())
	case NotOlderThan:
		if err := e.ensureRevision(ctx, opts.ResourceVersion); err != nil {
			return 0, nil, err
		}
	case Exact:
		if opts.ResourceVersion > 0 {
			if err := e.ensureRevision(ctx, opts.ResourceVersion); err != nil {
				return 0, nil, err
			}
			rev = opts.ResourceVersion
			ops = append(ops, clientv3.WithRev(int64(rev)))
		}
	default:
		return 0, nil, &Error{Code: CodeInvalidObject, Message: fmt.Sprintf("unknown ReadMatch %d", opts.Match)}
	}
	return rev, ops, nil
}

// Create implements Interface: a transaction that puts the object if the
// key has none.
func (e *Etcd) Create(ctx context.Context, key string, obj Object) (Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e.closed() {
		return nil, ErrClosed
	}
	if obj == nil || isNilObject(obj) {
		return nil, &Error{Code: CodeInvalidObject, Key: key, Message: "object is nil"}
	}
	data, err := e.encode(key, obj)
	if err != nil {
		return nil, err
	}
	k := e.etcdKey(key)
	resp, err := e.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, data)).Else(clientv3.OpGet(k, clientv3.WithKeysOnly())).Commit()
	if err != nil {
		return nil, e.etcdError(key, 0, err)
	}
	rev := e.seen(resp.Header.Revision)
	if !resp.Succeeded {
		var cur uint64
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			cur = uint64(kvs[0].ModRevision)
		}
		return nil, &Error{Code: CodeAlreadyExists, Key: key, ResourceVersion: cur}
	}
	return setRevision(obj, rev), nil
}

// Get implements Interface.
func (e *Etcd) Get(ctx context.Context, key string, opts ReadOptions) (Object, error) {
	rev, ops, err := e.readOps(ctx, opts)
	if err != nil {
		return nil, err
	}
	resp, err := e.cli.Get(ctx, e.etcdKey(key), ops...)
	if err != nil {
		return nil, e.etcdError(key, rev, err)
	}
	if rev == 0 {
		rev = e.seen(resp.Header.Revision)
	}
	if len(resp.Kvs) == 0 {
		return nil, &Error{Code: CodeNotFound, Key: key, ResourceVersion: rev}
	}
	return e.decode(resp.Kvs[0])
}

// current reads the object under k (nil if none) and its mod revision.
func (e *Etcd) current(ctx context.Context, key, k string) (Object, int64, uint64, error) {
	resp, err := e.cli.Get(ctx, k)
	if err != nil {
		return nil, 0, 0, e.etcdError(key, 0, err)
	}
	rev := e.seen(resp.Header.Revision)
	if len(resp.Kvs) == 0 {
		return nil, 0, rev, nil
	}
	obj, err := e.decode(resp.Kvs[0])
	return obj, resp.Kvs[0].ModRevision, rev, err
}

// fromElse decodes the state a failed transaction's Else read.
func (e *Etcd) fromElse(resp *clientv3.TxnResponse) (Object, int64, error) {
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return nil, 0, nil
	}
	obj, err := e.decode(kvs[0])
	return obj, kvs[0].ModRevision, err
}

// GuaranteedUpdate implements Interface: tryUpdate runs on the current
// object, and the result is put by a transaction that compares the key's
// mod revision with the one read; if another write (through any store on
// the cluster) came first, tryUpdate runs again on the object that
// transaction read.
func (e *Etcd) GuaranteedUpdate(ctx context.Context, key string, allowCreate bool, pre *Preconditions,
	tryUpdate func(current Object) (Object, error)) (Object, error) {
	if e.closed() {
		return nil, ErrClosed
	}
	k := e.etcdKey(key)
	cur, modRev, rev, err := e.current(ctx, key, k)
	if err != nil {
		return nil, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		obj, noop, err := applyUpdate(key, allowCreate, pre, cur, rev, uint64(modRev), tryUpdate)
		if err != nil || noop {
			return obj, err
		}
		data, err := e.encode(key, obj)
		if err != nil {
			return nil, err
		}
		resp, err := e.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(k), "=", modRev)).
			Then(clientv3.OpPut(k, data)).Else(clientv3.OpGet(k)).Commit()
		if err != nil {
			return nil, e.etcdError(key, 0, err)
		}
		rev = e.seen(resp.Header.Revision)
		if resp.Succeeded {
			return setRevision(obj, rev), nil
		}
		if cur, modRev, err = e.fromElse(resp); err != nil {
			return nil, err
		}
	}
}

// Delete implements Interface: a transaction that deletes the key if its
// mod revision is still the one whose object passed the preconditions and
// validate.
func (e *Etcd) Delete(ctx context.Context, key string, pre *Preconditions, validate func(current Object) error) (Object, error) {
	if e.closed() {
		return nil, ErrClosed
	}
	k := e.etcdKey(key)
	cur, modRev, rev, err := e.current(ctx, key, k)
	if err != nil {
		return nil, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if cur == nil {
			return nil, &Error{Code: CodeNotFound, Key: key, ResourceVersion: rev}
		}
		if err := checkPreconditions(key, pre, cur); err != nil {
			return nil, err
		}
		if validate != nil {
			if err := validate(cur); err != nil {
				return nil, err
			}
		}
		resp, err := e.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(k), "=", modRev)).
			Then(clientv3.OpDelete(k)).Else(clientv3.OpGet(k)).Commit()
		if err != nil {
			return nil, e.etcdError(key, 0, err)
		}
		rev = e.seen(resp.Header.Revision)
		if resp.Succeeded {
			// cur was decoded for this call: nobody else holds it.
			return setRevision(cur, rev), nil
		}
		if cur, modRev, err = e.fromElse(resp); err != nil {
			return nil, err
		}
	}
}

// etcdContinue is kube-apiserver's continue token.
type etcdContinue struct {
	APIVersion string `json:"v"`
	Rev        int64  `json:"rv"`
	Start      string `json:"start"`
}

const continueAPIVersion = "meta.k8s.io/v1"

func encodeEtcdContinue(rev int64, start string) string {
	data, _ := json.Marshal(etcdContinue{APIVersion: continueAPIVersion, Rev: rev, Start: start})
	return base64.RawURLEncoding.EncodeToString(data)
}

func decodeEtcdContinue(token string) (*etcdContinue, error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil, invalidContinue(err.Error())
	}
	var t etcdContinue
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, invalidContinue(err.Error())
	}
	if t.APIVersion != continueAPIVersion {
		return nil, invalidContinue("server does not recognize this encoded key version")
	}
	// The start must stay under the list's prefix: no "..", no "//".
	start := "/" + strings.TrimPrefix(t.Start, "/")
	if t.Rev < 0 || path.Clean(start) != start {
		return nil, invalidContinue(t.Start)
	}
	t.Start = start[1:]
	return &t, nil
}

// listBatch is how many keys a list with a Predicate reads from etcd at
// once beyond its Limit.
const listBatch = 500

// List implements Interface. Every page is read at the revision of the
// first (the token carries it), with etcd's range reads; with a
// Predicate, reads go on until Limit objects match or the prefix ends.
func (e *Etcd) List(ctx context.Context, prefix string, opts ListOptions) (*ListResult, error) {
	p := e.etcdKey(prefix)
	start := p
	var rev uint64
	var ops []clientv3.OpOption
	if opts.Continue != "" {
		if opts.ResourceVersion != 0 {
			return nil, &Error{Code: CodeInvalidContinue, Message: "specifying resource version is not allowed when using continue"}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t, err := decodeEtcdContinue(opts.Continue)
		if err != nil {
			return nil, err
		}
		start = p + t.Start
		if t.Rev > 0 {
			rev = uint64(t.Rev)
			ops = append(ops, clientv3.WithRev(t.Rev))
		}
	} else {
		var err error
		if rev, ops, err = e.readOps(ctx, opts.ReadOptions); err != nil {
			return nil, err
		}
	}
	limit := max(opts.Limit, 0)
	end := clientv3.GetPrefixRangeEnd(p)
	res := &ListResult{Items: []Object{}}
	for {
		batchOps := append(ops[:len(ops):len(ops)], clientv3.WithRange(end))
		if limit > 0 {
			n := limit - int64(len(res.Items))
			if opts.Predicate != nil {
				n = max(n, listBatch)
			}
			batchOps = append(batchOps, clientv3.WithLimit(n))
		}
		resp, err := e.cli.Get(ctx, start, batchOps...)
		if err != nil {
			err = e.etcdError(prefix, rev, err)
			var se *Error
			if opts.Continue != "" && errors.As(err, &se) && se.Code == CodeExpired {
				se.Message = "the continue token's resource version is compacted; continue at the latest revision with the token of this error (an inconsistent list)"
				se.Continue = encodeEtcdContinue(0, strings.TrimPrefix(start, p))
			}
			return nil, err
		}
		if rev == 0 {
			rev = e.seen(resp.Header.Revision)
			ops = append(ops, clientv3.WithRev(int64(rev)))
		}
		res.Revision = rev
		for i, kv := range resp.Kvs {
			obj, err := e.decode(kv)
			if err != nil {
				if prefix == "/" {
					continue // another program's key (see Watch)
				}
				return nil, err
			}
			if opts.Predicate != nil && !opts.Predicate(obj) {
				continue
			}
			res.Items = append(res.Items, obj)
			if limit > 0 && int64(len(res.Items)) == limit {
				more := i < len(resp.Kvs)-1 || resp.More
				if more {
					next := string(kv.Key) + "\x00"
					res.Continue = encodeEtcdContinue(int64(rev), strings.TrimPrefix(next, p))
					if opts.Predicate == nil {
						n := resp.Count - int64(i) - 1
						res.RemainingItemCount = &n
					}
				}
				return res, nil
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return res, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// Watch implements Interface with an etcd watch of the prefix from the
// revision after opts.ResourceVersion, with the previous states (for
// Deleted events and Predicate transitions) and progress notifications:
// the bookmarks asked for (BookmarkInterval while idle, BookmarkAt) are
// progress requests, so a bookmark's revision is one up to which etcd has
// delivered every event of the prefix. Each watch has its own etcd watch
// stream.
//
// A watch from a compacted revision fails with ErrExpired; one whose etcd
// watch is cancelled by a compaction (it fell behind it) ends with a Failed
// event wrapping ErrExpired. Under the prefix "/" (the whole store), keys
// the Codec cannot decode are skipped: other programs (kube-apiserver's
// allocators) keep keys of their own there.
func (e *Etcd) Watch(ctx context.Context, prefix string, opts WatchOptions) (Watcher, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e.closed() {
		return nil, ErrClosed
	}
	p := e.etcdKey(prefix)
	start := opts.ResourceVersion
	var initial []*mvccpb.KeyValue
	switch {
	case opts.SendInitialEvents:
		ops := []clientv3.OpOption{clientv3.WithPrefix()}
		if start > 0 {
			if err := e.ensureRevision(ctx, start); err != nil {
				return nil, err
			}
			ops = append(ops, clientv3.WithRev(int64(start)))
		}
		resp, err := e.cli.Get(ctx, p, ops...)
		if err != nil {
			return nil, e.etcdError(prefix, start, err)
		}
		if start == 0 {
			start = e.seen(resp.Header.Revision)
		}
		initial = resp.Kvs
	case start == 0:
		rev, err := e.currentRevision(ctx)
		if err != nil {
			return nil, e.etcdError(prefix, 0, err)
		}
		start = rev
	default:
		// A compacted revision fails the watch now, not in its first event.
		_, err := e.cli.Get(ctx, p, clientv3.WithRev(int64(start)), clientv3.WithCountOnly())
		if err != nil && !errors.Is(err, rpctypes.ErrFutureRev) {
			err = e.etcdError(prefix, start, err)
			var se *Error
			if errors.As(err, &se) && se.Code == CodeExpired {
				se.Message = fmt.Sprintf("resource version %d is too old to watch from (etcd compacted its history past it)", start)
			}
			return nil, err
		}
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(context.Background()))
	w := &etcdWatcher{
		e:          e,
		ctx:        ctx,
		cancel:     cancel,
		prefix:     prefix,
		pred:       opts.Predicate,
		out:        make(chan Event, min(e.cfg.WatchBuffer, maxChanBuffer)),
		stop:       make(chan struct{}),
		exited:     make(chan struct{}),
		bookmark:   opts.BookmarkInterval,
		bookmarkAt: opts.BookmarkAt,
		last:       start,
		watcher:    clientv3.NewWatcher(e.cli),
	}
	w.wch = w.watcher.Watch(wctx, p, clientv3.WithPrefix(), clientv3.WithRev(int64(start)+1),
		clientv3.WithPrevKV(), clientv3.WithProgressNotify())
	if opts.SendInitialEvents {
		for _, kv := range initial {
			obj, err := e.decode(kv)
			if err != nil {
				if prefix == "/" {
					continue
				}
				w.close()
				return nil, err
			}
			if w.pred == nil || w.pred(obj) {
				w.queue = append(w.queue, Event{Type: Added, Object: obj, Revision: uint64(kv.ModRevision)})
			}
		}
		w.queue = append(w.queue, Event{Type: Bookmark, Revision: start, InitialEventsEnd: true})
	}
	e.wg.Add(1)
	go w.run()
	return w, nil
}

// etcdWatcher is a running watch: one goroutine (run) turns the etcd watch's
// responses into events, queues them and feeds them to out.
type etcdWatcher struct {
	e        *Etcd
	ctx      context.Context
	cancel   context.CancelFunc
	prefix   string
	pred     func(Object) bool
	out      chan Event
	stop     chan struct{}
	stopOnce sync.Once
	exited   chan struct{}

	watcher    clientv3.Watcher
	wch        clientv3.WatchChan
	bookmark   time.Duration
	bookmarkAt time.Time

	queue []Event
	last  uint64 // the revision of the last event or bookmark queued, or the start
}

// ResultChan implements Watcher.
func (w *etcdWatcher) ResultChan() <-chan Event { return w.out }

// Stop implements Watcher: it ends the watch and waits for its goroutine.
func (w *etcdWatcher) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.exited
}

func (w *etcdWatcher) close() {
	w.cancel()
	_ = w.watcher.Close()
}

func (w *etcdWatcher) run() {
	defer w.e.wg.Done()
	defer close(w.exited)
	defer close(w.out)
	defer w.close()
	tick, at, stopTimers := bookmarkTimers(w.bookmark, w.bookmarkAt)
	defer stopTimers()
	wantProgress := false // a bookmark was asked for: the next progress response makes one
	active := false       // an event was queued since the last tick
	var final *Event
	for final == nil {
		var send chan Event
		var first Event
		if len(w.queue) > 0 {
			send, first = w.out, w.queue[0]
		}
		select {
		case send <- first:
			w.queue[0] = Event{}
			w.queue = w.queue[1:]
		case resp, ok := <-w.wch:
			if !ok {
				if w.done() {
					return
				}
				final = &Event{Type: Failed, Err: errors.New("storage: the etcd watch ended")}
				break
			}
			final = w.handle(resp, &wantProgress, &active)
			if final == nil && len(w.queue) > w.e.cfg.WatchBuffer {
				w.queue = nil
				final = &Event{Type: Failed, Err: &Error{Code: CodeTooSlow,
					Message: fmt.Sprintf("the watcher fell more than %d events behind", w.e.cfg.WatchBuffer)}}
			}
		case <-tick:
			if !active && len(w.queue) == 0 {
				wantProgress = true
				_ = w.watcher.RequestProgress(w.progressCtx())
			}
			active = false
		case <-at:
			wantProgress = true
			_ = w.watcher.RequestProgress(w.progressCtx())
		case <-w.stop:
			return
		case <-w.ctx.Done():
			return
		case <-w.e.done:
			return
		}
	}
	// Deliver what is queued, then the final event.
	w.queue = append(w.queue, *final)
	for _, ev := range w.queue {
		select {
		case w.out <- ev:
		case <-w.stop:
			return
		case <-w.ctx.Done():
			return
		case <-w.e.done:
			return
		}
	}
}

func (w *etcdWatcher) done() bool {
	select {
	case <-w.stop:
		return true
	case <-w.ctx.Done():
		return true
	case <-w.e.done:
		return true
	default:
		return false
	}
}

// progressCtx is the context RequestProgress is called with: the watch's
// own (its stream is keyed by it).
func (w *etcdWatcher) progressCtx() context.Context {
	return clientv3.WithRequireLeader(context.Background())
}

// handle queues the events of one watch response, or returns the event that
// ends the watch.
func (w *etcdWatcher) handle(resp clientv3.WatchResponse, wantProgress, active *bool) *Event {
	if resp.CompactRevision != 0 || errors.Is(resp.Err(), rpctypes.ErrCompacted) {
		return &Event{Type: Failed, Err: &Error{Code: CodeExpired, ResourceVersion: w.last,
			Message: fmt.Sprintf("resource version %d is too old to watch from (etcd compacted its history up to %d)", w.last, resp.CompactRevision)}}
	}
	if err := resp.Err(); err != nil {
		return &Event{Type: Failed, Err: fmt.Errorf("storage: etcd watch: %w", err)}
	}
	if resp.IsProgressNotify() {
		rev := uint64(resp.Header.Revision)
		w.e.seen(resp.Header.Revision)
		if *wantProgress && rev > w.last {
			w.queue = append(w.queue, Event{Type: Bookmark, Revision: rev})
			w.last = rev
		}
		*wantProgress = false
		return nil
	}
	for _, ev := range resp.Events {
		out, err := w.convert(ev)
		if err != nil {
			if w.prefix == "/" {
				continue
			}
			return &Event{Type: Failed, Err: err}
		}
		if out.Type != "" {
			w.queue = append(w.queue, out)
			*active = true
		}
		w.last = uint64(ev.Kv.ModRevision)
	}
	return nil
}

// convert turns an etcd event into the event the watcher delivers (Type ""
// if the predicate lets neither state through).
func (w *etcdWatcher) convert(ev *clientv3.Event) (Event, error) {
	rev := uint64(ev.Kv.ModRevision)
	var prev Object
	prevMatches := false
	if ev.PrevKv != nil {
		var err error
		if prev, err = w.e.decode(ev.PrevKv); err != nil {
			return Event{}, err
		}
		prevMatches = w.pred == nil || w.pred(prev)
	}
	deletedPrev := func() (Event, error) {
		// The last state stamped with the event's revision, a copy of the
		// one PrevObject carries as stored.
		last, err := w.e.decodeAt(ev.PrevKv, rev)
		if err != nil {
			return Event{}, err
		}
		return Event{Type: Deleted, Object: last, PrevObject: prev, Revision: rev}, nil
	}
	if ev.Type == clientv3.EventTypeDelete {
		if !prevMatches { // or no previous state (compacted): nothing to show
			return Event{}, nil
		}
		return deletedPrev()
	}
	obj, err := w.e.decode(ev.Kv)
	if err != nil {
		return Event{}, err
	}
	if w.pred == nil {
		if ev.IsCreate() {
			return Event{Type: Added, Object: obj, Revision: rev}, nil
		}
		return Event{Type: Modified, Object: obj, PrevObject: prev, Revision: rev}, nil
	}
	matches := w.pred(obj)
	switch {
	case matches && prevMatches:
		return Event{Type: Modified, Object: obj, PrevObject: prev, Revision: rev}, nil
	case matches:
		return Event{Type: Added, Object: obj, Revision: rev}, nil
	case prevMatches:
		return deletedPrev()
	}
	return Event{}, nil
}
