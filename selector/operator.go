package selector

// Operator relates the key (or field) of a requirement to its values.
//
// The zero Operator is invalid. The declaration order of the constants is
// the order in which requirements on the same key are sorted in the
// canonical string form of a selector.
type Operator uint8

// Operators understood by label selectors. Field selectors only use
// [Equals] and [NotEquals].
const (
	// Exists requires the label to be present, with any value ("key").
	Exists Operator = iota + 1
	// DoesNotExist requires the label to be absent ("!key").
	DoesNotExist
	// Equals requires the label to be present with the given value
	// ("key=value"). In field selectors it also stands for "==".
	Equals
	// DoubleEquals is the "key==value" spelling of [Equals]. Label
	// selectors keep the spelling so that it survives a round trip through
	// String, as in Kubernetes; field selectors normalise it to [Equals].
	DoubleEquals
	// NotEquals requires the label to be absent or to have a different
	// value ("key!=value").
	NotEquals
	// In requires the label to be present with one of the given values
	// ("key in (v1,v2)").
	In
	// NotIn requires the label to be absent or to have none of the given
	// values ("key notin (v1,v2)").
	NotIn
	// GreaterThan requires the label to be present with an integer value
	// greater than the given integer ("key>5").
	GreaterThan
	// LessThan requires the label to be present with an integer value less
	// than the given integer ("key<5").
	LessThan
)

// String returns the name Kubernetes uses for the operator in
// k8s.io/apimachinery/pkg/selection: "exists", "!", "=", "==", "!=", "in",
// "notin", "gt" or "lt". An invalid operator yields "invalid".
func (op Operator) String() string {
	switch op {
	case Exists:
		return "exists"
	case DoesNotExist:
		return "!"
	case Equals:
		return "="
	case DoubleEquals:
		return "=="
	case NotEquals:
		return "!="
	case In:
		return "in"
	case NotIn:
		return "notin"
	case GreaterThan:
		return "gt"
	case LessThan:
		return "lt"
	}
	return "invalid"
}

// valid reports whether op is one of the declared operators.
func (op Operator) valid() bool { return op >= Exists && op <= LessThan }
