package registry

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strconv"
	"strings"

	certificatesv1 "github.com/kapi-dev/kapi/api/certificates/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// certificates.k8s.io/v1: certificate signing requests, cluster trust
// bundles and pod certificate requests, with kube-apiserver v1.37.2's
// create-time filling, validation causes, immutable fields, Table columns
// and field selectors (testdata/golden-1.37/kinds/*-certificates.k8s.io-*).
// The approval subresource is not here.

// UserInfo is the identity of a request's user, as an authenticator
// reports it.
type UserInfo struct {
	Username string
	UID      string
	Groups   []string
	Extra    map[string][]string
}

func certificatesKinds(Options, services) []*Resource {
	return []*Resource{
		kind[certificatesv1.CertificateSigningRequest]("certificates.k8s.io", "v1", "certificatesigningrequests", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			// The spec is the server's (requester and request, fixed at
			// create), as status is: no writer owns either.
			ResetFields:      map[string][]string{"": {"spec", "status"}},
			PrepareForCreate: ResetStatus,
			Requester:        func(o Object, u UserInfo) { setRequester(o.(*certificatesv1.CertificateSigningRequest), u) },
			PrepareForUpdate: func(o, old Object) {
				// The spec is fixed at create: an update of the main
				// resource changes metadata only (the server keeps status).
				o.(*certificatesv1.CertificateSigningRequest).Spec = *old.(*certificatesv1.CertificateSigningRequest).Spec.DeepCopy()
			},
			Validate: validateCSR, Printer: csrPrinter,
			SelectableFields: func(o Object) map[string]string {
				return map[string]string{"spec.signerName": o.(*certificatesv1.CertificateSigningRequest).Spec.SignerName}
			}}),
		// kube-apiserver v1.37 stores ClusterTrustBundles and
		// PodCertificateRequests as v1beta1 (discovery's
		// storageVersionHash says so).
		kind[certificatesv1.ClusterTrustBundle]("certificates.k8s.io", "v1", "clustertrustbundles", Resource{
			StorageVersion: "v1beta1",
			Meta:           MetaRules{Name: NameIsPathSegment, Kube: true}, Validate: validateClusterTrustBundle, Printer: clusterTrustBundlePrinter,
			SelectableFields: func(o Object) map[string]string {
				return map[string]string{"spec.signerName": o.(*certificatesv1.ClusterTrustBundle).Spec.SignerName}
			}}),
		kind[certificatesv1.PodCertificateRequest]("certificates.k8s.io", "v1", "podcertificaterequests", Resource{
			StorageVersion: "v1beta1",
			Meta:           builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			Default: defaultPodCertificateRequest,
			PrepareForCreate: func(o Object) {
				defaultPodCertificateRequest(o)
				ResetStatus(o)
			},
			PrepareForUpdate: func(o, _ Object) { defaultPodCertificateRequest(o) },
			Validate:         validatePodCertificateRequest, Printer: podCertificateRequestPrinter,
			SelectableFields: func(o Object) map[string]string {
				s := o.(*certificatesv1.PodCertificateRequest).Spec
				return map[string]string{"spec.signerName": s.SignerName, "spec.podName": s.PodName, "spec.nodeName": string(s.NodeName)}
			}}),
	}
}

// setRequester fills a new request's requester from the user, whatever
// the client sent.
func setRequester(c *certificatesv1.CertificateSigningRequest, u UserInfo) {
	c.Spec.Username, c.Spec.UID = u.Username, u.UID
	c.Spec.Groups = slices.Clone(u.Groups)
	c.Spec.Extra = nil
	for k, v := range u.Extra {
		if c.Spec.Extra == nil {
			c.Spec.Extra = map[string]certificatesv1.ExtraValue{}
		}
		c.Spec.Extra[k] = slices.Clone(v)
	}
}

var keyUsages = []string{"any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment",
	"decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user",
	"key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"}

func validateCSR(o, _ Object) metav1.FieldErrors {
	c := o.(*certificatesv1.CertificateSigningRequest)
	s := c.Spec
	var errs metav1.FieldErrors
	var request any // null when absent, base64 otherwise, as kube-apiserver shows it
	if s.Request != nil {
		request = s.Request
	}
	if block, _ := pem.Decode(s.Request); block == nil || block.Type != "CERTIFICATE REQUEST" {
		errs = append(errs, metav1.FieldInvalid("spec.request", request, "PEM block type must be CERTIFICATE REQUEST"))
	} else if _, err := x509.ParseCertificateRequest(block.Bytes); err != nil {
		errs = append(errs, metav1.FieldInvalid("spec.request", request, err.Error()))
	}
	if len(s.Usages) == 0 {
		errs = append(errs, metav1.FieldRequired("spec.usages", ""))
	}
	seen := map[certificatesv1.KeyUsage]bool{}
	for i, u := range s.Usages {
		p := "spec.usages[" + strconv.Itoa(i) + "]"
		if !slices.Contains(keyUsages, string(u)) {
			errs = append(errs, metav1.FieldNotSupported(p, string(u), keyUsages))
		}
		if seen[u] {
			errs = append(errs, metav1.FieldDuplicate(p, string(u)))
		}
		seen[u] = true
	}
	switch {
	case s.SignerName == "":
		errs = append(errs, metav1.FieldRequired("spec.signerName", ""))
	case s.SignerName == "kubernetes.io/legacy-unknown":
		errs = append(errs, metav1.FieldInvalid("spec.signerName", s.SignerName, "the legacy signerName is not allowed via this API version"))
	default:
		errs = append(errs, validateSignerName(s.SignerName, "spec.signerName")...)
	}
	if e := s.ExpirationSeconds; e != nil && *e < 600 {
		errs = append(errs, metav1.FieldInvalid("spec.expirationSeconds", *e, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	return errs
}

// validateSignerName checks a signer name: a DNS subdomain, "/", and a
// name.
func validateSignerName(name, path string) metav1.FieldErrors {
	domain, rest, ok := strings.Cut(name, "/")
	if !ok || domain == "" || rest == "" || strings.Contains(rest, "/") {
		return metav1.FieldErrors{metav1.FieldInvalid(path, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs metav1.FieldErrors
	for _, msg := range ValidateDNS1123Subdomain(domain) {
		errs = append(errs, metav1.FieldInvalid(path, name, "validating domain component: "+msg))
	}
	return errs
}

func validateClusterTrustBundle(o, old Object) metav1.FieldErrors {
	b := o.(*certificatesv1.ClusterTrustBundle)
	var errs metav1.FieldErrors
	if s := b.Spec.SignerName; s != "" {
		prefix := strings.ReplaceAll(s, "/", ":") + ":"
		if !strings.HasPrefix(b.Name, prefix) {
			errs = append(errs, metav1.FieldInvalid("metadata.name", b.Name, "ClusterTrustBundle for signerName "+s+" must be named with prefix "+prefix))
		}
	} else if strings.Contains(b.Name, ":") {
		errs = append(errs, metav1.FieldInvalid("metadata.name", b.Name, `ClusterTrustBundle without signer name must not have ":" in its name`))
	}
	if old != nil {
		if ob := old.(*certificatesv1.ClusterTrustBundle); b.Spec.SignerName != ob.Spec.SignerName {
			errs = append(errs, metav1.FieldInvalid("spec.signerName", b.Spec.SignerName, "field is immutable"))
		}
	} else if b.Spec.SignerName != "" {
		errs = append(errs, validateSignerName(b.Spec.SignerName, "spec.signerName")...)
	}
	if msg := trustBundleError(b.Spec.TrustBundle); msg != "" {
		errs = append(errs, metav1.FieldInvalid("spec.trustBundle", "<value omitted>", msg))
	}
	return errs
}

// trustBundleError says what is wrong with a PEM trust bundle: a block
// that is not a CERTIFICATE, a certificate that does not parse or is no
// CA, a duplicate, or no certificate at all ("" when it is valid).
func trustBundleError(bundle string) string {
	rest := []byte(bundle)
	var seen [][]byte
	for i := 0; ; i++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Sprintf("entry %d has bad block type: %s", i, block.Type)
		}
		if len(block.Headers) != 0 {
			return fmt.Sprintf("entry %d has PEM block headers", i)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return fmt.Sprintf("entry %d does not parse correctly: %v", i, err)
		}
		if !cert.BasicConstraintsValid || !cert.IsCA {
			return fmt.Sprintf("entry %d does not have the CA bit set", i)
		}
		for _, s := range seen {
			if bytes.Equal(s, block.Bytes) {
				return fmt.Sprintf("duplicate trust anchor (indices [%d])", i)
			}
		}
		seen = append(seen, block.Bytes)
	}
	if len(seen) == 0 {
		return "at least one trust anchor must be provided"
	}
	return ""
}

func defaultPodCertificateRequest(o Object) {
	s := &o.(*certificatesv1.PodCertificateRequest).Spec
	if s.MaxExpirationSeconds == nil {
		v := int32(86400)
		s.MaxExpirationSeconds = &v
	}
}

// rawText is a rejected value kube-apiserver words without quotes: a
// cause whose detail stands in for the value.
type rawText string

func (r rawText) String() string { return string(r) }

// pcrSpecDump is a PodCertificateRequest's spec laid out as
// kube-apiserver's internal type, whose dump an immutability cause shows
// (it still has the public-key fields the v1 API no longer has).
type pcrSpecDump struct {
	SignerName                string
	PodName                   string
	PodUID                    metav1.UID
	ServiceAccountName        string
	ServiceAccountUID         metav1.UID
	NodeName                  metav1.NodeName
	NodeUID                   metav1.UID
	MaxExpirationSeconds      *int32
	PKIXPublicKey             []byte
	ProofOfPossession         []byte
	StubPKCS10Request         []byte
	UnverifiedUserAnnotations map[string]string
}

func validatePodCertificateRequest(o, old Object) metav1.FieldErrors {
	r := o.(*certificatesv1.PodCertificateRequest)
	s := r.Spec
	var errs metav1.FieldErrors
	if old != nil && !SpecEqual(o, old) {
		errs = append(errs, metav1.FieldInvalid("spec", goDump{pcrSpecDump{
			SignerName: s.SignerName, PodName: s.PodName, PodUID: s.PodUID, ServiceAccountName: s.ServiceAccountName,
			ServiceAccountUID: s.ServiceAccountUID, NodeName: s.NodeName, NodeUID: s.NodeUID,
			MaxExpirationSeconds: s.MaxExpirationSeconds, StubPKCS10Request: s.StubPKCS10Request,
			UnverifiedUserAnnotations: s.UnverifiedUserAnnotations}}, "field is immutable"))
	}
	if s.SignerName == "" {
		errs = append(errs, metav1.FieldRequired("spec.signerName", ""))
	} else {
		errs = append(errs, validateSignerName(s.SignerName, "spec.signerName")...)
	}
	subdomain := func(path, v string) {
		for _, msg := range ValidateDNS1123Subdomain(v) {
			errs = append(errs, metav1.FieldInvalid(path, v, msg))
		}
	}
	uid := func(path string, v metav1.UID) {
		if v == "" {
			errs = append(errs, metav1.FieldInvalid(path, "", "must not be empty"))
		}
	}
	subdomain("spec.podName", s.PodName)
	uid("spec.podUID", s.PodUID)
	subdomain("spec.serviceAccountName", s.ServiceAccountName)
	uid("spec.serviceAccountUID", s.ServiceAccountUID)
	subdomain("spec.nodeName", string(s.NodeName))
	uid("spec.nodeUID", s.NodeUID)
	if len(s.StubPKCS10Request) == 0 {
		errs = append(errs, metav1.FieldInvalid("spec", rawText("exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set"), ""))
	}
	return errs
}
