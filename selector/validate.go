package selector

import (
	"strconv"
	"strings"
)

// Limits Kubernetes places on label keys and values, in bytes.
const (
	// MaxLabelNameLength is the maximum length of the name part of a label
	// key (the part after the optional "prefix/").
	MaxLabelNameLength = 63
	// MaxLabelPrefixLength is the maximum length of the DNS subdomain
	// prefix of a label key.
	MaxLabelPrefixLength = 253
	// MaxLabelValueLength is the maximum length of a label value.
	MaxLabelValueLength = 63
)

// Problem descriptions, worded like the Kubernetes validation messages so
// that users recognise them.
const (
	nameCharsProblem = "must consist of alphanumeric characters, '-', '_' or '.', " +
		"and must start and end with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')"
	subdomainProblem = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, " +
		"'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')"
	valueCharsProblem = "a valid label must be an empty string or consist of alphanumeric characters, " +
		"'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', 'my_value' or '12345')"
	integerProblem = "for '>' and '<' operators, the value must be an integer"
)

// ValidationError reports a label key or value that Kubernetes would
// reject, and why.
type ValidationError struct {
	// What names the kind of string that was checked: "label key" or
	// "label value".
	What string
	// Value is the rejected string.
	Value string
	// Problems lists every rule Value breaks, in Kubernetes' wording.
	Problems []string
}

// Error returns a message such as
//
//	invalid label key "-a": name part must consist of alphanumeric characters, ...
func (e *ValidationError) Error() string {
	return "invalid " + e.What + " " + strconv.Quote(e.Value) + ": " + strings.Join(e.Problems, "; ")
}

// ValidateLabelKey reports whether key is a valid label key (a Kubernetes
// "qualified name"): an optional DNS subdomain prefix of at most 253 bytes
// followed by "/", and a name of 1 to 63 bytes made of ASCII letters,
// digits, '-', '_' and '.', starting and ending with a letter or digit.
// It returns nil or a *[ValidationError].
func ValidateLabelKey(key string) error {
	if problems := labelKeyProblems(key); problems != nil {
		return &ValidationError{What: "label key", Value: key, Problems: problems}
	}
	return nil
}

// ValidateLabelValue reports whether value is a valid label value: empty, or
// at most 63 bytes made of ASCII letters, digits, '-', '_' and '.',
// starting and ending with a letter or digit. It returns nil or a
// *[ValidationError].
func ValidateLabelValue(value string) error {
	if problems := labelValueProblems(value); problems != nil {
		return &ValidationError{What: "label value", Value: value, Problems: problems}
	}
	return nil
}

// labelKeyProblems returns the rules key breaks, or nil if it is valid.
func labelKeyProblems(key string) []string {
	prefix, name, hasPrefix := strings.Cut(key, "/")
	if !hasPrefix {
		name = key
	} else if strings.Contains(name, "/") {
		return []string{"a valid label key " + nameCharsProblem +
			", with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}
	}
	var problems []string
	if hasPrefix {
		switch {
		case prefix == "":
			problems = append(problems, "prefix part must be non-empty")
		default:
			if len(prefix) > MaxLabelPrefixLength {
				problems = append(problems, "prefix part must be no more than "+strconv.Itoa(MaxLabelPrefixLength)+" bytes")
			}
			if !isDNSSubdomain(prefix) {
				problems = append(problems, "prefix part "+subdomainProblem)
			}
		}
	}
	switch {
	case name == "":
		problems = append(problems, "name part must be non-empty")
	default:
		if len(name) > MaxLabelNameLength {
			problems = append(problems, "name part must be no more than "+strconv.Itoa(MaxLabelNameLength)+" bytes")
		}
		if !isLabelToken(name) {
			problems = append(problems, "name part "+nameCharsProblem)
		}
	}
	return problems
}

// labelValueProblems returns the rules value breaks, or nil if it is valid.
func labelValueProblems(value string) []string {
	var problems []string
	if len(value) > MaxLabelValueLength {
		problems = append(problems, "must be no more than "+strconv.Itoa(MaxLabelValueLength)+" bytes")
	}
	if value != "" && !isLabelToken(value) {
		problems = append(problems, valueCharsProblem)
	}
	return problems
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isLabelToken reports whether s is non-empty, made of ASCII letters,
// digits, '-', '_' and '.', and starts and ends with a letter or digit. It
// is the shape shared by label names and non-empty label values.
func isLabelToken(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// isDNSSubdomain reports whether s is a sequence of dot-separated RFC 1123
// labels: each non-empty, of lower-case letters, digits and '-', starting
// and ending with a letter or digit. Length is checked separately.
func isDNSSubdomain(s string) bool {
	for {
		label, rest, more := strings.Cut(s, ".")
		if !isDNSLabel(label) {
			return false
		}
		if !more {
			return true
		}
		s = rest
	}
}

// isDNSLabel reports whether s is one RFC 1123 label, ignoring its length.
func isDNSLabel(s string) bool {
	if s == "" || !isLowerAlnum(s[0]) || !isLowerAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isLowerAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

// isLowerAlnum reports whether c is a lower-case ASCII letter or a digit.
func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }
