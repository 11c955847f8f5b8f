package codec_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/golden"
)

// TestDeepCopyGolden copies every captured object, checks the copy is equal, then
// scribbles over every string, map and slice element of the copy and checks the
// original did not change: the copy shares no memory with it.
func TestDeepCopyGolden(t *testing.T) {
	all, err := golden.All()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range all {
		body := x.ResponseBody
		if len(body) == 0 || body[0] != '{' || x.Status >= 300 || bytes.Contains(body, []byte(`{"type":`)) {
			continue
		}
		newObj, ok := kinds[kindOf(t, body)]
		if !ok {
			continue
		}
		obj := newObj()
		if err := codec.UnmarshalJSON(body, obj); err != nil {
			t.Fatalf("%s: %v", x.Name, err)
		}
		dc := reflect.ValueOf(obj).MethodByName("DeepCopy")
		if !dc.IsValid() {
			t.Fatalf("%s: %T has no DeepCopy", x.Name, obj)
		}
		cp := dc.Call(nil)[0].Interface()
		if !reflect.DeepEqual(obj, cp) {
			t.Errorf("%s: DeepCopy differs from the original", x.Name)
		}
		before, _ := codec.MarshalJSON(obj)
		scribble(reflect.ValueOf(cp).Elem())
		after, _ := codec.MarshalJSON(obj)
		if !bytes.Equal(before, after) {
			t.Errorf("%s: changing the copy changed the original", x.Name)
		}
		n++
	}
	if n < 30 {
		t.Errorf("only %d objects copied", n)
	}
}

func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				scribble(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			scribble(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			if e.Kind() == reflect.String {
				v.SetMapIndex(k, reflect.ValueOf("scribbled").Convert(e.Type()))
			} else if e.Kind() == reflect.Map || e.Kind() == reflect.Pointer || e.Kind() == reflect.Slice || e.Kind() == reflect.Interface {
				scribble(e)
			}
		}
		v.SetMapIndex(reflect.ValueOf("scribble-key").Convert(v.Type().Key()), reflect.Zero(v.Type().Elem()))
	case reflect.String:
		if v.CanSet() {
			v.SetString("scribbled")
		}
	case reflect.Uint8:
		if v.CanSet() {
			v.SetUint(0xee)
		}
	}
}
