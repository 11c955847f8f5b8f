package resource

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/kapi-dev/kapi/internal/pb"
)

// Format is the notation a Quantity is written in. A parsed quantity takes it
// from its suffix; it may be changed at will, String always honours the current
// value.
type Format string

const (
	// DecimalExponent writes a mantissa and a power of ten that is a multiple
	// of three: "12e6", "100e-9". Any Format other than the three defined ones
	// is written as DecimalExponent.
	DecimalExponent Format = "DecimalExponent"
	// BinarySI writes a power-of-1024 suffix: "12Mi" is 12 × 2^20.
	BinarySI Format = "BinarySI"
	// DecimalSI writes a power-of-1000 suffix: "12M" is 12 × 10^6.
	DecimalSI Format = "DecimalSI"
)

// Scale is a power of ten, the unit ScaledValue, NewScaledQuantity and
// SetScaled count in: the value v at scale s is v × 10^s.
type Scale int32

// The scales of the decimal SI suffixes.
const (
	Nano  Scale = -9
	Micro Scale = -6
	Milli Scale = -3
	Kilo  Scale = 3
	Mega  Scale = 6
	Giga  Scale = 9
	Tera  Scale = 12
	Peta  Scale = 15
	Exa   Scale = 18
)

// splitRE is the pattern Kubernetes quotes in ErrFormatWrong. The parser is a
// hand-written scanner that accepts exactly the strings it matches.
const splitRE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"

// Errors returned by ParseQuantity, with Kubernetes' texts. Unmarshal methods
// wrap them with the offending value; test with errors.Is.
var (
	// ErrFormatWrong reports text that is not a number followed by a suffix.
	ErrFormatWrong = errors.New("quantities must match the regular expression '" + splitRE + "'")
	// ErrNumeric reports a number part Kubernetes cannot read: one with no
	// digits at all ("", "-", ".") followed by an exponent below -9 or by Pi or
	// Ei ("e-10", "-Ei"). With other suffixes such a number reads as zero.
	ErrNumeric = errors.New("unable to parse numeric part of quantity")
	// ErrSuffix reports an unknown suffix ("1K", "1e", "1Mi5").
	ErrSuffix = errors.New("unable to parse quantity's suffix")
)

// Quantity is a fixed-point decimal amount with a Format, as used for resource
// requests, limits and capacities. See the package documentation for the
// grammar and the canonical form.
//
// The zero value is 0 (with an empty Format, so it has no suffix preference).
// Quantity is a plain value: copies are independent, and == compiles, though it
// compares representations, not amounts; use Cmp or Equal for that. Reading
// methods never modify the receiver and are safe for concurrent use.
//
// In JSON a Quantity is a string ("250m"); numbers are accepted on input. In
// protobuf it is a message with the canonical string in field 1.
type Quantity struct {
	// The amount is mantissa × 10^exp, the mantissa being m or, when it does not
	// fit in an int64, b. b is never modified once set, so copies may share it.
	m   int64
	b   *big.Int
	exp int32

	// sf is the formatTag s was written for; s is the canonical text, cached
	// when the quantity was parsed from canonical input.
	sf uint8
	s  string

	// Format is the notation String writes. Changing it is allowed at any time.
	Format
}

// formatTag reduces a Format to the three notations String knows.
func formatTag(f Format) uint8 {
	switch f {
	case DecimalSI:
		return 1
	case BinarySI:
		return 2
	}
	return 3
}

// cached returns the canonical text saved at parse time, if it is still valid
// for q's current Format.
func (q *Quantity) cached() (string, bool) {
	return q.s, q.s != "" && q.sf == formatTag(q.Format)
}

// MustParse is ParseQuantity for values known to be valid, such as constants in
// code and tests; it panics on error.
func MustParse(s string) Quantity {
	q, err := ParseQuantity(s)
	if err != nil {
		panic(fmt.Errorf("cannot parse '%v': %w", s, err))
	}
	return q
}

// ParseQuantity reads s with Kubernetes' grammar (see the package
// documentation). It returns ErrFormatWrong, ErrSuffix or ErrNumeric, unwrapped,
// as Kubernetes does. Leading and trailing spaces are not allowed.
func ParseQuantity(s string) (Quantity, error) { return parse(s) }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isSuffixLetter reports whether c is one of "eEinumkKMGTP".
func isSuffixLetter(c byte) bool {
	switch c {
	case 'e', 'E', 'i', 'n', 'u', 'm', 'k', 'K', 'M', 'G', 'T', 'P':
		return true
	}
	return false
}

// parse implements ParseQuantity for strings and for byte slices (JSON and
// protobuf input), so that the latter are copied only when the text is kept.
func parse[T ~string | ~[]byte](in T) (Quantity, error) {
	n := len(in)
	if n == 0 {
		return Quantity{}, ErrFormatWrong
	}
	i := 0
	neg := false
	switch in[0] {
	case '-':
		neg = true
		i++
	case '+':
		i++
	}
	numStart := i
	for i < n && in[i] == '0' {
		i++
	}
	intStart := i
	for i < n && isDigit(in[i]) {
		i++
	}
	intEnd := i
	fracStart, fracEnd := i, i
	dot := i < n && in[i] == '.'
	if dot {
		i++
		fracStart = i
		for i < n && isDigit(in[i]) {
			i++
		}
		fracEnd = i
	}
	hasDigit := intEnd > numStart || fracEnd > fracStart
	sufStart := i
	for i < n && isSuffixLetter(in[i]) {
		i++
	}
	if i < n && (in[i] == '+' || in[i] == '-') {
		i++
	}
	for i < n && isDigit(in[i]) {
		i++
	}
	if i < n {
		return Quantity{}, ErrFormatWrong
	}
	binary, exp, format, ok := interpretSuffix(in[sufStart:])
	if !ok {
		return Quantity{}, ErrSuffix
	}
	if !hasDigit && (!binary && exp < int32(Nano) || binary && exp >= 50) {
		// A number with no digits at all, where Kubernetes takes its general
		// path (below nano, or Pi and Ei), reaches a decimal parser that
		// rejects it.
		return Quantity{}, ErrNumeric
	}

	q := Quantity{Format: format}
	ds := digitSeq[T]{in[intStart:intEnd], in[fracStart:fracEnd]}
	if binary {
		setBinary(&q, ds, uint(exp))
	} else {
		setDecimal(&q, ds, int64(exp)-int64(fracEnd-fracStart))
	}
	if neg {
		q.negate()
	}

	// Keep the input when it is the canonical text. Canonical text never has a
	// '+' or a '.', which rules most non-canonical input out cheaply.
	if !dot && in[0] != '+' {
		var buf [48]byte
		c := q.appendCanonical(buf[:0])
		if string(c) == string(in) {
			q.s, q.sf = string(in), formatTag(q.Format)
		}
	}
	return q, nil
}

// interpretSuffix returns what a suffix means: a power of two (binary) or of
// ten, and the Format it implies.
func interpretSuffix[T ~string | ~[]byte](s T) (binary bool, exp int32, f Format, ok bool) {
	switch len(s) {
	case 0:
		return false, 0, DecimalSI, true
	case 1:
		if e, ok := decimalSuffixExp(s[0]); ok {
			return false, e, DecimalSI, true
		}
		return false, 0, "", false
	case 2:
		if s[1] == 'i' {
			switch s[0] {
			case 'K':
				return true, 10, BinarySI, true
			case 'M':
				return true, 20, BinarySI, true
			case 'G':
				return true, 30, BinarySI, true
			case 'T':
				return true, 40, BinarySI, true
			case 'P':
				return true, 50, BinarySI, true
			case 'E':
				return true, 60, BinarySI, true
			}
		}
	}
	if s[0] == 'e' || s[0] == 'E' {
		if v, ok := parseInt64(s[1:]); ok {
			// Kubernetes keeps the exponent in an int32 and silently wraps it.
			return false, int32(v), DecimalExponent, true
		}
	}
	return false, 0, "", false
}

func decimalSuffixExp(c byte) (int32, bool) {
	switch c {
	case 'n':
		return -9, true
	case 'u':
		return -6, true
	case 'm':
		return -3, true
	case 'k':
		return 3, true
	case 'M':
		return 6, true
	case 'G':
		return 9, true
	case 'T':
		return 12, true
	case 'P':
		return 15, true
	case 'E':
		return 18, true
	}
	return 0, false
}

// parseInt64 accepts what strconv.ParseInt(s, 10, 64) accepts.
func parseInt64[T ~string | ~[]byte](s T) (int64, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, false
	}
	var u uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) || u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return -int64(u), true // -(1<<63) wraps to MinInt64, as wanted
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// digitSeq is the digits of a number with its decimal point removed: the
// integer digits a (leading zeros already skipped) followed by the fraction
// digits b.
type digitSeq[T ~string | ~[]byte] struct{ a, b T }

func (d digitSeq[T]) len() int { return len(d.a) + len(d.b) }

func (d digitSeq[T]) at(i int) byte {
	if i < len(d.a) {
		return d.a[i]
	}
	return d.b[i-len(d.a)]
}

// uint64 reads digits [lo, hi), at most 19 of them.
func (d digitSeq[T]) uint64(lo, hi int) uint64 {
	var u uint64
	for i := lo; i < hi; i++ {
		u = u*10 + uint64(d.at(i)-'0')
	}
	return u
}

// big reads digits [lo, hi) of any length.
func (d digitSeq[T]) big(lo, hi int) *big.Int {
	var digits string
	switch n := len(d.a); {
	case hi <= n:
		digits = string(d.a[lo:hi])
	case lo >= n:
		digits = string(d.b[lo-n : hi-n])
	default:
		digits = string(d.a[lo:]) + string(d.b[:hi-n])
	}
	z, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		panic("resource: invalid digits " + digits) // unreachable: the scanner checked them
	}
	return z
}

// setDecimal sets q to the non-negative amount ds × 10^scale, rounded up to a
// whole number of nano-units.
func setDecimal[T ~string | ~[]byte](q *Quantity, ds digitSeq[T], scale int64) {
	lo, hi := 0, ds.len()
	for lo < hi && ds.at(lo) == '0' {
		lo++
	}
	if lo == hi {
		return // zero
	}
	// Move trailing zeros into the exponent; the last digit is then non-zero,
	// which makes rounding below a plain "truncate and add one".
	for ds.at(hi-1) == '0' && scale < math.MaxInt32 {
		hi--
		scale++
	}
	roundUp := false
	if scale < int64(Nano) {
		shift := int64(Nano) - scale
		scale = int64(Nano)
		if shift >= int64(hi-lo) {
			q.m, q.exp = 1, int32(Nano)
			return
		}
		hi -= int(shift)
		roundUp = true
	}
	q.exp = int32(scale)
	if hi-lo <= 18 {
		q.m = int64(ds.uint64(lo, hi))
		if roundUp {
			q.m++
		}
		return
	}
	z := ds.big(lo, hi)
	if roundUp {
		z.Add(z, bigOne)
	}
	q.setMantissa(z)
}

// setBinary sets q to the non-negative amount ds × 10^-len(ds.b) × 2^shift,
// rounded up to a whole number of nano-units and capped at 2^63-1. An amount
// below 1 switches q to DecimalSI.
func setBinary[T ~string | ~[]byte](q *Quantity, ds digitSeq[T], shift uint) {
	lo, hi := 0, ds.len()
	for lo < hi && ds.at(lo) == '0' {
		lo++
	}
	if lo == hi {
		return // zero
	}
	frac := len(ds.b)
	if hi-lo <= 18 {
		h, l := bits.Mul64(ds.uint64(lo, hi), 1<<shift)
		switch {
		case h != 0 || l > math.MaxInt64:
			if frac == 0 {
				q.m = math.MaxInt64
				return
			}
		case frac == 0:
			q.m = int64(l)
			return
		case frac <= 9:
			q.m, q.exp = int64(l), int32(-frac)
			if l < uint64(pow10[frac]) {
				q.Format = DecimalSI
			}
			return
		}
	}
	z := ds.big(lo, hi)
	z.Lsh(z, shift)
	scale := -int64(frac)
	if scale < int64(Nano) {
		z = quoCeil(z, int64(Nano)-scale)
		scale = int64(Nano)
	}
	unit := pow10Big(-scale) // 1 at this scale
	if z.Cmp(new(big.Int).Mul(bigMaxInt64, unit)) > 0 {
		q.m = math.MaxInt64
		return
	}
	if z.Cmp(unit) < 0 {
		q.Format = DecimalSI
	}
	q.exp = int32(scale)
	q.setMantissa(z)
}

// quoCeil returns ceil(z / 10^n) for z > 0, n > 0.
func quoCeil(z *big.Int, n int64) *big.Int {
	if n >= digitsUpper(z) {
		return big.NewInt(1)
	}
	quo, rem := new(big.Int).QuoRem(z, pow10Big(n), new(big.Int))
	if rem.Sign() != 0 {
		quo.Add(quo, bigOne)
	}
	return quo
}

// setMantissa stores z (which q then owns) as the mantissa.
func (q *Quantity) setMantissa(z *big.Int) {
	if z.IsInt64() {
		q.m, q.b = z.Int64(), nil
		return
	}
	q.m, q.b = 0, z
}

// mantissa returns a new big.Int holding the mantissa.
func (q *Quantity) mantissa() *big.Int {
	if q.b != nil {
		return new(big.Int).Set(q.b)
	}
	return big.NewInt(q.m)
}

// negate flips the sign of the amount.
func (q *Quantity) negate() {
	switch {
	case q.b != nil:
		q.setMantissa(new(big.Int).Neg(q.b))
	case q.m == math.MinInt64:
		q.b = new(big.Int).Neg(big.NewInt(q.m))
		q.m = 0
	default:
		q.m = -q.m
	}
}

// String returns the canonical text of q (see the package documentation). The
// zero Quantity is "0".
func (q Quantity) String() string {
	if s, ok := q.cached(); ok {
		return s
	}
	var buf [48]byte
	return string(q.appendCanonical(buf[:0]))
}

var binarySuffixes = [...]string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}

// appendCanonical appends the canonical text of q to dst.
func (q *Quantity) appendCanonical(dst []byte) []byte {
	if q.b == nil && q.m == 0 {
		return append(dst, '0')
	}
	f := formatTag(q.Format)
	if f == formatTag(BinarySI) {
		// Binary suffixes are only used for whole numbers from 1024 up, and only
		// up to 2^63-1 in magnitude: anything larger would be capped on re-parse.
		if v, ok := q.AsInt64(); ok && v != math.MinInt64 && (v >= 1024 || v <= -1024) {
			u := uint64(v)
			if v < 0 {
				dst = append(dst, '-')
				u = uint64(-v)
			}
			k := min(bits.TrailingZeros64(u)/10, len(binarySuffixes)-1)
			dst = appendUint(dst, u>>(10*k))
			return append(dst, binarySuffixes[k]...)
		}
		f = formatTag(DecimalSI)
	}

	if q.b != nil {
		dst = q.b.Append(dst, 10)
	} else if q.m < 0 {
		dst = append(dst, '-')
		dst = appendUint(dst, uint64(-q.m)) // also right for MinInt64
	} else {
		dst = appendUint(dst, uint64(q.m))
	}
	e := int64(q.exp)
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
		e++
	}
	// Lower the exponent to a multiple of three.
	for ; e%3 != 0; e-- {
		dst = append(dst, '0')
	}
	if f == formatTag(DecimalSI) && e >= int64(Nano) && e <= int64(Exa) {
		return append(dst, decimalSuffixes[(e-int64(Nano))/3]...)
	}
	if e != 0 {
		dst = append(dst, 'e')
		dst = appendInt(dst, e)
	}
	return dst
}

var decimalSuffixes = [...]string{"n", "u", "m", "", "k", "M", "G", "T", "P", "E"}

func appendUint(dst []byte, u uint64) []byte {
	var buf [20]byte
	i := len(buf)
	for u >= 10 {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
	}
	i--
	buf[i] = byte('0' + u)
	return append(dst, buf[i:]...)
}

func appendInt(dst []byte, v int64) []byte {
	if v < 0 {
		return appendUint(append(dst, '-'), uint64(-v))
	}
	return appendUint(dst, uint64(v))
}

// MarshalJSON implements json.Marshaler: q as a JSON string in canonical form.
func (q Quantity) MarshalJSON() ([]byte, error) {
	if s, ok := q.cached(); ok {
		out := make([]byte, len(s)+2)
		out[0] = '"'
		copy(out[1:], s)
		out[len(out)-1] = '"'
		return out, nil
	}
	out := make([]byte, 1, 24)
	out[0] = '"'
	out = q.appendCanonical(out)
	return append(out, '"'), nil
}

// MarshalJSONTo implements the streaming marshaler of go-json-experiment.
func (q Quantity) MarshalJSONTo(enc *jsontext.Encoder) error {
	if s, ok := q.cached(); ok {
		return enc.WriteToken(jsontext.String(s))
	}
	var buf [48]byte
	b := append(buf[:0], '"')
	b = q.appendCanonical(b)
	return enc.WriteValue(append(b, '"'))
}

// UnmarshalJSON implements json.Unmarshaler. It accepts a JSON string holding a
// quantity (surrounding spaces inside the quotes are ignored, as in Kubernetes)
// or a JSON number; null sets q to the zero Quantity. Invalid quantities are
// errors wrapping ErrFormatWrong, ErrSuffix or ErrNumeric.
func (q *Quantity) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		s, err := unquote(b)
		if err != nil {
			return fmt.Errorf("resource: invalid JSON string for Quantity: %w", err)
		}
		return q.setParsed(bytes.TrimSpace(s))
	}
	if string(b) == "null" {
		*q = Quantity{}
		return nil
	}
	// A number, or another JSON value that fails to parse as Kubernetes does.
	return q.setParsed(b)
}

// unquote returns the contents of the JSON string b, aliasing b when it has no
// escapes.
func unquote(b []byte) ([]byte, error) {
	if n := len(b); n >= 2 && b[n-1] == '"' {
		inner := b[1 : n-1]
		if bytes.IndexByte(inner, '\\') < 0 && bytes.IndexByte(inner, '"') < 0 {
			return inner, nil
		}
	}
	return jsontext.AppendUnquote(nil, b)
}

func (q *Quantity) setParsed(b []byte) error {
	p, err := parse(b)
	if err != nil {
		return fmt.Errorf("resource: invalid quantity %q: %w", b, err)
	}
	*q = p
	return nil
}

// UnmarshalJSONFrom implements the streaming unmarshaler of go-json-experiment,
// with the rules of UnmarshalJSON.
func (q *Quantity) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return q.UnmarshalJSON(v)
}

// Size is the protobuf encoded size.
func (q *Quantity) Size() int {
	if s, ok := q.cached(); ok {
		return 1 + pb.SizeBytes(len(s))
	}
	var buf [48]byte
	return 1 + pb.SizeBytes(len(q.appendCanonical(buf[:0])))
}

// MarshalToSizedBuffer writes q at the end of b and returns the bytes written:
// field 1 holding the canonical text, always present.
func (q *Quantity) MarshalToSizedBuffer(b []byte) (int, error) {
	if s, ok := q.cached(); ok {
		return len(b) - pb.PutString(b, len(b), 1, s), nil
	}
	var buf [48]byte
	return len(b) - pb.PutBytes(b, len(b), 1, q.appendCanonical(buf[:0])), nil
}

// Marshal encodes q as protobuf.
func (q *Quantity) Marshal() ([]byte, error) {
	b := make([]byte, q.Size())
	_, err := q.MarshalToSizedBuffer(b)
	return b, err
}

// Unmarshal decodes q from protobuf. Field 1 is parsed like ParseQuantity; an
// invalid quantity is an error wrapping ErrFormatWrong, ErrSuffix or
// ErrNumeric. A message without field 1 leaves q unchanged.
func (q *Quantity) Unmarshal(b []byte) error {
	d := pb.NewDecoder(b, "Quantity")
	for d.Next() {
		if d.Field() != 1 {
			d.Skip()
			continue
		}
		v := d.Bytes()
		if d.Err() != nil {
			break
		}
		p, err := parse(v)
		if err != nil {
			return fmt.Errorf("decoding Quantity field 1: invalid quantity %q: %w", v, err)
		}
		*q = p
	}
	return d.Err()
}
