package selector

import (
	"strconv"
)

// ParseError reports a selector string that could not be parsed, and where.
//
// Offset and Token let a caller point at the problem, for example:
//
//	fmt.Println(pe.Input)
//	fmt.Println(strings.Repeat(" ", pe.Offset) + "^")
type ParseError struct {
	// Input is the complete selector string given to the parser.
	Input string
	// Offset is the 0-based byte offset of Token in Input. When the input
	// ended too early, Offset is len(Input) and Token is empty.
	Offset int
	// Token is the offending piece of input: an unexpected token, or the
	// label key, label value, field term or escape sequence that was
	// rejected.
	Token string
	// Msg describes the problem, without the location.
	Msg string
	// Err is the underlying cause, if any: a *[ValidationError] when a
	// label key or value is invalid. It is returned by Unwrap.
	Err error
}

// Error returns Msg followed by the location, such as
//
//	unable to parse requirement: found '=', expected: identifier at position 3 in "a,=b"
//
// The position in the message is 1-based (Offset+1), the way editors count
// columns.
func (e *ParseError) Error() string {
	return e.Msg + " at position " + strconv.Itoa(e.Offset+1) + " in " + strconv.Quote(e.Input)
}

// Unwrap returns the underlying cause, or nil.
func (e *ParseError) Unwrap() error { return e.Err }
