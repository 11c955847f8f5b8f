package informer_test

import (
	"slices"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/informer"
)

func labelled(name, in string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"in": in}}}
}

// TestFilteringHandler: what each notification becomes behind a filter.
func TestFilteringHandler(t *testing.T) {
	in, out := labelled("x", "y"), labelled("x", "n")
	type h = informer.ResourceEventHandler[corev1.ConfigMap]
	for _, tc := range []struct {
		name string
		call func(h)
		want []string
	}{
		{"add, accepted", func(h h) { h.OnAdd(in, true) }, []string{"add:x:initial"}},
		{"add, rejected", func(h h) { h.OnAdd(out, false) }, nil},
		{"update inside", func(h h) { h.OnUpdate(in, in) }, []string{"update:x"}},
		{"update entering", func(h h) { h.OnUpdate(out, in) }, []string{"add:x"}},
		{"update leaving", func(h h) { h.OnUpdate(in, out) }, []string{"delete:x"}},
		{"update outside", func(h h) { h.OnUpdate(out, out) }, nil},
		{"delete, accepted", func(h h) { h.OnDelete(in, true) }, []string{"delete:x:unknown"}},
		{"delete, rejected", func(h h) { h.OnDelete(out, false) }, nil},
		{"resync, accepted", func(h h) { h.(informer.ResyncHandler[corev1.ConfigMap]).OnResync(in) }, []string{"resync:x"}},
		{"resync, rejected", func(h h) { h.(informer.ResyncHandler[corev1.ConfigMap]).OnResync(out) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := resyncRecorder[corev1.ConfigMap, *corev1.ConfigMap]{newCMRecorder()}
			tc.call(informer.FilteringHandler[corev1.ConfigMap]{
				Filter:  func(cm *corev1.ConfigMap) bool { return cm.Labels["in"] == "y" },
				Handler: rec,
			})
			if got := strs(rec.get()); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	// The object that left is passed with its last accepted state.
	rec := newCMRecorder()
	old := labelled("x", "y")
	old.ResourceVersion = "1"
	informer.FilteringHandler[corev1.ConfigMap]{Filter: func(cm *corev1.ConfigMap) bool { return cm.Labels["in"] == "y" }, Handler: rec}.OnUpdate(old, out)
	if evs := rec.get(); len(evs) != 1 || evs[0].rv != "1" {
		t.Errorf("leaving object delivered as %+v, want the old state", evs)
	}
	// A nil filter accepts everything.
	rec = newCMRecorder()
	informer.FilteringHandler[corev1.ConfigMap]{Handler: rec}.OnUpdate(out, out)
	if got := strs(rec.get()); !slices.Equal(got, []string{"update:x"}) {
		t.Errorf("nil filter: %v", got)
	}
}

// TestHandlerFuncs: nil functions are skipped.
func TestHandlerFuncs(t *testing.T) {
	var adds, updates, deletes, resyncs int
	full := informer.HandlerFuncs[corev1.ConfigMap]{
		AddFunc:    func(*corev1.ConfigMap, bool) { adds++ },
		UpdateFunc: func(_, _ *corev1.ConfigMap) { updates++ },
		DeleteFunc: func(*corev1.ConfigMap, bool) { deletes++ },
		ResyncFunc: func(*corev1.ConfigMap) { resyncs++ },
	}
	cm := labelled("x", "y")
	for _, h := range []informer.HandlerFuncs[corev1.ConfigMap]{full, {}} {
		h.OnAdd(cm, false)
		h.OnUpdate(cm, cm)
		h.OnDelete(cm, false)
		h.OnResync(cm)
	}
	if adds != 1 || updates != 1 || deletes != 1 || resyncs != 1 {
		t.Errorf("calls %d %d %d %d, want one each", adds, updates, deletes, resyncs)
	}
}
