package registry

import (
	"net/netip"
	"strconv"
	"strings"
)

// IP addresses and CIDRs as kube-apiserver v1.37 validates them in the
// fields it checks strictly (IPAddress names, ServiceCIDRs, a NetworkPolicy's
// new ipBlocks): what Go's netip parses, with a message of its own for each
// way a value that older, sloppier parsers took is now refused.

const (
	msgInvalidIP   = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
	msgInvalidCIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
)

// ValidateIP returns kube-apiserver's messages for what is wrong with the IP
// address value (nil when it is a valid IP in canonical form).
func ValidateIP(value string) []string {
	ip, err := netip.ParseAddr(value)
	if err != nil || ip.Zone() != "" {
		if err != nil && !strings.Contains(value, "%") && !strings.Contains(value, ":") {
			if _, ok := withoutLeadingZeros(value); ok {
				return []string{"must not have leading 0s"}
			}
		}
		return []string{msgInvalidIP}
	}
	if ip.Is4In6() {
		return []string{"must not be an IPv4-mapped IPv6 address"}
	}
	if s := ip.String(); s != value {
		return []string{"must be in canonical form (" + strconv.Quote(s) + ")"}
	}
	return nil
}

// ValidateCIDR returns kube-apiserver's messages for what is wrong with the
// CIDR value (nil when it is a valid, canonical network prefix).
func ValidateCIDR(value string) []string {
	p, err := netip.ParsePrefix(value)
	if err != nil {
		if sloppyPrefix(value) {
			return []string{"must not have leading 0s in IP or prefix length"}
		}
		return []string{msgInvalidCIDR}
	}
	if p.Addr().Zone() != "" {
		return []string{msgInvalidCIDR}
	}
	if p.Addr().Is4In6() {
		return []string{"must not have an IPv4-mapped IPv6 address"}
	}
	if p.Masked() != p {
		return []string{"must not have bits set beyond the prefix length"}
	}
	if s := p.String(); s != value {
		return []string{"must be in canonical form (" + strconv.Quote(s) + ")"}
	}
	return nil
}

// sloppyPrefix reports whether value, which netip does not parse, is a
// prefix once the leading zeros of its IPv4 octets and of its length are
// removed (what parsers before Go 1.17 accepted).
func sloppyPrefix(value string) bool {
	addr, bits, found := strings.Cut(value, "/")
	if !found || bits == "" || strings.Contains(addr, "%") {
		return false
	}
	if fixed, ok := withoutLeadingZeros(addr); ok {
		addr = fixed
	}
	n, err := strconv.Atoi(bits)
	if err != nil || n < 0 || bits[0] == '+' {
		return false
	}
	_, err = netip.ParsePrefix(addr + "/" + strconv.Itoa(n))
	return err == nil
}

// withoutLeadingZeros returns the dotted IPv4 address s with the leading
// zeros of its octets removed, and whether that made it a valid address
// that s was not.
func withoutLeadingZeros(s string) (string, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return "", false
	}
	changed := false
	for i, p := range parts {
		t := strings.TrimLeft(p, "0")
		if t == "" {
			t = "0"
		}
		if t != p {
			changed = true
		}
		parts[i] = t
	}
	fixed := strings.Join(parts, ".")
	if _, err := netip.ParseAddr(fixed); err != nil || !changed {
		return "", false
	}
	return fixed, true
}

// cidrFamily is 4 or 6 for a parsable CIDR, 0 otherwise.
func cidrFamily(value string) int {
	addr, _, _ := strings.Cut(value, "/")
	if fixed, ok := withoutLeadingZeros(addr); ok {
		addr = fixed
	}
	ip, err := netip.ParseAddr(addr)
	switch {
	case err != nil:
		return 0
	case ip.Is4() || ip.Is4In6():
		return 4
	}
	return 6
}

// NameIsIP is the NameFunc of IPAddresses: a name is an IP address in
// canonical form (IPAddresses have no generated names).
func NameIsIP(name string, _ bool) []string { return ValidateIP(name) }
