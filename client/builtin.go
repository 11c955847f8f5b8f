package client

import (
	"fmt"

	admissionregistrationv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	apiregistrationv1 "github.com/kapi-dev/kapi/api/apiregistration/v1"
	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	authenticationv1 "github.com/kapi-dev/kapi/api/authentication/v1"
	authorizationv1 "github.com/kapi-dev/kapi/api/authorization/v1"
	autoscalingv1 "github.com/kapi-dev/kapi/api/autoscaling/v1"
	autoscalingv2 "github.com/kapi-dev/kapi/api/autoscaling/v2"
	batchv1 "github.com/kapi-dev/kapi/api/batch/v1"
	certificatesv1 "github.com/kapi-dev/kapi/api/certificates/v1"
	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	discoveryv1 "github.com/kapi-dev/kapi/api/discovery/v1"
	eventsv1 "github.com/kapi-dev/kapi/api/events/v1"
	flowcontrolv1 "github.com/kapi-dev/kapi/api/flowcontrol/v1"
	networkingv1 "github.com/kapi-dev/kapi/api/networking/v1"
	nodev1 "github.com/kapi-dev/kapi/api/node/v1"
	policyv1 "github.com/kapi-dev/kapi/api/policy/v1"
	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
	resourcev1 "github.com/kapi-dev/kapi/api/resource/v1"
	schedulingv1 "github.com/kapi-dev/kapi/api/scheduling/v1"
	storagev1 "github.com/kapi-dev/kapi/api/storage/v1"
	storagemigrationv1 "github.com/kapi-dev/kapi/api/storagemigration/v1"
	"github.com/kapi-dev/kapi/internal/builtin"
)

// builtinTypes names the Go type of each resource a default kube-apiserver
// v1.37 serves, in discovery order. Everything else about a resource (kind,
// scope, short names, categories) comes from internal/builtin, which is
// generated from that server's discovery documents.
var builtinTypes = []func(*Scheme) error{
	builtinType[corev1.Binding]("", "v1", "bindings"),
	builtinType[corev1.ComponentStatus]("", "v1", "componentstatuses"),
	builtinType[corev1.ConfigMap]("", "v1", "configmaps"),
	builtinType[corev1.Endpoints]("", "v1", "endpoints"),
	builtinType[corev1.Event]("", "v1", "events"),
	builtinType[corev1.LimitRange]("", "v1", "limitranges"),
	builtinType[corev1.Namespace]("", "v1", "namespaces"),
	builtinType[corev1.Node]("", "v1", "nodes"),
	builtinType[corev1.PersistentVolumeClaim]("", "v1", "persistentvolumeclaims"),
	builtinType[corev1.PersistentVolume]("", "v1", "persistentvolumes"),
	builtinType[corev1.Pod]("", "v1", "pods"),
	builtinType[corev1.PodTemplate]("", "v1", "podtemplates"),
	builtinType[corev1.ReplicationController]("", "v1", "replicationcontrollers"),
	builtinType[corev1.ResourceQuota]("", "v1", "resourcequotas"),
	builtinType[corev1.Secret]("", "v1", "secrets"),
	builtinType[corev1.ServiceAccount]("", "v1", "serviceaccounts"),
	builtinType[corev1.Service]("", "v1", "services"),
	builtinType[apiregistrationv1.APIService]("apiregistration.k8s.io", "v1", "apiservices"),
	builtinType[appsv1.ControllerRevision]("apps", "v1", "controllerrevisions"),
	builtinType[appsv1.DaemonSet]("apps", "v1", "daemonsets"),
	builtinType[appsv1.Deployment]("apps", "v1", "deployments"),
	builtinType[appsv1.ReplicaSet]("apps", "v1", "replicasets"),
	builtinType[appsv1.StatefulSet]("apps", "v1", "statefulsets"),
	builtinType[eventsv1.Event]("events.k8s.io", "v1", "events"),
	builtinType[authenticationv1.SelfSubjectReview]("authentication.k8s.io", "v1", "selfsubjectreviews"),
	builtinType[authenticationv1.TokenReview]("authentication.k8s.io", "v1", "tokenreviews"),
	builtinType[authorizationv1.LocalSubjectAccessReview]("authorization.k8s.io", "v1", "localsubjectaccessreviews"),
	builtinType[authorizationv1.SelfSubjectAccessReview]("authorization.k8s.io", "v1", "selfsubjectaccessreviews"),
	builtinType[authorizationv1.SelfSubjectRulesReview]("authorization.k8s.io", "v1", "selfsubjectrulesreviews"),
	builtinType[authorizationv1.SubjectAccessReview]("authorization.k8s.io", "v1", "subjectaccessreviews"),
	builtinType[autoscalingv2.HorizontalPodAutoscaler]("autoscaling", "v2", "horizontalpodautoscalers"),
	builtinType[autoscalingv1.HorizontalPodAutoscaler]("autoscaling", "v1", "horizontalpodautoscalers"),
	builtinType[batchv1.CronJob]("batch", "v1", "cronjobs"),
	builtinType[batchv1.Job]("batch", "v1", "jobs"),
	builtinType[certificatesv1.CertificateSigningRequest]("certificates.k8s.io", "v1", "certificatesigningrequests"),
	builtinType[certificatesv1.ClusterTrustBundle]("certificates.k8s.io", "v1", "clustertrustbundles"),
	builtinType[certificatesv1.PodCertificateRequest]("certificates.k8s.io", "v1", "podcertificaterequests"),
	builtinType[networkingv1.IngressClass]("networking.k8s.io", "v1", "ingressclasses"),
	builtinType[networkingv1.Ingress]("networking.k8s.io", "v1", "ingresses"),
	builtinType[networkingv1.IPAddress]("networking.k8s.io", "v1", "ipaddresses"),
	builtinType[networkingv1.NetworkPolicy]("networking.k8s.io", "v1", "networkpolicies"),
	builtinType[networkingv1.ServiceCIDR]("networking.k8s.io", "v1", "servicecidrs"),
	builtinType[policyv1.PodDisruptionBudget]("policy", "v1", "poddisruptionbudgets"),
	builtinType[rbacv1.ClusterRoleBinding]("rbac.authorization.k8s.io", "v1", "clusterrolebindings"),
	builtinType[rbacv1.ClusterRole]("rbac.authorization.k8s.io", "v1", "clusterroles"),
	builtinType[rbacv1.RoleBinding]("rbac.authorization.k8s.io", "v1", "rolebindings"),
	builtinType[rbacv1.Role]("rbac.authorization.k8s.io", "v1", "roles"),
	builtinType[storagev1.CSIDriver]("storage.k8s.io", "v1", "csidrivers"),
	builtinType[storagev1.CSINode]("storage.k8s.io", "v1", "csinodes"),
	builtinType[storagev1.CSIStorageCapacity]("storage.k8s.io", "v1", "csistoragecapacities"),
	builtinType[storagev1.StorageClass]("storage.k8s.io", "v1", "storageclasses"),
	builtinType[storagev1.VolumeAttachment]("storage.k8s.io", "v1", "volumeattachments"),
	builtinType[storagev1.VolumeAttributesClass]("storage.k8s.io", "v1", "volumeattributesclasses"),
	builtinType[admissionregistrationv1.MutatingAdmissionPolicy]("admissionregistration.k8s.io", "v1", "mutatingadmissionpolicies"),
	builtinType[admissionregistrationv1.MutatingAdmissionPolicyBinding]("admissionregistration.k8s.io", "v1", "mutatingadmissionpolicybindings"),
	builtinType[admissionregistrationv1.MutatingWebhookConfiguration]("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"),
	builtinType[admissionregistrationv1.ValidatingAdmissionPolicy]("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies"),
	builtinType[admissionregistrationv1.ValidatingAdmissionPolicyBinding]("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings"),
	builtinType[admissionregistrationv1.ValidatingWebhookConfiguration]("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"),
	builtinType[apiextensionsv1.CustomResourceDefinition]("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
	builtinType[schedulingv1.PriorityClass]("scheduling.k8s.io", "v1", "priorityclasses"),
	builtinType[coordinationv1.Lease]("coordination.k8s.io", "v1", "leases"),
	builtinType[nodev1.RuntimeClass]("node.k8s.io", "v1", "runtimeclasses"),
	builtinType[discoveryv1.EndpointSlice]("discovery.k8s.io", "v1", "endpointslices"),
	builtinType[resourcev1.DeviceClass]("resource.k8s.io", "v1", "deviceclasses"),
	builtinType[resourcev1.DeviceTaintRule]("resource.k8s.io", "v1", "devicetaintrules"),
	builtinType[resourcev1.ResourceClaim]("resource.k8s.io", "v1", "resourceclaims"),
	builtinType[resourcev1.ResourceClaimTemplate]("resource.k8s.io", "v1", "resourceclaimtemplates"),
	builtinType[resourcev1.ResourceSlice]("resource.k8s.io", "v1", "resourceslices"),
	builtinType[flowcontrolv1.FlowSchema]("flowcontrol.apiserver.k8s.io", "v1", "flowschemas"),
	builtinType[flowcontrolv1.PriorityLevelConfiguration]("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations"),
	builtinType[storagemigrationv1.StorageVersionMigration]("storagemigration.k8s.io", "v1", "storageversionmigrations"),
}

// builtinType registers T as the built-in resource group/version/resource,
// described as internal/builtin describes it.
func builtinType[T any, PT ObjectPtr[T]](group, version, resource string) func(*Scheme) error {
	return func(s *Scheme) error {
		r, ok := builtin.Lookup(group, version, resource)
		if !ok {
			return fmt.Errorf("client: %s/%s %s is not a built-in resource", group, version, resource)
		}
		return Add[T, PT](s, Kind{Group: r.Group, Version: r.Version, Resource: r.Resource, Kind: r.Kind,
			Namespaced: r.Namespaced, Protobuf: true, ShortNames: r.ShortNames, Categories: r.Categories})
	}
}
