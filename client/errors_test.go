package client

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/golden"
)

// predicates are every IsX function, by name.
var predicates = map[string]func(error) bool{
	"IsNotFound":                 IsNotFound,
	"IsAlreadyExists":            IsAlreadyExists,
	"IsConflict":                 IsConflict,
	"IsInvalid":                  IsInvalid,
	"IsGone":                     IsGone,
	"IsResourceExpired":          IsResourceExpired,
	"IsTooLargeResourceVersion":  IsTooLargeResourceVersion,
	"IsTooManyRequests":          IsTooManyRequests,
	"IsTimeout":                  IsTimeout,
	"IsServerTimeout":            IsServerTimeout,
	"IsForbidden":                IsForbidden,
	"IsUnauthorized":             IsUnauthorized,
	"IsNotAcceptable":            IsNotAcceptable,
	"IsUnsupportedMediaType":     IsUnsupportedMediaType,
	"IsBadRequest":               IsBadRequest,
	"IsMethodNotSupported":       IsMethodNotSupported,
	"IsInternalError":            IsInternalError,
	"IsServiceUnavailable":       IsServiceUnavailable,
	"IsRequestEntityTooLarge":    IsRequestEntityTooLarge,
	"IsUnexpectedServerResponse": IsUnexpectedServerResponse,
}

// holds returns the names of the predicates that hold for err, sorted.
func holds(err error) []string {
	var out []string
	for name, p := range predicates {
		if p(err) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// goldenErrors says which predicates hold for each failed exchange captured
// from kube-apiserver; every other predicate must not.
var goldenErrors = map[string][]string{
	"100-list-expired-continue":           {"IsResourceExpired"},
	"102-create-in-terminating-namespace": {"IsForbidden"},
	"103-list-exact-compacted-rv":         {"IsResourceExpired"},
	"35-list-bad-continue":                {"IsBadRequest"},
	"36-list-continue-with-rv":            {"IsBadRequest"},
	"37-list-rvmatch-without-rv":          {"IsInvalid"},
	"38-list-rvmatch-exact-rv0":           {"IsInvalid"},
	"39-list-bad-rvmatch":                 {"IsInvalid"},
	"40-list-too-large-rv":                {"IsTimeout", "IsTooLargeResourceVersion"},
	"41-get-too-large-rv":                 {"IsTimeout", "IsTooLargeResourceVersion"},
	"42-list-bad-label-selector":          {"IsBadRequest"},
	"43-list-bad-field-selector":          {"IsBadRequest"},
	"45-get-missing":                      {"IsNotFound"},
	"46-create-duplicate":                 {"IsAlreadyExists"},
	"47-create-in-missing-namespace":      {"IsNotFound"},
	"48-create-invalid-name":              {"IsInvalid"},
	"49-create-name-mismatch-namespace":   {"IsBadRequest"},
	"50-update-stale-rv":                  {"IsConflict"},
	"52-update-missing":                   {"IsNotFound"},
	"54-not-acceptable":                   {"IsNotAcceptable"},
	"55-unsupported-media-type":           {"IsUnsupportedMediaType"},
	"56-bad-json-body":                    {"IsBadRequest"},
	"57-bad-protobuf-magic":               {"IsBadRequest"},
	"58-unknown-resource":                 {"IsNotFound"},
	"59-unknown-group":                    {"IsNotFound", "IsUnexpectedServerResponse"},
	"60-method-not-allowed":               {"IsMethodNotSupported"},
	"62-dryrun-bad-value":                 {"IsInvalid"},
	"71-patch-json-test-fails":            {"IsInvalid"},
	"75-apply-conflict":                   {"IsConflict"},
	"77-apply-no-fieldmanager":            {"IsInvalid"},
	"80-delete-precondition-fails":        {"IsConflict"},
	"82-delete-missing":                   {"IsNotFound"},
	"88-create-widget-invalid":            {"IsInvalid"},
	"89-widget-protobuf-only":             {"IsNotAcceptable"},
	"92-widget-strategic-patch":           {"IsUnsupportedMediaType"},
}

// replay answers every request with the captured response of x.
func replay(t *testing.T, x *golden.Exchange) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		for k, v := range x.ResponseHeader {
			w.Header().Set(k, v)
		}
		w.WriteHeader(x.Status)
		_, _ = w.Write(x.ResponseBody)
	})
}

// sendLike sends the captured request of x through the REST layer.
func sendLike(t *testing.T, c *Client, x *golden.Exchange) error {
	t.Helper()
	u, err := url.Parse(x.Path)
	if err != nil {
		t.Fatal(err)
	}
	req := c.NewRequest(x.Method).AbsPath(u.Path).Params(u.Query()).SetHeader("Accept", x.RequestHeader["Accept"])
	if len(x.RequestBody) > 0 {
		req.Body(x.RequestBody, x.RequestHeader["Content-Type"])
	}
	_, err = req.DoRaw(testContext(t))
	return err
}

// Every failed exchange captured from kube-apiserver becomes a *StatusError
// holding exactly the Status the server sent, whose message is the error
// text, and for which exactly the expected predicates hold; for the captures
// of each release (golden.Releases).
func TestGoldenStatusErrors(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range golden.Releases {
		all, err := r.All()
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range all {
			if x.Status < 400 {
				continue
			}
			seen[x.Name] = true
			t.Run(r.Name+"/"+x.Name, func(t *testing.T) { testGoldenStatusError(t, x) })
		}
	}
	if len(seen) != len(goldenErrors) {
		t.Errorf("%d failed exchanges in the golden files, %d expected", len(seen), len(goldenErrors))
	}
}

func testGoldenStatusError(t *testing.T, x *golden.Exchange) {
	t.Helper()
	want, ok := goldenErrors[x.Name]
	if !ok {
		t.Fatalf("no expectation for failed exchange %s (%d)", x.Name, x.Status)
	}
	rec := replay(t, x)
	c := newTestClient(t, &Config{Host: rec.srv.URL, MaxRetries: -1})
	err := sendLike(t, c, x)
	if err == nil {
		t.Fatal("no error")
	}
	if got := holds(err); !slices.Equal(got, want) {
		t.Errorf("predicates holding: %v, want %v", got, want)
	}
	// Through wrapping too.
	wrapped := fmt.Errorf("reconciling: %w", err)
	if got := holds(wrapped); !slices.Equal(got, want) {
		t.Errorf("predicates holding for the wrapped error: %v, want %v", got, want)
	}
	var se *StatusError
	if !errors.As(err, &se) {
		t.Fatalf("error %T is not a *StatusError", err)
	}
	if ReasonForError(wrapped) != se.ErrStatus.Reason {
		t.Errorf("ReasonForError = %q, want %q", ReasonForError(wrapped), se.ErrStatus.Reason)
	}
	if se.ErrStatus.Code != int32(x.Status) {
		t.Errorf("code %d, want %d", se.ErrStatus.Code, x.Status)
	}
	st, isStatus := decodeStatus(x.ResponseHeader["Content-Type"], x.ResponseBody)
	if !isStatus {
		// Not a Status body (a plain "404 page not found"): the
		// error still says what happened.
		for _, part := range []string{"404", strings.TrimSpace(string(x.ResponseBody))} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("error %q does not mention %q", err, part)
			}
		}
		return
	}
	if !reflect.DeepEqual(se.ErrStatus, *st) {
		t.Errorf("status\n got %+v\nwant %+v", se.ErrStatus, *st)
	}
	if err.Error() != st.Message {
		t.Errorf("Error() = %q, want the message %q", err.Error(), st.Message)
	}
	if x.ResponseHeader["Retry-After"] != "" {
		if n, ok := RetryAfterSeconds(err); !ok || fmt.Sprint(n) != x.ResponseHeader["Retry-After"] {
			t.Errorf("RetryAfterSeconds = %d, %v; header %s", n, ok, x.ResponseHeader["Retry-After"])
		}
	}
}

// Responses the golden files do not have: made-up Statuses for bodies that
// are not one, classification by code when the reason is unknown, and
// Retry-After.
func TestStatusErrorsFromResponses(t *testing.T) {
	statusBody := func(code int, reason metav1.StatusReason, details string) string {
		return fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"m","reason":%q,%s"code":%d}`, reason, details, code)
	}
	cases := []struct {
		name        string
		code        int
		header      map[string]string
		body        string
		method      string
		want        []string
		retryAfter  int
		wantMessage string
	}{
		{name: "429 with Retry-After", code: 429, header: map[string]string{"Retry-After": "7"},
			body: statusBody(429, metav1.StatusReasonTooManyRequests, ""), want: []string{"IsTooManyRequests"}, retryAfter: 7, wantMessage: "m"},
		{name: "429 without body", code: 429, header: map[string]string{"Retry-After": "3"},
			want: []string{"IsTooManyRequests", "IsUnexpectedServerResponse"}, retryAfter: 3,
			wantMessage: "the server has received too many requests and has asked us to try again later (HTTP 429 Too Many Requests)"},
		{name: "503 HTML from a proxy", code: 503, header: map[string]string{"Content-Type": "text/html"},
			body: "<html><body>\n<h1>503 Service Unavailable</h1>\n</body></html>", want: []string{"IsServiceUnavailable", "IsUnexpectedServerResponse"},
			wantMessage: "the server is currently unable to handle the request (HTTP 503 Service Unavailable: <html><body> <h1>503 Service Unavailable</h1> </body></html>)"},
		{name: "502 text", code: 502, body: "bad gateway", want: []string{"IsInternalError", "IsUnexpectedServerResponse"},
			wantMessage: `an error on the server ("bad gateway") has prevented the request from succeeding (HTTP 502 Bad Gateway)`},
		{name: "409 text on POST is AlreadyExists", code: 409, body: "exists", method: http.MethodPost,
			want: []string{"IsAlreadyExists", "IsUnexpectedServerResponse"}},
		{name: "unknown reason judged by code", code: 404, body: statusBody(404, "SomethingNew", ""), want: []string{"IsNotFound"}},
		{name: "no reason judged by code", code: 409, body: statusBody(409, "", ""), want: []string{"IsConflict"}},
		{name: "known reason wins over code", code: 400, body: statusBody(400, metav1.StatusReasonNotFound, ""), want: []string{"IsNotFound"}},
		{name: "server timeout", code: 500, body: statusBody(500, metav1.StatusReasonServerTimeout, `"details":{"retryAfterSeconds":2},`),
			want: []string{"IsServerTimeout"}, retryAfter: 2},
		{name: "413", code: 413, body: statusBody(413, metav1.StatusReasonRequestEntityTooLarge, ""), want: []string{"IsRequestEntityTooLarge"}},
		{name: "401 empty", code: 401, want: []string{"IsUnauthorized", "IsUnexpectedServerResponse"}},
		{name: "403 text", code: 403, body: "forbidden by policy", want: []string{"IsForbidden", "IsUnexpectedServerResponse"},
			wantMessage: "forbidden by policy (HTTP 403 Forbidden)"},
		{name: "Status without code", code: 410, body: `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Gone"}`,
			want: []string{"IsGone"}, wantMessage: "the server responded with status 410 (Gone)"},
		{name: "binary body", code: 500, body: "\x00\x01\x02garbage", want: []string{"IsInternalError", "IsUnexpectedServerResponse"}},
		{name: "old too-large-resourceVersion without cause", code: 504,
			body: `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Timeout: Too large resource version: 9, current: 3","reason":"Timeout","code":504}`,
			want: []string{"IsTimeout", "IsTooLargeResourceVersion"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			})
			c := newTestClient(t, &Config{Host: rec.srv.URL, MaxRetries: -1})
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			_, err := c.NewRequest(method).AbsPath("/x").DoRaw(testContext(t))
			if got := holds(err); !slices.Equal(got, tc.want) {
				t.Errorf("predicates %v, want %v (err %v)", got, tc.want, err)
			}
			if n, ok := RetryAfterSeconds(err); n != tc.retryAfter || ok != (tc.retryAfter > 0) {
				t.Errorf("RetryAfterSeconds = %d, %v; want %d", n, ok, tc.retryAfter)
			}
			if tc.wantMessage != "" && err.Error() != tc.wantMessage {
				t.Errorf("message\n got %q\nwant %q", err.Error(), tc.wantMessage)
			}
		})
	}
}

func TestPredicatesOnOtherErrors(t *testing.T) {
	for _, err := range []error{nil, errors.New("plain"), fmt.Errorf("wrapped: %w", errors.New("plain"))} {
		if got := holds(err); len(got) != 0 {
			t.Errorf("%v: predicates %v hold", err, got)
		}
		if ReasonForError(err) != metav1.StatusReasonUnknown {
			t.Errorf("%v: reason %q", err, ReasonForError(err))
		}
		if _, ok := RetryAfterSeconds(err); ok {
			t.Errorf("%v: RetryAfterSeconds ok", err)
		}
	}
	se := NewStatusError(metav1.NewNotFound(metav1.GroupResource{Resource: "pods"}, "p"))
	if !IsNotFound(se) || se.Error() != `pods "p" not found` {
		t.Errorf("NewStatusError: %v", se)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"3", 3 * time.Second, true},
		{" 0 ", 0, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"99999999", maxRetryAfter, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
	}
	for _, tc := range cases {
		got, ok := parseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBodySnippet(t *testing.T) {
	long := strings.Repeat("é", 300)
	s := bodySnippet([]byte(long))
	if !strings.HasSuffix(s, " …") || len(s) > maxSnippet+len(" …") {
		t.Errorf("long snippet %q", s)
	}
	if got := bodySnippet(bytes.Repeat([]byte{0xff}, 10)); got != "<10 bytes of binary data>" {
		t.Errorf("binary snippet %q", got)
	}
	if got := bodySnippet([]byte("  a\n\tb  ")); got != "a b" {
		t.Errorf("snippet %q", got)
	}
}
