package main

import (
	"io"
	"maps"
	"slices"
	"testing"
)

func TestParseAdmissionPlugins(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		enable, disable string
		want            []string
		err             string
	}{
		{"", "", nil, ""},
		{"", "ServiceAccount, PodSecurity", []string{"ServiceAccount", "PodSecurity"}, ""},
		{"NamespaceLifecycle,ResourceQuota", "", nil, ""}, // on by default: nothing changes
		{"", "Bogus", nil, `disable-admission-plugins plugin "Bogus" is unknown`},
		{"Bogus", "", nil, `enable-admission-plugins plugin "Bogus" is unknown`},
		{"Priority", "Priority", nil, "Priority in enable-admission-plugins and disable-admission-plugins overlapped"},
		{"AlwaysPullImages", "", nil, `enable-admission-plugins: kapi-apiserver does not implement admission plugin "AlwaysPullImages"`},
	} {
		got, err := parseAdmissionPlugins(tc.enable, tc.disable)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("(%q, %q): error %v, want %q", tc.enable, tc.disable, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("(%q, %q): %v", tc.enable, tc.disable, err)
		case tc.err == "" && !slices.Equal(got, tc.want):
			t.Errorf("(%q, %q) = %q, want %q", tc.enable, tc.disable, got, tc.want)
		}
	}
	o, err := parseFlags([]string{"--disable-admission-plugins=ServiceAccount,ResourceQuota"}, io.Discard)
	if err != nil || !slices.Equal(o.disabledAdmission, []string{"ServiceAccount", "ResourceQuota"}) {
		t.Errorf("parseFlags: %v %v", o, err)
	}
	if _, err := parseFlags([]string{"--enable-admission-plugins=Nope"}, io.Discard); err == nil {
		t.Error("an unknown plugin is accepted")
	}
}

func TestWebhookServiceMapFlag(t *testing.T) {
	o, err := parseFlags([]string{"--webhook-service-map=system/hook=127.0.0.1:9443", "--webhook-service-map", "system/other:8443=localhost:1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"system/hook": "127.0.0.1:9443", "system/other:8443": "localhost:1"}
	if !maps.Equal(o.webhookServices, want) {
		t.Errorf("webhookServices = %v, want %v", o.webhookServices, want)
	}
	for _, bad := range []string{"hook=127.0.0.1:1", "system/hook", "system/hook=127.0.0.1", "/hook=h:1", "system/hook:x=h:1", "system/hook:0=h:1"} {
		if _, err := parseFlags([]string{"--webhook-service-map=" + bad}, io.Discard); err == nil {
			t.Errorf("--webhook-service-map=%s accepted", bad)
		}
	}
}
