package registry

import (
	"maps"
	"net/http"
	"net/netip"
	"strconv"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	discoveryv1 "github.com/kapi-dev/kapi/api/discovery/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/builtin"
)

// Options configure the server-side behaviour of the built-in resources.
// The zero value is usable.
type Options struct {
	// ServiceCIDR is the IPv4 range services' cluster IPs are allocated from
	// (default 10.96.0.0/12, kubeadm's). The network and broadcast addresses
	// are never handed out.
	ServiceCIDR netip.Prefix
	// NodePortRange is the range node ports of NodePort and LoadBalancer
	// services are allocated from (default DefaultNodePortRange,
	// 30000-32767).
	NodePortRange PortRange
	// NameSuffix draws the random part of generated names, such as a pod's
	// kube-api-access-<suffix> token volume (default 5 random characters of
	// Kubernetes' alphabet). A server passes its own for reproducible names.
	NameSuffix func() string
	// ComponentProbes are the components componentstatuses reports
	// beside the storage (default DefaultComponentProbes: the scheduler
	// and the controller manager on loopback), probed with
	// ComponentClient (default a client that, as kube-apiserver's prober,
	// does not verify certificates).
	ComponentProbes []ComponentProbe
	ComponentClient *http.Client
}

// Builtin returns a registry holding the built-in resources: core/v1
// namespaces, configmaps, secrets, serviceaccounts, pods, services, endpoints,
// nodes and events; apps/v1 deployments; coordination.k8s.io/v1 leases;
// discovery.k8s.io/v1 endpointslices. It is
// BuiltinWith(Options{}).
func Builtin() *Registry {
	g, err := BuiltinWith(Options{})
	if err != nil {
		panic(err) // the defaults are valid; a failure is a programming error
	}
	return g
}

// BuiltinWith returns the built-in resources configured by opts. Each call
// has its own state (the service IP allocator): two registries hand out the
// same addresses.
func BuiltinWith(opts Options) (*Registry, error) {
	if !opts.ServiceCIDR.IsValid() {
		opts.ServiceCIDR = defaultServiceCIDR
	}
	if opts.NameSuffix == nil {
		opts.NameSuffix = randomSuffix
	}
	if opts.NodePortRange == (PortRange{}) {
		opts.NodePortRange = DefaultNodePortRange
	}
	ips, err := newIPAllocator(opts.ServiceCIDR)
	if err != nil {
		return nil, err
	}
	ports, err := newPortAllocator(opts.NodePortRange)
	if err != nil {
		return nil, err
	}
	g := New()
	for _, kinds := range groupKinds {
		for _, r := range kinds(opts, services{ips: ips, ports: ports}) {
			if err := g.Add(r); err != nil {
				return nil, err
			}
		}
	}
	return g, nil
}

// groupKinds return the built-in resources, a group (or a few) each.
// Their order does not matter: discovery orders groups by priority.
var groupKinds = []func(Options, services) []*Resource{
	coreKinds,
	eventsKinds,
	storageKinds,
	resourceKinds,
	certificatesKinds,
	admissionKinds,
	apiregistrationKinds,
	storagemigrationKinds,
	rbacKinds,
	networkingKinds,
	flowcontrolKinds,
	nodeKinds,
	schedulingKinds,
	coreMoreKinds,
	virtualKinds,
	appsKinds, batchKinds, autoscalingKinds, policyKinds,
	componentStatusKinds,
}

// coreKinds are the resources of the legacy core group, apps, coordination
// and discovery that came first.
func coreKinds(opts Options, svc services) []*Resource {
	pods := kind[corev1.Pod]("", "v1", "pods", Resource{Generation: true, SelectableFields: podFields, Validate: validatePodSpec,
		Meta: builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(true, false),
		Default: defaultPod,
		PrepareForCreate: func(o Object) {
			defaultPod(o)
			preparePod(o)
			gatePodScheduling(o.(*corev1.Pod), o.GetCreationTimestamp().Time)
		},
		PrepareForUpdate: func(o, old Object) {
			defaultPodSpecFields(o.(*corev1.Pod))
		}})
	pods.GracePeriod = podGracePeriod
	pods.ReturnDeletedObject = true
	return []*Resource{
		kind[corev1.ConfigMap]("", "v1", "configmaps", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), Validate: validateConfigMap}),
		kind[corev1.Event]("", "v1", "events", Resource{
			SelectableFields: eventFields, Meta: MetaRules{Name: NameIsPathSegment}, Validate: validateEvent}),
		kind[corev1.Namespace]("", "v1", "namespaces", Resource{
			Meta: MetaRules{Name: NameIsDNSLabel, Kube: true, NewFirst: true}, Validate: validateNamespace, ReturnDeletedObject: true,
			StatusMetadata: statusMetadata(false, false), PrepareForCreate: prepareNamespace,
			Default: defaultNamespace, PrepareForUpdate: func(o, _ Object) { defaultNamespace(o) },
			SelectableFields: func(o Object) map[string]string {
				return map[string]string{"status.phase": string(o.(*corev1.Namespace).Status.Phase)}
			}}),
		kind[corev1.Node]("", "v1", "nodes", Resource{Meta: MetaRules{Kube: true, NewFirst: true}, StatusMetadata: statusMetadata(false, false),
			SelectableFields: func(o Object) map[string]string {
				return map[string]string{"spec.unschedulable": strconv.FormatBool(o.(*corev1.Node).Spec.Unschedulable)}
			},
			Default: defaultNode, Validate: validateNode,
			PrepareForCreate: func(o Object) {
				defaultNode(o)
			},
			PrepareForUpdate: func(o, _ Object) { defaultNodeSpec(o.(*corev1.Node)) }}),
		pods,
		kind[corev1.Secret]("", "v1", "secrets", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), Validate: validateSecret, Warnings: SecretWarnings,
			SelectableFields: func(o Object) map[string]string {
				return map[string]string{"type": string(o.(*corev1.Secret).Type)}
			},
			Default:          defaultSecret,
			PrepareForCreate: defaultSecret,
			PrepareForUpdate: func(o, _ Object) { defaultSecret(o) }}),
		kind[corev1.ServiceAccount]("", "v1", "serviceaccounts", Resource{Meta: builtinMeta(NameIsDNSSubdomain), ReturnDeletedObject: true}),
		kind[corev1.Service]("", "v1", "services", Resource{Meta: MetaRules{Name: NameIsDNSLabel, Kube: true, UpdateOnly: true},
			StatusMetadata: statusMetadata(false, false),
			Default:        defaultService, PrepareForCreate: svc.prepareForCreate, PrepareForUpdate: svc.prepareForUpdate,
			Validate: svc.validate, Admit: svc.admit, Release: svc.release, Retain: svc.retain, ReturnDeletedObject: true}),
		kind[appsv1.Deployment]("apps", "v1", "deployments", Resource{Generation: true,
			GenerationOnAnnotations: true, Meta: MetaRules{Kube: true, UpdateOnly: true}, StatusMetadata: statusMetadata(false, true),
			Validate: validateDeploymentSpec, Default: defaultDeployment,
			PrepareForCreate: func(o Object) {
				defaultDeployment(o)
				ResetStatus(o)
			},
			PrepareForUpdate: func(o, _ Object) { defaultDeployment(o) },
			Bookmark:         func(o Object) { o.(*appsv1.Deployment).Spec.Replicas = new(int32) }}),
		kind[coordinationv1.Lease]("coordination.k8s.io", "v1", "leases", Resource{
			Meta: MetaRules{UpdateOnly: true}, Validate: validateLease,
			PrepareForCreate: func(o Object) { dropDisabledLeaseFields(o, nil) }, PrepareForUpdate: dropDisabledLeaseFields}),
		kind[corev1.Endpoints]("", "v1", "endpoints", Resource{
			Default: defaultEndpoints, PrepareForCreate: defaultEndpoints, Validate: validateEndpoints, PrepareForUpdate: func(o, _ Object) { defaultEndpoints(o) },
			Meta: builtinMeta(NameIsDNSSubdomain), Warning: "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"}),
		kind[discoveryv1.EndpointSlice]("discovery.k8s.io", "v1", "endpointslices", Resource{Generation: true, SameSpec: sameEndpointSlice, Default: defaultEndpointSlice, PrepareForCreate: defaultEndpointSlice,
			PrepareForUpdate: func(o, _ Object) { defaultEndpointSlice(o) }, Meta: builtinMeta(NameIsDNSSubdomain), Validate: validateEndpointSlice}),
	}
}

// sameEndpointSlice tells whether an update keeps an EndpointSlice's
// generation: kube-apiserver bumps it on a change of anything but metadata,
// and of its labels (an empty list is the same as none).
func sameEndpointSlice(a, b Object) bool {
	x, y := a.(*discoveryv1.EndpointSlice), b.(*discoveryv1.EndpointSlice)
	return x.AddressType == y.AddressType && maps.Equal(x.Labels, y.Labels) &&
		SemanticEqual(x.Endpoints, y.Endpoints) && SemanticEqual(x.Ports, y.Ports)
}

func prepareNamespace(o Object) {
	ns := o.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	if !containsFinalizer(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels["kubernetes.io/metadata.name"] = ns.Name
}

func containsFinalizer(s []corev1.FinalizerName, f corev1.FinalizerName) bool {
	for _, x := range s {
		if x == f {
			return true
		}
	}
	return false
}

func podFields(o Object) map[string]string {
	p := o.(*corev1.Pod)
	return map[string]string{
		"spec.nodeName":            p.Spec.NodeName,
		"spec.restartPolicy":       string(p.Spec.RestartPolicy),
		"spec.schedulerName":       p.Spec.SchedulerName,
		"spec.serviceAccountName":  p.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(p.Spec.HostNetwork),
		"status.phase":             string(p.Status.Phase),
		"status.podIP":             p.Status.PodIP,
		"status.nominatedNodeName": p.Status.NominatedNodeName,
	}
}

func eventFields(o Object) map[string]string {
	e := o.(*corev1.Event)
	return map[string]string{
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         e.Source.Component,
		"type":                           e.Type,
	}
}

// preparePod sets the status a new pod starts with: Pending, with its QoS class.
func preparePod(o Object) {
	p := o.(*corev1.Pod)
	p.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: qosClass(&p.Spec)}
	// v1's serviceAccount mirrors serviceAccountName.
	p.Spec.DeprecatedServiceAccount = p.Spec.ServiceAccountName
}

// qosClass computes a pod's quality-of-service class from its containers'
// requests and limits, as the kubelet and kube-apiserver do.
func qosClass(spec *corev1.PodSpec) corev1.PodQOSClass {
	any, guaranteed := false, true
	containers := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
	for _, c := range containers {
		for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[res]
			lim, hasLim := c.Resources.Limits[res]
			if hasReq || hasLim {
				any = true
			}
			if !hasLim || (hasReq && req.Cmp(lim) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// kind describes the built-in resource group/version/resource of Go type
// T: its names, scope, short names, categories, verbs and subresources as
// kube-apiserver v1.37 lists them (internal/builtin), with the behaviour b
// gives it.
func kind[T any, PT interface {
	*T
	metav1.Object
	DeepCopy() *T
	GetObjectKind() *metav1.TypeMeta
}](group, version, resource string, b Resource) *Resource {
	d, ok := builtin.Lookup(group, version, resource)
	if !ok {
		panic("registry: " + group + "/" + version + "/" + resource + " is not a built-in resource of kube-apiserver v1.37")
	}
	r := b
	r.Group, r.Version, r.Resource, r.Singular, r.Kind = d.Group, d.Version, d.Resource, d.Singular, d.Kind
	r.Namespaced, r.ShortNames, r.Categories, r.Verbs = d.Namespaced, d.ShortNames, d.Categories, d.Verbs
	r.Subresources = make([]Subresource, len(d.Subresources))
	for i, s := range d.Subresources {
		r.Subresources[i] = Subresource{Name: s.Name, Kind: metav1.GroupVersionKind{Group: s.Group, Version: s.Version, Kind: s.Kind}, Verbs: s.Verbs}
		if s.Name == "status" {
			r.StatusSubresource = true
		}
	}
	return Typed[T, PT](&r)
}
