package registry

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	apiregistrationv1 "github.com/kapi-dev/kapi/api/apiregistration/v1"
	certificatesv1 "github.com/kapi-dev/kapi/api/certificates/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
	resourcev1 "github.com/kapi-dev/kapi/api/resource/v1"
	storagev1 "github.com/kapi-dev/kapi/api/storage/v1"
	storagemigrationv1 "github.com/kapi-dev/kapi/api/storagemigration/v1"
)

// The validators of the storage, resource, certificates,
// admissionregistration, apiregistration and storagemigration kinds, with
// the causes kube-apiserver v1.37.2 answered (the kinds captures and the
// real server), in its order.
func TestInfraValidation(t *testing.T) {
	prov := func(s string) *corev1.PersistentVolumeReclaimPolicy {
		p := corev1.PersistentVolumeReclaimPolicy(s)
		return &p
	}
	mode := func(s string) *storagev1.VolumeBindingMode { m := storagev1.VolumeBindingMode(s); return &m }
	sc := func(f func(*storagev1.StorageClass)) *storagev1.StorageClass {
		o := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "sc"}, Provisioner: "a.b/c", ReclaimPolicy: prov("Delete"), VolumeBindingMode: mode("Immediate")}
		if f != nil {
			f(o)
		}
		return o
	}
	side := admissionv1.SideEffectClassNone
	never := admissionv1.ReinvocationPolicyType("Sometimes")
	for _, tc := range []struct {
		name     string
		validate func(o, old Object) metav1.FieldErrors
		obj, old Object
		want     []string
	}{
		{"storageclass valid", validateStorageClass, sc(nil), nil, nil},
		{"storageclass enums before the required provisioner", validateStorageClass,
			sc(func(s *storagev1.StorageClass) {
				s.Provisioner, s.ReclaimPolicy, s.VolumeBindingMode = "", prov("Sometimes"), mode("Later")
			}), nil,
			[]string{`reclaimPolicy: Unsupported value: "Sometimes": supported values: "Delete", "Retain"`,
				`volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"`,
				"provisioner: Required value"}},
		{"storageclass provisioner checked lower-cased", validateStorageClass,
			sc(func(s *storagev1.StorageClass) { s.Provisioner = "Bad Prov!" }), nil,
			[]string{`provisioner: Invalid value: "bad prov!": name part ` + qualifiedRule}},
		{"storageclass immutable", validateStorageClass,
			sc(func(s *storagev1.StorageClass) { s.Provisioner, s.Parameters = "x.y/z", map[string]string{"a": "b"} }), sc(nil),
			[]string{"provisioner: Invalid value: null: field is immutable", "parameters: Invalid value: null: field is immutable"}},
		{"csidriver", validateCSIDriver, &storagev1.CSIDriver{Spec: storagev1.CSIDriverSpec{AttachRequired: ptr(true),
			FSGroupPolicy: ptr(storagev1.FSGroupPolicy("Bogus")), VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{"Sometimes"},
			TokenRequests: []storagev1.TokenRequest{{Audience: "x", ExpirationSeconds: ptr(int64(10))}, {Audience: "x"}}}}, nil,
			[]string{`spec.fsGroupPolicy: Unsupported value: "Bogus": supported values: "File", "None", "ReadWriteOnceWithFSType"`,
				"spec.tokenRequests[0].expirationSeconds: Invalid value: 10: may not specify a duration less than 10 minutes",
				`spec.tokenRequests[1].audience: Duplicate value: "x"`,
				`spec.volumeLifecycleModes: Unsupported value: "Sometimes": supported values: "Persistent", "Ephemeral"`}},
		{"csidriver attachRequired immutable under kube-apiserver's path", validateCSIDriver,
			&storagev1.CSIDriver{Spec: storagev1.CSIDriverSpec{AttachRequired: ptr(false)}},
			&storagev1.CSIDriver{Spec: storagev1.CSIDriverSpec{AttachRequired: ptr(true)}},
			[]string{"spec.attachedRequired: Invalid value: false: field is immutable"}},
		{"csinode driver immutable, dumped with Go names", validateCSINode,
			&storagev1.CSINode{Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "a.b", NodeID: "other"}}}},
			&storagev1.CSINode{Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "a.b", NodeID: "n"}}}},
			[]string{`spec.drivers: Invalid value: {"Name":"a.b","NodeID":"other","TopologyKeys":null,"Allocatable":null}: field is immutable`}},
		{"volumeattachment", validateVolumeAttachment, &storagev1.VolumeAttachment{}, nil,
			[]string{"spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName",
				`spec.nodeName: Invalid value: "": ` + subdomainRule, "spec.attacher: Required value"}},
		{"volumeattributesclass", validateVolumeAttributesClass, &storagev1.VolumeAttributesClass{}, nil,
			[]string{"driverName: Required value", "parameters: Required value: must contain at least one key/value pair"}},
		{"volumeattributesclass update", validateVolumeAttributesClass,
			&storagev1.VolumeAttributesClass{DriverName: "e", Parameters: map[string]string{"a": "c"}},
			&storagev1.VolumeAttributesClass{DriverName: "d", Parameters: map[string]string{"a": "b"}},
			[]string{"driverName: Forbidden: updates to driverName are forbidden.", "parameters: Forbidden: updates to parameters are forbidden."}},
		{"csistoragecapacity", validateCSIStorageCapacity, &storagev1.CSIStorageCapacity{Capacity: ptr(qty("-1"))}, nil,
			[]string{`storageClassName: Invalid value: "": ` + subdomainRule, `capacity: Invalid value: "-1": must be greater than or equal to 0`}},

		{"devicetaintrule", validateDeviceTaintRule, &resourcev1.DeviceTaintRule{}, nil,
			[]string{`spec.taint.key: Invalid value: "": name part must be non-empty`, `spec.taint.key: Invalid value: "": name part ` + qualifiedRule,
				"spec.taint.effect: Required value"}},
		{"resourceclaim", validateResourceClaim, &resourcev1.ResourceClaim{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu"}, {Name: "Bad_Name", Exactly: &resourcev1.ExactDeviceRequest{AllocationMode: "ExactCount", Count: 1}}}}}}, nil,
			[]string{"spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required",
				`spec.devices.requests[1].name: Invalid value: "Bad_Name": ` + labelRule,
				"spec.devices.requests[1].exactly.deviceClassName: Required value"}},
		{"resourceclaim immutable", validateResourceClaim,
			&resourcev1.ResourceClaim{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
				{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "b", AllocationMode: "ExactCount", Count: 1}}}}}},
			&resourcev1.ResourceClaim{}, []string{"spec: Invalid value: null: field is immutable"}},
		{"resourceslice", validateResourceSlice, &resourcev1.ResourceSlice{}, nil,
			[]string{"spec.driver: Required value", "spec.pool.name: Required value",
				"spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
				"spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"}},

		{"resourceslice immutable", validateResourceSlice,
			&resourcev1.ResourceSlice{Spec: resourcev1.ResourceSliceSpec{Driver: "b.example.com", NodeName: ptr("n2"), Pool: resourcev1.ResourcePool{Name: "q", ResourceSliceCount: 1}}},
			&resourcev1.ResourceSlice{Spec: resourcev1.ResourceSliceSpec{Driver: "a.example.com", NodeName: ptr("n1"), Pool: resourcev1.ResourcePool{Name: "p", ResourceSliceCount: 1}}},
			[]string{`spec.pool.name: Invalid value: "q": field is immutable`, `spec.driver: Invalid value: "b.example.com": field is immutable`,
				`spec.nodeName: Invalid value: "n2": field is immutable`}},

		{"csr", validateCSR, &certificatesv1.CertificateSigningRequest{}, nil,
			[]string{"spec.request: Invalid value: null: PEM block type must be CERTIFICATE REQUEST", "spec.usages: Required value", "spec.signerName: Required value"}},
		{"csr usages and signer", validateCSR, &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: []byte("garbage"), SignerName: "bad", Usages: []certificatesv1.KeyUsage{"client auth", "client auth"}, ExpirationSeconds: ptr(int32(5))}}, nil,
			[]string{`spec.request: Invalid value: "Z2FyYmFnZQ==": PEM block type must be CERTIFICATE REQUEST`,
				`spec.usages[1]: Duplicate value: "client auth"`,
				"spec.signerName: Invalid value: \"bad\": must be a fully qualified domain and path of the form 'example.com/signer-name'",
				"spec.expirationSeconds: Invalid value: 5: may not specify a duration less than 600 seconds (10 minutes)"}},
		{"clustertrustbundle", validateClusterTrustBundle, &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "a:b"}}, nil,
			[]string{`metadata.name: Invalid value: "a:b": ClusterTrustBundle without signer name must not have ":" in its name`,
				`spec.trustBundle: Invalid value: "<value omitted>": at least one trust anchor must be provided`}},
		{"clustertrustbundle signer update", validateClusterTrustBundle,
			&certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "s.example.com:g:full"}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "s.example.com/other", TrustBundle: testCA}},
			&certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "s.example.com:g:full"}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "s.example.com/g", TrustBundle: testCA}},
			[]string{`metadata.name: Invalid value: "s.example.com:g:full": ClusterTrustBundle for signerName s.example.com/other must be named with prefix s.example.com:other:`,
				`spec.signerName: Invalid value: "s.example.com/other": field is immutable`}},
		{"podcertificaterequest", validatePodCertificateRequest, &certificatesv1.PodCertificateRequest{}, nil,
			[]string{"spec.signerName: Required value", `spec.podName: Invalid value: "": ` + subdomainRule, `spec.podUID: Invalid value: "": must not be empty`,
				`spec.serviceAccountName: Invalid value: "": ` + subdomainRule, `spec.serviceAccountUID: Invalid value: "": must not be empty`,
				`spec.nodeName: Invalid value: "": ` + subdomainRule, `spec.nodeUID: Invalid value: "": must not be empty`,
				"spec: Invalid value: exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set"}},

		{"mutating webhook", validateMutatingWebhookConfiguration, &admissionv1.MutatingWebhookConfiguration{Webhooks: []admissionv1.MutatingWebhook{
			{Name: "bad", ReinvocationPolicy: &never}}}, nil,
			[]string{`webhooks[0].name: Invalid value: "bad": should be a domain with at least three segments separated by dots`,
				"webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
				`webhooks[0].reinvocationPolicy: Unsupported value: "Sometimes": supported values: "IfNeeded", "Never"`,
				"webhooks[0].clientConfig: Required value: exactly one of url or service is required",
				"webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"}},
		{"validating webhook details", validateValidatingWebhookConfiguration, &admissionv1.ValidatingWebhookConfiguration{Webhooks: []admissionv1.ValidatingWebhook{
			{Name: "a.b.c", ClientConfig: admissionv1.WebhookClientConfig{URL: ptr("http://x")}, SideEffects: &side, TimeoutSeconds: ptr(int32(31)),
				AdmissionReviewVersions: []string{"v2"}},
			{Name: "a.b.c", ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{}}, SideEffects: &side, AdmissionReviewVersions: []string{"v1"}}}}, nil,
			[]string{"webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
				`webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
				`webhooks[0].admissionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1`,
				"webhooks[1].clientConfig.service.name: Required value", "webhooks[1].clientConfig.service.namespace: Required value",
				`webhooks[1].name: Duplicate value: "a.b.c"`}},
		{"validating policy", validateValidatingAdmissionPolicy, &admissionv1.ValidatingAdmissionPolicy{}, nil,
			[]string{"spec.matchConstraints: Required value",
				"spec.validations: Required value: validations or auditAnnotations must contain at least one item",
				"spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item"}},
		{"mutating policy", validateMutatingAdmissionPolicy, &admissionv1.MutatingAdmissionPolicy{}, nil,
			[]string{"spec.matchConstraints: Required value", "spec.mutations: Required value: mutations must contain at least one item",
				"spec.reinvocationPolicy: Required value"}},
		{"validating binding", validateValidatingAdmissionPolicyBinding, &admissionv1.ValidatingAdmissionPolicyBinding{
			Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ParamRef: &admissionv1.ParamRef{Name: "x"},
				ValidationActions: []admissionv1.ValidationAction{"Deny", "Warn", "Bogus"}}}, nil,
			[]string{"spec.paramRef.parameterNotFoundAction: Required value",
				`spec.validationActions[2]: Unsupported value: "Bogus": supported values: "Audit", "Deny", "Warn"`,
				`spec.validationActions: Invalid value: ["Deny","Warn","Bogus"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)`}},
		{"mutating binding", validateMutatingAdmissionPolicyBinding, &admissionv1.MutatingAdmissionPolicyBinding{}, nil,
			[]string{"spec.policyName: Required value"}},

		{"apiservice", validateAPIService, &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "kinds-bad.golden.example.com"},
			Spec: apiregistrationv1.APIServiceSpec{Group: "golden.example.com", Version: "v1"}}, nil,
			[]string{"metadata.name: Invalid value: \"kinds-bad.golden.example.com\": must be `spec.version+\".\"+spec.group`: \"v1.golden.example.com\"",
				"spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
				"spec.versionPriority: Invalid value: 0: must be positive and less than 1000"}},
		// As kube-apiserver v1.37.2 answers a create of each.
		{"apiservice without group", validateAPIService, &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v9."},
			Spec: apiregistrationv1.APIServiceSpec{Version: "v9", GroupPriorityMinimum: 10, VersionPriority: 10}}, nil,
			[]string{"spec.group: Required value: only v1 may have an empty group and it better be legacy kube"}},
		{"apiservice of the legacy group", validateAPIService, &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1."},
			Spec: apiregistrationv1.APIServiceSpec{Version: "v1", GroupPriorityMinimum: 18000, VersionPriority: 1}}, nil, nil},
		{"storageversionmigration immutable", validateStorageVersionMigration,
			&storagemigrationv1.StorageVersionMigration{Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "secrets"}}},
			&storagemigrationv1.StorageVersionMigration{Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "configmaps"}}},
			[]string{`spec: Invalid value: {"Resource":{"group":"","resource":"secrets"}}: field is immutable`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var old Object
			if tc.old != nil {
				old = tc.old
			}
			if got := causes(tc.validate(tc.obj, old)); !slices.Equal(got, tc.want) {
				t.Errorf("causes\n got  %q\n want %q", got, tc.want)
			}
		})
	}
}

const (
	subdomainRule = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
	labelRule     = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
	qualifiedRule = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
	testCA        = "-----BEGIN CERTIFICATE-----\nMIIBizCCATGgAwIBAgIUE+V6mEFr0PL9ZOaoser630jy3NcwCgYIKoZIzj0EAwIw\nGzEZMBcGA1UEAwwQa2luZHMtZ29sZGVuLWNhMTAeFw0yNjExMjQxNTQzMzhaFw0z\nNjExMjExNTQzMzhaMBsxGTAXBgNVBAMMEGtpbmRzLWdvbGRlbi1jYTEwWTATBgcq\nhkjOPQIBBggqhkjOPQMBBwNCAAT6FsIFoHZO+TwUM8Z+jh7cFX6Ya3feHJjOLyJT\nPPHVOwvAADIUiRVFbp941tZw98OiWQ9T9f/cB27DAaKMSTAeo1MwUTAdBgNVHQ4E\nFgQUNuiS4bl3Z6AOwX7AAwJZbrcZjwAwHwYDVR0jBBgwFoAUNuiS4bl3Z6AOwX7A\nAwJZbrcZjwAwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiBz+zrL\nNXR4QCXn5qDpU1gqHR7Rc5kCiKxCLxToTqi3TgIhAPWpJW1YaygVzPospdqRsF4D\nKLV6sdFOS9rfPS7iCTob\n-----END CERTIFICATE-----\n"
)

// The defaults and server-set fields of the same kinds.
func TestInfraDefaults(t *testing.T) {
	g, err := BuiltinWith(Options{})
	if err != nil {
		t.Fatal(err)
	}
	create := func(group, resource string, o Object) Object {
		t.Helper()
		r := g.Get(group, "v1", resource)
		if r == nil {
			t.Fatalf("%s/%s not served", group, resource)
		}
		r.PrepareForCreate(o)
		return o
	}

	d := create("storage.k8s.io", "csidrivers", &storagev1.CSIDriver{}).(*storagev1.CSIDriver)
	sameValue(t, d.Spec, map[string]any{"attachRequired": true, "podInfoOnMount": false, "volumeLifecycleModes": []any{"Persistent"},
		"storageCapacity": false, "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": false, "seLinuxMount": false,
		"preventPodSchedulingIfMissing": false})

	vac := create("storage.k8s.io", "volumeattributesclasses", &storagev1.VolumeAttributesClass{}).(*storagev1.VolumeAttributesClass)
	if !slices.Equal(vac.Finalizers, []string{FinalizerVACProtection}) {
		t.Errorf("VolumeAttributesClass finalizers %q", vac.Finalizers)
	}

	va := create("storage.k8s.io", "volumeattachments", &storagev1.VolumeAttachment{Status: storagev1.VolumeAttachmentStatus{Attached: true}}).(*storagev1.VolumeAttachment)
	if va.Status.Attached {
		t.Error("VolumeAttachment status kept at create")
	}

	rule := create("resource.k8s.io", "devicetaintrules", &resourcev1.DeviceTaintRule{}).(*resourcev1.DeviceTaintRule)
	if rule.Spec.Taint.TimeAdded == nil || time.Since(rule.Spec.Taint.TimeAdded.Time) > time.Minute {
		t.Errorf("DeviceTaintRule timeAdded %v", rule.Spec.Taint.TimeAdded)
	}

	claim := create("resource.k8s.io", "resourceclaims", &resourcev1.ResourceClaim{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
		Requests: []resourcev1.DeviceRequest{{Name: "a", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "c"}},
			{Name: "b", FirstAvailable: []resourcev1.DeviceSubRequest{{Name: "x", AllocationMode: "All"}, {Name: "y"}}}}}}}).(*resourcev1.ResourceClaim)
	sameValue(t, claim.Spec.Devices.Requests, []any{
		map[string]any{"name": "a", "exactly": map[string]any{"deviceClassName": "c", "allocationMode": "ExactCount", "count": 1}},
		map[string]any{"name": "b", "firstAvailable": []any{
			map[string]any{"name": "x", "deviceClassName": "", "allocationMode": "All"},
			map[string]any{"name": "y", "deviceClassName": "", "allocationMode": "ExactCount", "count": 1}}}})

	csr := create("certificates.k8s.io", "certificatesigningrequests", &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
		Username: "ignored", Groups: []string{"ignored"}, Extra: map[string]certificatesv1.ExtraValue{"ignored": {"x"}}},
		Status: certificatesv1.CertificateSigningRequestStatus{Certificate: []byte("c")}}).(*certificatesv1.CertificateSigningRequest)
	g.Get("certificates.k8s.io", "v1", "certificatesigningrequests").Requester(csr, UserInfo{Username: "u", UID: "id", Groups: []string{"g"}, Extra: map[string][]string{"k": {"v"}}})
	if csr.Status.Certificate != nil {
		t.Error("CertificateSigningRequest status kept at create")
	}
	sameValue(t, csr.Spec, map[string]any{"request": nil, "signerName": "", "username": "u", "uid": "id", "groups": []any{"g"}, "extra": map[string]any{"k": []any{"v"}}})

	pcr := create("certificates.k8s.io", "podcertificaterequests", &certificatesv1.PodCertificateRequest{}).(*certificatesv1.PodCertificateRequest)
	if pcr.Spec.MaxExpirationSeconds == nil || *pcr.Spec.MaxExpirationSeconds != 86400 {
		t.Errorf("PodCertificateRequest maxExpirationSeconds %v", pcr.Spec.MaxExpirationSeconds)
	}

	port := int32(8443)
	mwc := create("admissionregistration.k8s.io", "mutatingwebhookconfigurations", &admissionv1.MutatingWebhookConfiguration{Webhooks: []admissionv1.MutatingWebhook{
		{Name: "a", ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Name: "s"}},
			Rules: []admissionv1.RuleWithOperations{{}}},
		{Name: "b", ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Name: "s", Port: &port}}}}}).(*admissionv1.MutatingWebhookConfiguration)
	sameValue(t, mwc.Webhooks, []any{
		map[string]any{"name": "a", "clientConfig": map[string]any{"service": map[string]any{"namespace": "", "name": "s", "port": 443}},
			"rules": []any{map[string]any{"scope": "*"}}, "failurePolicy": "Fail", "matchPolicy": "Equivalent", "namespaceSelector": map[string]any{},
			"objectSelector": map[string]any{}, "sideEffects": nil, "timeoutSeconds": 10, "admissionReviewVersions": nil, "reinvocationPolicy": "Never"},
		map[string]any{"name": "b", "clientConfig": map[string]any{"service": map[string]any{"namespace": "", "name": "s", "port": 8443}},
			"failurePolicy": "Fail", "matchPolicy": "Equivalent", "namespaceSelector": map[string]any{},
			"objectSelector": map[string]any{}, "sideEffects": nil, "timeoutSeconds": 10, "admissionReviewVersions": nil, "reinvocationPolicy": "Never"}})

	vap := create("admissionregistration.k8s.io", "validatingadmissionpolicies", &admissionv1.ValidatingAdmissionPolicy{Spec: admissionv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{}}}}}).(*admissionv1.ValidatingAdmissionPolicy)
	sameValue(t, vap.Spec, map[string]any{"failurePolicy": "Fail", "matchConstraints": map[string]any{"namespaceSelector": map[string]any{},
		"objectSelector": map[string]any{}, "matchPolicy": "Equivalent", "resourceRules": []any{map[string]any{"scope": "*"}}}})

	local := create("apiregistration.k8s.io", "apiservices", &apiregistrationv1.APIService{}).(*apiregistrationv1.APIService)
	if c := local.Status.Conditions; len(c) != 1 || c[0].Reason != "Local" || c[0].Status != "True" || c[0].LastTransitionTime.IsZero() {
		t.Errorf("local APIService conditions %+v", c)
	}
	remote := create("apiregistration.k8s.io", "apiservices", &apiregistrationv1.APIService{Spec: apiregistrationv1.APIServiceSpec{
		Service: &apiregistrationv1.ServiceReference{Name: "s"}}}).(*apiregistrationv1.APIService)
	if len(remote.Status.Conditions) != 0 || remote.Spec.Service.Port == nil || *remote.Spec.Service.Port != 443 {
		t.Errorf("service APIService: %+v, port %v", remote.Status, remote.Spec.Service.Port)
	}
}

// stampDeviceTaint keeps a client's time, and replaces it with now when an
// update changes the effect and keeps the old time.
func TestStampDeviceTaint(t *testing.T) {
	then := metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	rule := func(effect string) *resourcev1.DeviceTaintRule {
		tm := then
		return &resourcev1.DeviceTaintRule{Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Effect: resourcev1.DeviceTaintEffect(effect), TimeAdded: &tm}}}
	}
	for _, tc := range []struct {
		name     string
		obj, old *resourcev1.DeviceTaintRule
		stamped  bool
	}{
		{"create keeps the client's time", rule("NoSchedule"), nil, false},
		{"update of the value only", rule("NoSchedule"), rule("NoSchedule"), false},
		{"update of the effect", rule("NoExecute"), rule("NoSchedule"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var old Object
			if tc.old != nil {
				old = tc.old
			}
			stampDeviceTaint(tc.obj, old)
			if got := !tc.obj.Spec.Taint.TimeAdded.Equal(&then); got != tc.stamped {
				t.Errorf("stamped %v, want %v", got, tc.stamped)
			}
		})
	}
}

// The Table rows of the kinds whose cells are computed.
func TestInfraRows(t *testing.T) {
	now := time.Now()
	created := metav1.NewTime(now.Add(-4 * time.Second))
	row := func(p *Printer, o Object) []any {
		cells, _ := p.Row(o, now)
		if len(cells) != len(p.Columns) {
			t.Errorf("%d cells for %d columns", len(cells), len(p.Columns))
		}
		return cells
	}
	for _, tc := range []struct {
		name string
		got  []any
		want []any
	}{
		{"csidriver", row(csiDriverPrinter, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "d", CreationTimestamp: created},
			Spec: storagev1.CSIDriverSpec{AttachRequired: ptr(false), PodInfoOnMount: ptr(true), TokenRequests: []storagev1.TokenRequest{{Audience: "a"}, {Audience: ""}},
				VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{"Persistent", "Ephemeral"}}}),
			[]any{"d", false, true, false, "a,", false, "Persistent,Ephemeral", "4s"}},
		{"csidriver unset", row(csiDriverPrinter, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "d", CreationTimestamp: created}}),
			[]any{"d", false, false, false, "<unset>", false, "", "4s"}},
		{"default storageclass", row(storageClassPrinter, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "s", CreationTimestamp: created,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}, Provisioner: "p"}),
			[]any{"s (default)", "p", "Delete", "Immediate", false, "4s"}},
		{"allocated claim", row(resourceClaimPrinter, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", CreationTimestamp: created},
			Status: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{}, ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Name: "p"}}}}),
			[]any{"c", "allocated,reserved", "4s"}},
		{"approved csr", row(csrPrinter, &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "r", CreationTimestamp: created},
			Spec:   certificatesv1.CertificateSigningRequestSpec{SignerName: "s", Username: "u", ExpirationSeconds: ptr(int32(3600))},
			Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: "Approved"}}, Certificate: []byte("c")}}),
			[]any{"r", "4s", "s", "u", "60m", "Approved,Issued"}},
		{"pod certificate request", row(podCertificateRequestPrinter, &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: "r"},
			Spec: certificatesv1.PodCertificateRequestSpec{PodName: "p", UnverifiedUserAnnotations: map[string]string{"b.io/y": "2", "a.io/x": "1"}}}),
			[]any{"r", "p", "", "", "", "Pending", "a.io/x=1,b.io/y=2"}},
		{"binding with a selector", row(validatingAdmissionPolicyBindingPrinter, &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: created},
			Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ParamRef: &admissionv1.ParamRef{Selector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"k": "true"}, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "In", Values: []string{"x", "y"}}}}}}}),
			[]any{"b", "p", "&LabelSelector{MatchLabels:map[string]string{k: true,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:a,Operator:In,Values:[x y],},},}", "4s"}},
		{"apiservice without its service", row(apiServicePrinter, &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.g", CreationTimestamp: created},
			Spec:   apiregistrationv1.APIServiceSpec{Service: &apiregistrationv1.ServiceReference{Namespace: "n", Name: "s"}},
			Status: apiregistrationv1.APIServiceStatus{Conditions: []apiregistrationv1.APIServiceCondition{{Type: "Available", Status: "False", Reason: "ServiceNotFound"}}}}),
			[]any{"v1.g", "n/s", "False (ServiceNotFound)", "4s"}},
		{"storageversionmigration", row(storageVersionMigrationPrinter, &storagemigrationv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "m"},
			Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "apps", Resource: "deployments"}}}),
			[]any{"m", "deployments.apps", "Unknown"}},
	} {
		t.Run(tc.name, func(t *testing.T) { sameJSON(t, tc.got, tc.want) })
	}
}

func TestCSIDriverWarnings(t *testing.T) {
	yes := true
	tokens := storagev1.CSIDriverSpec{TokenRequests: []storagev1.TokenRequest{{Audience: "a"}}}
	for _, tc := range []struct {
		spec   storagev1.CSIDriverSpec
		update bool
		want   int
	}{
		{storagev1.CSIDriverSpec{}, false, 0},
		{tokens, false, 1},
		{tokens, true, 0}, // kube-apiserver warns on create only
		{storagev1.CSIDriverSpec{TokenRequests: tokens.TokenRequests, ServiceAccountTokenInSecrets: &yes}, false, 0},
	} {
		var old Object
		if tc.update {
			old = &storagev1.CSIDriver{Spec: tc.spec}
		}
		if got := CSIDriverWarnings(&storagev1.CSIDriver{Spec: tc.spec}, old); len(got) != tc.want || (tc.want > 0 && !strings.Contains(got[0], "serviceAccountTokenInSecrets")) {
			t.Errorf("%+v update %v: %q", tc.spec, tc.update, got)
		}
	}
}

// FuzzTrustBundle feeds arbitrary bundles to the PEM and x509 checks of a
// ClusterTrustBundle: they answer with a message or nothing, never panic.
func FuzzTrustBundle(f *testing.F) {
	f.Add(testCA)
	f.Add("-----BEGIN FOO-----\nAAAA\n-----END FOO-----\n")
	f.Add(testCA + testCA)
	f.Add("")
	f.Fuzz(func(t *testing.T, bundle string) {
		msg := trustBundleError(bundle)
		if msg == "" && !strings.Contains(bundle, "CERTIFICATE") {
			t.Errorf("bundle without a certificate accepted: %q", bundle)
		}
	})
}

// FuzzCertificateRequest feeds arbitrary requests to a CSR's validation.
func FuzzCertificateRequest(f *testing.F) {
	f.Add([]byte("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, req []byte) {
		errs := validateCSR(&certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Request: req}}, nil)
		if len(errs) == 0 || errs[0].Field != "spec.request" && errs[0].Field != "spec.usages" {
			t.Errorf("causes %q", causes(errs))
		}
	})
}

func qty(s string) resource.Quantity { return resource.MustParse(s) }

// sameValue is sameJSON for a typed got and a want of maps and slices:
// got is compared as the JSON value it encodes to, members in any order.
func sameValue(t *testing.T, got, want any) {
	t.Helper()
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, v, want)
}

// LocalAPIServices lists one local APIService per served group version,
// with kube-apiserver's priorities and labels.
func TestLocalAPIServices(t *testing.T) {
	g := Builtin()
	if err := g.Add(Typed[storagev1.StorageClass](&Resource{Group: "widgets.example.com", Version: "v1beta1", Resource: "widgets", Kind: "Widget"})); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	byName := map[string]*apiregistrationv1.APIService{}
	var names []string
	for _, a := range LocalAPIServices(g, now) {
		byName[a.Name] = a
		names = append(names, a.Name)
		if errs := validateAPIService(a, nil); len(errs) > 0 {
			t.Errorf("%s is invalid: %q", a.Name, causes(errs))
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("not sorted: %q", names)
	}
	for _, tc := range []struct {
		name           string
		group, version int32
		label          string
	}{
		{"v1.", 18000, 1, "onstart"},
		{"v1.apps", 17800, 15, "onstart"},
		{"v1.storage.k8s.io", 16800, 15, "onstart"},
		{"v1.resource.k8s.io", 16200, 21, "onstart"},
		{"v1beta1.widgets.example.com", 1000, 100, "true"},
	} {
		a := byName[tc.name]
		if a == nil {
			t.Errorf("no APIService %s in %q", tc.name, names)
			continue
		}
		if a.Spec.GroupPriorityMinimum != tc.group || a.Spec.VersionPriority != tc.version || a.Labels[AutomanagedLabel] != tc.label ||
			a.Spec.Service != nil || len(a.Status.Conditions) != 1 || a.Status.Conditions[0].Reason != "Local" {
			t.Errorf("%s: %+v %+v %v", tc.name, a.Spec, a.Status, a.Labels)
		}
	}
	if byName["v1.apiregistration.k8s.io"] != nil {
		t.Error("an APIService of the aggregator's own group")
	}
	for gv := range g.Groups() {
		for _, v := range g.Groups()[gv] {
			if byName[v+"."+gv] == nil && gv != "apiregistration.k8s.io" {
				t.Errorf("no APIService for %s/%s", gv, v)
			}
		}
	}
}

// A webhook configuration's generation follows its webhooks (SameSpec), not
// a spec field it does not have.
func TestWebhookConfigurationGeneration(t *testing.T) {
	r := Builtin().Get("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations")
	old := &admissionv1.ValidatingWebhookConfiguration{Webhooks: []admissionv1.ValidatingWebhook{{Name: "a.b.c"}}}
	for _, tc := range []struct {
		name string
		next *admissionv1.ValidatingWebhookConfiguration
		want bool
	}{
		{"same webhooks, new label", &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
			Webhooks: []admissionv1.ValidatingWebhook{{Name: "a.b.c"}}}, false},
		{"changed webhook", &admissionv1.ValidatingWebhookConfiguration{Webhooks: []admissionv1.ValidatingWebhook{{Name: "x.b.c"}}}, true},
	} {
		if got := r.GenerationChanged(old, tc.next); got != tc.want {
			t.Errorf("%s: GenerationChanged %v, want %v", tc.name, got, tc.want)
		}
	}
}
