package registry

import (
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	discoveryv1 "github.com/kapi-dev/kapi/api/discovery/v1"
)

// defaultEndpoints applies kube-apiserver's defaults to Endpoints: a port
// without a protocol is TCP.
func defaultEndpoints(o Object) {
	ep := o.(*corev1.Endpoints)
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Ports {
			if p := &ep.Subsets[i].Ports[j]; p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
		}
	}
}

// defaultEndpointSlice applies kube-apiserver's defaults to an EndpointSlice:
// a port without a name has the empty name, one without a protocol TCP.
func defaultEndpointSlice(o Object) {
	es := o.(*discoveryv1.EndpointSlice)
	for i := range es.Ports {
		p := &es.Ports[i]
		if p.Name == nil {
			p.Name = new("")
		}
		if p.Protocol == nil {
			p.Protocol = new(corev1.ProtocolTCP)
		}
	}
}
