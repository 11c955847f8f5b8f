package resource

import (
	"errors"
	"testing"
)

// parseCases were produced by k8s.io/apimachinery v0.37.2 (ParseQuantity, then
// CanonicalizeBytes for the expected text and the Format field), in a scratch
// module outside this repository. Rows marked "k8s String() leaks the input"
// are inputs apimachinery keeps verbatim in its string cache although they are
// not canonical; kapi writes the canonical form instead.
var parseCases = []struct {
	in     string
	want   string
	format Format
	err    error
}{
	{"0", "0", DecimalSI, nil},
	{"1", "1", DecimalSI, nil},
	{"-1", "-1", DecimalSI, nil},
	{"1000m", "1", DecimalSI, nil},
	{"0.1", "100m", DecimalSI, nil},
	{"1536Mi", "1536Mi", BinarySI, nil},
	{"1.5Gi", "1536Mi", BinarySI, nil},
	{"1024Ki", "1Mi", BinarySI, nil},
	{"1e3", "1e3", DecimalExponent, nil},
	{"12e6", "12e6", DecimalExponent, nil},
	{"100.5", "100500m", DecimalSI, nil},
	{"0.0000000001", "1n", DecimalSI, nil},
	{"-0.0000000001", "-1n", DecimalSI, nil},
	{"1n", "1n", DecimalSI, nil},
	{"1u", "1u", DecimalSI, nil},
	{"1m", "1m", DecimalSI, nil},
	{"1k", "1k", DecimalSI, nil},
	{"1M", "1M", DecimalSI, nil},
	{"1G", "1G", DecimalSI, nil},
	{"1T", "1T", DecimalSI, nil},
	{"1P", "1P", DecimalSI, nil},
	{"1E", "1E", DecimalSI, nil},
	{"1000P", "1E", DecimalSI, nil},
	{"1000k", "1M", DecimalSI, nil},
	{"1000000", "1M", DecimalSI, nil},
	{"1001", "1001", DecimalSI, nil},
	{"1100", "1100", DecimalSI, nil},
	{"-0.5", "-500m", DecimalSI, nil},
	{"-1.5Gi", "-1536Mi", BinarySI, nil},
	{"0.5Ki", "512", BinarySI, nil},
	{"0.001Ki", "1024m", BinarySI, nil},
	{"0.0001Ki", "102400u", DecimalSI, nil},
	{"1.1Ki", "1126400m", BinarySI, nil},
	{"1023Ki", "1023Ki", BinarySI, nil},
	{"1048576Ki", "1Gi", BinarySI, nil},
	{"1048575Ki", "1048575Ki", BinarySI, nil},
	{"3072Mi", "3Gi", BinarySI, nil},
	{"0.25Gi", "256Mi", BinarySI, nil},
	{"7.5Ei", "7680Pi", BinarySI, nil},
	{"8Ei", "9223372036854775807", BinarySI, nil},
	{"10Ei", "9223372036854775807", BinarySI, nil},
	{"-9223372036854775809Ki", "-9223372036854775807", BinarySI, nil},
	{"1Ei", "1Ei", BinarySI, nil},
	{"1e1", "10", DecimalExponent, nil},
	{"1e2", "100", DecimalExponent, nil},
	{"1e4", "10e3", DecimalExponent, nil},
	{"1e-1", "100e-3", DecimalExponent, nil},
	{"-1e-1", "-100e-3", DecimalExponent, nil},
	{"1e-7", "100e-9", DecimalExponent, nil},
	{"1e-9", "1e-9", DecimalExponent, nil},
	{"1e-10", "1e-9", DecimalExponent, nil},
	{"1e-12", "1e-9", DecimalExponent, nil},
	{"1e18", "1e18", DecimalExponent, nil},
	{"1e19", "10e18", DecimalExponent, nil},
	{"1E3", "1e3", DecimalExponent, nil},  // k8s String() leaks the input "1E3"
	{"1e+3", "1e3", DecimalExponent, nil}, // k8s String() leaks the input "1e+3"
	{"1e-3", "1e-3", DecimalExponent, nil},
	{"2.5e3", "2500", DecimalExponent, nil},
	{"1000e0", "1e3", DecimalExponent, nil},
	{"1000e-3", "1", DecimalExponent, nil},
	{"12345678e-3", "12345678e-3", DecimalExponent, nil},
	{".5", "500m", DecimalSI, nil},
	{"5.", "5", DecimalSI, nil}, // k8s String() leaks the input "5."
	{".", "0", DecimalSI, nil},
	{"-", "0", DecimalSI, nil},
	{"+", "0", DecimalSI, nil},
	{"-0", "0", DecimalSI, nil},
	{"00", "0", DecimalSI, nil},
	{"0Mi", "0", BinarySI, nil},
	{"0e0", "0", DecimalExponent, nil},
	{"+1", "1", DecimalSI, nil},    // k8s String() leaks the input "+1"
	{"+1Ki", "1Ki", BinarySI, nil}, // k8s String() leaks the input "+1Ki"
	{"007", "7", DecimalSI, nil},   // k8s String() leaks the input "007"
	{"1.0", "1", DecimalSI, nil},
	{"1.000", "1", DecimalSI, nil},
	{"1.234567891", "1234567891n", DecimalSI, nil}, // k8s String() leaks the input "1.234567891"
	{"1.000000001", "1000000001n", DecimalSI, nil}, // k8s String() leaks the input "1.000000001"
	{"1.23u", "1230n", DecimalSI, nil},
	{"999999999999999999m", "999999999999999999m", DecimalSI, nil},
	{"1000000000000000000m", "1P", DecimalSI, nil},
	{"9223372036854775807", "9223372036854775807", DecimalSI, nil},
	{"9223372036854775808", "9223372036854775808", DecimalSI, nil},
	{"-9223372036854775808", "-9223372036854775808", DecimalSI, nil},
	{"123456789012345678901234567890", "123456789012345678901234567890", DecimalSI, nil},
	{"0.000000000000000000000000001", "1n", DecimalSI, nil},
	{"999999999999999999999n", "999999999999999999999n", DecimalSI, nil},
	{"1234567890123456789012345e-5", "12345678901234567890123450e-6", DecimalExponent, nil},
	{"1e100", "10e99", DecimalExponent, nil},
	{"1e1000", "10e999", DecimalExponent, nil},
	{"1e2147483647", "10e2147483646", DecimalExponent, nil},
	{"1e4294967296", "1", DecimalExponent, nil}, // k8s String() leaks the input "1e4294967296"
	{"Mi", "0", BinarySI, nil},
	{"e3", "0", DecimalExponent, nil},
	{"e-5", "0", DecimalExponent, nil},
	{"m", "0", DecimalSI, nil},
	{"1.G", "1G", DecimalSI, nil}, // k8s String() leaks the input "1.G"
	{"e-20", "", "", ErrNumeric},
	{"-e-10", "", "", ErrNumeric},
	{"+.e-20", "", "", ErrNumeric},
	{".e-9", "0", DecimalExponent, nil},
	{"0e-20", "0", DecimalExponent, nil},
	{"", "", "", ErrFormatWrong},
	{"1K", "", "", ErrSuffix},
	{"1e", "", "", ErrSuffix},
	{"1E-", "", "", ErrSuffix},
	{"1ee3", "", "", ErrSuffix},
	{"1Ki5", "", "", ErrSuffix},
	{"1i", "", "", ErrSuffix},
	{"1Mi+", "", "", ErrSuffix},
	{"1-2", "", "", ErrSuffix},
	{"1e99999999999999999999", "", "", ErrSuffix},
	{"1e3e", "", "", ErrFormatWrong},
	{"1 ", "", "", ErrFormatWrong},
	{" 1", "", "", ErrFormatWrong},
	{"1.5.5", "", "", ErrFormatWrong},
	{"1,5", "", "", ErrFormatWrong},
	{"abc", "", "", ErrFormatWrong},
	{"--1", "", "", ErrSuffix},
	{"+-1", "", "", ErrSuffix},
	{"1Gi ", "", "", ErrFormatWrong},
	{"0x10", "", "", ErrFormatWrong},
	{"1_000", "", "", ErrFormatWrong},
	{"١", "", "", ErrFormatWrong},
}

// parseCasesPast140459 are values whose canonical form apimachinery v0.37.2
// gets wrong (it drops the exponent of DecimalSI values beyond "E": "1000E" is
// written "1"); the expected texts follow the fix merged upstream as
// kubernetes/kubernetes#140459, which falls back to the exponent form.
var parseCasesPast140459 = []struct {
	in     string
	want   string
	format Format
}{
	{"1000E", "1e21", DecimalSI},
	{"5000E", "5e21", DecimalSI},
	{"1000000E", "1e24", DecimalSI},
	{"1000000000000000000000", "1e21", DecimalSI},
	{"-1000000000000000000000", "-1e21", DecimalSI},
	{"1000000000000000000001", "1000000000000000000001", DecimalSI},
	{"100E", "100E", DecimalSI},
	{"999E", "999E", DecimalSI},
	{"12340E", "12340E", DecimalSI},
	{"123400E", "123400E", DecimalSI},
	{"1234000E", "1234e21", DecimalSI},
}

func TestParseQuantity(t *testing.T) {
	if len(parseCases) < 40 {
		t.Fatalf("only %d cases", len(parseCases))
	}
	for _, tc := range parseCases {
		q, err := ParseQuantity(tc.in)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("ParseQuantity(%q) error = %v, want %v", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseQuantity(%q): %v", tc.in, err)
			continue
		}
		if got := q.String(); got != tc.want {
			t.Errorf("ParseQuantity(%q).String() = %q, want %q", tc.in, got, tc.want)
		}
		if q.Format != tc.format {
			t.Errorf("ParseQuantity(%q).Format = %q, want %q", tc.in, q.Format, tc.format)
		}
	}
	for _, tc := range parseCasesPast140459 {
		q, err := ParseQuantity(tc.in)
		if err != nil {
			t.Errorf("ParseQuantity(%q): %v", tc.in, err)
			continue
		}
		if got := q.String(); got != tc.want || q.Format != tc.format {
			t.Errorf("ParseQuantity(%q) = %q %s, want %q %s", tc.in, got, q.Format, tc.want, tc.format)
		}
	}
}

// TestDocExamples checks the examples given in the package documentation.
func TestDocExamples(t *testing.T) {
	for in, want := range map[string]string{
		"Mi": "0", "e3": "0", "1e4294967296": "1", "0.1n": "1n", "-1e-12": "-1e-9",
		"10Ei": "9223372036854775807", "1000m": "1", "0.1": "100m", "100.5": "100500m",
		"1000k": "1M", "1100": "1100", "1e3": "1e3", "1e4": "10e3", "1e1": "10",
		"12e6": "12e6", "1e-1": "100e-3", "1024Ki": "1Mi", "1.5Gi": "1536Mi",
		"0.5Ki": "512", "1.1Ki": "1126400m", "1000E": "1e21", "+1": "1", "5.": "5",
		"007": "7", "1E3": "1e3", "1e+3": "1e3", "1.G": "1G", "1E": "1E",
	} {
		if got := MustParse(in).String(); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{"-e-10", "-Ei", ".Pi"} {
		if _, err := ParseQuantity(in); !errors.Is(err, ErrNumeric) {
			t.Errorf("%q: error %v, want ErrNumeric", in, err)
		}
	}
	if q := MustParse("1.1Ki"); q.Format != BinarySI {
		t.Errorf("1.1Ki has Format %s", q.Format)
	}
	if q := MustParse("0.0001Ki"); q.Format != DecimalSI {
		t.Errorf("0.0001Ki has Format %s", q.Format)
	}
	if got := NewScaledQuantity(1, -12).String(); got != "1e-12" {
		t.Errorf("NewScaledQuantity(1, -12) = %q", got)
	}
	q := *NewQuantity(1<<62, BinarySI)
	q.Add(*NewQuantity(1<<62, BinarySI))
	if got := q.String(); got != "9223372036854775808" {
		t.Errorf("2^63 BinarySI = %q", got)
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, ErrSuffix) {
			t.Errorf("recovered %v", err)
		}
	}()
	MustParse("1K")
}
