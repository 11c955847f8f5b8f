// Package namefmt holds the regular expressions of Kubernetes' name
// formats (RFC 1123 labels and subdomains, RFC 1035 labels, qualified
// names, label values, ConfigMap keys), as kube-apiserver writes them in
// its validation messages. The reference server's metadata validation and
// the CEL format library both check names with them.
package namefmt

import "regexp"

// The formats, as quoted in kube-apiserver's messages.
const (
	DNS1123Label     = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	DNS1123Subdomain = DNS1123Label + "(\\." + DNS1123Label + ")*"
	DNS1035Label     = "[a-z]([-a-z0-9]*[a-z0-9])?"
	QualifiedName    = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	LabelValue       = "(" + QualifiedName + ")?"
	ConfigMapKey     = "[-._a-zA-Z0-9]+"
)

// The formats anchored, for matching a whole value.
var (
	DNS1123LabelRe     = regexp.MustCompile("^" + DNS1123Label + "$")
	DNS1123SubdomainRe = regexp.MustCompile("^" + DNS1123Subdomain + "$")
	DNS1035LabelRe     = regexp.MustCompile("^" + DNS1035Label + "$")
	QualifiedNameRe    = regexp.MustCompile("^" + QualifiedName + "$")
	LabelValueRe       = regexp.MustCompile("^" + LabelValue + "$")
	ConfigMapKeyRe     = regexp.MustCompile("^" + ConfigMapKey + "$")
)
