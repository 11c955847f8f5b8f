package kjson_test

import (
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/internal/kjson"
)

func TestDuplicateNames(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{in: `{"a":1,"b":2}`},
		{in: `{"a":1,"a":2}`, want: []string{"a"}},
		{in: `{"a":1,"a":2,"a":3}`, want: []string{"a", "a"}},
		{in: `{"metadata":{"name":"x","labels":{"k":"1","k":"2"},"name":"y"}}`, want: []string{"metadata.labels.k", "metadata.name"}},
		{in: `{"spec":{"containers":[{"name":"a"},{"name":"b","name":"c"}]}}`, want: []string{"spec.containers[1].name"}},
		{in: `{"a":[[1,{"x":1,"x":2}]],"a":{}}`, want: []string{"a[0][1].x", "a"}},
		{in: `{"a":{"b":1},"c":{"b":1}}`},
		{in: `[1,2]`},
		{in: `"s"`},
		{in: `{"a":1`, err: true},
		{in: `{"a":1}x`, err: true},
		{in: ``, err: true},
	} {
		got, err := kjson.DuplicateNames([]byte(tc.in))
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("DuplicateNames(%s) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func FuzzDuplicateNames(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":[{"b":1,"b":2}]}`, `[]`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = kjson.DuplicateNames(b) // must not panic
	})
}
