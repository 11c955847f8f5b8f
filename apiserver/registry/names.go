package registry

import (
	"regexp"
	"strconv"
)

const (
	dns1123LabelFmt     = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123SubdomainFmt = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	dns1035LabelFmt     = "[a-z]([-a-z0-9]*[a-z0-9])?"
)

var (
	dns1123LabelRe     = regexp.MustCompile("^" + dns1123LabelFmt + "$")
	dns1123SubdomainRe = regexp.MustCompile("^" + dns1123SubdomainFmt + "$")
	dns1035LabelRe     = regexp.MustCompile("^" + dns1035LabelFmt + "$")
)

func maxLen(n int) string { return "must be no more than " + strconv.Itoa(n) + " characters" }

// ValidateDNS1123Subdomain checks a name such as "my.config-1" and returns
// Kubernetes' messages for what is wrong with it.
func ValidateDNS1123Subdomain(name string) []string {
	var errs []string
	if len(name) > 253 {
		errs = append(errs, maxLen(253))
	}
	if !dns1123SubdomainRe.MatchString(name) {
		errs = append(errs, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "+
			"and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '"+dns1123SubdomainFmt+"')")
	}
	return errs
}

// ValidateDNS1123Label checks a name such as "my-name" (namespaces).
func ValidateDNS1123Label(name string) []string {
	var errs []string
	if len(name) > 63 {
		errs = append(errs, maxLen(63))
	}
	if !dns1123LabelRe.MatchString(name) {
		errs = append(errs, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "+
			"and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '"+dns1123LabelFmt+"')")
	}
	return errs
}

// ValidateDNS1035Label checks a name such as "my-svc" (services).
func ValidateDNS1035Label(name string) []string {
	var errs []string
	if len(name) > 63 {
		errs = append(errs, maxLen(63))
	}
	if !dns1035LabelRe.MatchString(name) {
		errs = append(errs, "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "+
			"start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '"+dns1035LabelFmt+"')")
	}
	return errs
}
