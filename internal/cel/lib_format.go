package cel

import (
	"encoding/base64"
	"regexp"
	"strconv"
	"strings"
	"time"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/kapi-dev/kapi/internal/namefmt"
)

// FormatType is the CEL type of named formats.
var FormatType = types.NewOpaqueType("kubernetes.NamedFormat")

// namedFormat checks a string, returning what is wrong with it.
type namedFormat struct {
	name  string
	check func(string) []string
}

var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// regexCheck words a failed pattern as Kubernetes' validation messages.
func regexCheck(re *regexp.Regexp, maxLen int, what, rule, fmtStr string, examples ...string) func(string) []string {
	return func(s string) []string {
		var errs []string
		if maxLen > 0 && len(s) > maxLen {
			errs = append(errs, "must be no more than "+strconv.Itoa(maxLen)+" characters")
		}
		if !re.MatchString(s) {
			msg := what + " must consist of " + rule
			if len(examples) > 0 {
				q := make([]string, len(examples))
				for i, e := range examples {
					q[i] = "'" + e + "'"
				}
				msg += " (e.g. " + strings.Join(q, ",  or ") + ", regex used for validation is '" + fmtStr + "')"
			}
			errs = append(errs, msg)
		}
		return errs
	}
}

// prefix allows a trailing dash, as a generateName prefix.
func prefix(check func(string) []string) func(string) []string {
	return func(s string) []string {
		if strings.HasSuffix(s, "-") {
			s = s[:len(s)-1] + "a"
		}
		return check(s)
	}
}

var (
	dns1123Label = regexCheck(namefmt.DNS1123LabelRe, 63, "a lowercase RFC 1123 label",
		"lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", namefmt.DNS1123Label, "my-name", "123-abc")
	dns1123Subdomain = regexCheck(namefmt.DNS1123SubdomainRe, 253, "a lowercase RFC 1123 subdomain",
		"lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", namefmt.DNS1123Subdomain, "example.com")
	dns1035Label = regexCheck(namefmt.DNS1035LabelRe, 63, "a DNS-1035 label",
		"lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", namefmt.DNS1035Label, "my-name", "abc-123")
	labelValue = regexCheck(namefmt.LabelValueRe, 63, "a valid label",
		"alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", namefmt.LabelValue, "MyValue", "my_value", "12345")
	qualifiedName = func(s string) []string {
		name := s
		var errs []string
		if i := strings.LastIndex(s, "/"); i >= 0 {
			pre := s[:i]
			name = s[i+1:]
			if pre == "" {
				errs = append(errs, "prefix part must be non-empty")
			} else {
				for _, m := range dns1123Subdomain(pre) {
					errs = append(errs, "prefix part "+m)
				}
			}
		}
		if name == "" {
			return append(errs, "name part must be non-empty")
		}
		if len(name) > 63 {
			errs = append(errs, "name part must be no more than 63 characters")
		}
		if !namefmt.QualifiedNameRe.MatchString(name) {
			errs = append(errs, "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '"+namefmt.QualifiedName+"')")
		}
		return errs
	}
)

var namedFormats = map[string]func(string) []string{
	"dns1123Label":           dns1123Label,
	"dns1123Subdomain":       dns1123Subdomain,
	"dns1035Label":           dns1035Label,
	"qualifiedName":          qualifiedName,
	"labelValue":             labelValue,
	"dns1123LabelPrefix":     prefix(dns1123Label),
	"dns1123SubdomainPrefix": prefix(dns1123Subdomain),
	"dns1035LabelPrefix":     prefix(dns1035Label),
	"uri": func(s string) []string {
		if _, err := urlParse(s); err != nil {
			return []string{"invalid URI: " + err.Error()}
		}
		return nil
	},
	"uuid": func(s string) []string {
		if !uuidRe.MatchString(s) {
			return []string{"does not match the UUID format"}
		}
		return nil
	},
	"byte": func(s string) []string {
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			return []string{"invalid base64"}
		}
		return nil
	},
	"date": func(s string) []string {
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return []string{"invalid date"}
		}
		return nil
	},
	"datetime": func(s string) []string {
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return []string{"invalid datetime"}
		}
		return nil
	},
}

func formatVal(name string) ref.Val {
	return opaque[namedFormat]{v: namedFormat{name: name, check: namedFormats[name]}, t: FormatType,
		equal: func(a, b namedFormat) bool { return a.name == b.name }}
}

// Format is the Kubernetes format library: format.named(name) is the named
// format (optional.none() for an unknown name), format.dns1123Label() and
// the other formats by name; f.validate(s) is optional.none() when s is
// valid, else the list of what is wrong.
//
//	!format.dns1123Label().validate(self.name).hasValue()
func Format() celgo.EnvOption {
	t := FormatType
	opts := []celgo.EnvOption{
		celgo.Function("format.named", global("format_named", ts(str), types.NewOptionalType(t), unary(func(s string) ref.Val {
			if _, ok := namedFormats[s]; !ok {
				return types.OptionalNone
			}
			return types.OptionalOf(formatVal(s))
		}))),
		celgo.Function("validate", member("format_validate", ts(t, str), types.NewOptionalType(types.NewListType(str)),
			binary(func(f namedFormat, s string) ref.Val {
				if errs := f.check(s); len(errs) > 0 {
					return types.OptionalOf(types.NewStringList(types.DefaultTypeAdapter, errs))
				}
				return types.OptionalNone
			}))),
	}
	for name := range namedFormats {
		opts = append(opts, celgo.Function("format."+name, global("format_"+name, nil, t,
			celgo.FunctionBinding(func(...ref.Val) ref.Val { return formatVal(name) }))))
	}
	return celgo.Lib(&library{opts: opts})
}
