package admission

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"
	"time"

	certificatesv1 "github.com/kapi-dev/kapi/api/certificates/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	networkingv1 "github.com/kapi-dev/kapi/api/networking/v1"
	nodev1 "github.com/kapi-dev/kapi/api/node/v1"
	schedulingv1 "github.com/kapi-dev/kapi/api/scheduling/v1"
	storagev1 "github.com/kapi-dev/kapi/api/storage/v1"
)

func TestPriorityAdmitPod(t *testing.T) {
	high := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000, PreemptionPolicy: new(corev1.PreemptNever)}
	def := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "def"}, Value: 7, GlobalDefault: true}
	tests := []struct {
		name       string
		pod        func(*corev1.Pod)
		class, def *schedulingv1.PriorityClass
		want       string
		priority   int32
		policy     corev1.PreemptionPolicy
		className  string
	}{
		{name: "none", priority: 0, policy: corev1.PreemptLowerPriority},
		{name: "class", pod: func(p *corev1.Pod) { p.Spec.PriorityClassName = "high" }, class: high, priority: 1000, policy: corev1.PreemptNever, className: "high"},
		{name: "global default", def: def, priority: 7, policy: corev1.PreemptLowerPriority, className: "def"},
		// Captured from kube-apiserver v1.37.2 (p2, p4).
		{name: "unknown class", pod: func(p *corev1.Pod) { p.Spec.PriorityClassName = "nopc" }, want: "no PriorityClass with name nopc was found"},
		{name: "stated priority", pod: func(p *corev1.Pod) { p.Spec.Priority = new(int32(5)) },
			want: "the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name"},
		{name: "stated policy", pod: func(p *corev1.Pod) { p.Spec.PreemptionPolicy = new(corev1.PreemptNever) },
			want: "the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Pod{}
			if tt.pod != nil {
				tt.pod(p)
			}
			err := PriorityAdmitPod(p, tt.class, tt.def)
			if got := errString(err); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if err == nil && (*p.Spec.Priority != tt.priority || *p.Spec.PreemptionPolicy != tt.policy || p.Spec.PriorityClassName != tt.className) {
				t.Errorf("priority %d %s %q", *p.Spec.Priority, *p.Spec.PreemptionPolicy, p.Spec.PriorityClassName)
			}
		})
	}
	if d := DefaultPriorityClass([]*schedulingv1.PriorityClass{high, def, {ObjectMeta: metav1.ObjectMeta{Name: "low"}, Value: 1, GlobalDefault: true}}); d == nil || d.Name != "low" {
		t.Errorf("default class %v", d)
	}
}

func TestRuntimeClassAdmitPod(t *testing.T) {
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc",
		Overhead: &nodev1.Overhead{PodFixed: rl("cpu", "250m")},
		Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"runtime": "gvisor"},
			Tolerations: []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists}}}}
	name := "gvisor"
	tests := []struct {
		name string
		pod  corev1.PodSpec
		rc   *nodev1.RuntimeClass
		want string
	}{
		{name: "applied", pod: corev1.PodSpec{RuntimeClassName: &name}, rc: rc},
		// Captured from kube-apiserver v1.37.2 (p3).
		{name: "unknown", pod: corev1.PodSpec{RuntimeClassName: new("norc")}, want: `pod rejected: RuntimeClass "norc" not found`},
		{name: "overhead differs", pod: corev1.PodSpec{RuntimeClassName: &name, Overhead: rl("cpu", "1")}, rc: rc,
			want: "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"},
		{name: "overhead without class", pod: corev1.PodSpec{Overhead: rl("cpu", "1")},
			want: "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"},
		{name: "selector conflict", pod: corev1.PodSpec{RuntimeClassName: &name, NodeSelector: map[string]string{"runtime": "kata"}}, rc: rc,
			want: "pod rejected: conflict: runtimeClass.scheduling.nodeSelector[runtime] = gvisor; pod.spec.nodeSelector[runtime] = kata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Pod{Spec: tt.pod}
			err := RuntimeClassAdmitPod(p, tt.rc)
			if got := errString(err); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if tt.name == "applied" && (!resourceListEqual(p.Spec.Overhead, rl("cpu", "250m")) || p.Spec.NodeSelector["runtime"] != "gvisor" || len(p.Spec.Tolerations) != 1) {
				t.Errorf("spec %+v", p.Spec)
			}
		})
	}
}

func TestDefaultClasses(t *testing.T) {
	at := func(name string, sec int64, ann map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Annotations: ann, CreationTimestamp: metav1.NewTime(time.Unix(sec, 0))}
	}
	yes := map[string]string{DefaultStorageClassAnnotation: "true"}
	beta := map[string]string{BetaDefaultStorageClassAnnotation: "true"}
	sc := []*storagev1.StorageClass{{ObjectMeta: at("old", 1, yes)}, {ObjectMeta: at("plain", 9, nil)}, {ObjectMeta: at("new-b", 5, beta)}, {ObjectMeta: at("new-a", 5, yes)}}
	if got := DefaultStorageClassName(sc); got != "new-a" {
		t.Errorf("default storage class %q", got)
	}
	if got := DefaultStorageClassName(sc[1:2]); got != "" {
		t.Errorf("no default: %q", got)
	}
	ic := []*networkingv1.IngressClass{{ObjectMeta: at("nginx", 1, map[string]string{DefaultIngressClassAnnotation: "true"})}, {ObjectMeta: at("other", 2, map[string]string{DefaultIngressClassAnnotation: "false"})}}
	if got := DefaultIngressClassName(ic); got != "nginx" {
		t.Errorf("default ingress class %q", got)
	}
}

func TestCertificateSubjectRestriction(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	request := func(orgs ...string) []byte {
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "x", Organization: orgs}}, key)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	}
	csr := func(signer string, req []byte) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer, Request: req}}
	}
	tests := []struct {
		name string
		csr  *certificatesv1.CertificateSigningRequest
		want string
	}{
		// Captured from kube-apiserver v1.37.2 (adm-csr1).
		{"masters", csr("kubernetes.io/kube-apiserver-client", request("system:masters")),
			"use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"},
		{"other group", csr("kubernetes.io/kube-apiserver-client", request("dev")), ""},
		{"other signer", csr("example.com/signer", request("system:masters")), ""},
		{"not PEM", csr("kubernetes.io/kube-apiserver-client", []byte("x")), "failed to parse CSR: PEM block type must be CERTIFICATE REQUEST"},
	}
	for _, tt := range tests {
		if got := errString(CertificateSubjectRestriction(tt.csr)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
