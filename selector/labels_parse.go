package selector

import (
	"slices"
	"strings"
)

// ParseLabels parses a label selector in the Kubernetes syntax:
//
//	selector    = "" | requirement { "," requirement }
//	requirement = [ "!" ] key
//	            | key ( "=" | "==" | "!=" | ">" | "<" ) [ value ]
//	            | key ( "in" | "notin" ) "(" [ value ] { "," [ value ] } ")"
//
// Blanks (space, tab, CR, LF) may appear between tokens. A key is a label
// key such as "app" or "example.com/tier"; a value is a label value and may
// be empty, as in "a=" or "a in (x,)". "in" and "notin" are only operators
// in operator position, so "in in (in)" is a valid requirement.
//
// The empty string (or only blanks) yields [Everything]. On failure the
// error is a *[ParseError]; its Err is a *[ValidationError] when a key or
// value is invalid.
func ParseLabels(s string) (LabelSelector, error) {
	p := labelParser{lex: labelLexer{s: s}}
	tok := p.next()
	if tok.kind == tokEnd {
		return LabelSelector{}, nil
	}
	nreqs, nvalues := labelCapacityHints(s)
	reqs := make([]LabelRequirement, 0, nreqs)
	p.values = make([]string, 0, nvalues)
	first := true
	for {
		r, err := p.requirement(tok, first)
		if err != nil {
			return LabelSelector{}, err
		}
		reqs = append(reqs, r)
		switch tok = p.next(); tok.kind {
		case tokEnd:
			slices.SortFunc(reqs, compareLabelRequirements)
			return LabelSelector{reqs: reqs}, nil
		case tokComma:
			tok = p.next()
			first = false
		default:
			return LabelSelector{}, p.fail(tok, "found "+describe(tok)+", expected: ',' or 'end of string'", nil)
		}
	}
}

// MustParseLabels is like [ParseLabels] but panics if s cannot be parsed.
// It is meant for selectors written in source code.
func MustParseLabels(s string) LabelSelector {
	sel, err := ParseLabels(s)
	if err != nil {
		panic("selector: MustParseLabels: " + err.Error())
	}
	return sel
}

// maxCapacityHint caps the capacity hints, so that a huge input does not
// cause a huge allocation before it has been parsed.
const maxCapacityHint = 256

// capacityHint estimates the number of requirements in field selector s
// from its commas.
func capacityHint(s string) int {
	return min(1+strings.Count(s, ","), maxCapacityHint)
}

// labelCapacityHints estimates the number of requirements and of values in
// label selector s: requirements are separated by commas outside
// parentheses, and values by any comma.
func labelCapacityHints(s string) (reqs, values int) {
	reqs, values = 1, 1
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			values++
			if depth == 0 {
				reqs++
			}
		}
	}
	return min(reqs, maxCapacityHint), min(values, maxCapacityHint)
}

// requirementPrefix starts the message of errors inside a requirement, as
// in Kubernetes.
const requirementPrefix = "unable to parse requirement: "

// labelParser is a recursive-descent parser over labelLexer with one token
// of lookahead.
type labelParser struct {
	lex    labelLexer
	peeked token
	ahead  bool // peeked holds the next token
	// values is shared backing storage for the values of all requirements,
	// saving an allocation per requirement; see takeValues.
	values []string
}

// takeValues returns the values appended to p.values since index start, as
// a slice whose capacity ends at its length, so that later appends to
// p.values can never write into it.
func (p *labelParser) takeValues(start int) []string {
	return p.values[start:len(p.values):len(p.values)]
}

// next consumes and returns the next token.
func (p *labelParser) next() token {
	if p.ahead {
		p.ahead = false
		return p.peeked
	}
	return p.lex.next()
}

// peek returns the next token without consuming it.
func (p *labelParser) peek() token {
	if !p.ahead {
		p.peeked = p.lex.next()
		p.ahead = true
	}
	return p.peeked
}

// fail returns a *ParseError located at tok.
func (p *labelParser) fail(tok token, msg string, cause error) error {
	return &ParseError{Input: p.lex.s, Offset: tok.pos, Token: tok.text, Msg: msg, Err: cause}
}

// invalid returns a *ParseError for a key or value that breaks the
// Kubernetes rules.
func (p *labelParser) invalid(tok token, what string, problems []string) error {
	cause := &ValidationError{What: what, Value: tok.text, Problems: problems}
	return p.fail(tok, requirementPrefix+cause.Error(), cause)
}

// requirement parses one requirement whose first token is tok. first tells
// whether it is the first requirement of the selector, which only matters
// for the wording of errors.
func (p *labelParser) requirement(tok token, first bool) (LabelRequirement, error) {
	negated := tok.kind == tokNot
	if negated {
		tok = p.next()
	}
	if tok.kind != tokIdent {
		switch {
		case negated:
			return LabelRequirement{}, p.fail(tok, requirementPrefix+"found "+describe(tok)+", expected: identifier", nil)
		case first:
			return LabelRequirement{}, p.fail(tok, "found "+describe(tok)+", expected: !, identifier, or 'end of string'", nil)
		default:
			return LabelRequirement{}, p.fail(tok, requirementPrefix+"found "+describe(tok)+", expected: identifier", nil)
		}
	}
	key := tok.text
	if problems := labelKeyProblems(key); problems != nil {
		return LabelRequirement{}, p.invalid(tok, "label key", problems)
	}
	if negated {
		// Whatever follows "!key" must end the requirement; the caller
		// reports anything else.
		return LabelRequirement{key: key, op: DoesNotExist}, nil
	}
	if next := p.peek(); next.kind == tokEnd || next.kind == tokComma {
		return LabelRequirement{key: key, op: Exists}, nil
	}

	tok = p.next()
	var op Operator
	switch tok.kind {
	case tokEq:
		op = Equals
	case tokDoubleEq:
		op = DoubleEquals
	case tokNotEq:
		op = NotEquals
	case tokGt:
		op = GreaterThan
	case tokLt:
		op = LessThan
	case tokIdent:
		switch tok.text {
		case "in":
			op = In
		case "notin":
			op = NotIn
		}
	}
	if op == 0 {
		return LabelRequirement{}, p.fail(tok, requirementPrefix+"found "+describe(tok)+", expected: in, notin, =, ==, !=, >, <", nil)
	}

	if op == In || op == NotIn {
		values, err := p.valueSet()
		if err != nil {
			return LabelRequirement{}, err
		}
		// Cannot fail: only > and < constrain values further.
		return makeLabelRequirement(key, op, values)
	}

	v := p.peek()
	switch v.kind {
	case tokEnd, tokComma:
		// "key=" compares with the empty value.
		v = token{kind: tokIdent, pos: v.pos}
	case tokIdent:
		p.next()
	default:
		return LabelRequirement{}, p.fail(v, requirementPrefix+"found "+describe(v)+", expected: identifier", nil)
	}
	if problems := labelValueProblems(v.text); problems != nil {
		return LabelRequirement{}, p.invalid(v, "label value", problems)
	}
	p.values = append(p.values, v.text)
	r, err := makeLabelRequirement(key, op, p.takeValues(len(p.values)-1))
	if err != nil {
		// The value of > or < is not an integer.
		return LabelRequirement{}, p.invalid(v, "label value", []string{integerProblem})
	}
	return r, nil
}

// valueSet parses the parenthesised value list of "in" and "notin". Values
// may be empty: "()" is the set {""}, and "(a,)" is {"a", ""}. Invalid
// values are reported only once the list is syntactically complete, as
// Kubernetes does.
func (p *labelParser) valueSet() ([]string, error) {
	if tok := p.next(); tok.kind != tokLParen {
		return nil, p.fail(tok, requirementPrefix+"found "+describe(tok)+", expected: '('", nil)
	}
	var (
		start      = len(p.values)
		badValue   token
		badProblem []string
	)
	for {
		tok := p.next()
		item := token{kind: tokIdent, pos: tok.pos} // an empty value
		hadIdent := tok.kind == tokIdent
		if hadIdent {
			item = tok
			tok = p.next()
		}
		p.values = append(p.values, item.text)
		if badProblem == nil {
			if problems := labelValueProblems(item.text); problems != nil {
				badValue, badProblem = item, problems
			}
		}
		switch tok.kind {
		case tokComma:
			continue
		case tokRParen:
			if badProblem != nil {
				return nil, p.invalid(badValue, "label value", badProblem)
			}
			return p.takeValues(start), nil
		}
		expected := "',', ')' or identifier"
		if hadIdent {
			expected = "',' or ')'"
		}
		return nil, p.fail(tok, requirementPrefix+"found "+describe(tok)+", expected: "+expected, nil)
	}
}

// describe renders a token for "found ..." messages.
func describe(tok token) string {
	if tok.kind == tokEnd {
		return "''"
	}
	return "'" + tok.text + "'"
}

// tokenKind classifies the tokens of label selector syntax.
type tokenKind uint8

const (
	tokEnd      tokenKind = iota // end of input
	tokIdent                     // key, value, or the words "in" and "notin"
	tokNot                       // !
	tokEq                        // =
	tokDoubleEq                  // ==
	tokNotEq                     // !=
	tokGt                        // >
	tokLt                        // <
	tokLParen                    // (
	tokRParen                    // )
	tokComma                     // ,
)

// token is one lexical token; text is a substring of the input starting at
// byte offset pos.
type token struct {
	kind tokenKind
	text string
	pos  int
}

// labelLexer splits a label selector into tokens. An identifier is a
// maximal run of bytes that are neither blanks nor symbol characters
// (! = > < ( ) ,); whether it is a valid key or value is for the parser to
// decide.
type labelLexer struct {
	s   string
	pos int
}

// next returns the next token, or a tokEnd token at the end of input.
func (l *labelLexer) next() token {
	for l.pos < len(l.s) && isBlank(l.s[l.pos]) {
		l.pos++
	}
	start := l.pos
	if start == len(l.s) {
		return token{kind: tokEnd, pos: start}
	}
	kind, width := symbolAt(l.s, start)
	if kind == tokIdent {
		for width = 1; start+width < len(l.s); width++ {
			if c := l.s[start+width]; isBlank(c) || isSymbol(c) {
				break
			}
		}
	}
	l.pos = start + width
	return token{kind: kind, text: l.s[start:l.pos], pos: start}
}

// symbolAt returns the symbol token at s[i] and its width, or tokIdent if
// s[i] does not start a symbol. Two-byte symbols take precedence.
func symbolAt(s string, i int) (tokenKind, int) {
	followedByEq := i+1 < len(s) && s[i+1] == '='
	switch s[i] {
	case '!':
		if followedByEq {
			return tokNotEq, 2
		}
		return tokNot, 1
	case '=':
		if followedByEq {
			return tokDoubleEq, 2
		}
		return tokEq, 1
	case '>':
		return tokGt, 1
	case '<':
		return tokLt, 1
	case '(':
		return tokLParen, 1
	case ')':
		return tokRParen, 1
	case ',':
		return tokComma, 1
	}
	return tokIdent, 0
}

// isSymbol reports whether c starts a symbol token.
func isSymbol(c byte) bool {
	switch c {
	case '!', '=', '>', '<', '(', ')', ',':
		return true
	}
	return false
}

// isBlank reports whether c separates tokens.
func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
