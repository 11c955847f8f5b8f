package v1

import (
	"encoding/json"
	"errors"
	"github.com/kapi-dev/kapi/internal/golden"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestListOptionsQuery(t *testing.T) {
	for _, c := range []struct {
		name string
		o    *ListOptions
		want string
	}{
		{"nil", nil, ""},
		{"zero", &ListOptions{}, ""},
		{"zero pointers are sent", &ListOptions{TimeoutSeconds: new(int64(0)), SendInitialEvents: new(false)},
			"sendInitialEvents=false&timeoutSeconds=0"},
		{"page", &ListOptions{Limit: 2, LabelSelector: "page=yes"}, "labelSelector=page%3Dyes&limit=2"},
		{"next page", &ListOptions{Limit: 2, Continue: "eyJ2Ijoi"}, "continue=eyJ2Ijoi&limit=2"},
		{"negative limit", &ListOptions{Limit: -1}, "limit=-1"},
		{"watch", &ListOptions{Watch: true, AllowWatchBookmarks: true, ResourceVersion: "235", TimeoutSeconds: new(int64(4))},
			"allowWatchBookmarks=true&resourceVersion=235&timeoutSeconds=4&watch=true"},
		{"streaming list", &ListOptions{Watch: true, AllowWatchBookmarks: true, SendInitialEvents: new(true),
			ResourceVersionMatch: ResourceVersionMatchNotOlderThan},
			"allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true"},
		{"everything", &ListOptions{LabelSelector: "a in (x,y)", FieldSelector: "metadata.name=x", Watch: true,
			AllowWatchBookmarks: true, ResourceVersion: "10", ResourceVersionMatch: ResourceVersionMatchExact,
			TimeoutSeconds: new(int64(30)), Limit: 500, Continue: "c&d", SendInitialEvents: new(false)},
			"allowWatchBookmarks=true&continue=c%26d&fieldSelector=metadata.name%3Dx&labelSelector=a+in+%28x%2Cy%29" +
				"&limit=500&resourceVersion=10&resourceVersionMatch=Exact&sendInitialEvents=false&timeoutSeconds=30&watch=true"},
	} {
		q := c.o.Query()
		if q == nil {
			t.Errorf("%s: Query() = nil", c.name)
		}
		if got := q.Encode(); got != c.want {
			t.Errorf("%s: Query().Encode() = %s\n want %s", c.name, got, c.want)
		}
		for i := 0; i < 3; i++ {
			if got := c.o.Query().Encode(); got != c.want {
				t.Errorf("%s: encoding is not deterministic: %s", c.name, got)
			}
		}
	}
}

func TestOtherOptionsQuery(t *testing.T) {
	orphan := DeletePropagationOrphan
	for _, c := range []struct {
		name string
		q    url.Values
		want string
	}{
		{"nil GetOptions", (*GetOptions)(nil).Query(), ""},
		{"GetOptions", (&GetOptions{ResourceVersion: "0"}).Query(), "resourceVersion=0"},
		{"nil CreateOptions", (*CreateOptions)(nil).Query(), ""},
		{"CreateOptions", (&CreateOptions{DryRun: []string{DryRunAll}, FieldManager: "kapi", FieldValidation: FieldValidationStrict}).Query(),
			"dryRun=All&fieldManager=kapi&fieldValidation=Strict"},
		{"CreateOptions repeats dryRun", (&CreateOptions{DryRun: []string{"All", "Some"}}).Query(), "dryRun=All&dryRun=Some"},
		{"nil UpdateOptions", (*UpdateOptions)(nil).Query(), ""},
		{"UpdateOptions", (&UpdateOptions{FieldManager: "kapi", FieldValidation: FieldValidationWarn}).Query(),
			"fieldManager=kapi&fieldValidation=Warn"},
		{"nil PatchOptions", (*PatchOptions)(nil).Query(), ""},
		{"PatchOptions", (&PatchOptions{DryRun: []string{DryRunAll}, Force: new(true), FieldManager: "alice", FieldValidation: FieldValidationIgnore}).Query(),
			"dryRun=All&fieldManager=alice&fieldValidation=Ignore&force=true"},
		{"nil ApplyOptions", (*ApplyOptions)(nil).Query(), "force=false"},
		{"ApplyOptions always sends force", (&ApplyOptions{FieldManager: "alice"}).Query(), "fieldManager=alice&force=false"},
		{"ApplyOptions forced", (&ApplyOptions{FieldManager: "alice", Force: true, DryRun: []string{DryRunAll}}).Query(),
			"dryRun=All&fieldManager=alice&force=true"},
		{"nil DeleteOptions", (*DeleteOptions)(nil).Query(), ""},
		{"DeleteOptions zero grace period", (&DeleteOptions{GracePeriodSeconds: new(int64(0))}).Query(), "gracePeriodSeconds=0"},
		{"DeleteOptions", (&DeleteOptions{
			TypeMeta:          TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"},
			Preconditions:     &Preconditions{UID: new(UID("u1")), ResourceVersion: new("7")},
			OrphanDependents:  new(false),
			PropagationPolicy: &orphan,
			DryRun:            []string{DryRunAll},
			IgnoreStoreReadErrorWithClusterBreakingPotential: new(true),
		}).Query(),
			"dryRun=All&ignoreStoreReadErrorWithClusterBreakingPotential=true&orphanDependents=false&propagationPolicy=Orphan&resourceVersion=7&uid=u1"},
		{"nil TableOptions", (*TableOptions)(nil).Query(), ""},
		{"TableOptions", (&TableOptions{IncludeObject: IncludeObject}).Query(), "includeObject=Object"},
	} {
		if got := c.q.Encode(); got != c.want {
			t.Errorf("%s: %s\n want %s", c.name, got, c.want)
		}
	}
}

func TestDecodeListOptions(t *testing.T) {
	for _, c := range []struct {
		query string
		want  ListOptions
	}{
		{"", ListOptions{}},
		{"pretty=true&unknown=1", ListOptions{}},
		{"watch=1", ListOptions{Watch: true}},
		{"watch=true", ListOptions{Watch: true}},
		{"watch=TRUE", ListOptions{Watch: true}},
		{"watch", ListOptions{Watch: true}},
		{"watch=", ListOptions{Watch: true}},
		{"watch=yes", ListOptions{Watch: true}},
		{"watch=0", ListOptions{}},
		{"watch=false", ListOptions{}},
		{"watch=False", ListOptions{}},
		{"watch=0&watch=1", ListOptions{}},
		{"allowWatchBookmarks=true", ListOptions{AllowWatchBookmarks: true}},
		{"sendInitialEvents=true", ListOptions{SendInitialEvents: new(true)}},
		{"sendInitialEvents=false", ListOptions{SendInitialEvents: new(false)}},
		{"sendInitialEvents=0", ListOptions{SendInitialEvents: new(false)}},
		{"timeoutSeconds=0", ListOptions{TimeoutSeconds: new(int64(0))}},
		{"timeoutSeconds=-5", ListOptions{TimeoutSeconds: new(int64(-5))}},
		{"limit=500", ListOptions{Limit: 500}},
		{"limit=%2B7", ListOptions{Limit: 7}},
		{"limit=0", ListOptions{}},
		{"limit=2&limit=nope", ListOptions{Limit: 2}},
		{"resourceVersion=0&resourceVersionMatch=Sometimes", ListOptions{ResourceVersion: "0", ResourceVersionMatch: "Sometimes"}},
		{"labelSelector=a%20in%20(&fieldSelector=spec.nope%3Dx", ListOptions{LabelSelector: "a in (", FieldSelector: "spec.nope=x"}},
		{"continue=garbage&limit=2", ListOptions{Continue: "garbage", Limit: 2}},
	} {
		q, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeListOptions(q)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("DecodeListOptions(%q) = %+v, %v\n want %+v", c.query, got, err, c.want)
		}
	}
}

func TestDecodeOptionsErrors(t *testing.T) {
	decoders := map[string]func(url.Values) error{
		"ListOptions":   func(q url.Values) error { _, err := DecodeListOptions(q); return err },
		"DeleteOptions": func(q url.Values) error { _, err := DecodeDeleteOptions(q); return err },
	}
	for _, c := range []struct {
		decoder, query string
		param, value   string
		cause          error
		msg            string
	}{
		{"ListOptions", "limit=ten", "limit", "ten", strconv.ErrSyntax,
			`invalid value "ten" for query parameter "limit": not an integer`},
		{"ListOptions", "limit=", "limit", "", strconv.ErrSyntax,
			`invalid value "" for query parameter "limit": not an integer`},
		{"ListOptions", "limit=1.5", "limit", "1.5", strconv.ErrSyntax,
			`invalid value "1.5" for query parameter "limit": not an integer`},
		{"ListOptions", "limit=99999999999999999999", "limit", "99999999999999999999", strconv.ErrRange,
			`invalid value "99999999999999999999" for query parameter "limit": integer out of range`},
		{"ListOptions", "timeoutSeconds=5s", "timeoutSeconds", "5s", strconv.ErrSyntax,
			`invalid value "5s" for query parameter "timeoutSeconds": not an integer`},
		{"ListOptions", "watch=1&timeoutSeconds=1&timeoutSeconds=x&limit=y", "limit", "y", strconv.ErrSyntax,
			`invalid value "y" for query parameter "limit": not an integer`},
		{"DeleteOptions", "gracePeriodSeconds=now", "gracePeriodSeconds", "now", strconv.ErrSyntax,
			`invalid value "now" for query parameter "gracePeriodSeconds": not an integer`},
	} {
		q, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		err = decoders[c.decoder](q)
		var qe *QueryParamError
		if !errors.As(err, &qe) {
			t.Errorf("%s(%q): error %v, want a *QueryParamError", c.decoder, c.query, err)
			continue
		}
		if qe.Param != c.param || qe.Value != c.value || !errors.Is(err, c.cause) || err.Error() != c.msg {
			t.Errorf("%s(%q): %+v %q\n want param %q value %q cause %v message %q", c.decoder, c.query, qe, err.Error(), c.param, c.value, c.cause, c.msg)
		}
		if s := NewBadRequest(err.Error()); s.Code != 400 || !strings.Contains(s.Message, c.param) {
			t.Errorf("NewBadRequest: %+v", s)
		}
	}
	other := &QueryParamError{Param: "p", Value: "v", Err: errors.New("too odd")}
	if got := other.Error(); got != `invalid value "v" for query parameter "p": too odd` {
		t.Errorf("Error() = %s", got)
	}
	if got := (&QueryParamError{Param: "p", Value: "v"}).Error(); got != `invalid value "v" for query parameter "p": invalid` {
		t.Errorf("Error() = %s", got)
	}
}

func TestDecodeOtherOptions(t *testing.T) {
	parse := func(s string) url.Values {
		q, err := url.ParseQuery(s)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	foreground := DeletePropagationForeground
	bogus := DeletionPropagation("")
	for _, c := range []struct {
		name string
		got  any
		err  error
		want any
	}{
		{"GetOptions", first2(DecodeGetOptions(parse("resourceVersion=0&resourceVersion=5"))), nil, GetOptions{ResourceVersion: "0"}},
		{"CreateOptions", first2(DecodeCreateOptions(parse("dryRun=All&dryRun=Some&fieldManager=a&fieldManager=b&fieldValidation=Strict"))), nil,
			CreateOptions{DryRun: []string{"All", "Some"}, FieldManager: "a", FieldValidation: FieldValidationStrict}},
		{"CreateOptions bare dryRun", first2(DecodeCreateOptions(parse("dryRun"))), nil, CreateOptions{DryRun: []string{""}}},
		{"UpdateOptions", first2(DecodeUpdateOptions(parse("fieldManager=kapi&fieldValidation=Ignore"))), nil,
			UpdateOptions{FieldManager: "kapi", FieldValidation: FieldValidationIgnore}},
		{"PatchOptions", first2(DecodePatchOptions(parse("fieldManager=alice&force=true"))), nil,
			PatchOptions{FieldManager: "alice", Force: new(true)}},
		{"PatchOptions force=0", first2(DecodePatchOptions(parse("force=0"))), nil, PatchOptions{Force: new(false)}},
		{"ApplyOptions", first2(DecodeApplyOptions(parse("fieldManager=alice&force=true&dryRun=All"))), nil,
			ApplyOptions{FieldManager: "alice", Force: true, DryRun: []string{DryRunAll}}},
		{"ApplyOptions without force", first2(DecodeApplyOptions(parse("fieldManager=alice"))), nil, ApplyOptions{FieldManager: "alice"}},
		{"DeleteOptions", first2(DecodeDeleteOptions(parse("gracePeriodSeconds=0&propagationPolicy=Foreground&uid=u1&resourceVersion=9&dryRun=All&orphanDependents=1&ignoreStoreReadErrorWithClusterBreakingPotential=false"))), nil,
			DeleteOptions{GracePeriodSeconds: new(int64(0)), PropagationPolicy: &foreground,
				Preconditions: &Preconditions{UID: new(UID("u1")), ResourceVersion: new("9")}, DryRun: []string{DryRunAll},
				OrphanDependents: new(true), IgnoreStoreReadErrorWithClusterBreakingPotential: new(false)}},
		{"DeleteOptions empty preconditions are dropped", first2(DecodeDeleteOptions(parse("uid=&resourceVersion="))), nil, DeleteOptions{}},
		{"DeleteOptions resourceVersion only", first2(DecodeDeleteOptions(parse("resourceVersion=3"))), nil,
			DeleteOptions{Preconditions: &Preconditions{ResourceVersion: new("3")}}},
		{"DeleteOptions empty propagationPolicy", first2(DecodeDeleteOptions(parse("propagationPolicy="))), nil,
			DeleteOptions{PropagationPolicy: &bogus}},
		{"TableOptions", first2(DecodeTableOptions(parse("includeObject=None"))), nil, TableOptions{IncludeObject: IncludeNone}},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %+v\n want %+v", c.name, c.got, c.want)
		}
	}
}

// first2 drops the error of a decoder that cannot fail, failing loudly if it
// does.
func first2[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestOptionsRoundTrip(t *testing.T) {
	background := DeletePropagationBackground
	lists := []ListOptions{
		{},
		{Limit: 2, LabelSelector: "page=yes"},
		{Limit: -3, Continue: "tok/+=", ResourceVersion: "0"},
		{Watch: true, AllowWatchBookmarks: true, TimeoutSeconds: new(int64(0)), ResourceVersion: "235"},
		{Watch: true, SendInitialEvents: new(false), ResourceVersionMatch: ResourceVersionMatchNotOlderThan},
		{FieldSelector: "spec.nodeName=node-a", ResourceVersion: "12", ResourceVersionMatch: "Sometimes", SendInitialEvents: new(true)},
		{LabelSelector: "ünïcode=✓, x notin (a;b)", Continue: "%00\x00\xff"},
	}
	for _, o := range lists {
		got, err := DecodeListOptions(o.Query())
		if err != nil || !reflect.DeepEqual(got, o) {
			t.Errorf("ListOptions %+v: round trip gives %+v, %v", o, got, err)
		}
		// Through the wire form as well.
		q, err := url.ParseQuery(o.Query().Encode())
		if err != nil {
			t.Fatal(err)
		}
		if got, err := DecodeListOptions(q); err != nil || !reflect.DeepEqual(got, o) {
			t.Errorf("ListOptions %+v: round trip through %q gives %+v, %v", o, o.Query().Encode(), got, err)
		}
	}
	for _, o := range []GetOptions{{}, {ResourceVersion: "5"}} {
		if got := first2(DecodeGetOptions(o.Query())); got != o {
			t.Errorf("GetOptions %+v: got %+v", o, got)
		}
	}
	for _, o := range []CreateOptions{{}, {DryRun: []string{DryRunAll}, FieldManager: "m", FieldValidation: "Strict"}, {DryRun: []string{"", "x"}}} {
		if got := first2(DecodeCreateOptions(o.Query())); !reflect.DeepEqual(got, o) {
			t.Errorf("CreateOptions %+v: got %+v", o, got)
		}
	}
	for _, o := range []UpdateOptions{{}, {DryRun: []string{DryRunAll}, FieldManager: "m", FieldValidation: "Warn"}} {
		if got := first2(DecodeUpdateOptions(o.Query())); !reflect.DeepEqual(got, o) {
			t.Errorf("UpdateOptions %+v: got %+v", o, got)
		}
	}
	for _, o := range []PatchOptions{{}, {Force: new(false)}, {DryRun: []string{DryRunAll}, Force: new(true), FieldManager: "m", FieldValidation: "Ignore"}} {
		if got := first2(DecodePatchOptions(o.Query())); !reflect.DeepEqual(got, o) {
			t.Errorf("PatchOptions %+v: got %+v", o, got)
		}
	}
	for _, o := range []ApplyOptions{{}, {Force: true, FieldManager: "m"}, {DryRun: []string{DryRunAll}, FieldManager: "m"}} {
		if got := first2(DecodeApplyOptions(o.Query())); !reflect.DeepEqual(got, o) {
			t.Errorf("ApplyOptions %+v: got %+v", o, got)
		}
	}
	for _, o := range []DeleteOptions{
		{},
		{GracePeriodSeconds: new(int64(0))},
		{GracePeriodSeconds: new(int64(30)), PropagationPolicy: &background, DryRun: []string{DryRunAll}},
		{Preconditions: &Preconditions{UID: new(UID("u"))}, OrphanDependents: new(true)},
		{Preconditions: &Preconditions{UID: new(UID("u")), ResourceVersion: new("1")}, IgnoreStoreReadErrorWithClusterBreakingPotential: new(true)},
	} {
		if got := first2(DecodeDeleteOptions(o.Query())); !reflect.DeepEqual(got, o) {
			t.Errorf("DeleteOptions %+v: got %+v", o, got)
		}
	}
	for _, o := range []TableOptions{{}, {IncludeObject: IncludeMetadata}} {
		if got := first2(DecodeTableOptions(o.Query())); got != o {
			t.Errorf("TableOptions %+v: got %+v", o, got)
		}
	}
}

func TestApplyOptionsToPatchOptions(t *testing.T) {
	a := ApplyOptions{DryRun: []string{DryRunAll}, Force: true, FieldManager: "m"}
	want := PatchOptions{DryRun: []string{DryRunAll}, Force: new(true), FieldManager: "m"}
	if got := a.ToPatchOptions(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := (*ApplyOptions)(nil).ToPatchOptions(); !reflect.DeepEqual(got, PatchOptions{Force: new(false)}) {
		t.Errorf("nil: got %+v", got)
	}
	if errs := ValidatePatchOptions(a.ToPatchOptions(), true); len(errs) != 0 {
		t.Errorf("ValidatePatchOptions: %s", errs.Message())
	}
}

// TestOptionsJSON pins the JSON names, which must be Kubernetes' since
// DeleteOptions in particular travels as a body.
func TestOptionsJSON(t *testing.T) {
	orphan := DeletePropagationOrphan
	for _, c := range []struct {
		v    any
		want string
	}{
		{ListOptions{}, `{}`},
		{ListOptions{LabelSelector: "a", FieldSelector: "b", Watch: true, AllowWatchBookmarks: true, ResourceVersion: "1",
			ResourceVersionMatch: "Exact", TimeoutSeconds: new(int64(0)), Limit: 2, Continue: "c", SendInitialEvents: new(false)},
			`{"labelSelector":"a","fieldSelector":"b","watch":true,"allowWatchBookmarks":true,"resourceVersion":"1","resourceVersionMatch":"Exact","timeoutSeconds":0,"limit":2,"continue":"c","sendInitialEvents":false}`},
		{GetOptions{ResourceVersion: "0"}, `{"resourceVersion":"0"}`},
		{CreateOptions{DryRun: []string{"All"}, FieldManager: "m", FieldValidation: "Strict"}, `{"dryRun":["All"],"fieldManager":"m","fieldValidation":"Strict"}`},
		{UpdateOptions{DryRun: []string{"All"}, FieldManager: "m", FieldValidation: "Warn"}, `{"dryRun":["All"],"fieldManager":"m","fieldValidation":"Warn"}`},
		{PatchOptions{DryRun: []string{"All"}, Force: new(true), FieldManager: "m", FieldValidation: "Ignore"}, `{"dryRun":["All"],"force":true,"fieldManager":"m","fieldValidation":"Ignore"}`},
		{ApplyOptions{}, `{"force":false,"fieldManager":""}`},
		{DeleteOptions{TypeMeta: TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}, GracePeriodSeconds: new(int64(0)),
			Preconditions: &Preconditions{UID: new(UID("u")), ResourceVersion: new("1")}, OrphanDependents: new(false),
			PropagationPolicy: &orphan, DryRun: []string{"All"}, IgnoreStoreReadErrorWithClusterBreakingPotential: new(true)},
			`{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"preconditions":{"uid":"u","resourceVersion":"1"},"orphanDependents":false,"propagationPolicy":"Orphan","dryRun":["All"],"ignoreStoreReadErrorWithClusterBreakingPotential":true}`},
		{TableOptions{IncludeObject: IncludeNone}, `{"includeObject":"None"}`},
	} {
		got, err := json.Marshal(c.v)
		if err != nil || string(got) != c.want {
			t.Errorf("%T: %s, %v\n want %s", c.v, got, err, c.want)
			continue
		}
		back := reflect.New(reflect.TypeOf(c.v))
		if err := json.Unmarshal(got, back.Interface()); err != nil || !reflect.DeepEqual(back.Elem().Interface(), c.v) {
			t.Errorf("%T: decoding %s gives %+v, %v", c.v, got, back.Elem().Interface(), err)
		}
	}
}

// TestGoldenQueries decodes the query of every golden request, checks that
// validation agrees with the response the real server gave, and that
// encoding the options again keeps them.
func TestGoldenQueries(t *testing.T) {
	for _, c := range []struct {
		golden int
		// invalid is the message of the 422 the server answered, if any.
		invalid string
	}{
		{29, ""}, {30, ""}, {31, ""}, {32, ""}, {35, ""}, {36, ""},
		{37, `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`},
		{38, `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{39, `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Sometimes": supported values: "Exact", "NotOlderThan", ""`},
		{40, ""}, {41, ""}, {42, ""}, {43, ""}, {44, ""}, {61, ""},
		{62, `CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"`},
		{64, ""}, {73, ""}, {74, ""}, {75, ""}, {76, ""}, {81, ""}, {83, ""},
		{93, ""}, {94, ""}, {95, ""}, {96, ""}, {97, ""}, {98, ""}, {99, ""}, {100, ""}, {103, ""}, {104, ""},
	} {
		for _, r := range golden.Releases {
			x, ok := statusReadGolden(t, r, c.golden)
			if !ok {
				continue
			}
			t.Run(r.Name+"/"+x.file, func(t *testing.T) {
				var kind string
				var errs FieldErrors
				var reencoded url.Values
				switch {
				case x.method == "GET" && strings.HasSuffix(x.path, "/cm1"):
					kind = "GetOptions"
					o := first2(DecodeGetOptions(x.query))
					reencoded = o.Query()
				case x.method == "GET" || (x.method == "DELETE" && strings.HasSuffix(x.path, "/configmaps")):
					kind = "ListOptions"
					o, err := DecodeListOptions(x.query)
					if err != nil {
						t.Fatal(err)
					}
					errs = ValidateListOptions(o)
					reencoded = o.Query()
					if len(errs) == 0 {
						s := CheckListContinue(o)
						if (s != nil) != (x.code == 400 && c.golden == 36) {
							t.Errorf("CheckListContinue = %+v, server answered %d", s, x.code)
						}
					}
				case x.method == "POST":
					kind = "CreateOptions"
					o := first2(DecodeCreateOptions(x.query))
					errs = ValidateCreateOptions(o)
					reencoded = o.Query()
				case x.method == "PATCH":
					kind = "PatchOptions"
					o := first2(DecodePatchOptions(x.query))
					errs = ValidatePatchOptions(o, strings.Contains(string(x.reqBody), "kind: ConfigMap"))
					reencoded = o.Query()
				case x.method == "DELETE":
					kind = "DeleteOptions"
					o := first2(DecodeDeleteOptions(x.query))
					errs = ValidateDeleteOptions(o)
					reencoded = o.Query()
				}
				if c.invalid == "" {
					if len(errs) != 0 {
						t.Errorf("%s: unexpected errors %s", kind, errs.Message())
					}
				} else if s := NewInvalidOptions(kind, errs); s.Message != c.invalid || x.code != 422 {
					t.Errorf("%s: %q\n want %q", kind, s.Message, c.invalid)
				}
				// Every parameter the server read survives re-encoding, with
				// booleans spelled true.
				for name, vs := range x.query {
					got := reencoded[name]
					switch {
					case len(got) == 0:
						t.Errorf("%s lost %s=%v", kind, name, vs)
					case vs[0] == "1" && got[0] == "true":
					case !reflect.DeepEqual(got, vs):
						t.Errorf("%s: %s=%v became %v", kind, name, vs, got)
					}
				}
			})
		}
	}
}

func TestValidateListOptions(t *testing.T) {
	const (
		rvmNeedsRV      = "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
		rvmContinue     = "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided"
		rvmUnsupported  = `resourceVersionMatch: Unsupported value: "%s": supported values: "Exact", "NotOlderThan", ""`
		rvmExact0       = `resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`
		sieList         = "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"
		sieNeedsNOT     = "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
		watchRVMNeedsSE = "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
		watchRVMOnlyNOT = `resourceVersionMatch: Unsupported value: "%s": supported values: "NotOlderThan"`
	)
	sprintf := func(f, v string) string { return strings.Replace(f, "%s", v, 1) }
	for _, c := range []struct {
		name string
		o    ListOptions
		want []string
	}{
		{"empty", ListOptions{}, nil},
		{"rv only", ListOptions{ResourceVersion: "5"}, nil},
		{"exact", ListOptions{ResourceVersion: "5", ResourceVersionMatch: ResourceVersionMatchExact}, nil},
		{"not older than 0", ListOptions{ResourceVersion: "0", ResourceVersionMatch: ResourceVersionMatchNotOlderThan}, nil},
		{"paged exact", ListOptions{ResourceVersion: "5", ResourceVersionMatch: ResourceVersionMatchExact, Limit: 1}, nil},
		{"continue with rv is not a validation error", ListOptions{ResourceVersion: "5", Continue: "t"}, nil},
		{"match without rv", ListOptions{ResourceVersionMatch: ResourceVersionMatchNotOlderThan}, []string{rvmNeedsRV}},
		{"exact 0", ListOptions{ResourceVersion: "0", ResourceVersionMatch: ResourceVersionMatchExact}, []string{rvmExact0}},
		{"unsupported", ListOptions{ResourceVersion: "1", ResourceVersionMatch: "Sometimes"}, []string{sprintf(rvmUnsupported, "Sometimes")}},
		{"match is case sensitive", ListOptions{ResourceVersion: "1", ResourceVersionMatch: "exact"}, []string{sprintf(rvmUnsupported, "exact")}},
		{"everything wrong", ListOptions{ResourceVersionMatch: "x", Continue: "t", SendInitialEvents: new(false)},
			[]string{rvmNeedsRV, rvmContinue, sprintf(rvmUnsupported, "x"), sieList}},
		{"match with continue", ListOptions{ResourceVersion: "1", ResourceVersionMatch: ResourceVersionMatchExact, Continue: "t"}, []string{rvmContinue}},
		{"sendInitialEvents on list", ListOptions{SendInitialEvents: new(true)}, []string{sieList}},

		{"watch", ListOptions{Watch: true}, nil},
		{"watch from rv", ListOptions{Watch: true, ResourceVersion: "235", AllowWatchBookmarks: true}, nil},
		{"watch ignores continue", ListOptions{Watch: true, ResourceVersion: "5", Continue: "t"}, nil},
		{"streaming list", ListOptions{Watch: true, SendInitialEvents: new(true), ResourceVersionMatch: ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}, nil},
		{"streaming list without bookmarks (golden 97)", ListOptions{Watch: true, SendInitialEvents: new(true), ResourceVersionMatch: ResourceVersionMatchNotOlderThan}, nil},
		{"sendInitialEvents=false", ListOptions{Watch: true, SendInitialEvents: new(false), ResourceVersionMatch: ResourceVersionMatchNotOlderThan, ResourceVersion: "9"}, nil},
		{"streaming list without match", ListOptions{Watch: true, SendInitialEvents: new(true)}, []string{sieNeedsNOT}},
		{"streaming list with exact", ListOptions{Watch: true, SendInitialEvents: new(true), ResourceVersionMatch: ResourceVersionMatchExact, ResourceVersion: "5"},
			[]string{sieNeedsNOT, sprintf(watchRVMOnlyNOT, "Exact")}},
		{"watch with match", ListOptions{Watch: true, ResourceVersionMatch: ResourceVersionMatchNotOlderThan}, []string{watchRVMNeedsSE}},
		{"watch with everything wrong", ListOptions{Watch: true, ResourceVersionMatch: "x", Continue: "t"},
			[]string{watchRVMNeedsSE, sprintf(watchRVMOnlyNOT, "x"), rvmContinue}},
	} {
		errs := ValidateListOptions(c.o)
		var got []string
		for _, e := range errs {
			got = append(got, e.Error())
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v\n got  %q\n want %q", c.name, c.o, got, c.want)
		}
	}
}

func TestCheckListContinue(t *testing.T) {
	for _, c := range []struct {
		o    ListOptions
		fail bool
	}{
		{ListOptions{}, false},
		{ListOptions{Continue: "t"}, false},
		{ListOptions{Continue: "t", ResourceVersion: "0"}, false},
		{ListOptions{ResourceVersion: "5", Limit: 2}, false},
		{ListOptions{Continue: "t", ResourceVersion: "5"}, true},
		{ListOptions{Continue: "t", ResourceVersion: "5", Watch: true}, false},
	} {
		s := CheckListContinue(c.o)
		if (s != nil) != c.fail {
			t.Errorf("%+v: got %+v", c.o, s)
		}
		if s != nil && (s.Code != 400 || s.Reason != StatusReasonBadRequest ||
			s.Message != "specifying resource version is not allowed when using continue" || s.Details != nil) {
			t.Errorf("%+v: got %+v", c.o, s)
		}
	}
}

func TestValidateWriteOptions(t *testing.T) {
	long := strings.Repeat("m", 129)
	orphan, bogus := DeletePropagationOrphan, DeletionPropagation("Sideways")
	for _, c := range []struct {
		name string
		errs FieldErrors
		want []string
	}{
		{"create ok", ValidateCreateOptions(CreateOptions{DryRun: []string{DryRunAll}, FieldManager: strings.Repeat("m", 128), FieldValidation: FieldValidationStrict}), nil},
		{"create everything wrong", ValidateCreateOptions(CreateOptions{DryRun: []string{"All", "Some"}, FieldManager: long, FieldValidation: "strict"}), []string{
			"fieldManager: Too long: may not be more than 128 bytes",
			`dryRun: Unsupported value: ["All","Some"]: supported values: "All"`,
			`fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"`,
		}},
		{"create bare dryRun", ValidateCreateOptions(CreateOptions{DryRun: []string{""}}), []string{`dryRun: Unsupported value: [""]: supported values: "All"`}},
		{"create non-printable manager", ValidateCreateOptions(CreateOptions{FieldManager: "a\tb\x00"}), []string{
			`fieldManager: Invalid value: "a\tb\x00": invalid character U+0009 (at position 1)`,
			`fieldManager: Invalid value: "a\tb\x00": invalid character U+0000 (at position 3)`,
		}},
		{"update ok", ValidateUpdateOptions(UpdateOptions{FieldManager: "kubectl-edit", FieldValidation: FieldValidationWarn}), nil},
		{"update bad", ValidateUpdateOptions(UpdateOptions{DryRun: []string{"Some"}, FieldValidation: "Loud"}), []string{
			`dryRun: Unsupported value: ["Some"]: supported values: "All"`,
			`fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"`,
		}},
		{"apply ok", ValidatePatchOptions(PatchOptions{FieldManager: "alice", Force: new(true)}, true), nil},
		{"apply without manager", ValidatePatchOptions(PatchOptions{}, true), []string{"fieldManager: Required value: is required for apply patch"}},
		{"merge patch ok", ValidatePatchOptions(PatchOptions{FieldManager: "bob"}, false), nil},
		{"merge patch with force", ValidatePatchOptions(PatchOptions{Force: new(false), DryRun: []string{"x"}}, false), []string{
			"force: Forbidden: may not be specified for non-apply patch",
			`dryRun: Unsupported value: ["x"]: supported values: "All"`,
		}},
		{"delete ok", ValidateDeleteOptions(DeleteOptions{GracePeriodSeconds: new(int64(0)), PropagationPolicy: &orphan, DryRun: []string{DryRunAll}}), nil},
		{"delete both policies", ValidateDeleteOptions(DeleteOptions{OrphanDependents: new(true), PropagationPolicy: &orphan}), []string{
			`propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set`,
		}},
		{"delete bad policy", ValidateDeleteOptions(DeleteOptions{PropagationPolicy: &bogus}), []string{
			`propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"`,
		}},
		{"unsafe delete alone", ValidateDeleteOptions(DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: new(true)}), nil},
		{"unsafe delete false with others", ValidateDeleteOptions(DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: new(false), GracePeriodSeconds: new(int64(1))}), nil},
		{"unsafe delete with everything", ValidateDeleteOptions(DeleteOptions{
			IgnoreStoreReadErrorWithClusterBreakingPotential: new(true), DryRun: []string{DryRunAll}, PropagationPolicy: &orphan,
			OrphanDependents: new(false), GracePeriodSeconds: new(int64(0)), Preconditions: &Preconditions{}}), []string{
			`propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set`,
			"ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .dryRun",
			"ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .propagationPolicy",
			"ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .orphanDependents",
			"ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .gracePeriodSeconds",
			"ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .preconditions",
		}},
		{"table ok", ValidateTableOptions(TableOptions{IncludeObject: IncludeMetadata}), nil},
		{"table empty", ValidateTableOptions(TableOptions{}), nil},
		{"table bad", ValidateTableOptions(TableOptions{IncludeObject: "All"}), []string{
			`includeObject: Invalid value: "All": must be 'Metadata', 'Object', 'None', or empty`,
		}},
		{"dryRun empty", ValidateDryRun("dryRun", []string{}), nil},
		{"fieldValidation empty", ValidateFieldValidation("fieldValidation", ""), nil},
		{"fieldManager unicode", ValidateFieldManager("fieldManager", "kübectl ✓"), nil},
	} {
		var got []string
		for _, e := range c.errs {
			got = append(got, e.Error())
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got  %q\n want %q", c.name, got, c.want)
		}
	}
}

func TestNewInvalidOptions(t *testing.T) {
	s := NewInvalidOptions("DeleteOptions", FieldErrors{FieldForbidden("a", "x"), FieldRequired("b", "")})
	want := &Status{
		TypeMeta: TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   StatusFailure,
		Code:     422,
		Reason:   StatusReasonInvalid,
		Message:  `DeleteOptions.meta.k8s.io "" is invalid: [a: Forbidden: x, b: Required value]`,
		Details: &StatusDetails{Group: "meta.k8s.io", Kind: "DeleteOptions", Causes: []StatusCause{
			{Type: CauseTypeForbidden, Message: "Forbidden: x", Field: "a"},
			{Type: CauseTypeFieldValueRequired, Message: "Required value", Field: "b"},
		}},
	}
	statusCompare(t, s, want)
}

func FuzzDecodeListOptions(f *testing.F) {
	for _, seed := range []string{
		"",
		"watch=1&allowWatchBookmarks=true&timeoutSeconds=4&resourceVersion=235",
		"watch=1&timeoutSeconds=2&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
		"limit=2&labelSelector=page%3Dyes&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjEzLCJzdGFydCI6Ii9wYWdlLTFcdTAwMDAifQ",
		"resourceVersion=0&resourceVersionMatch=Exact",
		"resourceVersion=1&resourceVersionMatch=Sometimes",
		"limit=ten", "limit=99999999999999999999", "timeoutSeconds=-1", "watch", "sendInitialEvents=&watch=FALSE",
		"limit=1&limit=x", "fieldSelector=a%3D%3Db&labelSelector=%ff%00", "continue=%zz&limit=3", "a;b=c",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, _ := url.ParseQuery(raw) // keeps what parses
		o, err := DecodeListOptions(q)
		if err != nil {
			var qe *QueryParamError
			if !errors.As(err, &qe) || (qe.Param != "limit" && qe.Param != "timeoutSeconds") || qe.Error() == "" {
				t.Fatalf("DecodeListOptions(%q): unexpected error %#v", raw, err)
			}
			return
		}
		// Validation never panics, and its Status is well formed.
		if errs := ValidateListOptions(o); len(errs) > 0 {
			if s := NewInvalidOptions("ListOptions", errs); s.Code != 422 || len(s.Details.Causes) != len(errs) {
				t.Fatalf("NewInvalidOptions: %+v", s)
			}
		}
		_ = CheckListContinue(o)

		// decode∘encode∘decode is decode, in memory and on the wire.
		enc := o.Query()
		o2, err := DecodeListOptions(enc)
		if err != nil || !reflect.DeepEqual(o2, o) {
			t.Fatalf("%q: decoded %+v, re-decoded %+v, %v", raw, o, o2, err)
		}
		wire := enc.Encode()
		q3, err := url.ParseQuery(wire)
		if err != nil {
			t.Fatalf("%q: ParseQuery(%q): %v", raw, wire, err)
		}
		o3, err := DecodeListOptions(q3)
		if err != nil || !reflect.DeepEqual(o3, o) {
			t.Fatalf("%q: through %q got %+v, %v; want %+v", raw, wire, o3, err, o)
		}
		if again := o3.Query().Encode(); again != wire {
			t.Fatalf("%q: encoding not stable: %q then %q", raw, wire, again)
		}
	})
}
