package cel

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/google/cel-go/common/types"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// eval compiles and runs an expression of the base environment.
func eval(t *testing.T, expr string) (any, error) {
	t.Helper()
	env, err := BaseEnv()
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	prog, err := env.Program(ast, programOptions(PerCallLimit)...)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := prog.Eval(map[string]any{})
	if err != nil {
		return nil, err
	}
	if out == types.OptionalNone {
		return "none", nil
	}
	return out.Value(), nil
}

// TestLibraries evaluates the Kubernetes libraries: values, and the errors
// of bad input.
func TestLibraries(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want any    // value, when err is ""
		err  string // part of the error
	}{
		// lists
		{expr: "[1, 2, 3].isSorted()", want: true},
		{expr: "[3, 1].isSorted()", want: false},
		{expr: "[1, 2, 3].sum()", want: int64(6)},
		{expr: "[1.5, 2.5].sum()", want: 4.0},
		{expr: "[3, 1, 2].min()", want: int64(1)},
		{expr: "['b', 'c', 'a'].max()", want: "c"},
		{expr: "[1, 2, 1].indexOf(1)", want: int64(0)},
		{expr: "[1, 2, 1].lastIndexOf(1)", want: int64(2)},
		{expr: "[1, 2].indexOf(3)", want: int64(-1)},
		{expr: "[0].filter(x, x > 0).min()", err: "min called on empty list"},
		{expr: "[0].filter(x, x > 0).max()", err: "max called on empty list"},
		// regex
		{expr: "'abc 123 456'.find('[0-9]+')", want: "123"},
		{expr: "'abc'.find('[0-9]+')", want: ""},
		{expr: "'a1b2c3'.findAll('[0-9]').size()", want: int64(3)},
		{expr: "'a1b2c3'.findAll('[0-9]', 2).size()", want: int64(2)},
		{expr: "'a1b2c3'.findAll('[0-9]', 0).size()", want: int64(0)},
		{expr: "'abc'.find(string('('))", err: "missing closing )"},
		// URLs
		{expr: "url('https://example.com:8080/a%20b?x=1').getHostname()", want: "example.com"},
		{expr: "url('https://example.com:8080/a').getPort()", want: "8080"},
		{expr: "url('https://example.com/a%20b').getEscapedPath()", want: "/a%20b"},
		{expr: "url('/p?x=1&x=2').getQuery()['x'].size()", want: int64(2)},
		{expr: "isURL('not a url')", want: false},
		{expr: "url('not a url')", err: "URL parse error during conversion from string"},
		// quantities
		{expr: "quantity('1.5Gi').isGreaterThan(quantity('1Gi'))", want: true},
		{expr: "quantity('100m').compareTo(quantity('0.1'))", want: int64(0)},
		{expr: "quantity('2k').asInteger()", want: int64(2000)},
		{expr: "quantity('1Gi').asInteger()", want: int64(1073741824)},
		{expr: "quantity('1.5M').asInteger()", want: int64(1500000)},
		{expr: "quantity('5e-3').asApproximateFloat()", want: 0.005},
		{expr: "quantity('1e3') == quantity('1k')", want: true},
		{expr: "quantity('1Ki').add(1).asInteger()", want: int64(1025)},
		{expr: "quantity('1').sub(quantity('3')).asInteger()", want: int64(-2)},
		{expr: "sign(quantity('-5m'))", want: int64(-1)},
		{expr: "quantity('500m').asApproximateFloat()", want: 0.5},
		{expr: "quantity('1.5').isInteger()", want: false},
		{expr: "quantity('1.5').asInteger()", err: "cannot convert value to integer"},
		{expr: "quantity('10E').asInteger()", err: "cannot convert value to integer"},
		{expr: "quantity('1Gx')", err: "quantities must match the regular expression"},
		{expr: "isQuantity('..')", want: false},
		{expr: "isQuantity('1.2.3')", want: false},
		// IPs and CIDRs
		{expr: "ip('10.0.0.1').family()", want: int64(4)},
		{expr: "ip('::1').isLoopback()", want: true},
		{expr: "ip('fe80::1%eth0')", err: "with zone value is not allowed"},
		{expr: "ip('::ffff:1.2.3.4')", err: "IPv4-mapped IPv6 address"},
		{expr: "ip('1.2.3')", err: "parse error during conversion from string"},
		{expr: "ip.isCanonical('2001:DB8::1')", want: false},
		{expr: "string(ip('2001:db8::1'))", want: "2001:db8::1"},
		{expr: "cidr('10.0.0.0/8').containsIP('10.1.2.3')", want: true},
		{expr: "cidr('10.0.0.0/8').containsCIDR(cidr('10.1.0.0/16'))", want: true},
		{expr: "cidr('10.1.0.0/16').containsCIDR('10.0.0.0/8')", want: false},
		{expr: "cidr('10.0.0.0/16').containsCIDR('10.0.0.0/8')", want: false},
		{expr: "string(cidr('10.1.2.3/8').masked())", want: "10.0.0.0/8"},
		{expr: "cidr('10.1.2.3/8').prefixLength()", want: int64(8)},
		{expr: "cidr('10.0.0.0/33')", err: "network address parse error"},
		// semver
		{expr: "semver('1.2.3').isLessThan(semver('1.10.0'))", want: true},
		{expr: "semver('1.0.0-alpha.1').compareTo(semver('1.0.0-alpha.beta'))", want: int64(-1)},
		{expr: "semver('1.0.0-2').compareTo(semver('1.0.0-10'))", want: int64(-1)},
		{expr: "semver('1.0.0+b').compareTo(semver('1.0.0'))", want: int64(0)},
		{expr: "semver('1.0.0').isGreaterThan(semver('1.0.0-alpha'))", want: true},
		{expr: "semver('2.3.4').minor()", want: int64(3)},
		{expr: "semver('v1.2.3')", err: "No Major.Minor.Patch elements found"},
		// formats
		{expr: "format.dns1123Label().validate('my-name')", want: "none"},
		{expr: "format.dns1123Label().validate('My_Name').value()[0].startsWith('a lowercase RFC 1123 label must consist of')", want: true},
		{expr: "format.dns1123Label().validate('" + strings.Repeat("a", 64) + "').value()[0]", want: "must be no more than 63 characters"},
		{expr: "format.named('nope').hasValue()", want: false},
		{expr: "format.named('labelValue').value().validate('a b').hasValue()", want: true},
		{expr: "format.qualifiedName().validate('example.com/Name')", want: "none"},
		{expr: "format.qualifiedName().validate('/x').value()", want: nil},
		{expr: "format.dns1123SubdomainPrefix().validate('abc-')", want: "none"},
		{expr: "format.uuid().validate('123e4567-e89b-12d3-a456-426614174000')", want: "none"},
		{expr: "format.date().validate('2024-02-30').hasValue()", want: true},
		{expr: "format.datetime().validate('2024-01-01T00:00:00Z')", want: "none"},
		{expr: "format.byte().validate('!!').hasValue()", want: true},
		{expr: "format.uri().validate('https://x/y')", want: "none"},
		// what kube-apiserver v1.37.2 does not have
		{expr: "quantity('1').sign()", err: "found no matching overload for 'sign'"},
		{expr: "cel.bind(x, 1, x)", err: "undeclared reference to 'cel'"},
		{expr: "'abc'.reverse()", err: "found no matching overload for 'reverse'"},
		// literals are validated
		{expr: "'a'.matches('(')", err: "invalid matches argument"},
		{expr: "duration('1x') > duration('1s')", err: "invalid duration argument"},
	} {
		got, err := eval(t, tc.expr)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one with %q (value %v)", tc.expr, err, tc.err, got)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.expr, err)
		case tc.want == nil:
			// any value
		default:
			if got != tc.want {
				if l, ok := got.([]string); !ok || len(l) == 0 {
					t.Errorf("%s = %#v, want %#v", tc.expr, got, tc.want)
				} else if l[0] != tc.want {
					t.Errorf("%s = %#v, want %#v", tc.expr, got, tc.want)
				}
			}
		}
	}
}

// TestLibraryExpressions evaluates the expressions kube-apiserver v1.37.2
// holds true (conformance/testdata/cel/library-exprs.json, "accepted").
func TestLibraryExpressions(t *testing.T) {
	b, err := os.ReadFile("../../conformance/testdata/cel/library-exprs.json")
	if err != nil {
		t.Fatal(err)
	}
	var exprs struct{ Accepted []string }
	if err := jsonUnmarshal(b, &exprs); err != nil {
		t.Fatal(err)
	}
	if len(exprs.Accepted) < 50 {
		t.Fatalf("%d expressions", len(exprs.Accepted))
	}
	for _, x := range exprs.Accepted {
		got, err := eval(t, x)
		if err != nil || got != true {
			t.Errorf("%s = %v, %v; want true", x, got, err)
		}
	}
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"name": "name", "true": "__true__", "namespace": "__namespace__", "a-b": "a__dash__b", "a.b": "a__dot__b",
		"a/b": "a__slash__b", "a__b": "a__underscores__b", "_x": "_x", "x_y": "x_y",
	} {
		if got, ok := Escape(in); !ok || got != want {
			t.Errorf("Escape(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"a b", "1a", "a@b", ""} {
		if got, ok := Escape(in); ok {
			t.Errorf("Escape(%q) = %q, want not escapable", in, got)
		}
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
