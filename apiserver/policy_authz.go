package apiserver

import (
	"context"
	"strings"

	"github.com/kapi-dev/kapi/internal/cel"
)

// policyAuthz answers the checks of the authorizer library of policy
// expressions (internal/cel) with the server's Authorizer, for user, the
// request's, or the service account a check names (serviceAccount(ns,
// name): its user name, with no groups, as kube-apiserver's library).
func (s *Server) policyAuthz(ctx context.Context, user User) cel.AuthzFunc {
	return func(c cel.AuthzCheck) cel.AuthzDecision {
		u := user
		if c.ServiceAccount != "" {
			ns, name, _ := strings.Cut(c.ServiceAccount, "/")
			u = User{Name: "system:serviceaccount:" + ns + ":" + name} // no groups, as kube-apiserver's library
		}
		a := Attributes{User: u, Verb: c.Verb, Path: c.Path}
		if c.Path == "" {
			a.ResourceRequest = true
			a.APIGroup, a.APIVersion, a.Resource, a.Subresource, a.Namespace, a.Name = c.Group, "*", c.Resource, c.Subresource, c.Namespace, c.Name
		}
		d, reason, err := s.authorizer().Authorize(ctx, a)
		return cel.AuthzDecision{Allowed: d == DecisionAllow, Reason: reason, Err: err}
	}
}
