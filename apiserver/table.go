package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// Table responses.
//
// A get, list or watch whose Accept header asks for
// "application/json;as=Table;g=meta.k8s.io;v=v1" (or v1beta1, or
// application/yaml) is answered with a meta.k8s.io Table: the columns of the
// resource's registry.Printer and one row per object, as kube-apiserver
// v1.32 prints them for kubectl. Each row's object follows the includeObject
// query parameter: a PartialObjectMetadata (Metadata, the default), the whole
// object (Object) or null (None); any other value is a 400. The Table's
// metadata carries the list's resourceVersion, continue token and remaining
// item count, or the object's resourceVersion for a get.
//
// A watch sends one Table per event, with a single row; only the first event
// carries the column definitions ("columnDefinitions":null afterwards, as
// kube-apiserver does). A BOOKMARK event is a Table with the bookmark's
// resourceVersion and one row printed from the bookmark's empty object, as
// kube-apiserver prints it: its metadata carries the initial-events-end
// annotation of a streaming list.
//
// Tables have no protobuf form: application/vnd.kubernetes.protobuf;as=Table
// is not acceptable (406, or the next type the Accept header lists), as in
// kube-apiserver.

// tableGroupVersions are the group versions a Table can be asked in.
var tableGroupVersions = []string{"v1", "v1beta1"}

// tableOffers are the Table representations, after the resource's own.
var tableOffers = func() []codec.MediaType {
	var out []codec.MediaType
	for _, v := range tableGroupVersions {
		for _, base := range []codec.MediaType{offerJSON, offerYAML} {
			base.As, base.Group, base.Version = "Table", "meta.k8s.io", v
			out = append(out, base)
		}
	}
	return out
}()

// tableWriter prints objects of one resource as Tables for one request.
type tableWriter struct {
	res        *registry.Resource
	printer    *registry.Printer
	apiVersion string // meta.k8s.io/v1 or meta.k8s.io/v1beta1
	include    metav1.IncludeObjectPolicy
	yaml       bool
	now        func() time.Time
	// headersSent is set once a watch event carried the column definitions.
	headersSent bool
}

// newTableWriter reads the Table options of the request (mt is a negotiated
// Table offer); the Status is the 400 for an includeObject kube-apiserver
// refuses.
func (h *handler) newTableWriter(mt codec.MediaType) (*tableWriter, *metav1.Status) {
	opts, _ := metav1.DecodeTableOptions(h.r.URL.Query())
	if errs := metav1.ValidateTableOptions(opts); len(errs) > 0 {
		msg := errs[0].Error()
		if len(errs) > 1 {
			msg = fmt.Sprint(errs)
		}
		return nil, metav1.NewBadRequest("Unable to convert to Table as requested: " + msg)
	}
	include := opts.IncludeObject
	if include == "" {
		include = metav1.IncludeMetadata
	}
	now := h.s.cfg.Now
	if now == nil {
		now = time.Now
	}
	return &tableWriter{
		res:        h.res,
		printer:    registry.PrinterFor(h.res),
		apiVersion: mt.Group + "/" + mt.Version,
		include:    include,
		yaml:       mt.Subtype == offerYAML.Subtype,
		now:        now,
	}, nil
}

// getTable answers a get (or a write, with its code) with a one-row Table.
func (h *handler) getTable(mt codec.MediaType, code int, obj storage.Object) {
	tw, st := h.newTableWriter(mt)
	if st != nil {
		h.fail(st)
		return
	}
	meta := metav1.ListMeta{ResourceVersion: obj.GetResourceVersion()}
	tw.write(h.s, h.w, code, &meta, []storage.Object{obj})
}

// listTable answers a list with a Table of its items.
func (h *handler) listTable(mt codec.MediaType, meta *metav1.ListMeta, items []storage.Object) {
	tw, st := h.newTableWriter(mt)
	if st != nil {
		h.fail(st)
		return
	}
	if less := tw.printer.Less; less != nil && len(items) > 1 {
		items = slices.Clone(items)
		slices.SortStableFunc(items, func(a, b storage.Object) int {
			switch {
			case less(a, b):
				return -1
			case less(b, a):
				return 1
			}
			return 0
		})
	}
	tw.write(h.s, h.w, http.StatusOK, meta, items)
}

// write sends a Table of items: streamed row by row as JSON, or converted
// whole to YAML.
func (tw *tableWriter) write(s *Server, w http.ResponseWriter, code int, meta *metav1.ListMeta, items []storage.Object) {
	if tw.yaml {
		var buf bytes.Buffer
		if err := tw.encode(&buf, meta, items, true); err != nil {
			s.writeRawJSON(w, http.StatusInternalServerError, metav1.NewInternalError(err))
			return
		}
		s.writeYAML(w, code, json.RawMessage(bytes.TrimSpace(buf.Bytes())))
		return
	}
	w.Header().Set("Content-Type", codec.MediaTypeJSON)
	w.WriteHeader(code)
	if err := tw.encode(w, meta, items, true); err != nil {
		s.cfg.Logger.Debug("apiserver: writing table", "err", err)
	}
}

// encode writes the Table document, a row at a time, and a newline.
func (tw *tableWriter) encode(w io.Writer, meta *metav1.ListMeta, items []storage.Object, headers bool) error {
	bw := &errWriter{w: w}
	m, err := kjson.Marshal(meta)
	if err != nil {
		return err
	}
	var cols []byte
	if headers {
		if cols, err = kjson.Marshal(tw.printer.Columns); err != nil {
			return err
		}
	} else {
		cols = []byte("null")
	}
	bw.str(`{"kind":"Table","apiVersion":"` + tw.apiVersion + `","metadata":`)
	bw.bytes(m)
	bw.str(`,"columnDefinitions":`)
	bw.bytes(cols)
	switch {
	case items == nil || len(items) == 0 && tw.printer.NullRows:
		bw.str(`,"rows":null}`)
	default:
		bw.str(`,"rows":[`)
		now := tw.now()
		for i, it := range items {
			row, err := tw.row(it, now)
			if err != nil {
				return err
			}
			if i > 0 {
				bw.str(",")
			}
			bw.bytes(row)
		}
		bw.str("]}")
	}
	bw.str("\n")
	return bw.err
}

// row encodes one TableRow.
func (tw *tableWriter) row(obj storage.Object, now time.Time) ([]byte, error) {
	cells, conds := tw.printer.Row(obj, now)
	r := metav1.TableRow{Cells: cells, Conditions: conds}
	switch tw.include {
	case metav1.IncludeObject:
		b, err := kjson.Marshal(tw.res.WithTypeMeta(obj))
		if err != nil {
			return nil, err
		}
		r.Object.Raw = b
	case metav1.IncludeMetadata:
		m := partialObjectMetadata(obj, tw.apiVersion)
		if drop := tw.printer.RowAnnotations; len(drop) > 0 {
			m.Annotations = registry.WithoutAnnotations(m.Annotations, drop)
		}
		b, err := kjson.Marshal(m)
		if err != nil {
			return nil, err
		}
		r.Object.Raw = b
	}
	if r.Cells == nil {
		r.Cells = []any{}
	}
	return kjson.Marshal(r)
}

// watchEvent encodes the Table of one watch event: one row, the column
// definitions on the first event only. A bookmark is printed the same way,
// its row being the bookmark's empty object (the end of a streaming list's
// initial events shows in the row's metadata annotations), as kube-apiserver
// prints it.
func (tw *tableWriter) watchEvent(obj storage.Object) ([]byte, error) {
	var buf bytes.Buffer
	meta := metav1.ListMeta{ResourceVersion: obj.GetResourceVersion()}
	err := tw.encode(&buf, &meta, []storage.Object{obj}, !tw.headersSent)
	tw.headersSent = true
	return bytes.TrimSpace(buf.Bytes()), err
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) bytes(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *errWriter) str(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
}
