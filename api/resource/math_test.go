package resource

import (
	"math"
	"testing"
)

// valueCases were produced by k8s.io/apimachinery v0.37.2 (Value, MilliValue,
// ScaledValue(Kilo), ScaledValue(Nano), ScaledValue(Mega)) in a scratch module.
var valueCases = []struct {
	in                             string
	value, milli, kilo, nano, mega int64
}{
	{"0", 0, 0, 0, 0, 0},

	{"1", 1, 1000, 1, 1000000000, 1},

	{"-1", -1, -1000, -1, -1000000000, -1},

	{"1.5", 2, 1500, 1, 1500000000, 1},

	{"-1.5", -2, -1500, -1, -1500000000, -1},

	{"0.001", 1, 1, 1, 1000000, 1},

	{"-0.001", -1, -1, -1, -1000000, -1},

	{"100m", 1, 100, 1, 100000000, 1},

	{"1500m", 2, 1500, 1, 1500000000, 1},

	{"1n", 1, 1, 1, 1, 1},

	{"-1n", -1, -1, -1, -1, -1},

	{"1.5Gi", 1610612736, 1610612736000, 1610613, 1610612736000000000, 1611},

	{"1Ki", 1024, 1024000, 2, 1024000000000, 1},

	{"0.5Ki", 512, 512000, 1, 512000000000, 1},

	{"1e3", 1000, 1000000, 1, 1000000000000, 1},

	{"12e6", 12000000, 12000000000, 12000, 12000000000000000, 12},

	{"1k", 1000, 1000000, 1, 1000000000000, 1},

	{"999", 999, 999000, 1, 999000000000, 1},

	{"1001", 1001, 1001000, 2, 1001000000000, 1},

	{"1.000000001", 2, 1001, 1, 1000000001, 1},

	{"123456789", 123456789, 123456789000, 123457, 123456789000000000, 124},

	{"-123456789", -123456789, -123456789000, -123457, -123456789000000000, -124},

	{"1e-9", 1, 1, 1, 1, 1},

	{"1M", 1000000, 1000000000, 1000, 1000000000000000, 1},

	{"1.5M", 1500000, 1500000000, 1500, 1500000000000000, 2},

	{"2500u", 1, 3, 1, 2500000, 1},

	{"100.5", 101, 100500, 1, 100500000000, 1},

	{"0.0001Ki", 1, 103, 1, 102400000, 1},
}

// valueCasesSaturated are where apimachinery goes wrong: on overflow it wraps
// around or returns 0 ("9223372036854775807" has MilliValue -1000, "1E" has
// 0), and negative values it holds as inf.Dec round toward +Inf or come out as
// garbage ("-1.5Gi" has ScaledValue(Kilo) -1610611, "-129Ti" has Value
// 15199649). kapi saturates and rounds away from zero throughout.
var valueCasesSaturated = []struct {
	in                             string
	value, milli, kilo, nano, mega int64
}{
	{"9223372036854775807", math.MaxInt64, math.MaxInt64, 9223372036854776, math.MaxInt64, 9223372036855},
	{"-9223372036854775808", math.MinInt64, math.MinInt64, -9223372036854776, math.MinInt64, -9223372036855},
	{"1E", 1e18, math.MaxInt64, 1e15, math.MaxInt64, 1e12},
	{"1e100", math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64},
	{"-1e100", math.MinInt64, math.MinInt64, math.MinInt64, math.MinInt64, math.MinInt64},
	{"1e2147483647", math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64},
	{"123456789012345678901234567890", math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64},
	{"123456789012345678901234567890n", math.MaxInt64, math.MaxInt64, 123456789012345679, math.MaxInt64, 123456789012346},
	{"-123456789012345678901234567890n", math.MinInt64, math.MinInt64, -123456789012345679, math.MinInt64, -123456789012346},
	{"7Ei", 8070450532247928832, math.MaxInt64, 8070450532247929, math.MaxInt64, 8070450532248},
	{"-1.5Gi", -1610612736, -1610612736000, -1610613, -1610612736000000000, -1611},
	{"-129Ti", -141836999983104, -141836999983104000, -141836999984, math.MinInt64, -141837000},
	{"-0.0000000001", -1, -1, -1, -1, -1},
	{"1e-2147483648", 1, 1, 1, 1, 1},
	{"-1e-2147483648", -1, -1, -1, -1, -1},
}

func TestValue(t *testing.T) {
	check := func(in string, value, milli, kilo, nano, mega int64) {
		t.Helper()
		q := MustParse(in)
		got := [5]int64{q.Value(), q.MilliValue(), q.ScaledValue(Kilo), q.ScaledValue(Nano), q.ScaledValue(Mega)}
		if want := [5]int64{value, milli, kilo, nano, mega}; got != want {
			t.Errorf("%q: Value, MilliValue, ScaledValue(Kilo, Nano, Mega) = %d, want %d", in, got, want)
		}
	}
	for _, tc := range valueCases {
		check(tc.in, tc.value, tc.milli, tc.kilo, tc.nano, tc.mega)
	}
	for _, tc := range valueCasesSaturated {
		check(tc.in, tc.value, tc.milli, tc.kilo, tc.nano, tc.mega)
	}
}

func TestScaledValueExtremeScales(t *testing.T) {
	q := MustParse("1.5")
	for _, tc := range []struct {
		scale Scale
		want  int64
	}{
		{math.MaxInt32, 1}, {math.MinInt32, math.MaxInt64}, {18, 1}, {-18, 15e17}, {-19, math.MaxInt64},
	} {
		if got := q.ScaledValue(tc.scale); got != tc.want {
			t.Errorf("ScaledValue(%d) = %d, want %d", tc.scale, got, tc.want)
		}
	}
}

// bigMantissa returns a quantity equal to want whose mantissa does not fit an
// int64 (9223372036854775807000000000 × 10^-9 for "9223372036854775807").
func bigMantissa(t *testing.T, in string) Quantity {
	t.Helper()
	q := MustParse(in)
	q.Add(MustParse("1n"))
	q.Sub(MustParse("1n"))
	if q.b == nil {
		t.Fatalf("%q: mantissa fits an int64", in)
	}
	return q
}

func TestAsInt64(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"-1", -1, true},
		{"1000m", 1, true}, // apimachinery: false, its fast path only handles scale >= 0
		{"1.5", 0, false},
		{"1.5M", 1500000, true},
		{"1n", 0, false},
		{"1e-9", 0, false},
		{"1Ki", 1024, true},
		{"1.5Gi", 1610612736, true},
		{"10Ei", math.MaxInt64, true},
		{"1e18", 1e18, true},
		{"1e19", 0, false},
		{"9223372036854775807", math.MaxInt64, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775808", math.MinInt64, true},
		{"-9223372036854775809", 0, false},
		{"1e2147483647", 0, false},
		{"123456789012345678901234567890", 0, false},
		{"123456789012345678901234567890n", 0, false},
		{"123456789012345678000000000n", 123456789012345678, true},
	} {
		q := MustParse(tc.in)
		if got, ok := q.AsInt64(); got != tc.want || ok != tc.ok {
			t.Errorf("%q: AsInt64() = %d, %v, want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}

	q := bigMantissa(t, "9223372036854775807")
	if got, ok := q.AsInt64(); got != math.MaxInt64 || !ok {
		t.Errorf("big mantissa: AsInt64() = %d, %v, want MaxInt64, true", got, ok)
	}
	if q.Value() != math.MaxInt64 || q.String() != "9223372036854775807" {
		t.Errorf("big mantissa: Value() = %d, String() = %q", q.Value(), q.String())
	}
	q.Add(MustParse("1n"))
	if got, ok := q.AsInt64(); ok {
		t.Errorf("MaxInt64 + 1n: AsInt64() = %d, true", got)
	}
	if got := q.Value(); got != math.MaxInt64 {
		t.Errorf("MaxInt64 + 1n: Value() = %d", got)
	}
}

func TestCmp(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"0", "0", 0},
		{"0", "-0", 0},
		{"1", "1", 0},
		{"1k", "1000", 0},
		{"1k", "1e3", 0},
		{"1E", "1e18", 0},
		{"1n", "1e-9", 0},
		{"1n", "0.0000000001", 0},
		{"1Ki", "1k", 1},
		{"1Ki", "1024", 0},
		{"1Gi", "1G", 1},
		{"999m", "1", -1},
		{"-1", "1", -1},
		{"-1", "-2", 1},
		{"1", "0", 1},
		{"-1n", "0", -1},
		{"9223372036854775807", "9223372036854775808", -1},
		{"-9223372036854775808", "-9223372036854775809", 1},
		{"123456789012345678901234567890", "123456789012345678901234567891", -1},
		{"-123456789012345678901234567890", "-123456789012345678901234567891", 1},
		{"123456789012345678901234567890", "123456789012345678901234567890000m", 0},
		{"1e2147483647", "1", 1},
		{"1e2147483647", "10e2147483646", 0},
		{"1e2147483647", "9e2147483646", 1},
		{"-1e2147483647", "1n", -1},
		{"-1e2147483647", "-1n", -1},
		{"1n", "1e2147483647", -1},
		{"999999999999999999999", "1e21", -1},
		{"1000000000000000000001", "1e21", 1},
		{"10Ei", "8Ei", 0}, // both capped at 2^63-1
	} {
		a, b := MustParse(tc.a), MustParse(tc.b)
		if got := a.Cmp(b); got != tc.want {
			t.Errorf("%q.Cmp(%q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := b.Cmp(a); got != -tc.want {
			t.Errorf("%q.Cmp(%q) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
		if got := a.Equal(b); got != (tc.want == 0) {
			t.Errorf("%q.Equal(%q) = %v", tc.a, tc.b, got)
		}
	}
	if (Quantity{}).Cmp(MustParse("0")) != 0 || !(Quantity{}).Equal(MustParse("0Mi")) {
		t.Error("zero Quantity is not equal to 0")
	}
	q := bigMantissa(t, "9223372036854775807")
	if q.Cmp(MustParse("9223372036854775807")) != 0 || MustParse("9223372036854775807").Cmp(q) != 0 {
		t.Error("big and small mantissas of the same amount differ")
	}
}

func TestCmpInt64(t *testing.T) {
	for _, tc := range []struct {
		in   string
		y    int64
		want int
	}{
		{"0", 0, 0},
		{"1.5", 1, 1},
		{"1.5", 2, -1},
		{"1k", 1000, 0},
		{"1Ki", 1024, 0},
		{"1n", 0, 1},
		{"-1n", 0, -1},
		{"1e100", math.MaxInt64, 1},
		{"-1e100", math.MinInt64, -1},
		{"9223372036854775807", math.MaxInt64, 0},
		{"-9223372036854775808", math.MinInt64, 0},
		{"-9223372036854775807", math.MinInt64, 1},
	} {
		if got := MustParse(tc.in).CmpInt64(tc.y); got != tc.want {
			t.Errorf("%q.CmpInt64(%d) = %d, want %d", tc.in, tc.y, got, tc.want)
		}
	}
}

// arithCases were produced by k8s.io/apimachinery v0.37.2: a+b and its Format,
// a-b and its Format, a.Cmp(b), and -a, all written canonically.
var arithCases = []struct {
	a, b       string
	sum        string
	sumFormat  Format
	diff       string
	diffFormat Format
	cmp        int
	neg        string
}{
	{"1", "1", "2", DecimalSI, "0", DecimalSI, 0, "-1"},
	{"1", "-1", "0", DecimalSI, "2", DecimalSI, 1, "-1"},
	{"100m", "900m", "1", DecimalSI, "-800m", DecimalSI, -1, "-100m"},
	{"1Gi", "1Mi", "1025Mi", BinarySI, "1023Mi", BinarySI, 1, "-1Gi"},
	{"1Gi", "512Mi", "1536Mi", BinarySI, "512Mi", BinarySI, 1, "-1Gi"},
	{"1Ki", "1", "1025", BinarySI, "1023", BinarySI, 1, "-1Ki"},
	{"0", "1Gi", "1Gi", BinarySI, "-1Gi", BinarySI, -1, "0"},
	{"0", "100m", "100m", DecimalSI, "-100m", DecimalSI, -1, "0"},
	{"1e3", "1", "1001", DecimalExponent, "999", DecimalExponent, 1, "-1e3"},
	{"1.5", "1.5", "3", DecimalSI, "0", DecimalSI, 0, "-1500m"},
	{"-1", "1", "0", DecimalSI, "-2", DecimalSI, -1, "1"},
	{"1", "2", "3", DecimalSI, "-1", DecimalSI, -1, "-1"},
	{"1k", "1000", "2k", DecimalSI, "0", DecimalSI, 0, "-1k"},
	{"1Gi", "1G", "2073741824", BinarySI, "73741824", BinarySI, 1, "-1Gi"},
	{"9223372036854775807", "1", "9223372036854775808", DecimalSI, "9223372036854775806", DecimalSI, 1, "-9223372036854775807"},
	{"-9223372036854775807", "1", "-9223372036854775806", DecimalSI, "-9223372036854775808", DecimalSI, -1, "9223372036854775807"},
	{"1n", "1", "1000000001n", DecimalSI, "-999999999n", DecimalSI, -1, "-1n"},
	{"123456789012345678901234567890", "1", "123456789012345678901234567891", DecimalSI, "123456789012345678901234567889", DecimalSI, 1, "-123456789012345678901234567890"},
	{"1e100", "1e99", "11e99", DecimalExponent, "9e99", DecimalExponent, 1, "-10e99"},
	{"0.5Ki", "0.5", "512500m", BinarySI, "511500m", BinarySI, 1, "-512"},
	{"1m", "1u", "1001u", DecimalSI, "999u", DecimalSI, 1, "-1m"},
	{"1Mi", "1Mi", "2Mi", BinarySI, "0", BinarySI, 0, "-1Mi"},
	{"5", "0", "5", DecimalSI, "5", DecimalSI, 1, "-5"},
	{"1E", "1E", "2E", DecimalSI, "0", DecimalSI, 0, "-1E"},
	{"-1.5Gi", "512Mi", "-1Gi", BinarySI, "-2Gi", BinarySI, -1, "1536Mi"},
	{"1e2147483647", "1e2147483647", "20e2147483646", DecimalExponent, "0", DecimalExponent, 0, "-10e2147483646"},
	// apimachinery writes a BinarySI 2^63 as "8Ei", which parses back capped to
	// 2^63-1; kapi writes BinarySI values beyond 2^63-1 as DecimalSI.
	{"10Ei", "1", "9223372036854775808", BinarySI, "9223372036854775806", BinarySI, 1, "-9223372036854775807"},
}

func TestAddSubNeg(t *testing.T) {
	for _, tc := range arithCases {
		a, b := MustParse(tc.a), MustParse(tc.b)
		sum := a
		sum.Add(b)
		if sum.String() != tc.sum || sum.Format != tc.sumFormat {
			t.Errorf("%q + %q = %q %s, want %q %s", tc.a, tc.b, sum.String(), sum.Format, tc.sum, tc.sumFormat)
		}
		diff := a
		diff.Sub(b)
		if diff.String() != tc.diff || diff.Format != tc.diffFormat {
			t.Errorf("%q - %q = %q %s, want %q %s", tc.a, tc.b, diff.String(), diff.Format, tc.diff, tc.diffFormat)
		}
		if got := a.Cmp(b); got != tc.cmp {
			t.Errorf("%q.Cmp(%q) = %d, want %d", tc.a, tc.b, got, tc.cmp)
		}
		neg := a
		neg.Neg()
		if neg.String() != tc.neg || neg.Format != a.Format {
			t.Errorf("-%q = %q %s, want %q %s", tc.a, neg.String(), neg.Format, tc.neg, a.Format)
		}
		// The operands are values: the originals are untouched.
		if a.String() != MustParse(tc.a).String() || b.String() != MustParse(tc.b).String() {
			t.Errorf("%q, %q changed by arithmetic on copies", tc.a, tc.b)
		}
	}
}

func TestArithmeticOverflowsToBig(t *testing.T) {
	q := *NewQuantity(math.MaxInt64, DecimalSI)
	q.Add(*NewQuantity(math.MaxInt64, DecimalSI))
	if got := q.String(); got != "18446744073709551614" {
		t.Errorf("MaxInt64 + MaxInt64 = %q", got)
	}
	q.Sub(*NewQuantity(math.MaxInt64, DecimalSI))
	if got, ok := q.AsInt64(); got != math.MaxInt64 || !ok || q.b != nil {
		t.Errorf("MaxInt64 + MaxInt64 - MaxInt64 = %d, %v (big %v)", got, ok, q.b)
	}

	q = *NewQuantity(math.MinInt64, DecimalSI)
	q.Neg()
	if got := q.String(); got != "9223372036854775808" {
		t.Errorf("-MinInt64 = %q", got)
	}
	q.Neg()
	if got, ok := q.AsInt64(); got != math.MinInt64 || !ok {
		t.Errorf("--MinInt64 = %d, %v", got, ok)
	}

	q = *NewQuantity(1, DecimalSI)
	q.Sub(*NewQuantity(math.MinInt64, DecimalSI))
	if got := q.String(); got != "9223372036854775809" {
		t.Errorf("1 - MinInt64 = %q", got)
	}

	q = MustParse("1E")
	q.Add(MustParse("1n")) // exponents 27 apart
	if got := q.String(); got != "1000000000000000000000000001n" {
		t.Errorf("1E + 1n = %q", got)
	}
	if got := q.Value(); got != 1e18+1 {
		t.Errorf("(1E + 1n).Value() = %d", got)
	}
}

func TestSignIsZero(t *testing.T) {
	for _, tc := range []struct {
		in   string
		sign int
	}{
		{"0", 0}, {"-0", 0}, {"0Mi", 0}, {"0e-20", 0}, {".", 0},
		{"1n", 1}, {"-1n", -1}, {"1e-20", 1}, {"-1e-20", -1},
		{"1Ei", 1}, {"-10Ei", -1}, {"1e100", 1}, {"-1e100", -1},
		{"123456789012345678901234567890", 1}, {"-123456789012345678901234567890", -1},
	} {
		q := MustParse(tc.in)
		if q.Sign() != tc.sign || q.IsZero() != (tc.sign == 0) {
			t.Errorf("%q: Sign() = %d, IsZero() = %v, want %d", tc.in, q.Sign(), q.IsZero(), tc.sign)
		}
	}
	var z Quantity
	if z.Sign() != 0 || !z.IsZero() {
		t.Error("zero Quantity is not zero")
	}
}

func TestConstructors(t *testing.T) {
	for _, tc := range []struct {
		name         string
		q            *Quantity
		want         string
		format       Format
		value, milli int64
	}{
		// Rows produced by k8s.io/apimachinery v0.37.2.
		{"NewQuantity(0, DecimalSI)", NewQuantity(0, DecimalSI), "0", DecimalSI, 0, 0},
		{"NewQuantity(1024, BinarySI)", NewQuantity(1024, BinarySI), "1Ki", BinarySI, 1024, 1024000},
		{"NewQuantity(1023, BinarySI)", NewQuantity(1023, BinarySI), "1023", BinarySI, 1023, 1023000},
		{"NewQuantity(1536, BinarySI)", NewQuantity(1536, BinarySI), "1536", BinarySI, 1536, 1536000},
		{"NewQuantity(-2048, BinarySI)", NewQuantity(-2048, BinarySI), "-2Ki", BinarySI, -2048, -2048000},
		{"NewQuantity(1000, DecimalSI)", NewQuantity(1000, DecimalSI), "1k", DecimalSI, 1000, 1000000},
		{"NewQuantity(1000, DecimalExponent)", NewQuantity(1000, DecimalExponent), "1e3", DecimalExponent, 1000, 1000000},
		{`NewQuantity(5000, "")`, NewQuantity(5000, ""), "5e3", "", 5000, 5000000},
		{`NewQuantity(5000, "x")`, NewQuantity(5000, "x"), "5e3", "x", 5000, 5000000},
		{"NewMilliQuantity(1500, DecimalSI)", NewMilliQuantity(1500, DecimalSI), "1500m", DecimalSI, 2, 1500},
		{"NewMilliQuantity(1000, DecimalSI)", NewMilliQuantity(1000, DecimalSI), "1", DecimalSI, 1, 1000},
		{"NewMilliQuantity(1, DecimalSI)", NewMilliQuantity(1, DecimalSI), "1m", DecimalSI, 1, 1},
		{"NewMilliQuantity(1024000, BinarySI)", NewMilliQuantity(1024000, BinarySI), "1Ki", BinarySI, 1024, 1024000},
		{"NewMilliQuantity(1500, BinarySI)", NewMilliQuantity(1500, BinarySI), "1500m", BinarySI, 2, 1500},
		{"NewMilliQuantity(-1, DecimalExponent)", NewMilliQuantity(-1, DecimalExponent), "-1e-3", DecimalExponent, -1, -1},
		{"NewMilliQuantity(123, DecimalExponent)", NewMilliQuantity(123, DecimalExponent), "123e-3", DecimalExponent, 1, 123},
		{"NewScaledQuantity(1, Kilo)", NewScaledQuantity(1, Kilo), "1k", DecimalSI, 1000, 1000000},
		{"NewScaledQuantity(5, Milli)", NewScaledQuantity(5, Milli), "5m", DecimalSI, 1, 5},
		{"NewScaledQuantity(1, Nano)", NewScaledQuantity(1, Nano), "1n", DecimalSI, 1, 1},
		{"NewScaledQuantity(15, 2)", NewScaledQuantity(15, 2), "1500", DecimalSI, 1500, 1500000},
		{"NewScaledQuantity(7, 0)", NewScaledQuantity(7, 0), "7", DecimalSI, 7, 7000},
		// apimachinery v0.37.2 overflows MilliValue (-1000, 0) and Value (0) here.
		{"NewQuantity(MaxInt64, BinarySI)", NewQuantity(math.MaxInt64, BinarySI), "9223372036854775807", BinarySI, math.MaxInt64, math.MaxInt64},
		{"NewQuantity(MinInt64, BinarySI)", NewQuantity(math.MinInt64, BinarySI), "-9223372036854775808", BinarySI, math.MinInt64, math.MinInt64},
		{"NewScaledQuantity(1, Exa)", NewScaledQuantity(1, Exa), "1E", DecimalSI, 1e18, math.MaxInt64},
		// apimachinery v0.37.2 writes these "1", "100" and "1"; the texts follow
		// kubernetes/kubernetes#140459.
		{"NewScaledQuantity(1, -12)", NewScaledQuantity(1, -12), "1e-12", DecimalSI, 1, 1},
		{"NewScaledQuantity(1, -10)", NewScaledQuantity(1, -10), "100e-12", DecimalSI, 1, 1},
		{"NewScaledQuantity(1, 21)", NewScaledQuantity(1, 21), "1e21", DecimalSI, math.MaxInt64, math.MaxInt64},
	} {
		if got := tc.q.String(); got != tc.want || tc.q.Format != tc.format {
			t.Errorf("%s = %q %q, want %q %q", tc.name, got, tc.q.Format, tc.want, tc.format)
		}
		if v, m := tc.q.Value(), tc.q.MilliValue(); v != tc.value || m != tc.milli {
			t.Errorf("%s: Value, MilliValue = %d, %d, want %d, %d", tc.name, v, m, tc.value, tc.milli)
		}
	}
}

func TestSet(t *testing.T) {
	q := MustParse("1.5Gi")
	q.Set(2048)
	if got := q.String(); got != "2Ki" || q.Format != BinarySI {
		t.Errorf("Set(2048) = %q %s", got, q.Format)
	}
	q.SetMilli(1500)
	if got := q.String(); got != "1500m" {
		t.Errorf("SetMilli(1500) = %q", got)
	}
	q.SetScaled(3, Giga) // still BinarySI, and 3e9 is no multiple of 1024
	if got := q.String(); got != "3000000000" || q.Format != BinarySI {
		t.Errorf("SetScaled(3, Giga) = %q %s", got, q.Format)
	}
	q.Format = DecimalSI
	if got := q.String(); got != "3G" {
		t.Errorf("SetScaled(3, Giga) as DecimalSI = %q", got)
	}
	q = MustParse("1Gi") // cached text must not survive Set
	q.Set(1)
	if got := q.String(); got != "1" {
		t.Errorf("Set(1) on parsed 1Gi = %q", got)
	}
}

func TestDeepCopy(t *testing.T) {
	orig := bigMantissa(t, "9223372036854775807")
	cp := orig.DeepCopy()
	orig.Add(MustParse("1"))
	orig.Neg()
	if got := cp.String(); got != "9223372036854775807" {
		t.Errorf("copy changed with the original: %q", got)
	}
	if got := orig.String(); got != "-9223372036854775808" {
		t.Errorf("original = %q", got)
	}
	small := MustParse("1Gi")
	cp = small.DeepCopy()
	if cp != small {
		t.Error("DeepCopy of a small quantity differs under ==")
	}
}

func TestFormatChangeInvalidatesCache(t *testing.T) {
	q := MustParse("1Gi")
	if q.String() != "1Gi" {
		t.Fatal(q.String())
	}
	for _, tc := range []struct {
		f    Format
		want string
	}{
		{DecimalSI, "1073741824"},
		{DecimalExponent, "1073741824"},
		{"", "1073741824"},
		{BinarySI, "1Gi"},
	} {
		q.Format = tc.f
		if got := q.String(); got != tc.want {
			t.Errorf("Format %q: String() = %q, want %q", tc.f, got, tc.want)
		}
	}
	q = MustParse("1500m")
	q.Format = DecimalExponent
	if got := q.String(); got != "1500e-3" {
		t.Errorf("1500m as DecimalExponent = %q", got)
	}
	q.Format = BinarySI
	if got := q.String(); got != "1500m" {
		t.Errorf("1500m as BinarySI = %q", got)
	}
	q = MustParse("2048")
	q.Format = BinarySI
	if got := q.String(); got != "2Ki" {
		t.Errorf("2048 as BinarySI = %q", got)
	}
}

func TestAsApproximateFloat64(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"0", 0},
		{"1", 1},
		{"-1.5", -1.5},
		{"100m", 0.1},
		{"1n", 1e-9},
		{"1.5Gi", 1610612736},
		{"1e100", 1e100},
		{"-1e100", -1e100},
		{"1e400", math.Inf(1)},
		{"-1e400", math.Inf(-1)},
		{"9223372036854775807", 9223372036854775807},
		{"123456789012345678901234567890", 123456789012345678901234567890},
		{"0.3", 0.3},
		{"1e-9", 1e-9},
		{"12345678901234567e-9", 12345678.901234567},
	} {
		if got := MustParse(tc.in).AsApproximateFloat64(); got != tc.want {
			t.Errorf("%q.AsApproximateFloat64() = %v, want %v", tc.in, got, tc.want)
		}
	}
}
