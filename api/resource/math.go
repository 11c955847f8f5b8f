package resource

import (
	"math"
	"math/big"
	"strconv"
)

// pow10 holds the powers of ten that fit in an int64.
var pow10 = [...]int64{
	1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
}

var (
	bigOne      = big.NewInt(1)
	bigTen      = big.NewInt(10)
	bigMaxInt64 = big.NewInt(math.MaxInt64)
	bigPow10    [len(pow10)]*big.Int
)

func init() {
	for i, p := range pow10 {
		bigPow10[i] = big.NewInt(p)
	}
}

// pow10Big returns 10^n, n >= 0. The result must not be modified.
func pow10Big(n int64) *big.Int {
	if n < int64(len(bigPow10)) {
		return bigPow10[n]
	}
	return new(big.Int).Exp(bigTen, big.NewInt(n), nil)
}

// digitsUpper is an upper bound of the number of decimal digits of |z|.
func digitsUpper(z *big.Int) int64 { return int64(z.BitLen())*30103/100000 + 1 }

// mul64 returns a×b and whether it did not overflow; b > 0.
func mul64(a, b int64) (int64, bool) {
	c := a * b
	if a != 0 && (c/b != a || (c < 0) != (a < 0)) {
		return 0, false
	}
	return c, true
}

// add64 returns a+b and whether it did not overflow.
func add64(a, b int64) (int64, bool) {
	c := a + b
	if (c > a) != (b > 0) {
		return 0, false
	}
	return c, true
}

func sign64(v int64) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// NewQuantity returns a Quantity holding value in the given Format.
func NewQuantity(value int64, format Format) *Quantity {
	return &Quantity{m: value, Format: format}
}

// NewMilliQuantity returns a Quantity holding value/1000 in the given Format.
// A BinarySI quantity that is not a whole number, or is below 1024 in
// magnitude, is written as DecimalSI.
func NewMilliQuantity(value int64, format Format) *Quantity {
	return &Quantity{m: value, exp: int32(Milli), Format: format}
}

// NewScaledQuantity returns a DecimalSI Quantity holding value × 10^scale.
func NewScaledQuantity(value int64, scale Scale) *Quantity {
	return &Quantity{m: value, exp: int32(scale), Format: DecimalSI}
}

// Set sets q to value, keeping its Format.
func (q *Quantity) Set(value int64) { q.SetScaled(value, 0) }

// SetMilli sets q to value/1000, keeping its Format.
func (q *Quantity) SetMilli(value int64) { q.SetScaled(value, Milli) }

// SetScaled sets q to value × 10^scale, keeping its Format.
func (q *Quantity) SetScaled(value int64, scale Scale) {
	*q = Quantity{m: value, exp: int32(scale), Format: q.Format}
}

// IsZero reports whether q is zero, as the zero Quantity is.
func (q Quantity) IsZero() bool { return q.b == nil && q.m == 0 }

// Sign returns -1, 0 or +1 as q is negative, zero or positive.
func (q Quantity) Sign() int {
	if q.b != nil {
		return q.b.Sign()
	}
	return sign64(q.m)
}

// DeepCopy returns a copy of q. A Quantity shares no mutable state, so this is
// the same as assigning it; the method exists for generated deep-copy code.
func (q Quantity) DeepCopy() Quantity { return q }

// Equal reports whether q and v are the same amount, whatever their Formats or
// texts ("1k", "1000" and "1e3" are equal).
func (q Quantity) Equal(v Quantity) bool { return q.Cmp(v) == 0 }

// Cmp compares the amounts of q and y, returning -1, 0 or +1 as q is less than,
// equal to or greater than y. It is exact for any magnitude.
func (q Quantity) Cmp(y Quantity) int {
	if q.b == nil && y.b == nil {
		a, b := q.m, y.m
		ok := true
		switch d := int64(q.exp) - int64(y.exp); {
		case d > 0:
			a, ok = scaleUp64(a, d)
		case d < 0:
			b, ok = scaleUp64(b, -d)
		}
		if ok {
			return cmp64(a, b)
		}
	}
	sq, sy := q.Sign(), y.Sign()
	if sq != sy {
		return cmp64(int64(sq), int64(sy))
	}
	if sq == 0 {
		return 0
	}
	return sq * cmpAbs(&q, &y)
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// scaleUp64 returns v × 10^n, n >= 0, and whether it fits.
func scaleUp64(v, n int64) (int64, bool) {
	if v == 0 {
		return 0, true
	}
	if n >= int64(len(pow10)) {
		return 0, false
	}
	return mul64(v, pow10[n])
}

// cmpAbs compares |x| and |y|, both non-zero, without building numbers larger
// than the two mantissas need.
func cmpAbs(x, y *Quantity) int {
	a, b := x.mantissa(), y.mantissa()
	a.Abs(a)
	b.Abs(b)
	switch d := int64(x.exp) - int64(y.exp); {
	case d > 0:
		// |x| >= 10^x.exp, |y| < 10^(digits(b)+y.exp)
		if d >= digitsUpper(b) {
			return 1
		}
		a.Mul(a, pow10Big(d))
	case d < 0:
		if -d >= digitsUpper(a) {
			return -1
		}
		b.Mul(b, pow10Big(-d))
	}
	return a.Cmp(b)
}

// CmpInt64 compares q with y as Cmp does.
func (q Quantity) CmpInt64(y int64) int { return q.Cmp(Quantity{m: y}) }

// Add adds y to q. If q is zero it first takes y's Format.
func (q *Quantity) Add(y Quantity) { q.add(y, false) }

// Sub subtracts y from q. If q is zero it first takes y's Format.
func (q *Quantity) Sub(y Quantity) { q.add(y, true) }

func (q *Quantity) add(y Quantity, subtract bool) {
	q.s = ""
	if q.IsZero() {
		q.Format = y.Format
		q.m, q.b, q.exp = y.m, y.b, y.exp
		if subtract {
			q.negate()
		}
		return
	}
	if y.IsZero() {
		return
	}
	if q.b == nil && y.b == nil && (!subtract || y.m != math.MinInt64) {
		a, b := q.m, y.m
		if subtract {
			b = -b
		}
		e := min(q.exp, y.exp)
		var ok1, ok2 bool
		a, ok1 = scaleUp64(a, int64(q.exp)-int64(e))
		b, ok2 = scaleUp64(b, int64(y.exp)-int64(e))
		if ok1 && ok2 {
			if s, ok := add64(a, b); ok {
				q.m, q.exp = s, e
				return
			}
		}
	}
	e := min(q.exp, y.exp)
	a, b := q.mantissa(), y.mantissa()
	if d := int64(q.exp) - int64(e); d > 0 {
		a.Mul(a, pow10Big(d))
	}
	if d := int64(y.exp) - int64(e); d > 0 {
		b.Mul(b, pow10Big(d))
	}
	if subtract {
		a.Sub(a, b)
	} else {
		a.Add(a, b)
	}
	q.exp = e
	q.setMantissa(a)
}

// Neg negates q.
func (q *Quantity) Neg() {
	q.s = ""
	q.negate()
}

// Value returns q rounded up, away from zero, to an integer: 1.5 and 0.001 are
// 2 and 1, -1.5 is -2. It saturates at math.MaxInt64 and math.MinInt64.
func (q Quantity) Value() int64 { return q.ScaledValue(0) }

// MilliValue returns q × 1000 rounded up, away from zero, to an integer
// ("0.1m" is 1). It saturates at math.MaxInt64 and math.MinInt64.
func (q Quantity) MilliValue() int64 { return q.ScaledValue(Milli) }

// ScaledValue returns q / 10^scale rounded up, away from zero, to an integer:
// MustParse("1.5Gi").ScaledValue(Mega) is 1611. It saturates at math.MaxInt64
// and math.MinInt64.
func (q Quantity) ScaledValue(scale Scale) int64 {
	d := int64(q.exp) - int64(scale)
	if q.b == nil {
		if q.m == 0 {
			return 0
		}
		if d >= 0 {
			if v, ok := scaleUp64(q.m, d); ok {
				return v
			}
			return saturate(q.m > 0)
		}
		if -d >= int64(len(pow10)) {
			return int64(sign64(q.m)) // 0 < |q| < 1 unit
		}
		p := pow10[-d]
		v := q.m / p
		if q.m%p != 0 {
			v += int64(sign64(q.m))
		}
		return v
	}
	pos := q.b.Sign() > 0
	var v *big.Int
	switch {
	case d > int64(len(pow10)):
		return saturate(pos)
	case d >= 0:
		v = new(big.Int).Mul(q.b, pow10Big(d))
	case -d >= digitsUpper(q.b):
		return int64(q.b.Sign())
	default:
		var rem big.Int
		v, _ = new(big.Int).QuoRem(q.b, pow10Big(-d), &rem)
		if rem.Sign() != 0 {
			v.Add(v, big.NewInt(int64(q.b.Sign())))
		}
	}
	if !v.IsInt64() {
		return saturate(pos)
	}
	return v.Int64()
}

func saturate(positive bool) int64 {
	if positive {
		return math.MaxInt64
	}
	return math.MinInt64
}

// AsInt64 returns q as an int64 and true if q is a whole number in the int64
// range, or 0 and false otherwise.
func (q Quantity) AsInt64() (int64, bool) {
	if q.b == nil {
		switch {
		case q.exp == 0 || q.m == 0:
			return q.m, true
		case q.exp > 0:
			return scaleUp64(q.m, int64(q.exp))
		case -int64(q.exp) >= int64(len(pow10)):
			return 0, false // 0 < |q| < 1
		}
		p := pow10[-q.exp]
		if q.m%p != 0 {
			return 0, false
		}
		return q.m / p, true
	}
	var v *big.Int
	switch d := int64(q.exp); {
	case d > int64(len(pow10)):
		return 0, false
	case d >= 0:
		v = new(big.Int).Mul(q.b, pow10Big(d))
	case -d >= digitsUpper(q.b):
		return 0, false
	default:
		var rem big.Int
		v, _ = new(big.Int).QuoRem(q.b, pow10Big(-d), &rem)
		if rem.Sign() != 0 {
			return 0, false
		}
	}
	if !v.IsInt64() {
		return 0, false
	}
	return v.Int64(), true
}

// AsApproximateFloat64 returns the float64 nearest to q (±Inf beyond the
// float64 range).
func (q Quantity) AsApproximateFloat64() float64 {
	const exact = 1 << 53 // integers up to this are exact in a float64
	if q.b == nil && q.m < exact && q.m > -exact && q.exp < 23 && q.exp > -23 {
		// Both operands are exact, so the one operation rounds correctly.
		switch {
		case q.exp > 0:
			return float64(q.m) * math.Pow10(int(q.exp))
		case q.exp < 0:
			return float64(q.m) / math.Pow10(int(-q.exp))
		}
		return float64(q.m)
	}
	var buf [48]byte
	b := q.mantissa().Append(buf[:0], 10)
	b = append(b, 'e')
	b = appendInt(b, int64(q.exp))
	f, _ := strconv.ParseFloat(string(b), 64) // ±Inf or ±0 on range errors
	return f
}
