// Package resource provides Quantity, the fixed-point decimal number with an
// optional unit suffix that Kubernetes uses for CPU, memory, storage and other
// resource amounts: "100m", "1Gi", "1e3".
//
// Quantity follows the semantics of k8s.io/apimachinery/pkg/api/resource: the
// same grammar, the same rounding, the same format tracking and the same
// canonical text, so a value read from kube-apiserver and written back by kapi
// reads as it would from any Kubernetes component. Values are never held as
// floating point.
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
// Like Kubernetes, the parser is a little more permissive than this grammar: a
// number with no digits at all ("", "-", ".", as in "Mi" or "e3") reads as zero,
// and "1." means 1. "1E" is 10^18 (the exa suffix), not an exponent.
//
// The suffix decides the Format a parsed quantity keeps: BinarySI for Ki…Ei,
// DecimalSI for the SI letters and for no suffix, DecimalExponent for e/E.
//
// Parsing rounds values that are not a whole number of nano-units up, away from
// zero, to the next nano-unit ("0.1n" is "1n", "-1e-12" is "-1e-9"). A BinarySI
// quantity is capped at 2^63-1 in magnitude ("10Ei" is 9223372036854775807) and
// one below 1 in magnitude becomes DecimalSI. DecimalSI and DecimalExponent
// quantities have no upper bound.
//
// # Canonical form
//
// String, MarshalJSON and the protobuf encoding all write a quantity in its
// canonical form, which depends only on its value and its Format:
//
//   - zero is "0", whatever the format;
//   - the sign is written only for negative values;
//   - no fractional digits are written, and no precision is lost;
//   - DecimalSI uses the largest suffix of n, u, m, "", k, M, G, T, P, E that
//     leaves an integer with no trailing "000": "1000m" is "1", "0.1" is "100m",
//     "100.5" is "100500m", "1000k" is "1M";
//   - DecimalExponent does the same with an exponent that is a multiple of
//     three: "1e3" stays "1e3", "1e4" is "10e3", "1e1" is "10", "12e6" stays
//     "12e6";
//   - BinarySI uses the largest of Ki, Mi, Gi, Ti, Pi, Ei that leaves an
//     integer: "1024Ki" is "1Mi", "1.5Gi" is "1536Mi". A BinarySI value that is
//     not a whole number, or is less than 1024 in magnitude, is written as
//     DecimalSI ("0.5Ki" is "512", "1.1Ki" is "1126400m"); the Format itself is
//     kept.
//
// A DecimalSI value whose exponent falls outside n…E is written in exponent
// form ("1000E" is "1e21"), which is what Kubernetes does since
// kubernetes/kubernetes#140459; earlier releases dropped the exponent and wrote
// "1". For the same reason a BinarySI value beyond 2^63-1 in magnitude (only
// reachable by arithmetic) is written as DecimalSI, because a binary suffix
// that large would be capped when parsed again.
//
// Every string that parses therefore re-parses from its canonical form to an
// equal quantity with the same canonical form.
//
// A quantity parsed from text that is already canonical keeps that text, so
// decoding "1Gi" and encoding it again copies the string without formatting.
// Unlike apimachinery, kapi never reuses non-canonical input: apimachinery
// writes "+1", "5." or "1.5e+3" back as they were given, kapi writes "1", "5"
// and "1500".
package resource
