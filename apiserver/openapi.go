package apiserver

import (
	"bytes"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/apiserver/openapi"
)

// Media types of the OpenAPI documents. Clients ask for the protobuf forms
// with "@" (kubectl, client-go) or "." before the version; kube-apiserver
// answers with ".".
const (
	openAPIV2Proto = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	openAPIV3Proto = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"
)

// openAPICache holds the documents of one registry generation. They are
// built lazily, by the first request after the registry changed (a CRD
// created, updated or deleted), not per request.
type openAPICache struct {
	mu   sync.Mutex
	gen  uint64
	docs *openapi.Documents
	// modified is when each document (key "v2" or a v3 path) last changed:
	// its Last-Modified.
	modified map[string]time.Time
	hashes   map[string]string
}

// openAPIDocs returns the documents of the registry's current state.
func (s *Server) openAPIDocs() (*openapi.Documents, map[string]time.Time, error) {
	c := &s.openapi
	c.mu.Lock()
	defer c.mu.Unlock()
	gen := s.reg.Generation()
	if c.docs != nil && c.gen == gen {
		return c.docs, c.modified, nil
	}
	resources, gen := s.reg.All()
	docs, err := openapi.Build(resources, openapi.Options{Scale: hasScale})
	if err != nil {
		return nil, nil, err
	}
	now := s.cfg.Now().UTC().Truncate(time.Second)
	modified := map[string]time.Time{}
	hashes := map[string]string{"v2": docs.V2.Hash}
	for k, d := range docs.V3 {
		hashes[k] = d.Hash
	}
	for k, h := range hashes {
		if old, ok := c.modified[k]; ok && c.hashes[k] == h {
			modified[k] = old
		} else {
			modified[k] = now
		}
	}
	c.docs, c.gen, c.modified, c.hashes = docs, gen, modified, hashes
	return docs, modified, nil
}

// serveOpenAPI answers /openapi/v2, /openapi/v3 and /openapi/v3/<group
// version> as kube-apiserver does; it reports false for other paths.
//
//   - /openapi/v2: JSON or gnostic protobuf by Accept (406 otherwise), with
//     an ETag (the document's SHA-512), Last-Modified, and 304 on
//     If-None-Match.
//   - /openapi/v3: the index of group versions with their hashed URLs.
//   - /openapi/v3/<gv>: the document, JSON or protobuf. With the current
//     hash it is immutable (Cache-Control: public, immutable and an Expires
//     a year ahead); with a stale hash the answer is a 301 to the current
//     URL; without a hash, it is served uncached. An unknown group version
//     is 404.
func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	if p != "/openapi/v2" && p != "/openapi/v3" && !strings.HasPrefix(p, "/openapi/v3/") {
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	docs, modified, err := s.openAPIDocs()
	if err != nil {
		s.cfg.Logger.Error("apiserver: building OpenAPI documents", "err", err)
		w.Header().Set("Cache-Control", "no-cache, private")
		w.WriteHeader(http.StatusInternalServerError)
		return true
	}
	h := w.Header()
	h.Set("Cache-Control", "no-cache, private")
	switch {
	case p == "/openapi/v2":
		h.Set("Vary", "Accept")
		mt, ok := negotiateOpenAPI(r.Header.Get("Accept"), openAPIV2Proto, "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
		if !ok {
			w.WriteHeader(http.StatusNotAcceptable)
			return true
		}
		s.serveOpenAPIDoc(w, r, docs.V2, mt, modified["v2"])
	case p == "/openapi/v3" || p == "/openapi/v3/":
		// As kube-apiserver: no Content-Type of its own (the content is
		// sniffed) and Last-Modified is the time of the request.
		http.ServeContent(w, r, "", s.cfg.Now(), bytes.NewReader(docs.V3Index))
	default:
		key := strings.TrimPrefix(p, "/openapi/v3/")
		doc := docs.V3[key]
		if doc == nil {
			w.WriteHeader(http.StatusNotFound)
			return true
		}
		h.Set("Vary", "Accept")
		mt, ok := negotiateOpenAPI(r.Header.Get("Accept"), openAPIV3Proto, "application/com.github.proto-openapi.spec.v3@v1.0+protobuf")
		if !ok {
			w.WriteHeader(http.StatusNotAcceptable)
			return true
		}
		if hash := r.URL.Query().Get("hash"); hash != "" {
			if hash != doc.Hash {
				h.Set("Content-Type", "application/json")
				h.Set("Etag", strconv.Quote(doc.Hash))
				http.Redirect(w, r, "/openapi/v3/"+key+"?hash="+doc.Hash, http.StatusMovedPermanently)
				return true
			}
			h.Set("Cache-Control", "public, immutable")
			h.Set("Expires", s.cfg.Now().UTC().AddDate(1, 0, 0).Format(time.RFC1123))
		}
		s.serveOpenAPIDoc(w, r, doc, mt, modified[key])
	}
	return true
}

// serveOpenAPIDoc writes doc as mt ("application/json" or a protobuf type)
// with its ETag and Last-Modified; http.ServeContent answers If-None-Match
// with 304, HEAD and ranges as kube-apiserver's handler does.
func (s *Server) serveOpenAPIDoc(w http.ResponseWriter, r *http.Request, doc *openapi.Document, mt string, modified time.Time) {
	body := doc.JSON
	if mt != "application/json" {
		pb, err := doc.Proto()
		if err != nil {
			s.cfg.Logger.Error("apiserver: encoding OpenAPI as protobuf", "err", err)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		body = pb
	}
	w.Header().Set("Content-Type", mt)
	w.Header().Set("Etag", strconv.Quote(doc.Hash))
	http.ServeContent(w, r, "", modified, bytes.NewReader(body))
}

// negotiateOpenAPI picks the media type of an OpenAPI document for an
// Accept header: JSON (also for an empty header and */*) or protobuf (proto,
// also spelled alt), by preference order. It reports false when the header
// accepts neither.
func negotiateOpenAPI(accept, proto, alt string) (string, bool) {
	if strings.TrimSpace(accept) == "" {
		return "application/json", true
	}
	type clause struct {
		mt string
		q  float64
	}
	var cs []clause
	for _, part := range strings.Split(accept, ",") {
		// Not mime.ParseMediaType: "@" (in the protobuf types clients send)
		// is not a token character.
		fields := strings.Split(part, ";")
		mt := strings.ToLower(strings.TrimSpace(fields[0]))
		q := 1.0
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
			if strings.TrimSpace(k) == "q" {
				if x, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = x
				}
			}
		}
		if mt != "" && q > 0 {
			cs = append(cs, clause{mt, q})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].q > cs[j].q })
	for _, c := range cs {
		switch c.mt {
		case "application/json", "application/*", "*/*":
			return "application/json", true
		case proto, alt:
			return proto, true
		}
	}
	return "", false
}
