package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// Request is one API request being built: the REST layer under the typed and
// dynamic clients, for anything they do not cover (a subresource of an
// unregistered kind, a raw path). Build it with Client.NewRequest and the
// setters, then send it with Do, DoRaw or Into. Setters record the first
// invalid argument and Do returns it.
//
// Every request goes through the client's rate limiter and retry policy (see
// Retryable), with its context bounding both the waiting and the exchange.
type Request struct {
	c         *Client
	method    string
	absPath   string
	gvr       GroupVersionResource
	namespace string
	name      string
	sub       string
	query     url.Values
	header    http.Header
	body      []byte
	retryable *bool
	err       error
}

// NewRequest starts a request with the HTTP method (http.MethodGet, …).
func (c *Client) NewRequest(method string) *Request {
	return &Request{c: c, method: method, query: url.Values{}, header: http.Header{}}
}

// AbsPath sets the request path, such as "/version" or "/apis/apps/v1"; it
// replaces the path Resource, Namespace, Name and SubResource would build. It
// is relative to Config.Host (whose own path, if any, is kept in front).
func (r *Request) AbsPath(path string) *Request {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	r.absPath = path
	return r
}

// Resource sets the resource the request is about; its path is
// /api/VERSION/… in the core group and /apis/GROUP/VERSION/… otherwise.
func (r *Request) Resource(gvr GroupVersionResource) *Request {
	r.gvr = gvr
	return r
}

// Namespace sets the namespace ("" for cluster-scoped resources, or for all
// namespaces in a list or watch).
func (r *Request) Namespace(ns string) *Request {
	r.setErr(checkSegment("namespace", ns, true))
	r.namespace = ns
	return r
}

// Name sets the object name.
func (r *Request) Name(name string) *Request {
	r.setErr(checkSegment("name", name, false))
	r.name = name
	return r
}

// SubResource sets the subresource, such as "status" or "scale".
func (r *Request) SubResource(sub string) *Request {
	r.setErr(checkSegment("subresource", sub, true))
	r.sub = sub
	return r
}

// Param adds a query parameter.
func (r *Request) Param(name, value string) *Request {
	r.query.Add(name, value)
	return r
}

// Params adds query parameters, such as an option type's Query().
func (r *Request) Params(q url.Values) *Request {
	for k, vs := range q {
		for _, v := range vs {
			r.query.Add(k, v)
		}
	}
	return r
}

// SetHeader sets a request header.
func (r *Request) SetHeader(name, value string) *Request {
	r.header.Set(name, value)
	return r
}

// Body sets the request body and its Content-Type.
func (r *Request) Body(data []byte, contentType string) *Request {
	r.body = data
	if contentType != "" {
		r.header.Set("Content-Type", contentType)
	}
	return r
}

// Retryable overrides the retry policy's judgement of whether the request is
// safe to repeat. By default GET and HEAD are, PUT only with
// Retryable(true) (the typed and dynamic clients set it for updates that
// carry a resourceVersion, and for deletes with preconditions), POST and
// PATCH never; see the package documentation.
func (r *Request) Retryable(ok bool) *Request {
	r.retryable = &ok
	return r
}

func (r *Request) setErr(err error) {
	if r.err == nil && err != nil {
		r.err = err
	}
}

// checkSegment rejects path segments that would change the path's meaning.
func checkSegment(what, s string, emptyOK bool) error {
	switch {
	case s == "" && emptyOK:
		return nil
	case s == "":
		return fmt.Errorf("client: %s may not be empty", what)
	case s == "." || s == "..":
		return fmt.Errorf("client: %s may not be %q", what, s)
	case strings.ContainsAny(s, "/%"):
		return fmt.Errorf("client: %s %q may not contain '/' or '%%'", what, s)
	}
	return nil
}

// Path returns the request path, without the query.
func (r *Request) Path() string {
	if r.absPath != "" {
		return r.c.base.Path + r.absPath
	}
	return r.c.base.Path + resourcePath(r.gvr, r.namespace, r.name, r.sub)
}

// resourcePath builds /api/v1/namespaces/NS/RESOURCE/NAME/SUB, leaving out
// what is empty.
func resourcePath(gvr GroupVersionResource, ns, name, sub string) string {
	var b strings.Builder
	if gvr.Group == "" {
		b.WriteString("/api/")
	} else {
		b.WriteString("/apis/")
		b.WriteString(gvr.Group)
		b.WriteByte('/')
	}
	b.WriteString(gvr.Version)
	if ns != "" {
		b.WriteString("/namespaces/")
		b.WriteString(url.PathEscape(ns))
	}
	if gvr.Resource != "" {
		b.WriteByte('/')
		b.WriteString(gvr.Resource)
	}
	if name != "" {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(name))
		if sub != "" {
			b.WriteByte('/')
			b.WriteString(sub)
		}
	}
	return b.String()
}

// isWatch reports whether the query asks for a watch.
func isWatch(q url.Values) bool {
	v, ok := q["watch"]
	return ok && len(v) > 0 && v[0] != "0" && !strings.EqualFold(v[0], "false")
}

// isRetryable applies the retry policy (see retry.go).
func (r *Request) isRetryable() bool {
	if r.retryable != nil {
		return *r.retryable
	}
	return r.method == http.MethodGet || r.method == http.MethodHead
}

// Response is the successful answer to a request. Its body is not read: the
// caller streams it and must Close the response.
type Response struct {
	// StatusCode is the HTTP status, 2xx.
	StatusCode int
	// Header holds the response headers.
	Header http.Header
	// Body is the response body, read as it arrives.
	Body io.ReadCloser
}

// ContentType returns the media type of the body without parameters, such as
// "application/json".
func (r *Response) ContentType() string {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt
}

// Close drains what is left of a small body, so the connection can be
// reused, and closes it.
func (r *Response) Close() error {
	_, _ = io.CopyN(io.Discard, r.Body, 4<<10)
	return r.Body.Close()
}

// Into decodes the body into v (JSON, or protobuf when the server answered
// in protobuf and v decodes itself) and closes the response.
func (r *Response) Into(v any) error {
	defer r.Close()
	switch ct := r.ContentType(); ct {
	case codec.MediaTypeProtobuf:
		u, ok := v.(codec.ProtoUnmarshaler)
		if !ok {
			return fmt.Errorf("client: the server answered in protobuf, which %T cannot decode", v)
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return fmt.Errorf("client: reading response: %w", err)
		}
		tm, err := codec.UnmarshalProtobuf(b, u)
		if err != nil {
			return err
		}
		setTypeMeta(v, tm)
		return nil
	case codec.MediaTypeJSON, "":
		if err := kjson.UnmarshalRead(r.Body, v); err != nil {
			return fmt.Errorf("client: decoding response: %w", err)
		}
		return nil
	default:
		return fmt.Errorf("client: unexpected response Content-Type %q", r.Header.Get("Content-Type"))
	}
}

// Do sends the request and returns the response, unread, once the server has
// answered with a 2xx status; any other status is returned as a
// *StatusError. The caller must Close the response. For a request that is
// not a watch, Config.Timeout (if set) bounds the exchange including the
// reading of the body.
func (r *Request) Do(ctx context.Context) (*Response, error) {
	if r.err != nil {
		return nil, r.err
	}
	var cancel context.CancelFunc
	if r.c.timeout > 0 && !isWatch(r.query) {
		ctx, cancel = context.WithTimeout(ctx, r.c.timeout)
	}
	resp, err := r.c.send(ctx, r)
	if err != nil {
		if cancel != nil {
			cancel()
		}
		return nil, err
	}
	body := resp.Body
	if cancel != nil {
		body = &cancelOnClose{ReadCloser: body, cancel: cancel}
	}
	return &Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// DoRaw sends the request and returns the whole response body.
func (r *Request) DoRaw(ctx context.Context) ([]byte, error) {
	resp, err := r.Do(ctx)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("client: reading response: %w", err)
	}
	return b, nil
}

// Into sends the request and decodes the response into v (see
// Response.Into).
func (r *Request) Into(ctx context.Context, v any) error {
	resp, err := r.Do(ctx)
	if err != nil {
		return err
	}
	return resp.Into(v)
}

// cancelOnClose releases a request's timeout context when its body is
// closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

// Close closes the body and releases the context.
func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// throttleLogThreshold is how long a request must wait for the rate limiter
// before the wait is logged.
const throttleLogThreshold = 100 * time.Millisecond

// send runs the request under the rate limiter and the retry policy and
// returns a 2xx response.
func (c *Client) send(ctx context.Context, r *Request) (*http.Response, error) {
	target := r.Path()
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	retryable := r.isRetryable()
	bo := newRetryBackOff()
	retries := 0
	if retryable {
		retries = c.retries
	}
	b := backoff.WithContext(backoff.WithMaxRetries(bo, uint64(retries)), ctx)
	attempt := 0
	op := func() (*http.Response, error) {
		attempt++
		if err := c.throttle(ctx, r.method, target); err != nil {
			return nil, backoff.Permanent(err)
		}
		resp, err := c.measuredRoundTrip(ctx, r, target)
		if err != nil {
			if retryable && ctx.Err() == nil && retryableConnError(err) {
				return nil, err
			}
			return nil, backoff.Permanent(err)
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		serr := errorFromResponse(resp, r.method, r.gvr.GroupResource(), r.name)
		_ = resp.Body.Close()
		if retryable && retryableStatus(resp.StatusCode) {
			if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
				bo.setRetryAfter(d)
			}
			return nil, serr
		}
		return nil, backoff.Permanent(serr)
	}
	notify := func(err error, wait time.Duration) {
		c.logger.DebugContext(ctx, "client: retrying request",
			"method", r.method, "url", target, "attempt", attempt, "wait", wait, "err", err)
	}
	return backoff.RetryNotifyWithTimerAndData(op, b, notify, c.newTimer())
}

// throttle waits for the rate limiter, or for ctx.
func (c *Client) throttle(ctx context.Context, method, target string) error {
	if c.limiter == nil {
		return nil
	}
	start := c.now()
	if err := c.limiter.Wait(ctx); err != nil {
		return fmt.Errorf("client: waiting for the rate limiter: %w", err)
	}
	waited := c.now().Sub(start)
	if c.metrics != nil {
		c.metrics.RateLimited(c.base.Host, method, waited)
	}
	if waited > throttleLogThreshold {
		c.logger.DebugContext(ctx, "client: request throttled by the client's rate limiter",
			"method", method, "url", target, "waited", waited)
	}
	return nil
}

// measuredRoundTrip is roundTrip reported to Config.Metrics.
func (c *Client) measuredRoundTrip(ctx context.Context, r *Request, target string) (*http.Response, error) {
	if c.metrics == nil {
		return c.roundTrip(ctx, r, target)
	}
	start := c.now()
	resp, err := c.roundTrip(ctx, r, target)
	code := 0
	if err == nil {
		code = resp.StatusCode
	}
	c.metrics.Requested(c.base.Host, r.method, code, c.now().Sub(start))
	return resp, err
}

// roundTrip makes one attempt through resty, leaving the body unread.
func (c *Client) roundTrip(ctx context.Context, r *Request, target string) (*http.Response, error) {
	req := c.http.R().SetContext(ctx).SetDoNotParseResponse(true)
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	if r.body != nil {
		// A fresh reader per attempt; net/http takes the length from it.
		req.SetBody(bytes.NewReader(r.body))
	}
	resp, err := req.Execute(r.method, target)
	if err != nil {
		return nil, err
	}
	if resp.RawResponse == nil {
		return nil, errors.New("client: no response")
	}
	return resp.RawResponse, nil
}

// setTypeMeta sets kind and apiVersion on objects that embed metav1.TypeMeta.
func setTypeMeta(v any, tm metav1.TypeMeta) {
	if tm == (metav1.TypeMeta{}) {
		return
	}
	if o, ok := v.(interface{ GetObjectKind() *metav1.TypeMeta }); ok {
		*o.GetObjectKind() = tm
	}
}
