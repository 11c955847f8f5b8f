package informer_test

import (
	"context"
	"errors"
	"github.com/kapi-dev/kapi/codec"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/informer"
)

// Gadget is a custom resource as the client knows it: spec.size is a
// number. The server stores gadgets as serverGadget, where it is a string,
// so it can hold gadgets the client cannot decode.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Size int64 `json:"size,omitempty"`
	} `json:"spec"`
}

type serverGadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Size string `json:"size,omitempty"`
	} `json:"spec"`
}

func (g *serverGadget) DeepCopy() *serverGadget {
	out := *g
	out.ObjectMeta = *g.ObjectMeta.DeepCopy()
	return &out
}

var gadgetGVR = client.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}

// newGadgetEnv serves gadgets and returns a client that decodes them as
// Gadget.
func newGadgetEnv(t *testing.T) (*env, *client.Client) {
	t.Helper()
	reg := registry.Builtin()
	if err := reg.Add(registry.Typed[serverGadget](&registry.Resource{Group: "example.com", Version: "v1",
		Resource: "gadgets", Kind: "Gadget", Namespaced: true})); err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, apiserver.Config{Registry: reg}, "")
	s := client.NewBuiltinScheme()
	if err := client.Add[Gadget](s, client.Kind{Group: "example.com", Version: "v1", Resource: "gadgets", Kind: "Gadget", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	return e, e.c.WithScheme(s)
}

// createGadget creates a gadget whose spec.size is the JSON value size.
func createGadget(t *testing.T, e *env, name string, size any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": name, "namespace": "inf"},
		"spec":     map[string]any{"size": size},
	}}
	if _, err := client.Dynamic(e.c).Resource(gadgetGVR).Namespace("inf").Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func deleteGadget(t *testing.T, e *env, name string) {
	t.Helper()
	if err := client.Dynamic(e.c).Resource(gadgetGVR).Namespace("inf").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestUndecodableObject documents what one object the client cannot decode
// does to an informer: every failed list or watch is reported to the watch
// error handler and retried with backoff; the informer never stops or
// panics, and it gets past the object: a list skips it and reports it
// (the rest is cached and the informer syncs), a watch event for it is
// reported and the watch goes on.
func TestUndecodableObject(t *testing.T) {
	e, gc := newGadgetEnv(t)
	createGadget(t, e, "good", "")
	createGadget(t, e, "bad", "big")
	errs := make(chan error, 1000)
	cfg := informer.Config[Gadget]{}
	fastBackoff(&cfg.Reflector)
	cfg.Reflector.WatchErrorHandler = func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	inf := informer.New(client.For[Gadget](gc).Namespace("inf"), cfg)
	rec := newRecorder[Gadget]()
	reg, err := inf.AddEventHandler(rec)
	if err != nil {
		t.Fatal(err)
	}
	run(t, inf)

	// The list skips "bad", reports it, and syncs with the rest.
	select {
	case err := <-errs:
		var ie *codec.ItemErrors
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "size") {
			t.Fatalf("list error %v, want a *codec.ItemErrors pointing at spec.size", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the undecodable list item was not reported")
	}
	waitSynced(t, reg)
	if got := join(strs(rec.get())); got != "add:good:initial" {
		t.Fatalf("after the list: events %q", got)
	}

	// A watch event for an undecodable object is reported and skipped: the
	// watch goes on, so the change after it arrives.
	drain(errs)
	createGadget(t, e, "bad2", "big")
	var de *client.DecodeError
	if err := <-errs; !errors.As(err, &de) || de.Name != "bad2" || de.ResourceVersion == "" {
		t.Fatalf("watch error %v, want a *client.DecodeError naming bad2", err)
	}
	createGadget(t, e, "later", "")
	evs := rec.waitFor(t, "later", func(ev []event) bool {
		return slices.ContainsFunc(ev, func(e event) bool { return e.name == "later" })
	})
	if got := join(strs(evs)); got != "add:good:initial add:later" {
		t.Errorf("events %q, want the initial good and later", got)
	}
}

func drain(ch chan error) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
