package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
)

func TestParseControllers(t *testing.T) {
	all := func(v bool) map[string]bool {
		return map[string]bool{ctrlGarbageCollector: v, ctrlNamespace: v, ctrlServiceAccount: v, ctrlRootCAPublisher: v}
	}
	for _, tc := range []struct {
		in   string
		want map[string]bool
		err  string
	}{
		{"*", all(true), ""},
		{"", all(false), ""},
		{"-*", nil, `unknown controller "*"`},
		{"*,-namespace-controller", map[string]bool{ctrlGarbageCollector: true, ctrlNamespace: false, ctrlServiceAccount: true, ctrlRootCAPublisher: true}, ""},
		{"serviceaccount-controller", map[string]bool{ctrlGarbageCollector: false, ctrlNamespace: false, ctrlServiceAccount: true, ctrlRootCAPublisher: false}, ""},
		{" * , -garbage-collector-controller ", map[string]bool{ctrlGarbageCollector: false, ctrlNamespace: true, ctrlServiceAccount: true, ctrlRootCAPublisher: true}, ""},
		{"*,kubelet", nil, `unknown controller "kubelet"`},
	} {
		got, err := parseControllers(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
	var cfg apiserver.Config
	applyControllers(&cfg, map[string]bool{ctrlNamespace: true})
	if !cfg.DisableGarbageCollector || cfg.DisableNamespaceController || !cfg.DisableServiceAccountController || !cfg.DisableRootCAPublisher {
		t.Errorf("applyControllers: %+v", cfg)
	}
}

func FuzzParseControllers(f *testing.F) {
	for _, s := range []string{"*", "", "*,-namespace-controller", "-", ",,", "*,x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseControllers(s)
		if err != nil {
			return
		}
		if len(got) != len(knownControllers) {
			t.Fatalf("%q: %v, want every known controller decided", s, got)
		}
	})
}
