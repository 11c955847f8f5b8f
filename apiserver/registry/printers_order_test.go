package registry

import (
	"testing"

	flowcontrolv1 "github.com/kapi-dev/kapi/api/flowcontrol/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// FlowSchema rows are ordered by matchingPrecedence, then name, as
// kube-apiserver's printer orders them.
func TestFlowSchemaRowOrder(t *testing.T) {
	fs := func(name string, prec int32) Object {
		return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: prec}}
	}
	for _, tc := range []struct {
		name string
		a, b Object
		less bool
	}{
		{"lower precedence first", fs("z", 100), fs("a", 200), true},
		{"higher precedence after", fs("a", 200), fs("z", 100), false},
		{"same precedence by name", fs("a", 100), fs("b", 100), true},
		{"same precedence, later name", fs("b", 100), fs("a", 100), false},
		{"equal", fs("a", 100), fs("a", 100), false},
	} {
		if got := flowSchemaPrinter.Less(tc.a, tc.b); got != tc.less {
			t.Errorf("%s: Less = %v", tc.name, got)
		}
	}
}
