package apiserver

import (
	"context"
	"strconv"

	admissionv1 "github.com/kapi-dev/kapi/api/admission/v1"
	admissionregistrationv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// # Admission of CONNECT requests
//
// A request of a subresource that connects to a kubelet or a backend
// (pods' exec, attach, portforward and proxy; services' and nodes' proxy)
// is admitted before the server tries to connect, as kube-apiserver does:
// the ValidatingAdmissionPolicies and the validating webhooks whose rules
// name it with the CONNECT operation are sent its options (PodExecOptions
// ... from the query) as object, with no old object and no options.

// connectKinds are the kinds of the options of the CONNECT subresources.
var connectKinds = map[string]string{
	"pods/exec": "PodExecOptions", "pods/attach": "PodAttachOptions", "pods/portforward": "PodPortForwardOptions",
	"pods/proxy": "PodProxyOptions", "services/proxy": "ServiceProxyOptions", "nodes/proxy": "NodeProxyOptions",
}

// connectOptions is the options object of a CONNECT request of
// resource/sub, read from its query as kube-apiserver reads them.
func connectOptions(kind string, query map[string][]string) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": "v1", "kind": kind}
	for _, b := range []string{"stdin", "stdout", "stderr", "tty"} {
		if kind != "PodExecOptions" && kind != "PodAttachOptions" {
			break
		}
		if v := query[b]; len(v) > 0 {
			if t, err := strconv.ParseBool(v[0]); err == nil && t {
				o[b] = true
			}
		}
	}
	if v := query["container"]; len(v) > 0 && (kind == "PodExecOptions" || kind == "PodAttachOptions") {
		o["container"] = v[0]
	}
	if v := query["command"]; len(v) > 0 && kind == "PodExecOptions" {
		cmd := make([]any, len(v))
		for i, c := range v {
			cmd[i] = c
		}
		o["command"] = cmd
	}
	if v := query["ports"]; len(v) > 0 && kind == "PodPortForwardOptions" {
		var ports []any
		for _, p := range v {
			if n, err := strconv.ParseInt(p, 10, 32); err == nil {
				ports = append(ports, n)
			}
		}
		if len(ports) > 0 {
			o["ports"] = ports
		}
	}
	if v := query["path"]; len(v) > 0 && v[0] != "" && kind != "PodExecOptions" && kind != "PodAttachOptions" && kind != "PodPortForwardOptions" {
		o["path"] = v[0]
	}
	return &unstructured.Unstructured{Object: o}
}

// admitConnect admits a CONNECT request of rs's subresource sub on the
// object name in namespace ns: nil when it is not a CONNECT subresource
// or when the policies and webhooks allow it.
func (rs resourceStore) admitConnect(ctx context.Context, ns, name, sub string, query map[string][]string, o *writeOptions) *metav1.Status {
	kind, ok := connectKinds[rs.res.Resource+"/"+sub]
	if !ok || rs.res.Group != "" {
		return nil
	}
	gvk := metav1.GroupVersionKind{Version: "v1", Kind: kind}
	opts := connectOptions(kind, query)
	view := &registry.Resource{Group: rs.res.Group, Version: rs.res.Version, Resource: rs.res.Resource, Kind: kind, Namespaced: rs.res.Namespaced,
		WithTypeMeta: func(o registry.Object) registry.Object { return o }}
	pr := newPolicyRequest(view, sub, opts, nil, false)
	pr.kind, pr.op, pr.namespace, pr.name = &gvk, "CONNECT", ns, name
	if st := rs.s.admitPolicyRequest(ctx, pr, o); st != nil {
		return st
	}
	hooks := rs.s.webhooksOf(ctx, false)
	if len(hooks) == 0 {
		return nil
	}
	r := &webhookRequest{res: view, subresource: sub, kind: &gvk, name: name, ns: ns, obj: opts,
		operation: admissionregistrationv1.OperationType(admissionv1.Connect)}
	return rs.s.runValidatingWebhooks(ctx, hooks, r, o)
}
