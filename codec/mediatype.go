package codec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Media types spoken by the Kubernetes API.
const (
	// MediaTypeJSON is the default representation of objects.
	MediaTypeJSON = "application/json"
	// MediaTypeYAML is the YAML representation of objects.
	MediaTypeYAML = "application/yaml"
	// MediaTypeProtobuf is the protobuf representation of objects: an envelope
	// (see [EncodeEnvelope]) wrapping the object's protobuf encoding.
	MediaTypeProtobuf = "application/vnd.kubernetes.protobuf"

	// MediaTypeJSONWatch is the watch stream of JSON events, one JSON document per
	// event (see [JSONWatchDecoder]). Kubernetes labels the response itself
	// [MediaTypeJSON].
	MediaTypeJSONWatch = "application/json;stream=watch"
	// MediaTypeProtobufWatch is the watch stream of length-prefixed protobuf
	// events (see [ProtobufWatchDecoder]); Kubernetes labels watch responses with
	// exactly this string.
	MediaTypeProtobufWatch = "application/vnd.kubernetes.protobuf;stream=watch"

	// MediaTypeTableJSON asks for the server-side printed meta.k8s.io/v1 Table
	// form of objects, in JSON.
	MediaTypeTableJSON = "application/json;as=Table;g=meta.k8s.io;v=v1"

	// MediaTypeJSONPatch is the body of a JSON Patch (RFC 6902) request.
	MediaTypeJSONPatch = "application/json-patch+json"
	// MediaTypeMergePatch is the body of a JSON Merge Patch (RFC 7386) request.
	MediaTypeMergePatch = "application/merge-patch+json"
	// MediaTypeStrategicMergePatch is the body of a Kubernetes strategic merge
	// patch request.
	MediaTypeStrategicMergePatch = "application/strategic-merge-patch+json"
	// MediaTypeApplyPatch is the body of a server-side apply request.
	MediaTypeApplyPatch = "application/apply-patch+yaml"
)

// MediaType is a parsed media type (a Content-Type value) or media range (one
// entry of an Accept header).
//
// Type, Subtype and parameter names are kept in lower case; parameter values are
// kept as written, unquoted. The parameters Kubernetes gives a meaning to have
// their own fields and do not appear in Params.
type MediaType struct {
	// Type is the top-level type, such as "application", or "*" in a wildcard
	// media range.
	Type string
	// Subtype is the subtype, such as "json", or "*" in a wildcard media range.
	Subtype string

	// As is the "as" parameter: the kind the client wants the object converted
	// to, such as "Table" or "PartialObjectMetadata".
	As string
	// Group is the "g" parameter: the API group of As, such as "meta.k8s.io".
	Group string
	// Version is the "v" parameter: the API version of As, such as "v1".
	Version string
	// Stream is the "stream" parameter; "watch" names a watch stream.
	Stream string

	// Params holds every other parameter, in the order written.
	Params []MediaTypeParam

	// Q is the quality (the "q" parameter of an Accept entry), between 0 and 1.
	// ParseAccept and ParseMediaType set it to 1 when it is not written. A zero
	// Q in an Accept entry means "not acceptable". Negotiate ignores the Q of
	// offers, and String does not write it.
	Q float64
}

// MediaTypeParam is one media type parameter other than the ones MediaType has
// fields for.
type MediaTypeParam struct {
	// Name is the parameter name, in lower case.
	Name string
	// Value is the parameter value, unquoted.
	Value string
}

// Param returns the value of the named parameter (case-insensitive) and whether
// it is present. It knows the dedicated parameters ("as", "g", "v", "stream"),
// but not "q".
func (m MediaType) Param(name string) (string, bool) {
	switch strings.ToLower(name) {
	case "as":
		return m.As, m.As != ""
	case "g":
		return m.Group, m.Group != ""
	case "v":
		return m.Version, m.Version != ""
	case "stream":
		return m.Stream, m.Stream != ""
	}
	for _, p := range m.Params {
		if strings.EqualFold(p.Name, name) {
			return p.Value, true
		}
	}
	return "", false
}

// String formats m as a media type: type/subtype, then as, g, v and stream, then
// the other parameters, separated by ";" without spaces, as Kubernetes writes
// them. Values that are not tokens are quoted. The q-value is never written.
func (m MediaType) String() string {
	var b strings.Builder
	b.WriteString(m.Type)
	b.WriteByte('/')
	b.WriteString(m.Subtype)
	mtWriteParam(&b, "as", m.As)
	mtWriteParam(&b, "g", m.Group)
	mtWriteParam(&b, "v", m.Version)
	mtWriteParam(&b, "stream", m.Stream)
	for _, p := range m.Params {
		mtWriteParam(&b, p.Name, p.Value)
	}
	return b.String()
}

func mtWriteParam(b *strings.Builder, name, value string) {
	if value == "" && (name == "as" || name == "g" || name == "v" || name == "stream") {
		return
	}
	b.WriteByte(';')
	b.WriteString(name)
	b.WriteByte('=')
	if value != "" && mtIsToken(value) {
		b.WriteString(value)
		return
	}
	b.WriteByte('"')
	for i := 0; i < len(value); i++ {
		if c := value[i]; c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(value[i])
	}
	b.WriteByte('"')
}

// Accepts reports whether the media range m, taken from an Accept header, admits
// the concrete media type t, ignoring the q-value:
//
//   - type and subtype must be equal (case-insensitive), or wildcards in m;
//   - as, g and v must be equal in both, so a Table offer is admitted only by an
//     entry that asks for that Table, and an entry asking for a Table admits
//     nothing else;
//   - a stream parameter in m must be equal in t; an m without one admits t
//     with or without it;
//   - any other parameter written in both must have the same value (compared
//     case-insensitively); parameters only one side has are ignored.
func (m MediaType) Accepts(t MediaType) bool {
	switch {
	case m.Type == "*" && m.Subtype == "*":
	case m.Subtype == "*":
		if !strings.EqualFold(m.Type, t.Type) {
			return false
		}
	default:
		if !strings.EqualFold(m.Type, t.Type) || !strings.EqualFold(m.Subtype, t.Subtype) {
			return false
		}
	}
	if m.As != t.As || m.Group != t.Group || m.Version != t.Version {
		return false
	}
	if m.Stream != "" && m.Stream != t.Stream {
		return false
	}
	for _, p := range m.Params {
		for _, o := range t.Params {
			if strings.EqualFold(p.Name, o.Name) && !strings.EqualFold(p.Value, o.Value) {
				return false
			}
		}
	}
	return true
}

// ErrInvalidMediaType is matched (with errors.Is) by every *MediaTypeError.
var ErrInvalidMediaType = errors.New("codec: invalid media type")

// MediaTypeError reports a media type or Accept header that cannot be parsed.
type MediaTypeError struct {
	// Input is the text that was being parsed.
	Input string
	// Offset is the byte offset in Input where the problem was found.
	Offset int
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *MediaTypeError) Error() string {
	return fmt.Sprintf("codec: invalid media type %q at offset %d: %s", e.Input, e.Offset, e.Reason)
}

// Is reports whether target is ErrInvalidMediaType.
func (e *MediaTypeError) Is(target error) bool { return target == ErrInvalidMediaType }

// ParseMediaType parses one media type, as found in a Content-Type header, such
// as "application/vnd.kubernetes.protobuf;stream=watch". Whitespace around ";"
// and "=" is allowed, empty parameters (";;") are skipped, quoted values are
// unquoted, and type, subtype and parameter names are lowered. Wildcards are
// rejected, a parameter may not be repeated, and "q" is an ordinary parameter
// here. The result has Q set to 1.
func ParseMediaType(s string) (MediaType, error) {
	p := mtParser{in: s}
	p.skipSpace()
	m, err := p.mediaRange(false)
	if err != nil {
		return MediaType{}, err
	}
	p.skipSpace()
	if p.pos < len(p.in) {
		return MediaType{}, p.fail("unexpected character %q", p.in[p.pos])
	}
	return m, nil
}

// ParseAccept parses an Accept header: comma-separated media ranges, each with
// optional parameters and a q-value ("application/json;q=0.9"). Wildcards "*/*"
// and "type/*" are allowed; empty list elements and whitespace between elements
// are ignored. Entries without q get Q = 1; q must be written as HTTP allows
// (0 to 1, at most three decimals). The entries are returned in header order.
// An empty header yields no entries and no error.
func ParseAccept(header string) ([]MediaType, error) {
	var out []MediaType
	p := mtParser{in: header}
	for {
		p.skipSpace()
		if p.pos == len(p.in) {
			return out, nil
		}
		if p.in[p.pos] == ',' {
			p.pos++
			continue
		}
		m, err := p.mediaRange(true)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
		p.skipSpace()
		if p.pos < len(p.in) {
			if p.in[p.pos] != ',' {
				return nil, p.fail("unexpected character %q", p.in[p.pos])
			}
			p.pos++
		}
	}
}

// parseAcceptLenient is ParseAccept, except that it drops the entries it cannot
// parse instead of failing, as Kubernetes does.
func parseAcceptLenient(header string) []MediaType {
	var out []MediaType
	p := mtParser{in: header}
	for {
		p.skipSpace()
		if p.pos == len(p.in) {
			return out
		}
		if p.in[p.pos] == ',' {
			p.pos++
			continue
		}
		m, err := p.mediaRange(true)
		if err == nil {
			p.skipSpace()
			if p.pos == len(p.in) || p.in[p.pos] == ',' {
				out = append(out, m)
				continue
			}
		}
		// Skip to the next comma that is not inside a quoted string.
		p.skipElement()
	}
}

// mtParser is a cursor over a media type or an Accept header.
type mtParser struct {
	in  string
	pos int
}

func (p *mtParser) fail(format string, args ...any) error {
	return &MediaTypeError{Input: p.in, Offset: p.pos, Reason: fmt.Sprintf(format, args...)}
}

func (p *mtParser) skipSpace() {
	for p.pos < len(p.in) && (p.in[p.pos] == ' ' || p.in[p.pos] == '\t') {
		p.pos++
	}
}

func (p *mtParser) skipElement() {
	quoted := false
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		p.pos++
		switch {
		case quoted && c == '\\':
			p.pos = min(p.pos+1, len(p.in)) // the escaped character
		case c == '"':
			quoted = !quoted
		case !quoted && c == ',':
			return
		}
	}
}

func (p *mtParser) token() string {
	start := p.pos
	for p.pos < len(p.in) && mtIsTokenChar(p.in[p.pos]) {
		p.pos++
	}
	return p.in[start:p.pos]
}

// quoted parses a quoted-string starting at the opening quote.
func (p *mtParser) quoted() (string, error) {
	start := p.pos
	p.pos++ // opening quote
	var b []byte
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		switch {
		case c == '"':
			p.pos++
			if b == nil {
				return p.in[start+1 : p.pos-1], nil
			}
			return string(b), nil
		case c == '\\':
			if p.pos+1 == len(p.in) {
				p.pos++
				return "", p.fail("unterminated quoted string")
			}
			if e := p.in[p.pos+1]; e < 0x20 && e != '\t' || e == 0x7f {
				p.pos++
				return "", p.fail("control character in quoted string")
			}
			if b == nil {
				b = []byte(p.in[start+1 : p.pos])
			}
			b = append(b, p.in[p.pos+1])
			p.pos += 2
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", p.fail("control character in quoted string")
		default:
			if b != nil {
				b = append(b, c)
			}
			p.pos++
		}
	}
	return "", p.fail("unterminated quoted string")
}

// mediaRange parses type/subtype and its parameters, stopping before a comma or
// the end. With accept set, wildcards are allowed and q is the weight.
func (p *mtParser) mediaRange(accept bool) (MediaType, error) {
	m := MediaType{Q: 1}
	typ := p.token()
	if typ == "" {
		return MediaType{}, p.fail("missing type")
	}
	if p.pos == len(p.in) || p.in[p.pos] != '/' {
		return MediaType{}, p.fail("missing \"/\" after type")
	}
	p.pos++
	sub := p.token()
	if sub == "" {
		return MediaType{}, p.fail("missing subtype")
	}
	m.Type, m.Subtype = strings.ToLower(typ), strings.ToLower(sub)
	switch {
	case !accept && (m.Type == "*" || m.Subtype == "*"):
		return MediaType{}, p.fail("wildcard not allowed in a media type")
	case m.Type == "*" && m.Subtype != "*":
		return MediaType{}, p.fail("wildcard type with a concrete subtype")
	}
	seen := map[string]bool{}
	for {
		p.skipSpace()
		if p.pos == len(p.in) || p.in[p.pos] == ',' {
			return m, nil
		}
		if p.in[p.pos] != ';' {
			return MediaType{}, p.fail("unexpected character %q", p.in[p.pos])
		}
		p.pos++
		p.skipSpace()
		if p.pos == len(p.in) || p.in[p.pos] == ';' || p.in[p.pos] == ',' {
			continue // empty parameter
		}
		nameAt := p.pos
		name := strings.ToLower(p.token())
		if name == "" {
			return MediaType{}, p.fail("unexpected character %q in parameters", p.in[p.pos])
		}
		p.skipSpace()
		if p.pos == len(p.in) || p.in[p.pos] != '=' {
			return MediaType{}, p.fail("parameter %q has no value", name)
		}
		p.pos++
		p.skipSpace()
		var value string
		if p.pos < len(p.in) && p.in[p.pos] == '"' {
			v, err := p.quoted()
			if err != nil {
				return MediaType{}, err
			}
			value = v
		} else {
			value = p.token()
			if value == "" {
				return MediaType{}, p.fail("parameter %q has no value", name)
			}
		}
		if seen[name] {
			p.pos = nameAt
			return MediaType{}, p.fail("parameter %q repeated", name)
		}
		seen[name] = true
		switch name {
		case "as":
			m.As = value
		case "g":
			m.Group = value
		case "v":
			m.Version = value
		case "stream":
			m.Stream = value
		case "q":
			if !accept {
				m.Params = append(m.Params, MediaTypeParam{Name: name, Value: value})
				break
			}
			q, ok := mtParseQ(value)
			if !ok {
				p.pos = nameAt
				return MediaType{}, p.fail("invalid q-value %q", value)
			}
			m.Q = q
		default:
			m.Params = append(m.Params, MediaTypeParam{Name: name, Value: value})
		}
	}
}

// mtParseQ parses an HTTP qvalue: "0", "0.x", "0.xx", "0.xxx", "1", "1.0"...
func mtParseQ(s string) (float64, bool) {
	if s == "" || len(s) > 5 || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	if len(s) > 1 {
		if s[1] != '.' {
			return 0, false
		}
		for i := 2; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' || (s[0] == '1' && s[i] != '0') {
				return 0, false
			}
		}
	}
	q, err := strconv.ParseFloat(s, 64)
	return q, err == nil
}

// mtIsTokenChar reports whether c may appear in an HTTP token.
func mtIsTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func mtIsToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !mtIsTokenChar(s[i]) {
			return false
		}
	}
	return s != ""
}

// mtQuality returns q in thousandths, so that comparisons are exact.
func mtQuality(q float64) int {
	switch {
	case q >= 1:
		return 1000
	case q > 0:
		return int(q*1000 + 0.5)
	}
	return 0
}

// mtSpecificity orders media ranges: concrete types before "type/*" before
// "*/*", then more parameters before fewer.
func mtSpecificity(m MediaType) int {
	s := 0
	if m.Type != "*" {
		s += 2 << 16
		if m.Subtype == "*" {
			s -= 1 << 16
		}
	}
	n := len(m.Params)
	for _, v := range [...]string{m.As, m.Group, m.Version, m.Stream} {
		if v != "" {
			n++
		}
	}
	return s + min(n, 1<<16-1)
}

// ErrNotAcceptable is matched (with errors.Is) by every *NotAcceptableError.
var ErrNotAcceptable = errors.New("codec: not acceptable")

// NotAcceptableError reports that none of the representations a server can
// produce is acceptable to the client. A server answers it with status 406 and
// the text of Message.
type NotAcceptableError struct {
	// Accept is the Accept header the client sent.
	Accept string
	// Offers are the representations that were available.
	Offers []MediaType
}

// Error implements error.
func (e *NotAcceptableError) Error() string {
	return fmt.Sprintf("codec: none of the available representations (%s) is acceptable for Accept %q",
		mtRepresentations(e.Offers), e.Accept)
}

// Is reports whether target is ErrNotAcceptable.
func (e *NotAcceptableError) Is(target error) bool { return target == ErrNotAcceptable }

// Message returns the message of the 406 Status Kubernetes answers with; see
// NotAcceptableMessage.
func (e *NotAcceptableError) Message() string { return NotAcceptableMessage(e.Offers) }

// NotAcceptableMessage renders the message Kubernetes puts in the Status of a
// 406 Not Acceptable response, listing the representations available:
//
//	406: Not Acceptable
//
//	Available representations: application/json, application/yaml, application/vnd.kubernetes.protobuf
//
// Each offer is listed once, as its media type without the as, g and v
// parameters (a Table is a conversion of a representation, not one of its
// own), in the order given.
func NotAcceptableMessage(offers []MediaType) string {
	return "406: Not Acceptable\n\nAvailable representations: " + mtRepresentations(offers)
}

func mtRepresentations(offers []MediaType) string {
	seen := make(map[string]bool, len(offers))
	list := make([]string, 0, len(offers))
	for _, o := range offers {
		o.As, o.Group, o.Version = "", "", ""
		s := o.String()
		if !seen[s] {
			seen[s] = true
			list = append(list, s)
		}
	}
	return strings.Join(list, ", ")
}

// Negotiate picks the offer to answer a request with, given its Accept header
// and the representations the server can produce, in the server's order of
// preference.
//
// Each offer gets the q-value of the most specific Accept entry that admits it
// (see MediaType.Accepts; of equally specific entries the first one counts).
// Offers with q = 0, or admitted by no entry, are out. Of the rest, Negotiate
// picks the one with the highest q, then the most specific entry (concrete
// types, then "type/*", then "*/*"; then more parameters), then the entry that
// comes first in the header, then the first offer. So with
//
//	Accept: application/json;as=Table;g=meta.k8s.io;v=v1, application/json
//
// a Table offer wins if there is one, and plain JSON is chosen otherwise.
//
// An empty (or blank) Accept header selects the first offer. Accept entries that
// cannot be parsed are ignored, as Kubernetes does. When nothing is acceptable
// the error is a *NotAcceptableError. The offer is returned as given.
func Negotiate(accept string, offers []MediaType) (MediaType, error) {
	if len(offers) > 0 && strings.Trim(accept, " \t") == "" {
		return offers[0], nil
	}
	ranges := parseAcceptLenient(accept)
	best, bestQ, bestSpec, bestEntry := -1, 0, 0, 0
	for i, o := range offers {
		entry, spec := -1, 0
		for j, r := range ranges {
			if s := mtSpecificity(r); r.Accepts(o) && (entry < 0 || s > spec) {
				entry, spec = j, s
			}
		}
		if entry < 0 {
			continue
		}
		q := mtQuality(ranges[entry].Q)
		if q == 0 {
			continue
		}
		if best < 0 || q > bestQ || q == bestQ && (spec > bestSpec || spec == bestSpec && entry < bestEntry) {
			best, bestQ, bestSpec, bestEntry = i, q, spec, entry
		}
	}
	if best < 0 {
		return MediaType{}, &NotAcceptableError{Accept: accept, Offers: offers}
	}
	return offers[best], nil
}
