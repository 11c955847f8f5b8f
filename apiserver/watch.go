package apiserver

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// preTimeoutBookmark is how long before a watch's timeout it gets a
// BOOKMARK (when it allows bookmarks), as kube-apiserver's cacher sends one.
const preTimeoutBookmark = 2 * time.Second

// watchEncoder writes watch events in the negotiated framing.
type watchEncoder interface {
	Encode(eventType string, object []byte) error
}

func (h *handler) watch() {
	mt, ok := h.negotiateWatch()
	if !ok {
		return
	}
	var table *tableWriter // events as Tables (table.go)
	if mt.As == codec.AsTable {
		var st *metav1.Status
		if table, st = h.newTableWriter(mt); st != nil {
			h.fail(st)
			return
		}
		table.yaml = false
	}
	opts, pred, st := h.listOptions()
	if st != nil {
		h.fail(st)
		return
	}
	wo := storage.WatchOptions{Predicate: pred}
	switch {
	case opts.SendInitialEvents != nil:
		// Streaming list semantics: initial events only when asked for.
		wo.SendInitialEvents = *opts.SendInitialEvents
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			rv, err := strconv.ParseUint(opts.ResourceVersion, 10, 64)
			if err != nil {
				h.fail(metav1.NewBadRequest("invalid resource version " + strconv.Quote(opts.ResourceVersion)))
				return
			}
			wo.ResourceVersion = rv
		}
	case opts.ResourceVersion == "" || opts.ResourceVersion == "0":
		// "Get state and start at most recent" (or "any"): synthetic ADDED
		// events for the current state, then changes.
		wo.SendInitialEvents = true
	default:
		rv, err := strconv.ParseUint(opts.ResourceVersion, 10, 64)
		if err != nil {
			h.fail(metav1.NewBadRequest("invalid resource version " + strconv.Quote(opts.ResourceVersion)))
			return
		}
		wo.ResourceVersion = rv
	}
	timeout := time.Duration(float64(h.s.cfg.MinWatchTimeout) * (1 + rand.Float64()))
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	if opts.AllowWatchBookmarks {
		wo.BookmarkInterval = h.s.cfg.BookmarkInterval
		// As kube-apiserver's cacher: one more bookmark shortly before the
		// watch times out, so that the client resumes from a recent
		// resourceVersion (none when the timeout is that short).
		wo.BookmarkAt = time.Now().Add(timeout - preTimeoutBookmark)
	}
	ctx, cancel := contextWithTimeout(h.r.Context(), h.s.ctx, timeout)
	defer cancel()

	var enc watchEncoder
	flusher, _ := h.w.(http.Flusher)
	// Protobuf events: the resource's own, or PartialObjectMetadata (which
	// every resource has); negotiate admits no other.
	protobuf := mt.Subtype == offerProtobuf.Subtype
	if protobuf {
		h.w.Header().Set("Content-Type", codec.MediaTypeProtobufWatch)
		enc = codec.NewProtobufWatchEncoder(h.w)
	} else {
		h.w.Header().Set("Content-Type", codec.MediaTypeJSON)
		enc = codec.NewJSONWatchEncoder(h.w)
	}
	h.w.Header().Set("Transfer-Encoding", "chunked")

	watcher, err := h.s.storageOf(h.res).Watch(ctx, h.key(h.ri.Namespace, ""), wo)
	if err != nil {
		if errors.Is(err, storage.ErrExpired) {
			// What kube-apiserver does (golden 104): 200, then one ERROR event.
			h.w.WriteHeader(http.StatusOK)
			h.writeWatchStatus(enc, protobuf, metav1.NewWatchExpired())
			return
		}
		h.fail(h.storageStatus(err, ""))
		return
	}
	defer watcher.Stop()
	h.w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	sendBookmarks := opts.AllowWatchBookmarks
	unflushed := false
	for {
		// Flush before waiting for an event, not after each one: a burst
		// (the initial events of a streaming list, a deletecollection) goes
		// out in full writes, and nothing stays buffered while the watch
		// waits.
		if unflushed && flusher != nil && len(watcher.ResultChan()) == 0 {
			flusher.Flush()
			unflushed = false
		}
		var ev storage.Event
		select {
		case <-ctx.Done():
			return
		case e, ok := <-watcher.ResultChan():
			if !ok {
				return
			}
			ev = e
		}
		var obj metav1.Object
		switch ev.Type {
		case storage.Failed:
			if st := watchFailureStatus(ev.Err); st != nil {
				h.writeWatchStatus(enc, protobuf, st)
			}
			return // a slow watcher: end the stream, the client re-watches
		case storage.Bookmark:
			if !sendBookmarks {
				continue
			}
			obj = h.bookmarkObject(ev)
		default:
			obj = ev.Object
		}
		var b []byte
		var err error
		switch {
		case mt.As == codec.AsPartialObjectMetadataList:
			// Not a list: kube-apiserver fails to encode the event and
			// ends the stream.
			return
		case table != nil:
			b, err = table.watchEvent(obj)
		case ev.Type == storage.Bookmark:
			b, err = h.encodeWatchObject(obj, mt, protobuf)
		default:
			b, err = h.s.encoded.get(obj, h.res, mt, protobuf, func() ([]byte, error) { return h.encodeWatchObject(obj, mt, protobuf) })
		}
		if err != nil {
			h.s.cfg.Logger.Error("apiserver: encoding watch event", "err", err)
			return
		}
		if err := enc.Encode(string(ev.Type), b); err != nil {
			return
		}
		unflushed = true
	}
}

// bookmarkObject is an empty object of the watched kind (as the resource's
// Bookmark fills it) carrying the bookmark's resourceVersion, and the initial-events-end annotation when it ends the
// initial events: of a streaming list, and (as kube-apiserver v1.37 does) of
// a watch from resourceVersion "" or "0", which starts with the current state.
func (h *handler) bookmarkObject(ev storage.Event) metav1.Object {
	obj := h.res.New()
	if h.res.Bookmark != nil {
		h.res.Bookmark(obj)
	}
	obj.SetResourceVersion(strconv.FormatUint(ev.Revision, 10))
	if ev.InitialEventsEnd {
		a := obj.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[metav1.InitialEventsAnnotationKey] = "true"
		obj.SetAnnotations(a)
	}
	return obj
}

// encodeWatchObject encodes the object of a watch event, converted as mt
// asks.
func (h *handler) encodeWatchObject(obj metav1.Object, mt codec.MediaType, protobuf bool) ([]byte, error) {
	if mt.As == codec.AsPartialObjectMetadata {
		return encodePartial(obj, mt, protobuf)
	}
	if protobuf {
		return codec.MarshalProtobuf(h.res.TypeMeta(), obj.(codec.ProtoMarshaler))
	}
	return kjson.Marshal(h.res.WithTypeMeta(obj))
}

func (h *handler) writeWatchStatus(enc watchEncoder, protobuf bool, st *metav1.Status) {
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	var b []byte
	var err error
	if protobuf {
		b, err = codec.MarshalProtobuf(st.TypeMeta, st)
	} else {
		b, err = kjson.Marshal(st)
	}
	if err == nil {
		_ = enc.Encode(string(storage.Failed), b)
	}
	if f, ok := h.w.(http.Flusher); ok {
		f.Flush()
	}
}
