package v1

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/kapi-dev/kapi/internal/golden"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// statusGoldenExchange is one parsed golden exchange.
type statusGoldenExchange struct {
	file     string
	method   string
	path     string
	query    url.Values
	reqBody  []byte
	code     int
	headers  http.Header
	respBody []byte
}

// statusReadGolden reads the golden exchange numbered n as release r captured
// it (normalized to v1.37.2, golden.Release.Load); ok is false where r did
// not capture it or its capture is the release's own.
func statusReadGolden(t testing.TB, r golden.Release, n int) (x statusGoldenExchange, ok bool) {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(golden.V132.Dir(), strconv.Itoa(n)+"-*.txt"))
	if err != nil || len(matches) != 1 {
		t.Fatalf("golden %d: found %v, %v", n, matches, err)
	}
	g, err := r.Load(filepath.Base(matches[0]))
	if errors.Is(err, golden.ErrNotCaptured) || errors.Is(err, golden.ErrNotComparable) {
		return x, false
	}
	if err != nil {
		t.Fatal(err)
	}
	x = statusGoldenExchange{file: g.Name, method: g.Method, reqBody: g.RequestBody, code: g.Status, headers: http.Header{}}
	u, err := url.ParseRequestURI(g.Path)
	if err != nil {
		t.Fatalf("%s: request %q: %v", x.file, g.Path, err)
	}
	x.path, x.query = u.Path, u.Query()
	for k, v := range g.ResponseHeader {
		x.headers.Add(k, v)
	}
	x.respBody = bytes.TrimSpace(g.ResponseBody)
	return x, true
}

// capturedCurrentRV is the current resourceVersion a captured "Too large
// resource version" message quotes: the capture's own revision.
func (x statusGoldenExchange) capturedCurrentRV(t *testing.T) uint64 {
	return x.capturedNumber(t, "current: ", "")
}

// capturedNumber is the number between before and after in the captured
// Status message: a resourceVersion of the capture's own.
func (x statusGoldenExchange) capturedNumber(t *testing.T, before, after string) uint64 {
	var s Status
	if err := json.Unmarshal(x.respBody, &s); err != nil {
		t.Fatal(err)
	}
	_, cur, _ := strings.Cut(s.Message, before)
	if after != "" {
		cur, _, _ = strings.Cut(cur, after)
	}
	n, err := strconv.ParseUint(cur, 10, 64)
	if err != nil {
		t.Fatalf("%s: message %q", x.file, s.Message)
	}
	return n
}

// statusBody returns the Status a golden response carries: the body itself,
// or for a watch the object of its first event. It returns the decoded
// Status and its compact JSON.
func (x statusGoldenExchange) statusBody(t testing.TB) (*Status, []byte) {
	t.Helper()
	raw := x.respBody
	if x.query.Get("watch") != "" {
		first, _, _ := bytes.Cut(raw, []byte("\n"))
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal(first, &ev); err != nil {
			t.Fatalf("%s: watch event: %v", x.file, err)
		}
		if ev.Type != "ERROR" {
			t.Fatalf("%s: first event is %s, want ERROR", x.file, ev.Type)
		}
		raw = ev.Object
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		t.Fatalf("%s: body: %v", x.file, err)
	}
	var s Status
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("%s: decoding Status: %v", x.file, err)
	}
	return &s, compact.Bytes()
}

// statusCompare reports every difference between got and want, field by field.
func statusCompare(t *testing.T, got, want *Status) {
	t.Helper()
	if got == nil {
		t.Fatalf("got nil Status, want %+v", want)
	}
	check := func(name string, g, w any) {
		t.Helper()
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got  %#v\n want %#v", name, g, w)
		}
	}
	check("kind", got.Kind, want.Kind)
	check("apiVersion", got.APIVersion, want.APIVersion)
	check("metadata", got.ListMeta, want.ListMeta)
	check("status", got.Status, want.Status)
	check("message", got.Message, want.Message)
	check("reason", got.Reason, want.Reason)
	check("code", got.Code, want.Code)
	if (got.Details == nil) != (want.Details == nil) {
		t.Errorf("details: got %#v, want %#v", got.Details, want.Details)
	} else if got.Details != nil {
		check("details.name", got.Details.Name, want.Details.Name)
		check("details.group", got.Details.Group, want.Details.Group)
		check("details.kind", got.Details.Kind, want.Details.Kind)
		check("details.uid", got.Details.UID, want.Details.UID)
		check("details.causes", got.Details.Causes, want.Details.Causes)
		check("details.retryAfterSeconds", got.Details.RetryAfterSeconds, want.Details.RetryAfterSeconds)
	}
}

var (
	grConfigMaps = GroupResource{Resource: "configmaps"}
	mediaTypes   = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
)

func TestStatusGolden(t *testing.T) {
	for _, c := range []struct {
		golden int
		build  func(t *testing.T, x statusGoldenExchange) *Status
	}{
		{35, func(t *testing.T, x statusGoldenExchange) *Status {
			// The continue token decoding error is the server's own.
			return NewBadRequest(`invalid continue token: continue key is not valid: invalid character '\u0081' looking for beginning of value`)
		}},
		{36, func(t *testing.T, x statusGoldenExchange) *Status {
			o := statusMustDecodeList(t, x)
			if errs := ValidateListOptions(o); len(errs) != 0 {
				t.Fatalf("ValidateListOptions: %v", errs.Message())
			}
			return CheckListContinue(o)
		}},
		{37, statusListInvalid},
		{38, statusListInvalid},
		{39, statusListInvalid},
		{40, func(t *testing.T, x statusGoldenExchange) *Status {
			o := statusMustDecodeList(t, x)
			rv, _ := strconv.ParseUint(o.ResourceVersion, 10, 64)
			return NewTooLargeResourceVersion(rv, x.capturedCurrentRV(t), 1)
		}},
		{41, func(t *testing.T, x statusGoldenExchange) *Status {
			o, _ := DecodeGetOptions(x.query)
			rv, _ := strconv.ParseUint(o.ResourceVersion, 10, 64)
			return NewTooLargeResourceVersion(rv, x.capturedCurrentRV(t), 1)
		}},
		{45, func(*testing.T, statusGoldenExchange) *Status { return NewNotFound(grConfigMaps, "nope") }},
		{46, func(*testing.T, statusGoldenExchange) *Status { return NewAlreadyExists(grConfigMaps, "cm1") }},
		{47, func(*testing.T, statusGoldenExchange) *Status {
			return NewNotFound(GroupResource{Resource: "namespaces"}, "nope")
		}},
		{48, func(*testing.T, statusGoldenExchange) *Status {
			return NewInvalid(GroupKind{Kind: "ConfigMap"}, "Bad_Name", FieldErrors{FieldInvalid("metadata.name", "Bad_Name",
				`a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)})
		}},
		{49, func(*testing.T, statusGoldenExchange) *Status {
			return NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}},
		{50, func(*testing.T, statusGoldenExchange) *Status {
			return NewConflict(grConfigMaps, "cm1", errors.New(OptimisticLockErrorMsg))
		}},
		{52, func(*testing.T, statusGoldenExchange) *Status { return NewNotFound(grConfigMaps, "nope") }},
		{54, func(*testing.T, statusGoldenExchange) *Status { return NewNotAcceptable(mediaTypes) }},
		{55, func(*testing.T, statusGoldenExchange) *Status { return NewUnsupportedMediaType(mediaTypes) }},
		{56, func(*testing.T, statusGoldenExchange) *Status {
			return NewBadRequest("the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'n' looking for beginning of object key string ({not json)")
		}},
		{57, func(*testing.T, statusGoldenExchange) *Status {
			return NewBadRequest("the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (78797a000a00)")
		}},
		{58, func(*testing.T, statusGoldenExchange) *Status {
			return NewGenericServerResponse(http.StatusNotFound, http.MethodGet, GroupResource{}, "", "", 0, false)
		}},
		{60, func(*testing.T, statusGoldenExchange) *Status {
			return NewGenericServerResponse(http.StatusMethodNotAllowed, http.MethodPost, GroupResource{}, "", "", 0, false)
		}},
		{62, func(t *testing.T, x statusGoldenExchange) *Status {
			o, err := DecodeCreateOptions(x.query)
			if err != nil {
				t.Fatal(err)
			}
			return NewInvalidOptions("CreateOptions", ValidateCreateOptions(o))
		}},
		{71, func(*testing.T, statusGoldenExchange) *Status {
			return NewGenericServerResponse(http.StatusUnprocessableEntity, http.MethodPatch, GroupResource{}, "", "", 0, false)
		}},
		{75, func(*testing.T, statusGoldenExchange) *Status {
			return NewApplyConflict([]StatusCause{{Type: CauseTypeFieldManagerConflict, Message: `conflict with "bob" using v1`, Field: ".data.k1"}},
				`Apply failed with 1 conflict: conflict with "bob" using v1: .data.k1`)
		}},
		{77, func(t *testing.T, x statusGoldenExchange) *Status {
			o, err := DecodePatchOptions(x.query)
			if err != nil {
				t.Fatal(err)
			}
			return NewInvalidOptions("PatchOptions", ValidatePatchOptions(o, true))
		}},
		{80, func(t *testing.T, x statusGoldenExchange) *Status {
			var o DeleteOptions
			if err := json.Unmarshal(x.reqBody, &o); err != nil {
				t.Fatal(err)
			}
			if o.Kind != "DeleteOptions" || o.APIVersion != "v1" {
				t.Errorf("DeleteOptions body TypeMeta = %+v", o.TypeMeta)
			}
			if errs := ValidateDeleteOptions(o); len(errs) != 0 {
				t.Errorf("ValidateDeleteOptions: %s", errs.Message())
			}
			record := strconv.FormatUint(x.capturedNumber(t, "in record (", ")"), 10) // the capture's
			return o.Preconditions.Check(GroupKind{Kind: "ConfigMap"}, &ObjectMeta{Name: "cm1", ResourceVersion: record})
		}},
		{81, func(t *testing.T, x statusGoldenExchange) *Status {
			var captured Status // the uid is the capture's
			if err := json.Unmarshal(x.respBody, &captured); err != nil || captured.Details == nil {
				t.Fatalf("%s: %v", x.file, err)
			}
			o, _ := DecodeDeleteOptions(x.query)
			if errs := ValidateDeleteOptions(o); len(errs) != 0 || !reflect.DeepEqual(o.DryRun, []string{DryRunAll}) {
				t.Errorf("DeleteOptions %+v: %s", o, errs.Message())
			}
			return NewDeleted(grConfigMaps, "cm1", captured.Details.UID)
		}},
		{82, func(*testing.T, statusGoldenExchange) *Status { return NewNotFound(grConfigMaps, "nope") }},
		{88, func(*testing.T, statusGoldenExchange) *Status {
			return NewInvalid(GroupKind{Group: "example.com", Kind: "Widget"}, "w2", FieldErrors{
				// Sorted by field (golden.Nondeterministic).
				FieldNotSupported("spec.color", "green", []string{"red", "blue"}),
				FieldInvalid("spec.size", int64(0), "spec.size in body should be greater than or equal to 1"),
			})
		}},
		{100, func(*testing.T, statusGoldenExchange) *Status {
			return NewContinueExpired("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiYXBwbGllZFx1MDAwMCJ9")
		}},
		{102, func(*testing.T, statusGoldenExchange) *Status {
			s := NewForbidden(grConfigMaps, "late", errors.New("unable to create new content in namespace golden because it is being terminated"))
			s.Details.Causes = append(s.Details.Causes, StatusCause{Type: "NamespaceTerminating", Message: "namespace golden is being terminated", Field: "metadata.namespace"})
			return s
		}},
		{103, func(t *testing.T, x statusGoldenExchange) *Status {
			if errs := ValidateListOptions(statusMustDecodeList(t, x)); len(errs) != 0 {
				t.Errorf("ValidateListOptions: %s", errs.Message())
			}
			return NewListExpired()
		}},
		{104, func(t *testing.T, x statusGoldenExchange) *Status {
			if errs := ValidateListOptions(statusMustDecodeList(t, x)); len(errs) != 0 {
				t.Errorf("ValidateListOptions: %s", errs.Message())
			}
			return NewWatchExpired()
		}},
	} {
		for _, r := range golden.Releases {
			x, ok := statusReadGolden(t, r, c.golden)
			if !ok {
				continue
			}
			var tm TypeMeta
			if json.Unmarshal(x.respBody, &tm); tm.Kind != "Status" && x.query.Get("watch") == "" {
				t.Logf("%s %s: no Status (%s)", r.Name, x.file, golden.Differences[x.file].V132)
				continue
			}
			t.Run(r.Name+"/"+x.file, func(t *testing.T) {
				want, wantJSON := x.statusBody(t)
				got := c.build(t, x)
				statusCompare(t, got, want)

				// The same bytes, too, as encoding/json writes the struct.
				gotJSON, err := json.Marshal(got)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(gotJSON, wantJSON) {
					t.Errorf("JSON:\n got  %s\n want %s", gotJSON, wantJSON)
				}

				// The HTTP status is the Status code, except on watch streams
				// and for a Success Status, which has none.
				switch {
				case x.query.Get("watch") != "":
					if x.code != http.StatusOK {
						t.Errorf("watch HTTP status %d", x.code)
					}
				case got.Status == StatusSuccess:
					if got.Code != 0 || x.code != http.StatusOK {
						t.Errorf("success: code %d, HTTP status %d", got.Code, x.code)
					}
				case int(got.Code) != x.code:
					t.Errorf("code %d, HTTP status %d", got.Code, x.code)
				}

				// Retry-After goes with retryAfterSeconds.
				if ra := x.headers.Get("Retry-After"); ra != "" {
					if got.Details == nil || strconv.Itoa(int(got.Details.RetryAfterSeconds)) != ra {
						t.Errorf("Retry-After %s, details %+v", ra, got.Details)
					}
				}
			})
		}
	}
}

func statusMustDecodeList(t *testing.T, x statusGoldenExchange) ListOptions {
	t.Helper()
	o, err := DecodeListOptions(x.query)
	if err != nil {
		t.Fatalf("DecodeListOptions(%s): %v", x.query.Encode(), err)
	}
	return o
}

func statusListInvalid(t *testing.T, x statusGoldenExchange) *Status {
	errs := ValidateListOptions(statusMustDecodeList(t, x))
	if len(errs) == 0 {
		t.Fatal("ValidateListOptions found no error")
	}
	return NewInvalidOptions("ListOptions", errs)
}

func TestStatusConstructors(t *testing.T) {
	apps := GroupResource{Group: "apps", Resource: "deployments"}
	for _, c := range []struct {
		name    string
		got     *Status
		code    int32
		reason  StatusReason
		message string
		details *StatusDetails
	}{
		{"NotFound in a group", NewNotFound(apps, "web"), 404, StatusReasonNotFound,
			`deployments.apps "web" not found`, &StatusDetails{Name: "web", Group: "apps", Kind: "deployments"}},
		{"GenerateNameConflict", NewGenerateNameConflict(grConfigMaps, "dry-x", 1), 409, StatusReasonAlreadyExists,
			`configmaps "dry-x" already exists, the server was not able to generate a unique name for the object`,
			&StatusDetails{Name: "dry-x", Kind: "configmaps", RetryAfterSeconds: 1}},
		{"Conflict with nil error", NewConflict(apps, "web", nil), 409, StatusReasonConflict,
			`Operation cannot be fulfilled on deployments.apps "web": <nil>`, &StatusDetails{Name: "web", Group: "apps", Kind: "deployments"}},
		{"Unauthorized default", NewUnauthorized(""), 401, StatusReasonUnauthorized, "not authorized", nil},
		{"Unauthorized", NewUnauthorized("token expired"), 401, StatusReasonUnauthorized, "token expired", nil},
		{"Forbidden without name", NewForbidden(grConfigMaps, "", errors.New("no")), 403, StatusReasonForbidden,
			"configmaps is forbidden: no", &StatusDetails{Kind: "configmaps"}},
		{"Forbidden without resource", NewForbidden(GroupResource{}, "", errors.New("no")), 403, StatusReasonForbidden,
			"forbidden: no", &StatusDetails{}},
		{"Gone", NewGone("gone"), 410, StatusReasonGone, "gone", nil},
		{"ResourceExpired", NewResourceExpired("old"), 410, StatusReasonExpired, "old", nil},
		{"ContinueExpired without token", NewContinueExpired(""), 410, StatusReasonExpired,
			"The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.", nil},
		{"Invalid without errors", NewInvalid(GroupKind{Kind: "ConfigMap"}, "x", nil), 422, StatusReasonInvalid,
			`ConfigMap "x" is invalid`, &StatusDetails{Name: "x", Kind: "ConfigMap", Causes: []StatusCause{}}},
		{"TooManyRequests", NewTooManyRequests("slow down", 3), 429, StatusReasonTooManyRequests, "slow down",
			&StatusDetails{RetryAfterSeconds: 3}},
		{"ServiceUnavailable", NewServiceUnavailable("down"), 503, StatusReasonServiceUnavailable, "down", nil},
		{"MethodNotSupported", NewMethodNotSupported(GroupResource{Resource: "nodes/proxy"}, "create"), 405, StatusReasonMethodNotAllowed,
			`create is not supported on resources of kind "nodes/proxy"`, &StatusDetails{Kind: "nodes/proxy"}},
		{"ServerTimeout", NewServerTimeout(apps, "list", 2), 500, StatusReasonServerTimeout,
			"The list operation against deployments.apps could not be completed at this time, please try again.",
			&StatusDetails{Name: "list", Group: "apps", Kind: "deployments", RetryAfterSeconds: 2}},
		{"InternalError", NewInternalError(errors.New("boom")), 500, StatusReasonInternalError,
			"Internal error occurred: boom", &StatusDetails{Causes: []StatusCause{{Message: "boom"}}}},
		{"Timeout", NewTimeout("slow", 0), 504, StatusReasonTimeout, "Timeout: slow", &StatusDetails{}},
		{"RequestEntityTooLarge", NewRequestEntityTooLarge("limit is 3MB"), 413, StatusReasonRequestEntityTooLarge,
			"Request entity too large: limit is 3MB", nil},
		{"NotAcceptable without types", NewGenericServerResponse(406, "GET", GroupResource{}, "", "", 0, false), 406, StatusReasonNotAcceptable,
			"the server was unable to respond with a content type that the client supports", &StatusDetails{}},
		{"Generic 409 on POST", NewGenericServerResponse(409, "POST", grConfigMaps, "x", "", 0, false), 409, StatusReasonAlreadyExists,
			"the server reported a conflict (post configmaps x)", &StatusDetails{Name: "x", Kind: "configmaps"}},
		{"Generic 409 on PUT", NewGenericServerResponse(409, "PUT", apps, "", "", 0, false), 409, StatusReasonConflict,
			"the server reported a conflict (put deployments.apps)", &StatusDetails{Group: "apps", Kind: "deployments"}},
		{"Generic 404 from client", NewGenericServerResponse(404, "GET", GroupResource{Group: "nope.example.com", Resource: "widgets"}, "", "404 page not found", 0, true),
			404, StatusReasonNotFound, "the server could not find the requested resource (get widgets.nope.example.com)",
			&StatusDetails{Group: "nope.example.com", Kind: "widgets", Causes: []StatusCause{{Type: CauseTypeUnexpectedServerResponse, Message: "404 page not found"}}}},
		{"Generic 403", NewGenericServerResponse(403, "GET", GroupResource{}, "", "denied", 0, false), 403, StatusReasonForbidden, "denied", &StatusDetails{}},
		{"Generic 502", NewGenericServerResponse(502, "GET", GroupResource{}, "", "bad gateway", 0, false), 502, StatusReasonInternalError,
			`an error on the server ("bad gateway") has prevented the request from succeeding`, &StatusDetails{}},
		{"Generic 418", NewGenericServerResponse(418, "GET", GroupResource{}, "", "", 5, false), 418, StatusReasonUnknown,
			"the server responded with the status code 418 but did not return more information", &StatusDetails{RetryAfterSeconds: 5}},
		{"Generic 401", NewGenericServerResponse(401, "GET", GroupResource{}, "", "", 0, false), 401, StatusReasonUnauthorized,
			"the server has asked for the client to provide credentials", &StatusDetails{}},
		{"Generic 400", NewGenericServerResponse(400, "GET", GroupResource{}, "", "", 0, false), 400, StatusReasonBadRequest,
			"the server rejected our request for an unknown reason", &StatusDetails{}},
		{"Generic 415", NewGenericServerResponse(415, "GET", GroupResource{}, "", "no yaml", 0, false), 415, StatusReasonUnsupportedMediaType,
			"no yaml", &StatusDetails{}},
		{"Generic 503", NewGenericServerResponse(503, "GET", GroupResource{}, "", "", 0, false), 503, StatusReasonServiceUnavailable,
			"the server is currently unable to handle the request", &StatusDetails{}},
		{"Generic 504", NewGenericServerResponse(504, "GET", GroupResource{}, "", "", 0, false), 504, StatusReasonTimeout,
			"the server was unable to return a response in the time allotted, but may still be processing the request", &StatusDetails{}},
		{"Generic 429", NewGenericServerResponse(429, "GET", GroupResource{}, "", "", 1, false), 429, StatusReasonTooManyRequests,
			"the server has received too many requests and has asked us to try again later", &StatusDetails{RetryAfterSeconds: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := &Status{TypeMeta: TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: StatusFailure,
				Code: c.code, Reason: c.reason, Message: c.message, Details: c.details}
			statusCompare(t, c.got, want)
		})
	}
}

func TestGroupResourceAndKindString(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{GroupResource{Resource: "configmaps"}.String(), "configmaps"},
		{GroupResource{Group: "apps", Resource: "deployments"}.String(), "deployments.apps"},
		{GroupResource{}.String(), ""},
		{GroupKind{Kind: "ConfigMap"}.String(), "ConfigMap"},
		{GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}.String(), "ListOptions.meta.k8s.io"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

type statusStringer struct{}

func (statusStringer) String() string { return "stringer" }

func TestFieldErrorMessages(t *testing.T) {
	rvm := ResourceVersionMatch("Sometimes")
	for _, c := range []struct {
		err   *FieldError
		want  string
		cause CauseType
	}{
		{FieldRequired("fieldManager", "is required for apply patch"), "fieldManager: Required value: is required for apply patch", CauseTypeFieldValueRequired},
		{FieldRequired("spec", ""), "spec: Required value", CauseTypeFieldValueRequired},
		{FieldForbidden("resourceVersionMatch", "no"), "resourceVersionMatch: Forbidden: no", CauseTypeForbidden},
		{FieldInvalid("a", "x", "bad"), `a: Invalid value: "x": bad`, CauseTypeFieldValueInvalid},
		{FieldInvalid("a", "say \"hi\"\n", ""), `a: Invalid value: "say \"hi\"\n"`, CauseTypeFieldValueInvalid},
		{FieldInvalid("a", int64(-1), "must be >= 0"), "a: Invalid value: -1: must be >= 0", CauseTypeFieldValueInvalid},
		{FieldInvalid("a", int32(7), ""), "a: Invalid value: 7", CauseTypeFieldValueInvalid},
		{FieldInvalid("a", 8, ""), "a: Invalid value: 8", CauseTypeFieldValueInvalid},
		{FieldInvalid("a", 1.5, ""), "a: Invalid value: 1.5", CauseTypeFieldValueInvalid},
		{FieldInvalid("a", true, "cannot be set together with .dryRun"), "a: Invalid value: true: cannot be set together with .dryRun", CauseTypeFieldValueInvalid},
		{FieldInvalid("a", nil, ""), "a: Invalid value: null", CauseTypeFieldValueInvalid},
		{FieldInvalid("a", (*string)(nil), ""), "a: Invalid value: null", CauseTypeFieldValueInvalid},
		{FieldInvalid("a", new("p"), ""), `a: Invalid value: "p"`, CauseTypeFieldValueInvalid},
		{FieldInvalid("a", &rvm, ""), `a: Invalid value: "Sometimes"`, CauseTypeFieldValueInvalid},
		{FieldInvalid("a", statusStringer{}, ""), "a: Invalid value: stringer", CauseTypeFieldValueInvalid},
		{FieldInvalid("a", map[string]int{"k": 1}, ""), `a: Invalid value: {"k":1}`, CauseTypeFieldValueInvalid},
		{FieldTypeInvalid("a", "x", "must be an integer"), `a: Invalid value: "x": must be an integer`, CauseTypeTypeInvalid},
		{FieldNotSupported("dryRun", []string{"Some"}, []string{"All"}), `dryRun: Unsupported value: ["Some"]: supported values: "All"`, CauseTypeFieldValueNotSupported},
		{FieldNotSupported("x", "y", nil), `x: Unsupported value: "y"`, CauseTypeFieldValueNotSupported},
		{FieldDuplicate("spec.ports[0]", int32(80)), "spec.ports[0]: Duplicate value: 80", CauseTypeFieldValueDuplicate},
		{FieldNotFound("spec.ref", "x"), `spec.ref: Not found: "x"`, CauseTypeFieldValueNotFound},
		{FieldTooLong("fieldManager", 128), "fieldManager: Too long: may not be more than 128 bytes", CauseTypeTooLong},
		{FieldTooLong("x", -1), "x: Too long: value is too long", CauseTypeTooLong},
		{FieldTooMany("items", 5, 3), "items: Too many: 5: must have at most 3 items", CauseTypeTooMany},
		{FieldTooMany("items", -1, -1), "items: Too many: has too many items", CauseTypeTooMany},
		{FieldInternal("x", errors.New("oops")), "x: Internal error: oops", CauseTypeInternal},
		{&FieldError{Type: "Custom", Field: "x", BadValue: "v", Detail: "d"}, `x: Custom: "v": d`, "Custom"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %s\n want %s", got, c.want)
		}
		cause := c.err.Cause()
		if cause.Type != c.cause || cause.Field != c.err.Field || c.err.Field+": "+cause.Message != c.want {
			t.Errorf("Cause() = %+v for %s", cause, c.want)
		}
	}
}

func TestFieldErrorsMessage(t *testing.T) {
	a := FieldForbidden("a", "no")
	b := FieldInvalid("b", "x", "bad")
	for _, c := range []struct {
		errs   FieldErrors
		want   string
		causes int
	}{
		{nil, "", 0},
		{FieldErrors{nil}, "", 0},
		{FieldErrors{a}, "a: Forbidden: no", 1},
		{FieldErrors{a, a}, "a: Forbidden: no", 2},
		{FieldErrors{a, b}, `[a: Forbidden: no, b: Invalid value: "x": bad]`, 2},
		{FieldErrors{a, b, a, nil}, `[a: Forbidden: no, b: Invalid value: "x": bad]`, 3},
	} {
		if got := c.errs.Message(); got != c.want {
			t.Errorf("Message() = %q, want %q", got, c.want)
		}
		if got := c.errs.Causes(); len(got) != c.causes {
			t.Errorf("Causes() = %v, want %d", got, c.causes)
		}
		s := NewInvalid(GroupKind{Kind: "K"}, "n", c.errs)
		if len(s.Details.Causes) != c.causes {
			t.Errorf("NewInvalid causes = %v, want %d", s.Details.Causes, c.causes)
		}
		wantMsg := `K "n" is invalid`
		if c.want != "" {
			wantMsg += ": " + c.want
		}
		if s.Message != wantMsg {
			t.Errorf("NewInvalid message = %q, want %q", s.Message, wantMsg)
		}
	}
}

func TestPreconditionsCheck(t *testing.T) {
	obj := &ObjectMeta{Name: "cm1", UID: "u1", ResourceVersion: "217"}
	apps := GroupKind{Group: "apps", Kind: "Deployment"}
	for _, c := range []struct {
		name string
		p    *Preconditions
		kind GroupKind
		want string
	}{
		{"nil", nil, apps, ""},
		{"empty", &Preconditions{}, apps, ""},
		{"matching", &Preconditions{UID: new(UID("u1")), ResourceVersion: new("217")}, apps, ""},
		{"uid", &Preconditions{UID: new(UID("u0"))}, apps,
			`Operation cannot be fulfilled on Deployment.apps "cm1": the UID in the precondition (u0) does not match the UID in record (u1). The object might have been deleted and then recreated`},
		{"uid first", &Preconditions{UID: new(UID("u0")), ResourceVersion: new("1")}, GroupKind{Kind: "ConfigMap"},
			`Operation cannot be fulfilled on ConfigMap "cm1": the UID in the precondition (u0) does not match the UID in record (u1). The object might have been deleted and then recreated`},
		{"resourceVersion", &Preconditions{ResourceVersion: new("1")}, GroupKind{Kind: "ConfigMap"},
			`Operation cannot be fulfilled on ConfigMap "cm1": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (217). The object might have been modified`},
	} {
		s := c.p.Check(c.kind, obj)
		switch {
		case c.want == "" && s != nil:
			t.Errorf("%s: got %+v, want nil", c.name, s)
		case c.want != "" && (s == nil || s.Message != c.want || s.Code != 409 || s.Reason != StatusReasonConflict ||
			s.Details.Kind != c.kind.Kind || s.Details.Group != c.kind.Group || s.Details.Name != "cm1"):
			t.Errorf("%s: got %+v, want message %s", c.name, s, c.want)
		}
	}
}
