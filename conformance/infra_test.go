package conformance

import (
	"net/http"
	"slices"
	"testing"
)

// The cluster-scoped kinds of storage.k8s.io, resource.k8s.io,
// certificates.k8s.io, admissionregistration.k8s.io, apiregistration.k8s.io
// and storagemigration.k8s.io: what the server fills in at create, what it
// refuses to change, and what it keeps from the client. Each object has a
// random name and is deleted at the end.

// createClusterObject creates body at collection (its metadata.name set to
// name) and deletes it when the test ends, removing its finalizers first.
func (e *env) createClusterObject(t *testing.T, collection, name string, body obj) obj {
	t.Helper()
	body["metadata"] = obj{"name": name}
	o := expect(t, e.post(t, collection, body), http.StatusCreated)
	t.Cleanup(func() {
		e.patch(t, collection+"/"+name, mergePatch, `{"metadata":{"finalizers":null}}`)
		e.del(t, collection+"/"+name, nil)
	})
	return o
}

// TestStorageKinds: a StorageClass's defaults and immutable fields, a
// CSIDriver's defaults and its attachRequired immutability reported under
// kube-apiserver's misspelt path, and the vac-protection finalizer of a new
// VolumeAttributesClass, whose parameters cannot change.
func TestStorageKinds(t *testing.T) {
	t.Parallel()
	e := target
	const storage = "/apis/storage.k8s.io/v1/"
	suffix := randomSuffix()

	t.Run("storageclass", func(t *testing.T) {
		name := "conf-sc-" + suffix
		o := e.createClusterObject(t, storage+"storageclasses", name, obj{"provisioner": "conf.example.com/disk", "parameters": obj{"type": "a"}})
		if str(o, "reclaimPolicy") != "Delete" || str(o, "volumeBindingMode") != "Immediate" {
			t.Errorf("defaults: reclaimPolicy %q volumeBindingMode %q", str(o, "reclaimPolicy"), str(o, "volumeBindingMode"))
		}
		checkInvalid(t, e.patch(t, storage+"storageclasses/"+name, mergePatch,
			`{"provisioner":"conf.example.com/other","parameters":{"type":"b"},"reclaimPolicy":"Retain"}`), "StorageClass.storage.k8s.io", name,
			invalidValue("provisioner", "null", "field is immutable"),
			invalidValue("parameters", "null", "field is immutable"),
			invalidValue("reclaimPolicy", "null", "field is immutable"))
		checkInvalid(t, e.post(t, storage+"storageclasses", obj{"metadata": obj{"name": name + "-bad"}, "reclaimPolicy": "Sometimes"}),
			"StorageClass.storage.k8s.io", name+"-bad",
			cause{"reclaimPolicy", "FieldValueNotSupported", `Unsupported value: "Sometimes": supported values: "Delete", "Retain"`},
			cause{"provisioner", "FieldValueRequired", "Required value"})
	})

	t.Run("csidriver", func(t *testing.T) {
		name := "conf-" + suffix + ".csi.example.com"
		o := e.createClusterObject(t, storage+"csidrivers", name, obj{"spec": obj{}})
		spec, _ := o["spec"].(map[string]any)
		want := obj{"attachRequired": true, "podInfoOnMount": false, "volumeLifecycleModes": []any{"Persistent"}, "storageCapacity": false,
			"fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": false, "seLinuxMount": false, "preventPodSchedulingIfMissing": false}
		if compact(spec) != compact(want) {
			t.Errorf("spec %s, want %s", compact(spec), compact(want))
		}
		checkInvalid(t, e.patch(t, storage+"csidrivers/"+name, mergePatch, `{"spec":{"attachRequired":false}}`),
			"CSIDriver.storage.k8s.io", name, invalidValue("spec.attachedRequired", "false", "field is immutable"))
		// podInfoOnMount is mutable since Kubernetes 1.29.
		expect(t, e.patch(t, storage+"csidrivers/"+name, mergePatch, `{"spec":{"podInfoOnMount":true}}`), http.StatusOK)
	})

	t.Run("volumeattributesclass", func(t *testing.T) {
		name := "conf-vac-" + suffix
		o := e.createClusterObject(t, storage+"volumeattributesclasses", name, obj{"driverName": "conf.csi.example.com", "parameters": obj{"iops": "1"}})
		fins, _ := field(o, "metadata", "finalizers")
		if compact(fins) != `["kubernetes.io/vac-protection"]` {
			t.Errorf("finalizers %s, want the vac-protection one", compact(fins))
		}
		checkInvalid(t, e.patch(t, storage+"volumeattributesclasses/"+name, mergePatch, `{"parameters":{"iops":"2"}}`),
			"VolumeAttributesClass.storage.k8s.io", name, cause{"parameters", "FieldValueForbidden", "Forbidden: updates to parameters are forbidden."})
		checkInvalid(t, e.post(t, storage+"volumeattributesclasses", obj{"metadata": obj{"name": name + "-bad"}, "driverName": "d"}),
			"VolumeAttributesClass.storage.k8s.io", name+"-bad",
			cause{"parameters", "FieldValueRequired", "Required value: must contain at least one key/value pair"})
	})

	t.Run("volumeattachment-status", func(t *testing.T) {
		name := "conf-va-" + suffix
		path := storage + "volumeattachments/" + name
		o := e.createClusterObject(t, storage+"volumeattachments", name, obj{"spec": obj{"attacher": "conf.csi.example.com", "nodeName": "n1",
			"source": obj{"persistentVolumeName": "pv1"}}, "status": obj{"attached": true}})
		if v, _ := field(o, "status", "attached"); v != false {
			t.Errorf("status.attached %v at create, want false", v)
		}
		o = expect(t, e.patch(t, path+"/status", mergePatch, `{"status":{"attached":true}}`), http.StatusOK)
		if v, _ := field(o, "status", "attached"); v != true {
			t.Errorf("status.attached %v after /status, want true", v)
		}
		checkInvalid(t, e.patch(t, path, mergePatch, `{"spec":{"nodeName":"n2"}}`), "VolumeAttachment.storage.k8s.io", name,
			invalidValue("spec", "null", "field is immutable"))
	})
}

// TestResourceKinds: the server stamps a DeviceTaintRule's
// spec.taint.timeAdded and bumps its generation on spec changes; a
// ResourceClaim's requests are defaulted and its spec is immutable.
func TestResourceKinds(t *testing.T) {
	t.Parallel()
	e := target
	suffix := randomSuffix()
	rules := "/apis/resource.k8s.io/v1/devicetaintrules"
	name := "conf-dtr-" + suffix
	o := e.createClusterObject(t, rules, name, obj{"spec": obj{"taint": obj{"key": "example.com/a", "effect": "NoSchedule"}}})
	if str(o, "spec", "taint", "timeAdded") == "" {
		t.Errorf("spec.taint.timeAdded not set: %s", compact(o["spec"]))
	}
	if g, _ := num(o, "metadata", "generation"); g != 1 {
		t.Errorf("generation %d at create, want 1", g)
	}
	o = expect(t, e.patch(t, rules+"/"+name, mergePatch, `{"spec":{"taint":{"value":"v"}}}`), http.StatusOK)
	if g, _ := num(o, "metadata", "generation"); g != 2 {
		t.Errorf("generation %d after a spec change, want 2", g)
	}

	ns := e.namespace(t)
	claims := "/apis/resource.k8s.io/v1/namespaces/" + ns + "/resourceclaims"
	o = expect(t, e.post(t, claims, obj{"metadata": obj{"name": "c"},
		"spec": obj{"devices": obj{"requests": []any{obj{"name": "gpu", "exactly": obj{"deviceClassName": "conf"}}}}}}), http.StatusCreated)
	exactly, _ := field(o, "spec", "devices", "requests")
	if compact(exactly) != `[{"exactly":{"allocationMode":"ExactCount","count":1,"deviceClassName":"conf"},"name":"gpu"}]` {
		t.Errorf("requests %s", compact(exactly))
	}
	checkInvalid(t, e.patch(t, claims+"/c", mergePatch, `{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"other"}}]}}}`),
		"ResourceClaim.resource.k8s.io", "c", invalidValue("spec", "null", "field is immutable"))
}

// TestCertificatesKinds: a CSR's requester is the authenticated user
// whatever the client wrote; a ClusterTrustBundle with a signer is named
// after it.
func TestCertificatesKinds(t *testing.T) {
	t.Parallel()
	e := target
	suffix := randomSuffix()
	csrs := "/apis/certificates.k8s.io/v1/certificatesigningrequests"
	name := "conf-csr-" + suffix
	o := e.createClusterObject(t, csrs, name, obj{"spec": obj{"request": confCSR, "signerName": "kubernetes.io/kube-apiserver-client",
		"usages": []any{"client auth"}, "username": "ignored", "groups": []any{"ignored"}}})
	groups, _ := field(o, "spec", "groups")
	gs, _ := groups.([]any)
	if u := str(o, "spec", "username"); u == "" || u == "ignored" || !slices.Contains(gs, any("system:authenticated")) {
		t.Errorf("requester %q %s, want the authenticated user", u, compact(groups))
	}
	// An update of the main resource leaves the spec as created.
	o = expect(t, e.patch(t, csrs+"/"+name, mergePatch, `{"metadata":{"labels":{"a":"b"}},"spec":{"usages":["server auth"]}}`), http.StatusOK)
	if u, _ := field(o, "spec", "usages"); compact(u) != `["client auth"]` || str(o, "metadata", "labels", "a") != "b" {
		t.Errorf("after update: usages %s labels %s", compact(u), compact(o["metadata"]))
	}

	ctbs := "/apis/certificates.k8s.io/v1/clustertrustbundles"
	checkInvalid(t, e.post(t, ctbs, obj{"metadata": obj{"name": "conf-" + suffix}, "spec": obj{"signerName": "conf.example.com/s", "trustBundle": confCA}}),
		"ClusterTrustBundle.certificates.k8s.io", "conf-"+suffix,
		invalidValue("metadata.name", `"conf-`+suffix+`"`, "ClusterTrustBundle for signerName conf.example.com/s must be named with prefix conf.example.com:s:"))
	e.createClusterObject(t, ctbs, "conf.example.com:s:"+suffix, obj{"spec": obj{"signerName": "conf.example.com/s", "trustBundle": confCA}})
}

// TestAdmissionRegistrationKinds: webhook defaults, the generation of a
// webhook configuration, and MutatingAdmissionPolicy's required
// reinvocationPolicy.
func TestAdmissionRegistrationKinds(t *testing.T) {
	t.Parallel()
	e := target
	suffix := randomSuffix()
	const group = "/apis/admissionregistration.k8s.io/v1/"
	name := "conf-vwc-" + suffix
	o := e.createClusterObject(t, group+"validatingwebhookconfigurations", name, obj{"webhooks": []any{obj{"name": "a.conf.example.com",
		"clientConfig": obj{"service": obj{"namespace": "ns", "name": "svc"}}, "sideEffects": "None", "admissionReviewVersions": []any{"v1"},
		"rules": []any{obj{"operations": []any{"CREATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"pods"}}}}}})
	hooks, _ := o["webhooks"].([]any)
	if len(hooks) != 1 {
		t.Fatalf("webhooks %s", compact(o["webhooks"]))
	}
	h, _ := hooks[0].(map[string]any)
	for _, c := range []struct{ path, want string }{{"failurePolicy", `"Fail"`}, {"matchPolicy", `"Equivalent"`}, {"timeoutSeconds", "10"},
		{"namespaceSelector", "{}"}, {"objectSelector", "{}"}, {"clientConfig", `{"service":{"name":"svc","namespace":"ns","port":443}}`}} {
		if got := compact(h[c.path]); got != c.want {
			t.Errorf("webhooks[0].%s = %s, want %s", c.path, got, c.want)
		}
	}
	if scope, _ := field(obj(h), "rules"); compact(scope) != `[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["pods"],"scope":"*"}]` {
		t.Errorf("rules %s", compact(scope))
	}
	o = expect(t, e.patch(t, group+"validatingwebhookconfigurations/"+name, mergePatch,
		`{"webhooks":[{"name":"a.conf.example.com","clientConfig":{"url":"https://conf.example.com"},"sideEffects":"None","admissionReviewVersions":["v1"]}]}`),
		http.StatusOK)
	if g, _ := num(o, "metadata", "generation"); g != 2 {
		t.Errorf("generation %d after a webhook change, want 2", g)
	}
	checkInvalid(t, e.post(t, group+"mutatingadmissionpolicies", obj{"metadata": obj{"name": "conf-map-" + suffix}, "spec": obj{
		"matchConstraints": obj{"resourceRules": []any{obj{"operations": []any{"CREATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"pods"}}}},
		"mutations":        []any{obj{"patchType": "ApplyConfiguration", "applyConfiguration": obj{"expression": "Object{}"}}}}}),
		"MutatingAdmissionPolicy.admissionregistration.k8s.io", "conf-map-"+suffix, cause{"spec.reinvocationPolicy", "FieldValueRequired", "Required value"})
}

// TestAPIServiceAndMigrationKinds: a local APIService is Available at once
// and named <version>.<group>; a StorageVersionMigration's spec is
// immutable.
func TestAPIServiceAndMigrationKinds(t *testing.T) {
	t.Parallel()
	e := target
	suffix := randomSuffix()
	apiservices := "/apis/apiregistration.k8s.io/v1/apiservices"
	group := "conf-" + suffix + ".example.com"
	o := e.createClusterObject(t, apiservices, "v1."+group, obj{"spec": obj{"group": group, "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 10}})
	conds, _ := field(o, "status", "conditions")
	cs, _ := conds.([]any)
	if len(cs) != 1 || str(cs[0].(map[string]any), "reason") != "Local" || str(cs[0].(map[string]any), "status") != "True" {
		t.Errorf("conditions %s, want Available (Local)", compact(conds))
	}
	checkInvalid(t, e.post(t, apiservices, obj{"metadata": obj{"name": "v2." + group}, "spec": obj{"group": group, "version": "v1",
		"groupPriorityMinimum": 100, "versionPriority": 10}}), "APIService.apiregistration.k8s.io", "v2."+group,
		invalidValue("metadata.name", `"v2.`+group+`"`, "must be `spec.version+\".\"+spec.group`: \"v1."+group+"\""))

	migrations := "/apis/storagemigration.k8s.io/v1/storageversionmigrations"
	name := "conf-svm-" + suffix
	e.createClusterObject(t, migrations, name, obj{"spec": obj{"resource": obj{"group": "", "resource": "configmaps"}}})
	checkInvalid(t, e.patch(t, migrations+"/"+name, mergePatch, `{"spec":{"resource":{"resource":"secrets"}}}`),
		"StorageVersionMigration.storagemigration.k8s.io", name,
		invalidValue("spec", `{"Resource":{"group":"","resource":"secrets"}}`, "field is immutable"))
}

// A certificate request (CN conf) and a self-signed CA certificate, PEM.
const (
	confCSR = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIZk1JR0dBZ0VBTUNReEVqQVFCZ05WQkFNTUNXdHBibVJ6TFcxcGJqRU9NQXdHQTFVRUNnd0ZhMmx1WkhNdwpXVEFUQmdjcWhrak9QUUlCQmdncWhrak9QUU1CQndOQ0FBVDljWTdjNlZVMndHZDM3SjZLT1hVSTNZUU5RdlVtClBKSXl6Tm15c0JGTkxGc1Bwb05GMnpQZFdzdnUyOUU0Qk14S1JVcE9NVXpGNVIzczdtTVNHNEx6b0FBd0NnWUkKS29aSXpqMEVBd0lEU0FBd1JRSWhBS2EzUkpoZ1d4U20wNG9hK0gwQkRCY3RXNWZqUngwT2F6Z0x1eGhLdFY1TgpBaUFwOFpMSlg0bWRPR2VjU1hsNS9UbmIxOU9tL0hzYUMzZHphc2NCUFlOU2dnPT0KLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg=="
	confCA  = "-----BEGIN CERTIFICATE-----\nMIIBizCCATGgAwIBAgIUE+V6mEFr0PL9ZOaoser630jy3NcwCgYIKoZIzj0EAwIw\nGzEZMBcGA1UEAwwQa2luZHMtZ29sZGVuLWNhMTAeFw0yNjExMjQxNTQzMzhaFw0z\nNjExMjExNTQzMzhaMBsxGTAXBgNVBAMMEGtpbmRzLWdvbGRlbi1jYTEwWTATBgcq\nhkjOPQIBBggqhkjOPQMBBwNCAAT6FsIFoHZO+TwUM8Z+jh7cFX6Ya3feHJjOLyJT\nPPHVOwvAADIUiRVFbp941tZw98OiWQ9T9f/cB27DAaKMSTAeo1MwUTAdBgNVHQ4E\nFgQUNuiS4bl3Z6AOwX7AAwJZbrcZjwAwHwYDVR0jBBgwFoAUNuiS4bl3Z6AOwX7A\nAwJZbrcZjwAwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiBz+zrL\nNXR4QCXn5qDpU1gqHR7Rc5kCiKxCLxToTqi3TgIhAPWpJW1YaygVzPospdqRsF4D\nKLV6sdFOS9rfPS7iCTob\n-----END CERTIFICATE-----\n"
)
