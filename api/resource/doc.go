// Package resource provides Quantity, the fixed-point decimal number with an
// optional unit suffix that Kubernetes uses for CPU, memory, storage and other
// resource amounts: "100m", "1Gi", "1e3".
//
// Quantity follows the semantics of k8s.io/apimachinery/pkg/api/resource: the
// same grammar, the same rounding, the same format tracking and the same
// canonical text, so a value read from kube-apiserver and written back by kapi
// reads as it would from any Kubernetes component. Amounts are exact at any
// magnitude and are never held as floating point.
//
// # Grammar
//
// A quantity is a signed decimal number followed by an optional suffix:
//
//	<quantity>        ::= <signedNumber><suffix>
//	<signedNumber>    ::= <number> | "+"<number> | "-"<number>
//	<number>          ::= <digits> | <digits>"."<digits> | <digits>"." | "."<digits>
//	<suffix>          ::= <binarySI> | <decimalSI> | <decimalExponent>
//	<binarySI>        ::= "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"   (powers of 1024)
//	<decimalSI>       ::= "n" | "u" | "m" | "" | "k" | "M" | "G" | "T" | "P" | "E"
//	<decimalExponent> ::= "e"<signedInteger> | "E"<signedInteger>
//
// "1E" is 10^18 (the exa suffix); "1E3" is an exponent. Like Kubernetes, the
// parser accepts a number with no digits at all ("", "-", "."), as in "Mi" or
// "e3", and reads it as zero, except before an exponent below -9 or before Pi
// or Ei, where it reports ErrNumeric. Also like Kubernetes, an exponent is
// truncated to 32 bits: "1e4294967296" is 1.
//
// The suffix decides the Format a parsed quantity keeps: BinarySI for Ki…Ei,
// DecimalSI for the SI letters and for no suffix, DecimalExponent for e/E.
//
// Parsing rounds an amount that is not a whole number of nano-units up, away
// from zero, to the next nano-unit: "0.1n" is "1n", "-1e-12" is "-1e-9". A
// BinarySI quantity is capped at 2^63-1 in magnitude ("10Ei" is
// 9223372036854775807) and one below 1 in magnitude becomes DecimalSI.
// DecimalSI and DecimalExponent quantities have no upper bound.
//
// # Canonical form
//
// String, MarshalJSON and the protobuf encoding write a quantity in its
// canonical form, which depends only on its amount and its Format:
//
//   - zero is "0", whatever the Format;
//   - a sign is written only for negative amounts;
//   - no fractional digits are written, and no precision is lost;
//   - DecimalSI uses the largest suffix of n, u, m, "", k, M, G, T, P, E that
//     leaves a whole number: "1000m" is "1", "0.1" is "100m", "100.5" is
//     "100500m", "1000k" is "1M", "1100" stays "1100";
//   - DecimalExponent does the same with a power of ten that is a multiple of
//     three: "1e3" stays "1e3", "1e4" is "10e3", "1e1" is "10", "12e6" stays
//     "12e6", "1e-1" is "100e-3";
//   - BinarySI uses the largest of Ki, Mi, Gi, Ti, Pi, Ei that leaves a whole
//     number: "1024Ki" is "1Mi", "1.5Gi" is "1536Mi". A BinarySI amount that is
//     not a whole number, or is below 1024 in magnitude, is written as
//     DecimalSI ("0.5Ki" is "512", "1.1Ki" is "1126400m"); its Format stays
//     BinarySI.
//
// A DecimalSI amount beyond the range of the suffixes is written in exponent
// form: "1000E" is "1e21", NewScaledQuantity(1, -12) is "1e-12". This is the
// behaviour of Kubernetes since kubernetes/kubernetes#140459; earlier releases
// dropped the exponent and wrote both as "1".
//
// Every string that parses re-parses from its canonical form to an equal
// quantity with the same canonical form.
//
// A quantity parsed from text that is already canonical keeps that text, so
// that decoding "1Gi" and encoding it again copies the string instead of
// formatting the amount anew.
//
// # Differences from apimachinery
//
// kapi keeps apimachinery's wire format and parsing rules, but not its bugs or
// its inf.Dec-based API:
//
//   - String always writes the canonical form. apimachinery gives some
//     non-canonical input back verbatim ("+1", "5.", "007", "1E3", "1e+3",
//     "1.G"), because it caches the input text on a heuristic; kapi caches it
//     only when it is exactly canonical.
//   - A BinarySI amount beyond 2^63-1 in magnitude, which only arithmetic can
//     produce, is written as DecimalSI: a binary suffix would be capped when
//     parsed again. apimachinery writes 2^63 as "8Ei".
//   - Value, MilliValue and ScaledValue round away from zero and saturate at
//     math.MaxInt64 and math.MinInt64. apimachinery wraps around or returns 0 on
//     overflow, and rounds some negative amounts toward +Inf.
//   - AsInt64 succeeds for every whole number in the int64 range ("1000m" is
//     1); apimachinery may report false for such values.
//   - Reading methods have value receivers and never modify the receiver, so
//     they are safe for concurrent use and work on map elements; changing the
//     Format field always changes what String writes.
//   - UnmarshalJSON decodes escapes in JSON strings, and null resets the
//     quantity to the zero Quantity.
//   - Quantity has no inf.Dec accessors (AsDec, ToDec, NewDecimalQuantity) and
//     no Mul, RoundUp or CanonicalizeBytes.
package resource
