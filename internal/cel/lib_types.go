package cel

import (
	"cmp"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/kapi-dev/kapi/api/resource"
)

// opaque is a CEL value of a library type (Quantity, URL, IP, CIDR,
// Semver, Format) holding a Go value.
type opaque[T any] struct {
	v     T
	t     *types.Type
	equal func(a, b T) bool
}

func (o opaque[T]) ConvertToNative(typeDesc reflect.Type) (any, error) {
	if reflect.TypeOf(o.v).AssignableTo(typeDesc) {
		return o.v, nil
	}
	return nil, fmt.Errorf("type conversion error from '%s' to '%v'", o.t, typeDesc)
}

func (o opaque[T]) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case o.t:
		return o
	case types.TypeType:
		return o.t
	case types.StringType:
		if s, ok := any(o.v).(fmt.Stringer); ok {
			return types.String(s.String())
		}
	}
	return types.NewErr("type conversion error from '%s' to '%s'", o.t, t)
}

func (o opaque[T]) Equal(other ref.Val) ref.Val {
	x, ok := other.(opaque[T])
	if !ok || x.t != o.t {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(o.equal(o.v, x.v))
}

func (o opaque[T]) Type() ref.Type { return o.t }
func (o opaque[T]) Value() any     { return o.v }

// unary and binary build overload bindings over the Go values of library
// types, strings and ints.
func goVal[T any](v ref.Val) (T, bool) {
	switch x := v.(type) {
	case opaque[T]:
		return x.v, true
	}
	t, ok := v.Value().(T)
	return t, ok
}

func unary[A any](f func(A) ref.Val) celgo.OverloadOpt {
	return celgo.UnaryBinding(func(v ref.Val) ref.Val {
		a, ok := goVal[A](v)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		return f(a)
	})
}

func binary[A, B any](f func(A, B) ref.Val) celgo.OverloadOpt {
	return celgo.BinaryBinding(func(x, y ref.Val) ref.Val {
		a, ok := goVal[A](x)
		if !ok {
			return types.MaybeNoSuchOverloadErr(x)
		}
		b, ok := goVal[B](y)
		if !ok {
			return types.MaybeNoSuchOverloadErr(y)
		}
		return f(a, b)
	})
}

func member(id string, args []*types.Type, out *types.Type, b celgo.OverloadOpt) celgo.FunctionOpt {
	return celgo.MemberOverload(id, args, out, b)
}

func global(id string, args []*types.Type, out *types.Type, b celgo.OverloadOpt) celgo.FunctionOpt {
	return celgo.Overload(id, args, out, b)
}

// libraryTypes are the names of the library types.
var libraryTypes = map[string]bool{"kubernetes.Quantity": true, "kubernetes.URL": true, "net.IP": true,
	"net.CIDR": true, "kubernetes.Semver": true, "kubernetes.NamedFormat": true}

func ts(t ...*types.Type) []*types.Type { return t }

var (
	str  = types.StringType
	intT = types.IntType
	boo  = types.BoolType
	dbl  = types.DoubleType
)

// Quantity

// QuantityType is the CEL type of Kubernetes quantities.
var QuantityType = types.NewOpaqueType("kubernetes.Quantity")

func quantityVal(q resource.Quantity) ref.Val {
	return opaque[resource.Quantity]{v: q, t: QuantityType, equal: resource.Quantity.Equal}
}

// Quantity is the Kubernetes quantity library: quantity(s) parses s,
// isQuantity(s) tells whether it parses, sign(q) is -1, 0 or 1; a
// quantity has isInteger(), asInteger(), asApproximateFloat(), add(q or int), sub(q or
// int), compareTo(q), isLessThan(q) and isGreaterThan(q).
//
//	quantity('1.5Gi').isGreaterThan(quantity('1Gi'))
func Quantity() celgo.EnvOption {
	q := QuantityType
	type Q = resource.Quantity
	toQ := func(s string) ref.Val {
		v, err := resource.ParseQuantity(s)
		if err != nil {
			return types.NewErr("%v", err)
		}
		return quantityVal(v)
	}
	arith := func(a Q, b Q, sub bool) ref.Val {
		out := a.DeepCopy()
		if sub {
			out.Sub(b)
		} else {
			out.Add(b)
		}
		return quantityVal(out)
	}
	return celgo.Lib(&library{opts: []celgo.EnvOption{
		celgo.Function("quantity", global("string_to_quantity", ts(str), q, unary(toQ))),
		celgo.Function("isQuantity", global("is_quantity_string", ts(str), boo, unary(func(s string) ref.Val {
			_, err := resource.ParseQuantity(s)
			return types.Bool(err == nil)
		}))),
		// sign is a global function, sign(q), as in Kubernetes.
		celgo.Function("sign", global("quantity_sign", ts(q), intT, unary(func(a Q) ref.Val { return types.Int(a.Sign()) }))),
		celgo.Function("isInteger", member("quantity_is_integer", ts(q), boo, unary(func(a Q) ref.Val {
			_, ok := a.AsInt64()
			return types.Bool(ok)
		}))),
		celgo.Function("asInteger", member("quantity_get_integer", ts(q), intT, unary(func(a Q) ref.Val {
			i, ok := a.AsInt64()
			if !ok {
				return types.NewErr("cannot convert value to integer")
			}
			return types.Int(i)
		}))),
		celgo.Function("asApproximateFloat", member("quantity_get_float", ts(q), dbl, unary(func(a Q) ref.Val {
			return types.Double(a.AsApproximateFloat64())
		}))),
		celgo.Function("add",
			member("quantity_add", ts(q, q), q, binary(func(a, b Q) ref.Val { return arith(a, b, false) })),
			member("quantity_add_int", ts(q, intT), q, binary(func(a Q, b int64) ref.Val { return arith(a, *resource.NewQuantity(b, resource.DecimalSI), false) }))),
		celgo.Function("sub",
			member("quantity_sub", ts(q, q), q, binary(func(a, b Q) ref.Val { return arith(a, b, true) })),
			member("quantity_sub_int", ts(q, intT), q, binary(func(a Q, b int64) ref.Val { return arith(a, *resource.NewQuantity(b, resource.DecimalSI), true) }))),
		celgo.Function("compareTo", member("quantity_compare_to", ts(q, q), intT, binary(func(a, b Q) ref.Val { return types.Int(a.Cmp(b)) }))),
		celgo.Function("isLessThan", member("quantity_less", ts(q, q), boo, binary(func(a, b Q) ref.Val { return types.Bool(a.Cmp(b) < 0) }))),
		celgo.Function("isGreaterThan", member("quantity_greater", ts(q, q), boo, binary(func(a, b Q) ref.Val { return types.Bool(a.Cmp(b) > 0) }))),
	}})
}

// URLs

// URLType is the CEL type of URLs.
var URLType = types.NewOpaqueType("kubernetes.URL")

// URLs is the Kubernetes URL library: url(s) parses an absolute URI or an
// absolute path, isURL(s) tells whether it parses; a URL has getScheme(),
// getHost(), getHostname(), getPort(), getEscapedPath() and getQuery().
//
//	url('https://example.com:80/a').getPort() == '80'
func URLs() celgo.EnvOption {
	u := URLType
	parse := urlParse
	get := func(id, name string, f func(*url.URL) string) celgo.EnvOption {
		return celgo.Function(name, member(id, ts(u), str, unary(func(x *url.URL) ref.Val { return types.String(f(x)) })))
	}
	return celgo.Lib(&library{opts: []celgo.EnvOption{
		celgo.Function("url", global("string_to_url", ts(str), u, unary(func(s string) ref.Val {
			x, err := parse(s)
			if err != nil {
				return types.NewErr("URL parse error during conversion from string: %v", err)
			}
			return opaque[*url.URL]{v: x, t: URLType, equal: func(a, b *url.URL) bool { return a.String() == b.String() }}
		}))),
		celgo.Function("isURL", global("is_url_string", ts(str), boo, unary(func(s string) ref.Val {
			_, err := parse(s)
			return types.Bool(err == nil)
		}))),
		get("url_get_scheme", "getScheme", func(x *url.URL) string { return x.Scheme }),
		get("url_get_host", "getHost", func(x *url.URL) string { return x.Host }),
		get("url_get_hostname", "getHostname", func(x *url.URL) string { return x.Hostname() }),
		get("url_get_port", "getPort", func(x *url.URL) string { return x.Port() }),
		get("url_get_escaped_path", "getEscapedPath", func(x *url.URL) string { return x.EscapedPath() }),
		celgo.Function("getQuery", member("url_get_query", ts(u), types.NewMapType(str, types.NewListType(str)), unary(func(x *url.URL) ref.Val {
			out := map[ref.Val]ref.Val{}
			for k, vs := range x.Query() {
				out[types.String(k)] = types.NewStringList(types.DefaultTypeAdapter, vs)
			}
			return types.NewRefValMap(types.DefaultTypeAdapter, out)
		}))),
	}})
}

// IP and CIDR

// IPType and CIDRType are the CEL types of IP addresses and CIDRs.
var (
	IPType   = types.NewOpaqueType("net.IP")
	CIDRType = types.NewOpaqueType("net.CIDR")
)

// parseIP accepts IPv4 and IPv6 addresses without zones, and refuses
// IPv4-mapped IPv6 addresses, as Kubernetes does.
func parseIP(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("IP Address %q parse error during conversion from string: %v", s, err)
	}
	if a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("IP address %q with zone value is not allowed", s)
	}
	if a.Is4In6() {
		return netip.Addr{}, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", s)
	}
	return a, nil
}

func parseCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("network address parse error during conversion from string: %v", err)
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", s)
	}
	return p, nil
}

type ipAddr struct{ netip.Addr }
type cidrPrefix struct{ netip.Prefix }

func ipVal(a netip.Addr) ref.Val {
	return opaque[ipAddr]{v: ipAddr{a}, t: IPType, equal: func(x, y ipAddr) bool { return x.Addr == y.Addr }}
}

func cidrVal(p netip.Prefix) ref.Val {
	return opaque[cidrPrefix]{v: cidrPrefix{p}, t: CIDRType, equal: func(x, y cidrPrefix) bool { return x.Prefix == y.Prefix }}
}

// IP is the Kubernetes IP library: ip(s), isIP(s), ip.isCanonical(s), and
// on an IP family(), isUnspecified(), isLoopback(), isLinkLocalMulticast(),
// isLinkLocalUnicast(), isGlobalUnicast(); string(ip).
//
//	ip('10.0.0.1').family() == 4
func IP() celgo.EnvOption {
	t := IPType
	pred := func(id, name string, f func(netip.Addr) bool) celgo.EnvOption {
		return celgo.Function(name, member(id, ts(t), boo, unary(func(a ipAddr) ref.Val { return types.Bool(f(a.Addr)) })))
	}
	return celgo.Lib(&library{opts: []celgo.EnvOption{
		celgo.Function("ip", global("string_to_ip", ts(str), t, unary(func(s string) ref.Val {
			a, err := parseIP(s)
			if err != nil {
				return types.NewErr("%v", err)
			}
			return ipVal(a)
		})), member("cidr_ip", ts(CIDRType), t, unary(func(p cidrPrefix) ref.Val { return ipVal(p.Addr()) }))),
		celgo.Function("isIP", global("is_ip", ts(str), boo, unary(func(s string) ref.Val {
			_, err := parseIP(s)
			return types.Bool(err == nil)
		}))),
		celgo.Function("ip.isCanonical", global("ip_is_canonical", ts(str), boo, unary(func(s string) ref.Val {
			a, err := parseIP(s)
			if err != nil {
				return types.NewErr("%v", err)
			}
			return types.Bool(a.String() == s)
		}))),
		celgo.Function("family", member("ip_family", ts(t), intT, unary(func(a ipAddr) ref.Val {
			if a.Is4() {
				return types.Int(4)
			}
			return types.Int(6)
		}))),
		pred("ip_is_unspecified", "isUnspecified", netip.Addr.IsUnspecified),
		pred("ip_is_loopback", "isLoopback", netip.Addr.IsLoopback),
		pred("ip_is_link_local_multicast", "isLinkLocalMulticast", netip.Addr.IsLinkLocalMulticast),
		pred("ip_is_link_local_unicast", "isLinkLocalUnicast", netip.Addr.IsLinkLocalUnicast),
		pred("ip_is_global_unicast", "isGlobalUnicast", netip.Addr.IsGlobalUnicast),
		celgo.Function("string", global("ip_to_string", ts(t), str, unary(func(a ipAddr) ref.Val { return types.String(a.String()) })),
			global("cidr_to_string", ts(CIDRType), str, unary(func(p cidrPrefix) ref.Val { return types.String(p.String()) }))),
	}})
}

// CIDR is the Kubernetes CIDR library: cidr(s), isCIDR(s), and on a CIDR
// containsIP(ip or string), containsCIDR(cidr or string), ip(), masked(),
// prefixLength().
//
//	cidr('10.0.0.0/8').containsIP('10.1.2.3')
func CIDR() celgo.EnvOption {
	t := CIDRType
	containsIP := func(p cidrPrefix, a ipAddr) ref.Val { return types.Bool(p.Contains(a.Addr)) }
	containsCIDR := func(p, q cidrPrefix) ref.Val {
		return types.Bool(q.Bits() >= p.Bits() && p.Contains(q.Addr()))
	}
	return celgo.Lib(&library{opts: []celgo.EnvOption{
		celgo.Function("cidr", global("string_to_cidr", ts(str), t, unary(func(s string) ref.Val {
			p, err := parseCIDR(s)
			if err != nil {
				return types.NewErr("%v", err)
			}
			return cidrVal(p)
		}))),
		celgo.Function("isCIDR", global("is_cidr", ts(str), boo, unary(func(s string) ref.Val {
			_, err := parseCIDR(s)
			return types.Bool(err == nil)
		}))),
		celgo.Function("containsIP",
			member("cidr_contains_ip_ip", ts(t, IPType), boo, binary(containsIP)),
			member("cidr_contains_ip_string", ts(t, str), boo, binary(func(p cidrPrefix, s string) ref.Val {
				a, err := parseIP(s)
				if err != nil {
					return types.NewErr("%v", err)
				}
				return containsIP(p, ipAddr{a})
			}))),
		celgo.Function("containsCIDR",
			member("cidr_contains_cidr", ts(t, t), boo, binary(containsCIDR)),
			member("cidr_contains_cidr_string", ts(t, str), boo, binary(func(p cidrPrefix, s string) ref.Val {
				q, err := parseCIDR(s)
				if err != nil {
					return types.NewErr("%v", err)
				}
				return containsCIDR(p, cidrPrefix{q})
			}))),
		celgo.Function("masked", member("cidr_masked", ts(t), t, unary(func(p cidrPrefix) ref.Val { return cidrVal(p.Masked()) }))),
		celgo.Function("prefixLength", member("cidr_prefix_length", ts(t), intT, unary(func(p cidrPrefix) ref.Val { return types.Int(p.Bits()) }))),
	}})
}

// Semver

// SemverType is the CEL type of semantic versions.
var SemverType = types.NewOpaqueType("kubernetes.Semver")

type semver struct {
	major, minor, patch uint64
	pre                 []string
}

var semverRe = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

func parseSemver(s string) (semver, error) {
	m := semverRe.FindStringSubmatch(s)
	if m == nil {
		return semver{}, fmt.Errorf("No Major.Minor.Patch elements found")
	}
	var v semver
	var err error
	if v.major, err = strconv.ParseUint(m[1], 10, 64); err != nil {
		return semver{}, err
	}
	if v.minor, err = strconv.ParseUint(m[2], 10, 64); err != nil {
		return semver{}, err
	}
	if v.patch, err = strconv.ParseUint(m[3], 10, 64); err != nil {
		return semver{}, err
	}
	if m[4] != "" {
		v.pre = strings.Split(m[4], ".")
	}
	return v, nil
}

func (a semver) compare(b semver) int {
	if c := cmp.Compare(a.major, b.major); c != 0 {
		return c
	}
	if c := cmp.Compare(a.minor, b.minor); c != 0 {
		return c
	}
	if c := cmp.Compare(a.patch, b.patch); c != 0 {
		return c
	}
	switch {
	case len(a.pre) == 0 && len(b.pre) == 0:
		return 0
	case len(a.pre) == 0:
		return 1
	case len(b.pre) == 0:
		return -1
	}
	for i := 0; i < len(a.pre) && i < len(b.pre); i++ {
		x, ex := strconv.ParseUint(a.pre[i], 10, 64)
		y, ey := strconv.ParseUint(b.pre[i], 10, 64)
		switch {
		case ex == nil && ey == nil:
			if c := cmp.Compare(x, y); c != 0 {
				return c
			}
		case ex == nil:
			return -1
		case ey == nil:
			return 1
		default:
			if c := strings.Compare(a.pre[i], b.pre[i]); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(uint64(len(a.pre)), uint64(len(b.pre)))
}

// Semver is the Kubernetes semver library: semver(s), isSemver(s), and on
// a version major(), minor(), patch(), compareTo(v), isLessThan(v),
// isGreaterThan(v).
//
//	semver('1.2.3').isLessThan(semver('1.10.0'))
func Semver() celgo.EnvOption {
	t := SemverType
	val := func(v semver) ref.Val {
		return opaque[semver]{v: v, t: t, equal: func(a, b semver) bool { return a.compare(b) == 0 }}
	}
	part := func(id, name string, f func(semver) uint64) celgo.EnvOption {
		return celgo.Function(name, member(id, ts(t), intT, unary(func(v semver) ref.Val {
			n := f(v)
			if n > math.MaxInt64 {
				return types.NewErr("integer overflow")
			}
			return types.Int(n)
		})))
	}
	return celgo.Lib(&library{opts: []celgo.EnvOption{
		celgo.Function("semver", global("string_to_semver", ts(str), t, unary(func(s string) ref.Val {
			v, err := parseSemver(s)
			if err != nil {
				return types.NewErr("%v", err)
			}
			return val(v)
		}))),
		celgo.Function("isSemver", global("is_semver_string", ts(str), boo, unary(func(s string) ref.Val {
			_, err := parseSemver(s)
			return types.Bool(err == nil)
		}))),
		part("semver_major", "major", func(v semver) uint64 { return v.major }),
		part("semver_minor", "minor", func(v semver) uint64 { return v.minor }),
		part("semver_patch", "patch", func(v semver) uint64 { return v.patch }),
		celgo.Function("compareTo", member("semver_compare_to", ts(t, t), intT, binary(func(a, b semver) ref.Val { return types.Int(a.compare(b)) }))),
		celgo.Function("isLessThan", member("semver_less", ts(t, t), boo, binary(func(a, b semver) ref.Val { return types.Bool(a.compare(b) < 0) }))),
		celgo.Function("isGreaterThan", member("semver_greater", ts(t, t), boo, binary(func(a, b semver) ref.Val { return types.Bool(a.compare(b) > 0) }))),
	}})
}

// urlParse parses an absolute URI or an absolute path.
func urlParse(s string) (*url.URL, error) { return url.ParseRequestURI(s) }
