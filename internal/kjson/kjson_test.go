package kjson_test

import (
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/internal/kjson"
)

func TestUnmarshalKnown(t *testing.T) {
	type inner struct {
		A int `json:"a"`
	}
	type obj struct {
		Name  string            `json:"name"`
		In    inner             `json:"in"`
		Items []inner           `json:"items"`
		M     map[string]string `json:"m"`
	}
	for _, tc := range []struct {
		in      string
		unknown bool
		want    obj
	}{
		{`{"name":"x","in":{"a":1},"m":{"k":"v"}}`, false, obj{Name: "x", In: inner{A: 1}, M: map[string]string{"k": "v"}}},
		{`{"name":"x","extra":1,"in":{"a":2}}`, true, obj{Name: "x", In: inner{A: 2}}},
		{`{"items":[{"a":1,"b":2}],"m":{"k":"v"},"name":"y"}`, true, obj{Name: "y", Items: []inner{{A: 1}}, M: map[string]string{"k": "v"}}},
	} {
		var got obj
		unknown, err := kjson.UnmarshalKnown([]byte(tc.in), &got)
		if err != nil || unknown != tc.unknown || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v unknown=%v err=%v; want %+v unknown=%v", tc.in, got, unknown, err, tc.want, tc.unknown)
		}
	}
	// Other errors are Unmarshal's, unknown members or not.
	var o obj
	if _, err := kjson.UnmarshalKnown([]byte(`{"extra":1,"name":5}`), &o); err == nil {
		t.Error("a type error went unreported behind an unknown member")
	}
}
