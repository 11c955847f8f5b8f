package registry

import (
	"math"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	"github.com/kapi-dev/kapi/api/resource"
)

// Defaulting: what kube-apiserver v1.32 fills in when it decodes an object of
// a built-in kind — the SetDefaults_* functions of
// k8s.io/kubernetes/pkg/apis/{core,apps}/v1, the +default markers of
// k8s.io/api, and the field syncs of its v1 conversion (a Secret's stringData,
// a pod's deprecated serviceAccount). Every function here is idempotent and
// touches only fields the client left unset, except where a conversion
// rewrites one (noted).
//
// Defaults that only kube-apiserver's admission plugins and allocators apply
// (a pod's service account volume and tolerations, a service's cluster IP)
// are in admission.go and service.go: they apply to pods and services, never
// to pod templates.

// The default values, with Kubernetes' names.
const (
	terminationMessagePathDefault        = "/dev/termination-log"
	defaultSchedulerName                 = "default-scheduler"
	defaultTerminationGracePeriodSeconds = int64(30)
	// defaultVolumeFileMode is 0644, the file mode of secret, configMap,
	// downwardAPI and projected volumes (420 in JSON).
	defaultVolumeFileMode                 = int32(0o644)
	defaultTokenExpirationSeconds         = int64(3600)
	defaultClientIPServiceAffinitySeconds = int32(10800)
	defaultDeploymentRevisionHistoryLimit = int32(10)
	defaultDeploymentProgressDeadline     = int32(600)
	labelMetadataName                     = "kubernetes.io/metadata.name"
)

// defaultSecret folds stringData into data (stringData wins) and drops it,
// as the v1 conversion does, and defaults the type to Opaque.
func defaultSecret(o Object) {
	s := o.(*corev1.Secret)
	if len(s.StringData) > 0 && s.Data == nil {
		s.Data = make(map[string][]byte, len(s.StringData))
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
}

// defaultNamespace labels a named namespace with its name.
func defaultNamespace(o Object) {
	ns := o.(*corev1.Namespace)
	if ns.Name == "" {
		return // a generated name gets the label when it is drawn
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[labelMetadataName] = ns.Name
}

// defaultNode applies defaultNodeSpec and defaultNodeStatus.
func defaultNode(o Object) {
	n := o.(*corev1.Node)
	defaultNodeSpec(n)
	defaultNodeStatus(n)
}

// defaultNodeSpec syncs spec.podCIDR with spec.podCIDRs (podCIDR wins when
// they disagree, as in the v1 conversion).
func defaultNodeSpec(n *corev1.Node) {
	if n.Spec.PodCIDR != "" && (len(n.Spec.PodCIDRs) == 0 || n.Spec.PodCIDRs[0] != n.Spec.PodCIDR) {
		n.Spec.PodCIDRs = []string{n.Spec.PodCIDR}
	}
	if len(n.Spec.PodCIDRs) > 0 {
		n.Spec.PodCIDR = n.Spec.PodCIDRs[0]
	}
}

// defaultNodeStatus defaults status.allocatable to the capacity and rounds
// resource quantities up to milli-units.
func defaultNodeStatus(n *corev1.Node) {
	if n.Status.Allocatable == nil && n.Status.Capacity != nil {
		n.Status.Allocatable = make(corev1.ResourceList, len(n.Status.Capacity))
		for k, v := range n.Status.Capacity {
			n.Status.Allocatable[k] = v
		}
	}
	roundUpResources(n.Status.Capacity)
	roundUpResources(n.Status.Allocatable)
}

// defaultPod applies defaultPodSpecFields and defaultPodStatus.
func defaultPod(o Object) {
	p := o.(*corev1.Pod)
	defaultPodSpecFields(p)
	defaultPodStatus(p)
}

// defaultPodSpecFields applies the pod-only spec defaults (requests from
// limits, service links, host-network ports) and the pod spec defaults
// shared with templates.
func defaultPodSpecFields(p *corev1.Pod) {
	for i := range p.Spec.Containers {
		defaultRequestsFromLimits(&p.Spec.Containers[i].Resources)
	}
	for i := range p.Spec.InitContainers {
		defaultRequestsFromLimits(&p.Spec.InitContainers[i].Resources)
	}
	if p.Spec.EnableServiceLinks == nil {
		p.Spec.EnableServiceLinks = new(true)
	}
	if p.Spec.HostNetwork {
		defaultHostNetworkPorts(p.Spec.Containers)
		defaultHostNetworkPorts(p.Spec.InitContainers)
	}
	defaultPodSpec(&p.Spec)
}

// defaultPodStatus syncs status.podIP with status.podIPs (podIP wins when
// they disagree, as in the v1 conversion) and rounds the container statuses'
// resource quantities up to milli-units.
func defaultPodStatus(p *corev1.Pod) {
	st := &p.Status
	if st.PodIP != "" && (len(st.PodIPs) == 0 || st.PodIPs[0].IP != st.PodIP) {
		st.PodIPs = []corev1.PodIP{{IP: st.PodIP}}
	}
	if len(st.PodIPs) > 0 {
		st.PodIP = st.PodIPs[0].IP
	}
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range list {
			roundUpResources(list[i].AllocatedResources)
			if r := list[i].Resources; r != nil {
				roundUpResources(r.Limits)
				roundUpResources(r.Requests)
			}
		}
	}
}

// defaultRequestsFromLimits sets each request the container leaves out to its
// limit.
func defaultRequestsFromLimits(r *corev1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = make(corev1.ResourceList, len(r.Limits))
	}
	for k, v := range r.Limits {
		if _, ok := r.Requests[k]; !ok {
			r.Requests[k] = v
		}
	}
}

// defaultHostNetworkPorts makes every container port a host port too.
func defaultHostNetworkPorts(cs []corev1.Container) {
	for i := range cs {
		for j := range cs[i].Ports {
			if p := &cs[i].Ports[j]; p.HostPort == 0 {
				p.HostPort = p.ContainerPort
			}
		}
	}
}

// defaultDeployment applies the apps/v1 deployment defaults and the pod spec
// defaults to its template.
func defaultDeployment(o Object) {
	d := o.(*appsv1.Deployment)
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = new(int32(1))
	}
	st := &d.Spec.Strategy
	if st.Type == "" {
		st.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if st.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if st.RollingUpdate == nil {
			st.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if st.RollingUpdate.MaxUnavailable == nil {
			st.RollingUpdate.MaxUnavailable = new(intstr.FromString("25%"))
		}
		if st.RollingUpdate.MaxSurge == nil {
			st.RollingUpdate.MaxSurge = new(intstr.FromString("25%"))
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = new(defaultDeploymentRevisionHistoryLimit)
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = new(defaultDeploymentProgressDeadline)
	}
	defaultPodSpec(&d.Spec.Template.Spec)
}

// defaultPodSpec applies the defaults every pod spec gets, in a pod or a
// template: policies, scheduler, grace period, an empty security context,
// and the defaults of its volumes and containers. It also syncs the
// deprecated serviceAccount field with serviceAccountName (the name wins).
func defaultPodSpec(s *corev1.PodSpec) {
	if s.DNSPolicy == "" {
		s.DNSPolicy = corev1.DNSClusterFirst
	}
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = new(defaultTerminationGracePeriodSeconds)
	}
	if s.SchedulerName == "" {
		s.SchedulerName = defaultSchedulerName
	}
	if s.ServiceAccountName == "" {
		s.ServiceAccountName = s.DeprecatedServiceAccount
	}
	s.DeprecatedServiceAccount = s.ServiceAccountName
	for i := range s.Volumes {
		defaultVolume(&s.Volumes[i])
	}
	for i := range s.InitContainers {
		defaultContainer(&s.InitContainers[i])
	}
	for i := range s.Containers {
		defaultContainer(&s.Containers[i])
	}
	for i := range s.EphemeralContainers {
		// An ephemeral container has a container's fields.
		defaultContainer((*corev1.Container)(&s.EphemeralContainers[i].EphemeralContainerCommon))
	}
	roundUpResources(s.Overhead)
	if s.Resources != nil {
		roundUpResources(s.Resources.Limits)
		roundUpResources(s.Resources.Requests)
	}
}

// defaultContainer applies a container's defaults: pull policy, termination
// message, port protocols, field reference versions, probes, lifecycle hooks
// and milli-rounded resources.
func defaultContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = terminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		if from := c.Env[i].ValueFrom; from != nil {
			defaultFieldRef(from.FieldRef)
		}
	}
	roundUpResources(c.Resources.Limits)
	roundUpResources(c.Resources.Requests)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(p)
	}
	if l := c.Lifecycle; l != nil {
		for _, h := range []*corev1.LifecycleHandler{l.PostStart, l.PreStop} {
			if h != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
}

// defaultProbe sets a probe's timing and its handler's defaults.
func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	defaultHTTPGet(p.HTTPGet)
	if g := p.GRPC; g != nil && g.Service == nil {
		g.Service = new("")
	}
}

// defaultHTTPGet sets an HTTP check's path to / and scheme to HTTP.
func defaultHTTPGet(h *corev1.HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = corev1.URISchemeHTTP
	}
}

// defaultFieldRef sets a field reference's apiVersion to v1.
func defaultFieldRef(f *corev1.ObjectFieldSelector) {
	if f != nil && f.APIVersion == "" {
		f.APIVersion = "v1"
	}
}

// defaultVolume gives a volume without a source an emptyDir and fills the
// defaults of its source.
func defaultVolume(v *corev1.Volume) {
	if v.VolumeSource == (corev1.VolumeSource{}) {
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	src := &v.VolumeSource
	if s := src.Secret; s != nil && s.DefaultMode == nil {
		s.DefaultMode = new(defaultVolumeFileMode)
	}
	if s := src.ConfigMap; s != nil && s.DefaultMode == nil {
		s.DefaultMode = new(defaultVolumeFileMode)
	}
	if s := src.DownwardAPI; s != nil {
		if s.DefaultMode == nil {
			s.DefaultMode = new(defaultVolumeFileMode)
		}
		for i := range s.Items {
			defaultFieldRef(s.Items[i].FieldRef)
		}
	}
	if s := src.Projected; s != nil {
		if s.DefaultMode == nil {
			s.DefaultMode = new(defaultVolumeFileMode)
		}
		for i := range s.Sources {
			if d := s.Sources[i].DownwardAPI; d != nil {
				for j := range d.Items {
					defaultFieldRef(d.Items[j].FieldRef)
				}
			}
			if t := s.Sources[i].ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
				t.ExpirationSeconds = new(defaultTokenExpirationSeconds)
			}
		}
	}
	if s := src.HostPath; s != nil && s.Type == nil {
		s.Type = new(corev1.HostPathUnset)
	}
	if s := src.ISCSI; s != nil && s.ISCSIInterface == "" {
		s.ISCSIInterface = "default"
	}
	if s := src.RBD; s != nil {
		if s.RBDPool == "" {
			s.RBDPool = "rbd"
		}
		if s.RadosUser == "" {
			s.RadosUser = "admin"
		}
		if s.Keyring == "" {
			s.Keyring = "/etc/ceph/keyring"
		}
	}
	if s := src.AzureDisk; s != nil {
		if s.CachingMode == nil {
			s.CachingMode = new(corev1.AzureDataDiskCachingReadWrite)
		}
		if s.FSType == nil {
			s.FSType = new("ext4")
		}
		if s.ReadOnly == nil {
			s.ReadOnly = new(false)
		}
		if s.Kind == nil {
			s.Kind = new(corev1.AzureSharedBlobDisk)
		}
	}
	if s := src.ScaleIO; s != nil {
		if s.StorageMode == "" {
			s.StorageMode = "ThinProvisioned"
		}
		if s.FSType == "" {
			s.FSType = "xfs"
		}
	}
	if e := src.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
		spec := &e.VolumeClaimTemplate.Spec
		if spec.VolumeMode == nil {
			spec.VolumeMode = new(corev1.PersistentVolumeFilesystem)
		}
		roundUpResources(spec.Resources.Limits)
		roundUpResources(spec.Resources.Requests)
	}
	if img := src.Image; img != nil && img.PullPolicy == "" {
		img.PullPolicy = defaultPullPolicy(img.Reference)
	}
}

// defaultService applies the core/v1 service defaults: session affinity,
// type, port protocols and target ports, traffic policies and, for load
// balancers, node port allocation and ingress IP mode. Cluster IPs and IP
// families are the allocator's (service.go).
func defaultService(o Object) {
	s := o.(*corev1.Service)
	defaultServiceSpec(s)
	defaultServiceStatus(s)
}

// defaultServiceSpec applies the spec half of defaultService.
func defaultServiceSpec(s *corev1.Service) {
	spec := &s.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	switch spec.SessionAffinity {
	case corev1.ServiceAffinityNone:
		spec.SessionAffinityConfig = nil
	case corev1.ServiceAffinityClientIP:
		if c := spec.SessionAffinityConfig; c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{
				ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: new(defaultClientIPServiceAffinitySeconds)},
			}
		}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if externallyAccessible(s) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil {
		switch spec.Type {
		case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
			spec.InternalTrafficPolicy = new(corev1.ServiceInternalTrafficPolicyCluster)
		}
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer && spec.AllocateLoadBalancerNodePorts == nil {
		spec.AllocateLoadBalancerNodePorts = new(true)
	}
}

// defaultServiceStatus gives a load balancer's ingress IPs the VIP mode.
func defaultServiceStatus(s *corev1.Service) {
	if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return
	}
	for i := range s.Status.LoadBalancer.Ingress {
		if in := &s.Status.LoadBalancer.Ingress[i]; in.IP != "" && in.IPMode == nil {
			in.IPMode = new(corev1.LoadBalancerIPModeVIP)
		}
	}
}

// externallyAccessible reports whether a service can be reached from outside
// the cluster (and so has an external traffic policy).
func externallyAccessible(s *corev1.Service) bool {
	switch s.Spec.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeClusterIP:
		return len(s.Spec.ExternalIPs) > 0
	}
	return false
}

// roundUpResources rounds every quantity of l up (away from zero) to a whole
// number of milli-units, as kube-apiserver does to every resource list it
// decodes ("0.5m" becomes "1m"). Quantities too large to count in
// milli-units in an int64 are left alone.
func roundUpResources(l corev1.ResourceList) {
	for k, q := range l {
		m := q.MilliValue()
		if m == math.MaxInt64 || m == math.MinInt64 {
			continue
		}
		if r := *resource.NewMilliQuantity(m, q.Format); r.Cmp(q) != 0 {
			l[k] = r
		}
	}
}
