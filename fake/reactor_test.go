package fake_test

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/fake"
)

// Which requests a reactor registered with a verb and resource pattern sees.
func TestReactorMatching(t *testing.T) {
	ctx := testContext(t)
	requests := []struct {
		name string
		do   func(c *client.Client) error
	}{
		{"get pods", func(c *client.Client) error {
			_, err := client.For[corev1.Pod](c).Namespace("web").Get(ctx, "a", metav1.GetOptions{})
			return err
		}},
		{"update pods/status", func(c *client.Client) error {
			p, err := client.For[corev1.Pod](c).Namespace("web").Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				return err
			}
			_, err = client.For[corev1.Pod](c).UpdateStatus(ctx, p, metav1.UpdateOptions{})
			return err
		}},
		{"list configmaps", func(c *client.Client) error {
			_, err := client.For[corev1.ConfigMap](c).Namespace("web").List(ctx, metav1.ListOptions{})
			return err
		}},
	}
	tests := []struct {
		verb, resource string
		matches        []string // request names the reactor answers
	}{
		{"*", "*", []string{"get pods", "update pods/status", "list configmaps"}},
		{"get", "pods", []string{"get pods", "update pods/status"}}, // the update's get
		{"update", "pods", []string{"update pods/status"}},
		{"update", "pods/status", []string{"update pods/status"}},
		{"*", "pods/status", []string{"update pods/status"}},
		{"*", "pods/*", []string{"update pods/status"}},
		{"*", "*/status", []string{"update pods/status"}},
		{"*", "configmaps", []string{"list configmaps"}},
		{"list", "*", []string{"list configmaps"}},
		{"update", "pods/scale", nil},
		{"delete", "*", nil},
		{"get", "configmaps", nil},
	}
	for _, tt := range tests {
		t.Run(tt.verb+" "+tt.resource, func(t *testing.T) {
			f := fake.New(t, pod("web", "a"))
			var seen atomic.Bool
			f.PrependReactor(tt.verb, tt.resource, func(a fake.Action) (bool, any, error) {
				seen.Store(true)
				return true, nil, client.NewStatusError(metav1.NewForbidden(metav1.GroupResource{Resource: a.Resource.Resource}, a.Name, errors.New("reactor")))
			})
			for _, r := range requests {
				seen.Store(false)
				err := r.do(f.Client())
				want := false
				for _, m := range tt.matches {
					want = want || m == r.name
				}
				if seen.Load() != want {
					t.Errorf("%s: reactor called %v, want %v (err %v)", r.name, seen.Load(), want, err)
				}
			}
		})
	}
}

// What a reactor returns is what the client gets, as the server would send
// it.
func TestReactorAnswers(t *testing.T) {
	ctx := testContext(t)
	answer := configMap("web", "from-reactor", "source", "reactor")
	tests := []struct {
		name  string
		react fake.ReactionFunc
		check func(t *testing.T, cm *corev1.ConfigMap, err error)
	}{
		{"conflict", func(a fake.Action) (bool, any, error) {
			return true, nil, client.NewStatusError(metav1.NewConflict(metav1.GroupResource{Resource: "configmaps"}, a.Name, errors.New("try again")))
		}, func(t *testing.T, _ *corev1.ConfigMap, err error) {
			if !client.IsConflict(err) || !strings.Contains(err.Error(), "try again") {
				t.Errorf("err %v, want a Conflict", err)
			}
		}},
		{"wrapped APIStatus", func(a fake.Action) (bool, any, error) {
			return true, nil, errors.Join(errors.New("context"), client.NewStatusError(metav1.NewNotFound(metav1.GroupResource{Resource: "configmaps"}, a.Name)))
		}, func(t *testing.T, _ *corev1.ConfigMap, err error) {
			if !client.IsNotFound(err) {
				t.Errorf("err %v, want NotFound", err)
			}
		}},
		{"plain error", func(fake.Action) (bool, any, error) {
			return true, nil, errors.New("disk on fire")
		}, func(t *testing.T, _ *corev1.ConfigMap, err error) {
			if !client.IsInternalError(err) || !strings.Contains(err.Error(), "disk on fire") {
				t.Errorf("err %v, want an InternalError", err)
			}
		}},
		{"failure Status object", func(fake.Action) (bool, any, error) {
			return true, metav1.NewForbidden(metav1.GroupResource{Resource: "configmaps"}, "x", errors.New("no")), nil
		}, func(t *testing.T, _ *corev1.ConfigMap, err error) {
			if !client.IsForbidden(err) {
				t.Errorf("err %v, want Forbidden", err)
			}
		}},
		{"object", func(fake.Action) (bool, any, error) {
			return true, answer, nil
		}, func(t *testing.T, cm *corev1.ConfigMap, err error) {
			if err != nil || cm.Data["source"] != "reactor" || cm.Kind != "ConfigMap" {
				t.Errorf("got %+v, %v", cm, err)
			}
		}},
		{"not handled", func(fake.Action) (bool, any, error) {
			return false, answer, errors.New("ignored")
		}, func(t *testing.T, cm *corev1.ConfigMap, err error) {
			if err != nil || cm.Data["source"] != "server" {
				t.Errorf("got %+v, %v; want the server's", cm, err)
			}
		}},
	}
	for _, enc := range []string{codec.MediaTypeJSON, codec.MediaTypeProtobuf} {
		for _, tt := range tests {
			t.Run(enc+"/"+tt.name, func(t *testing.T) {
				f := fake.NewWithOptions(t, fake.Options{ContentType: enc}, configMap("web", "cm", "source", "server"))
				f.PrependReactor("get", "configmaps", tt.react)
				cm, err := client.For[corev1.ConfigMap](f.Client()).Namespace("web").Get(ctx, "cm", metav1.GetOptions{})
				tt.check(t, cm, err)
			})
		}
	}
}

// A reactor's object reaches the dynamic client with its kind (server
// responses carry one), and a create answered by a reactor is a 201.
func TestReactorObjectDynamic(t *testing.T) {
	ctx := testContext(t)
	f := fake.New(t)
	f.PrependReactor("create", "configmaps", func(a fake.Action) (bool, any, error) {
		var cm corev1.ConfigMap
		if err := a.Into(&cm); err != nil {
			return true, nil, err
		}
		cm.UID = "from-reactor"
		return true, &cm, nil
	})
	resp, err := f.Client().NewRequest(http.MethodPost).Resource(client.GroupVersionResource{Version: "v1", Resource: "configmaps"}).
		Namespace("web").Body([]byte(`{"metadata":{"name":"x"}}`), codec.MediaTypeJSON).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	code := resp.StatusCode
	resp.Close()
	if code != http.StatusCreated {
		t.Errorf("create answered %d", code)
	}
	u, err := client.Dynamic(f.Client()).Resource(client.GroupVersionResource{Version: "v1", Resource: "configmaps"}).
		Namespace("web").Create(ctx, mustUnstructured(t, configMap("web", "y")), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u.GetKind() != "ConfigMap" || u.GetAPIVersion() != "v1" || u.GetUID() != "from-reactor" {
		t.Errorf("dynamic create got %v", u.Object)
	}
}

// Reactors are offered a request in order: prepended ones first, added ones
// last, and the first that handles it answers.
func TestReactorOrder(t *testing.T) {
	ctx := testContext(t)
	f := fake.New(t, configMap("web", "cm"))
	var order []string
	reactor := func(name string, handle bool) fake.ReactionFunc {
		return func(fake.Action) (bool, any, error) {
			order = append(order, name)
			if handle {
				return true, nil, client.NewStatusError(metav1.NewBadRequest(name))
			}
			return false, nil, nil
		}
	}
	f.AddReactor("get", "configmaps", reactor("added-1", false))
	f.AddReactor("get", "configmaps", reactor("added-2", true))
	f.PrependReactor("get", "configmaps", reactor("prepended-1", false))
	f.PrependReactor("get", "configmaps", reactor("prepended-2", false))
	f.AddReactor("get", "configmaps", reactor("never", true))
	_, err := client.For[corev1.ConfigMap](f.Client()).Namespace("web").Get(ctx, "cm", metav1.GetOptions{})
	if !client.IsBadRequest(err) || err.Error() != "added-2" {
		t.Errorf("err %v, want added-2's", err)
	}
	if got := strings.Join(order, ","); got != "prepended-2,prepended-1,added-1,added-2" {
		t.Errorf("order %s", got)
	}
}

// A reactor fails a watch as the server would (the watch does not start);
// an object cannot answer a watch.
func TestReactorWatch(t *testing.T) {
	ctx := testContext(t)
	f := fake.New(t)
	pods := client.For[corev1.Pod](f.Client()).Namespace("web")
	f.PrependReactor("watch", "pods", func(a fake.Action) (bool, any, error) {
		if a.Query.Get("labelSelector") == "object" {
			return true, pod("web", "x"), nil
		}
		return true, nil, client.NewStatusError(metav1.NewResourceExpired("too old resource version: 1 (5)"))
	})
	if _, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: "1"}); !client.IsResourceExpired(err) {
		t.Errorf("watch err %v, want Expired", err)
	}
	if _, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: "object"}); !client.IsInternalError(err) || !strings.Contains(err.Error(), "can only fail a watch") {
		t.Errorf("watch err %v", err)
	}
}

// Injected 429s are retried by the client as a server's would be; with
// retries off they reach the caller at once.
func TestReactorRetries(t *testing.T) {
	ctx := testContext(t)
	for _, tt := range []struct {
		name       string
		maxRetries int
		retryAfter int32
		wantErr    bool
		wantCalls  int32
	}{
		{"retried", 0, 0, false, 2},
		{"no retries", -1, 7, true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := fake.NewWithOptions(t, fake.Options{MaxRetries: tt.maxRetries}, configMap("web", "cm"))
			var calls atomic.Int32
			f.PrependReactor("get", "configmaps", func(fake.Action) (bool, any, error) {
				if calls.Add(1) == 1 {
					return true, nil, client.NewStatusError(metav1.NewTooManyRequests("slow down", tt.retryAfter))
				}
				return false, nil, nil
			})
			_, err := client.For[corev1.ConfigMap](f.Client()).Namespace("web").Get(ctx, "cm", metav1.GetOptions{})
			if (err != nil) != tt.wantErr || (err != nil && !client.IsTooManyRequests(err)) {
				t.Errorf("err %v", err)
			}
			if s, ok := client.RetryAfterSeconds(err); tt.wantErr && (!ok || s != int(tt.retryAfter)) {
				t.Errorf("Retry-After %d (%v), want %d", s, ok, tt.retryAfter)
			}
			if calls.Load() != tt.wantCalls {
				t.Errorf("%d calls, want %d", calls.Load(), tt.wantCalls)
			}
			if n := len(f.Actions()); n != int(tt.wantCalls) {
				t.Errorf("%d actions recorded, want one per attempt", n)
			}
		})
	}
}

// A list answered by a reactor gets the list kind; a request handled with
// neither object nor error is a success.
func TestReactorListAndSuccess(t *testing.T) {
	ctx := testContext(t)
	f := fake.New(t, configMap("web", "real"))
	f.PrependReactor("list", "configmaps", func(fake.Action) (bool, any, error) {
		return true, &client.List[corev1.ConfigMap]{Items: []corev1.ConfigMap{*configMap("web", "made-up")}}, nil
	})
	f.PrependReactor("delete", "configmaps", func(fake.Action) (bool, any, error) { return true, nil, nil })

	cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "made-up" {
		t.Errorf("typed list %+v, %v", list, err)
	}
	ul, err := client.Dynamic(f.Client()).Resource(client.GroupVersionResource{Version: "v1", Resource: "configmaps"}).
		Namespace("web").List(ctx, metav1.ListOptions{})
	if err != nil || ul.Kind != "ConfigMapList" || len(ul.Items) != 1 || ul.Items[0].GetKind() != "ConfigMap" {
		t.Errorf("dynamic list kind %q items %d, %v", ul.Kind, len(ul.Items), err)
	}
	if err := cms.Delete(ctx, "real", metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete handled with nothing: %v", err)
	}
	if _, err := cms.Get(ctx, "real", metav1.GetOptions{}); err != nil {
		t.Errorf("the reactor's delete reached the server: %v", err)
	}
}
