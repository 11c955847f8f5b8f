package apiserver

import (
	"fmt"
	"time"

	certificatesv1 "github.com/kapi-dev/kapi/api/certificates/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// certificatesigningrequests/approval: a PUT of the request whose
// status.conditions (Approved, Denied) are taken, stamped with the time of
// the write where the client left their times out, and validated as
// kube-apiserver validates an approval.

// takeApproval takes the body's status.conditions; the rest is the stored
// request's. A condition without times gets the write's (its transition
// time kept from the stored condition of the same type and status).
func takeApproval(res *registry.Resource, cur, in registry.Object, now time.Time) registry.Object {
	next := res.Copy(cur).(*certificatesv1.CertificateSigningRequest)
	prev := cur.(*certificatesv1.CertificateSigningRequest)
	next.Status.Conditions = in.(*certificatesv1.CertificateSigningRequest).Status.Conditions
	stamp := metav1.NewTime(now.UTC().Truncate(time.Second))
	for i := range next.Status.Conditions {
		c := &next.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = stamp
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = stamp
		for _, old := range prev.Status.Conditions {
			if old.Type == c.Type && old.Status == c.Status && !old.LastTransitionTime.IsZero() {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	return next
}

// validateApproval checks an approval: conditions with a type and a
// status, Approved and Denied only True and never both, and neither
// removed once given.
func validateApproval(obj, old registry.Object) metav1.FieldErrors {
	c, prev := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	var errs metav1.FieldErrors
	approved, denied := false, false
	for i, cond := range c.Status.Conditions {
		path := fmt.Sprintf("status.conditions[%d]", i)
		if cond.Type == "" {
			errs = append(errs, metav1.FieldRequired(path+".type", ""))
		}
		switch cond.Type {
		case certificatesv1.CertificateApproved, certificatesv1.CertificateDenied:
			if cond.Status != corev1.ConditionTrue {
				errs = append(errs, metav1.FieldNotSupported(path+".status", string(cond.Status), []string{string(corev1.ConditionTrue)}))
			}
			approved = approved || cond.Type == certificatesv1.CertificateApproved
			denied = denied || cond.Type == certificatesv1.CertificateDenied
		}
	}
	if approved && denied {
		errs = append(errs, metav1.FieldInvalid("status.conditions", rawValue(`{conditions[{"type": "Approved"}], conditions[{"type": "Denied"}]}`),
			"must specify at most one of: `conditions[{\"type\": \"Approved\"}]`, `conditions[{\"type\": \"Denied\"}]`"))
	}
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
		if hasCondition(prev, t) && !hasCondition(c, t) {
			errs = append(errs, metav1.FieldForbidden("status.conditions", fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	return errs
}

func hasCondition(c *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == t {
			return true
		}
	}
	return false
}

// rawValue is a bad value kube-apiserver prints quoted as a string.
type rawValue string

func (r rawValue) String() string { return fmt.Sprintf("%q", string(r)) }
