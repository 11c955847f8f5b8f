package registry

import (
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/internal/namefmt"
)

// The string formats of Kubernetes' validation, with the messages
// kube-apiserver writes for a value that breaks them. Each Is* function
// returns every rule its value breaks, in kube-apiserver's order and
// wording, or nil for a valid value; validation turns each message into a
// field error of its own. The formats themselves are in package namefmt,
// which the CEL format library shares.

const (
	// MaxDNS1123LabelLength is the longest RFC 1123 (and RFC 1035) label.
	MaxDNS1123LabelLength = 63
	// MaxDNS1123SubdomainLength is the longest RFC 1123 subdomain.
	MaxDNS1123SubdomainLength = 253
	// MaxQualifiedNameLength is the longest name part of a qualified name
	// (a label key, an annotation key, a finalizer).
	MaxQualifiedNameLength = 63
	// MaxLabelValueLength is the longest label value.
	MaxLabelValueLength = 63
)

func maxLen(n int) string { return "must be no more than " + strconv.Itoa(n) + " characters" }

// maxBytes is maxLen as the checks of label keys and values word it.
func maxBytes(n int) string { return "must be no more than " + strconv.Itoa(n) + " bytes" }

// regexMessage words a format violation as kube-apiserver does: the rule,
// the examples, the regular expression.
func regexMessage(rule, format string, examples ...string) string {
	var b strings.Builder
	b.WriteString(rule)
	b.WriteString(" (")
	if len(examples) > 0 {
		b.WriteString("e.g. ")
		for i, e := range examples {
			if i > 0 {
				b.WriteString(" or ")
			}
			b.WriteString("'" + e + "', ")
		}
	}
	b.WriteString("regex used for validation is '" + format + "')")
	return b.String()
}

// ValidateDNS1123Subdomain checks a name such as "my.config-1" and returns
// Kubernetes' messages for what is wrong with it.
func ValidateDNS1123Subdomain(name string) []string { return dns1123Subdomain(name, maxLen) }

func dns1123Subdomain(name string, maxLen func(int) string) []string {
	var errs []string
	if len(name) > MaxDNS1123SubdomainLength {
		errs = append(errs, maxLen(MaxDNS1123SubdomainLength))
	}
	if !namefmt.DNS1123SubdomainRe.MatchString(name) {
		errs = append(errs, regexMessage("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "+
			"and must start and end with an alphanumeric character", namefmt.DNS1123Subdomain, "example.com"))
	}
	return errs
}

// ValidateDNS1123Label checks a name such as "my-name" (namespaces). A valid
// subdomain that is no label is told it "must not contain dots".
func ValidateDNS1123Label(name string) []string {
	var errs []string
	if len(name) > MaxDNS1123LabelLength {
		errs = append(errs, maxLen(MaxDNS1123LabelLength))
	}
	if !namefmt.DNS1123LabelRe.MatchString(name) {
		if namefmt.DNS1123SubdomainRe.MatchString(name) {
			errs = append(errs, "must not contain dots")
		} else {
			errs = append(errs, regexMessage("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "+
				"and must start and end with an alphanumeric character", namefmt.DNS1123Label, "my-name", "123-abc"))
		}
	}
	return errs
}

// ValidateDNS1035Label checks a name such as "my-svc" (services).
func ValidateDNS1035Label(name string) []string {
	var errs []string
	if len(name) > MaxDNS1123LabelLength {
		errs = append(errs, maxLen(MaxDNS1123LabelLength))
	}
	if !namefmt.DNS1035LabelRe.MatchString(name) {
		errs = append(errs, regexMessage("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "+
			"start with an alphabetic character, and end with an alphanumeric character", namefmt.DNS1035Label, "my-name", "abc-123"))
	}
	return errs
}

// ValidateQualifiedName checks a label key, an annotation key or a
// finalizer: an optional DNS subdomain prefix and "/", then a name of at
// most 63 letters, digits, '-', '_' and '.', starting and ending with a
// letter or digit.
func ValidateQualifiedName(value string) []string {
	const nameRule = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	var errs []string
	parts := strings.Split(value, "/")
	var name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		var prefix string
		prefix, name = parts[0], parts[1]
		if prefix == "" {
			errs = append(errs, "prefix part must be non-empty")
		} else {
			for _, msg := range dns1123Subdomain(prefix, maxBytes) {
				errs = append(errs, "prefix part "+msg)
			}
		}
	default:
		return []string{"a valid label key " + regexMessage(nameRule, namefmt.QualifiedName, "MyName", "my.name", "123-abc") +
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}
	}
	if name == "" {
		errs = append(errs, "name part must be non-empty")
	} else if len(name) > MaxQualifiedNameLength {
		errs = append(errs, "name part "+maxBytes(MaxQualifiedNameLength))
	}
	if !namefmt.QualifiedNameRe.MatchString(name) {
		errs = append(errs, "name part "+regexMessage(nameRule, namefmt.QualifiedName, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// ValidateLabelValue checks a label value: empty, or at most 63 letters,
// digits, '-', '_' and '.', starting and ending with a letter or digit.
func ValidateLabelValue(value string) []string {
	var errs []string
	if len(value) > MaxLabelValueLength {
		errs = append(errs, maxBytes(MaxLabelValueLength))
	}
	if !namefmt.LabelValueRe.MatchString(value) {
		errs = append(errs, regexMessage("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "+
			"and must start and end with an alphanumeric character", namefmt.LabelValue, "MyValue", "my_value", "12345"))
	}
	return errs
}

// ValidateConfigMapKey checks a key of a ConfigMap's or Secret's data: at
// most 253 letters, digits, '-', '_' and '.', and not ".", ".." or
// anything starting with "..".
func ValidateConfigMapKey(key string) []string {
	var errs []string
	if len(key) > MaxDNS1123SubdomainLength {
		errs = append(errs, maxLen(MaxDNS1123SubdomainLength))
	}
	if !namefmt.ConfigMapKeyRe.MatchString(key) {
		errs = append(errs, regexMessage("a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
			namefmt.ConfigMapKey, "key.name", "KEY_NAME", "key-name"))
	}
	switch {
	case key == ".":
		errs = append(errs, "must not be '.'")
	case key == "..":
		errs = append(errs, "must not be '..'")
	case strings.HasPrefix(key, ".."):
		errs = append(errs, "must not start with '..'")
	}
	return errs
}

// ValidatePathSegment checks a name that must be usable as one segment of a
// URL path: not "." or "..", without '/' or '%'.
func ValidatePathSegment(name string) []string {
	if name == "." || name == ".." {
		return []string{"may not be '" + name + "'"}
	}
	return pathSegmentContent(name)
}

func pathSegmentContent(name string) []string {
	var errs []string
	for _, bad := range []string{"/", "%"} {
		if strings.Contains(name, bad) {
			errs = append(errs, "may not contain '"+bad+"'")
		}
	}
	return errs
}

// NameFunc validates an object's metadata.name, or with prefix its
// metadata.generateName (to which a random suffix is appended, so that a
// trailing '-' is fine), returning kube-apiserver's messages.
type NameFunc func(name string, prefix bool) []string

// maskTrailingDash makes a generateName such as "web-" checkable as a name:
// like kube-apiserver, it replaces the last two characters of a name ending
// in '-' by one letter.
func maskTrailingDash(name string) string {
	if len(name) > 1 && strings.HasSuffix(name, "-") {
		return name[:len(name)-2] + "a"
	}
	return name
}

// NameIsDNSSubdomain is the NameFunc of most kinds (ConfigMap, Secret, Pod,
// custom resources, ...).
func NameIsDNSSubdomain(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return ValidateDNS1123Subdomain(name)
}

// NameIsDNSLabel is the NameFunc of namespaces.
func NameIsDNSLabel(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return ValidateDNS1123Label(name)
}

// NameIsDNS1035Label is the NameFunc of services.
func NameIsDNS1035Label(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return ValidateDNS1035Label(name)
}

// NameIsPathSegment is the NameFunc of kinds whose names only need to fit in
// a URL (and the check every kind's metadata passes besides its own).
func NameIsPathSegment(name string, prefix bool) []string {
	if prefix {
		return pathSegmentContent(name)
	}
	return ValidatePathSegment(name)
}
