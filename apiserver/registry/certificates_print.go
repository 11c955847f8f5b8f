package registry

import (
	"sort"
	"strings"
	"time"

	certificatesv1 "github.com/kapi-dev/kapi/api/certificates/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// The Tables of certificates.k8s.io/v1, as kube-apiserver v1.37.2 prints
// them (testdata/golden-1.37/kinds/table-certificates.k8s.io-*).

var csrPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		ageColumn(),
		{Name: "SignerName", Type: "string", Description: "Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet client certificate, it is assigned\n    \"kubernetes.io/kube-apiserver-client-kubelet\".\n 2. If it's a kubelet serving certificate, it is assigned\n    \"kubernetes.io/kubelet-serving\".\n 3. Otherwise, it is assigned \"kubernetes.io/legacy-unknown\".\nDistribution of trust for signers happens out of band. You can select on this field using `spec.signerName`."},
		{Name: "Requestor", Type: "string", Description: "Base64-encoded PKCS#10 CSR data"},
		{Name: "RequestedDuration", Type: "string", Description: "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n  3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes."},
		{Name: "Condition", Type: "string", Description: "Conditions applied to the request, such as approval or denial."},
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		c := o.(*certificatesv1.CertificateSigningRequest)
		duration := "<none>"
		if c.Spec.ExpirationSeconds != nil {
			duration = HumanDuration(time.Duration(*c.Spec.ExpirationSeconds) * time.Second)
		}
		return []any{c.Name, Age(c.CreationTimestamp, now), c.Spec.SignerName, c.Spec.Username, duration, csrCondition(c)}, nil
	},
}

// csrCondition words a request's state as kubectl does: Denied, Approved
// or Pending, then Failed and Issued.
func csrCondition(c *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, cond := range c.Status.Conditions {
		switch cond.Type {
		case "Approved":
			approved = true
		case "Denied":
			denied = true
		case "Failed":
			failed = true
		}
	}
	s := "Pending"
	switch {
	case denied:
		s = "Denied"
	case approved:
		s = "Approved"
	}
	if failed {
		s += ",Failed"
	}
	if len(c.Status.Certificate) > 0 {
		s += ",Issued"
	}
	return s
}

var clusterTrustBundlePrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "SignerName", Type: "string", Description: "signerName indicates the associated signer, if any.\n\nIn order to create or update a ClusterTrustBundle that sets signerName, you must have the following cluster-scoped permission: group=certificates.k8s.io resource=signers resourceName=<the signer name> verb=attest.\n\nIf signerName is not empty, then the ClusterTrustBundle object must be named with the signer name as a prefix (translating slashes to colons). For example, for the signer name `example.com/foo`, valid ClusterTrustBundle object names include `example.com:foo:abc` and `example.com:foo:v1`.\n\nIf signerName is empty, then the ClusterTrustBundle object's name must not have such a prefix.\n\nList/watch requests for ClusterTrustBundles can filter on this field using a `spec.signerName=NAME` field selector."},
	},
	Row: func(o Object, _ time.Time) ([]any, []metav1.TableRowCondition) {
		b := o.(*certificatesv1.ClusterTrustBundle)
		return []any{b.Name, orNone(b.Spec.SignerName)}, nil
	},
}

var podCertificateRequestPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "PodName", Type: "string", Description: "podName is the name of the pod into which the certificate will be mounted."},
		{Name: "ServiceAccountName", Type: "string", Description: "serviceAccountName is the name of the service account the pod is running as."},
		{Name: "NodeName", Type: "string", Description: "nodeName is the name of the node the pod is assigned to."},
		{Name: "SignerName", Type: "string", Description: "signerName indicates the requested signer.\n\nAll signer names beginning with `kubernetes.io` are reserved for use by the Kubernetes project.  There is currently one well-known signer documented by the Kubernetes project, `kubernetes.io/kube-apiserver-client-pod`, which will issue client certificates understood by kube-apiserver.  It is currently unimplemented."},
		{Name: "State", Type: "string", Description: "Is the request Pending, Issued, Denied, or Failed?"},
		{Name: "UnverifiedUserAnnotations", Type: "string", Description: "unverifiedUserAnnotations allow pod authors to pass additional information to the signer implementation.  Kubernetes does not restrict or validate this metadata in any way.\n\nEntries are subject to the same validation as object metadata annotations, with the addition that all keys must be domain-prefixed. No restrictions are placed on values, except an overall size limitation on the entire field.\n\nSigners should document the keys and values they support.  Signers should deny requests that contain keys they do not recognize."},
	},
	Row: func(o Object, _ time.Time) ([]any, []metav1.TableRowCondition) {
		r := o.(*certificatesv1.PodCertificateRequest)
		s := r.Spec
		ann := "<none>"
		if len(s.UnverifiedUserAnnotations) > 0 {
			pairs := make([]string, 0, len(s.UnverifiedUserAnnotations))
			for k, v := range s.UnverifiedUserAnnotations {
				pairs = append(pairs, k+"="+v)
			}
			sort.Strings(pairs)
			ann = strings.Join(pairs, ",")
		}
		return []any{r.Name, s.PodName, s.ServiceAccountName, string(s.NodeName), s.SignerName, pcrState(r), ann}, nil
	},
}

// pcrState is Issued, Denied or Failed from the request's true
// conditions, Pending otherwise.
func pcrState(r *certificatesv1.PodCertificateRequest) string {
	for _, c := range r.Status.Conditions {
		if c.Status == metav1.ConditionTrue && (c.Type == "Issued" || c.Type == "Denied" || c.Type == "Failed") {
			return c.Type
		}
	}
	return "Pending"
}
