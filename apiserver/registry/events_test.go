package registry

import (
	"reflect"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	eventsv1 "github.com/kapi-dev/kapi/api/events/v1"
	"github.com/kapi-dev/kapi/internal/golden"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// An events.k8s.io Event survives its trip through the core shape it is
// stored in, field for field, and the conversion copies (never shares)
// what it converts.
func TestEventConversionRoundTrip(t *testing.T) {
	x, err := golden.LoadKind("full-events.k8s.io-events")
	if err != nil {
		t.Fatal(err)
	}
	var e eventsv1.Event
	if err := kjson.Unmarshal(x.ResponseBody, &e); err != nil {
		t.Fatal(err)
	}
	e.DeprecatedCount, e.DeprecatedSource.Host = 3, "node-a" // every field set
	e.TypeMeta = eventsv1.Event{}.TypeMeta
	c := eventToCore(&e).(*corev1.Event)
	if c.InvolvedObject != e.Regarding || c.Message != e.Note || c.ReportingController != e.ReportingController ||
		c.Series.Count != e.Series.Count || c.Count != 3 || c.Source.Host != "node-a" {
		t.Errorf("core shape %+v", c)
	}
	back := eventFromCore(c).(*eventsv1.Event)
	if !reflect.DeepEqual(back, &e) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, &e)
	}
	c.Related.Name = "changed"
	c.Labels["app"] = "changed"
	if e.Related.Name == "changed" || e.Labels["app"] == "changed" {
		t.Error("the conversion shares memory with its input")
	}
}
