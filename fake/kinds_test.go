package fake_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	apiregistrationv1 "github.com/kapi-dev/kapi/api/apiregistration/v1"
	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	autoscalingv1 "github.com/kapi-dev/kapi/api/autoscaling/v1"
	autoscalingv2 "github.com/kapi-dev/kapi/api/autoscaling/v2"
	batchv1 "github.com/kapi-dev/kapi/api/batch/v1"
	certificatesv1 "github.com/kapi-dev/kapi/api/certificates/v1"
	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	discoveryv1 "github.com/kapi-dev/kapi/api/discovery/v1"
	eventsv1 "github.com/kapi-dev/kapi/api/events/v1"
	flowcontrolv1 "github.com/kapi-dev/kapi/api/flowcontrol/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	networkingv1 "github.com/kapi-dev/kapi/api/networking/v1"
	nodev1 "github.com/kapi-dev/kapi/api/node/v1"
	policyv1 "github.com/kapi-dev/kapi/api/policy/v1"
	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
	resourcev1 "github.com/kapi-dev/kapi/api/resource/v1"
	schedulingv1 "github.com/kapi-dev/kapi/api/scheduling/v1"
	storagev1 "github.com/kapi-dev/kapi/api/storage/v1"
	storagemigrationv1 "github.com/kapi-dev/kapi/api/storagemigration/v1"
	"github.com/kapi-dev/kapi/apply"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/internal/builtin"
	"github.com/kapi-dev/kapi/internal/golden"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// kindCase exercises one built-in resource through its typed client.
type kindCase struct {
	group, version, resource string
	// body is the object to create: the minimal object of the kinds
	// captures (testdata/golden-1.37/kinds/create-<group>-<resource>.txt)
	// unless given here.
	body string
	run  func(t *testing.T, c *client.Client, namespace string, body []byte)
}

// storedKinds are the resources of kube-apiserver v1.37 that store objects,
// each with the Go type a client uses for it. TestStoredKindsCovered keeps
// the list complete.
var storedKinds = []kindCase{
	{group: "", resource: "configmaps", run: crud[corev1.ConfigMap]},
	{group: "", resource: "endpoints", run: crud[corev1.Endpoints]},
	{group: "", resource: "events", run: crud[corev1.Event]},
	{group: "", resource: "limitranges", run: crud[corev1.LimitRange]},
	{group: "", resource: "namespaces", run: crud[corev1.Namespace]},
	{group: "", resource: "nodes", run: crud[corev1.Node]},
	{group: "", resource: "persistentvolumeclaims", run: crud[corev1.PersistentVolumeClaim]},
	{group: "", resource: "persistentvolumes", run: crud[corev1.PersistentVolume]},
	{group: "", resource: "pods", run: crud[corev1.Pod]},
	{group: "", resource: "podtemplates", run: crud[corev1.PodTemplate]},
	{group: "", resource: "replicationcontrollers", run: crud[corev1.ReplicationController]},
	{group: "", resource: "resourcequotas", run: crud[corev1.ResourceQuota]},
	{group: "", resource: "secrets", run: crud[corev1.Secret]},
	{group: "", resource: "serviceaccounts", run: crud[corev1.ServiceAccount]},
	{group: "", resource: "services", run: crud[corev1.Service]},
	{group: "apiregistration.k8s.io", resource: "apiservices", run: crud[apiregistrationv1.APIService]},
	{group: "apps", resource: "controllerrevisions", run: crud[appsv1.ControllerRevision]},
	{group: "apps", resource: "daemonsets", run: crud[appsv1.DaemonSet]},
	{group: "apps", resource: "deployments", run: crud[appsv1.Deployment]},
	{group: "apps", resource: "replicasets", run: crud[appsv1.ReplicaSet]},
	{group: "apps", resource: "statefulsets", run: crud[appsv1.StatefulSet]},
	{group: "events.k8s.io", resource: "events", run: crud[eventsv1.Event]},
	{group: "autoscaling", version: "v2", resource: "horizontalpodautoscalers", run: crud[autoscalingv2.HorizontalPodAutoscaler]},
	{group: "autoscaling", version: "v1", resource: "horizontalpodautoscalers", run: crud[autoscalingv1.HorizontalPodAutoscaler],
		body: `{"metadata":{"name":"min"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web","apiVersion":"apps/v1"},"maxReplicas":3}}`},
	{group: "batch", resource: "cronjobs", run: crud[batchv1.CronJob]},
	{group: "batch", resource: "jobs", run: crud[batchv1.Job]},
	{group: "certificates.k8s.io", resource: "certificatesigningrequests", run: crud[certificatesv1.CertificateSigningRequest]},
	{group: "certificates.k8s.io", resource: "clustertrustbundles", run: crud[certificatesv1.ClusterTrustBundle]},
	{group: "certificates.k8s.io", resource: "podcertificaterequests", run: crud[certificatesv1.PodCertificateRequest]},
	{group: "networking.k8s.io", resource: "ingressclasses", run: crud[networkingv1.IngressClass]},
	{group: "networking.k8s.io", resource: "ingresses", run: crud[networkingv1.Ingress]},
	{group: "networking.k8s.io", resource: "ipaddresses", run: crud[networkingv1.IPAddress]},
	{group: "networking.k8s.io", resource: "networkpolicies", run: crud[networkingv1.NetworkPolicy]},
	{group: "networking.k8s.io", resource: "servicecidrs", run: crud[networkingv1.ServiceCIDR]},
	{group: "policy", resource: "poddisruptionbudgets", run: crud[policyv1.PodDisruptionBudget]},
	{group: "rbac.authorization.k8s.io", resource: "clusterrolebindings", run: crud[rbacv1.ClusterRoleBinding]},
	{group: "rbac.authorization.k8s.io", resource: "clusterroles", run: crud[rbacv1.ClusterRole]},
	{group: "rbac.authorization.k8s.io", resource: "rolebindings", run: crud[rbacv1.RoleBinding]},
	{group: "rbac.authorization.k8s.io", resource: "roles", run: crud[rbacv1.Role]},
	{group: "storage.k8s.io", resource: "csidrivers", run: crud[storagev1.CSIDriver]},
	{group: "storage.k8s.io", resource: "csinodes", run: crud[storagev1.CSINode]},
	{group: "storage.k8s.io", resource: "csistoragecapacities", run: crud[storagev1.CSIStorageCapacity]},
	{group: "storage.k8s.io", resource: "storageclasses", run: crud[storagev1.StorageClass]},
	{group: "storage.k8s.io", resource: "volumeattachments", run: crud[storagev1.VolumeAttachment]},
	{group: "storage.k8s.io", resource: "volumeattributesclasses", run: crud[storagev1.VolumeAttributesClass]},
	{group: "admissionregistration.k8s.io", resource: "mutatingadmissionpolicies", run: crud[admissionregistrationv1.MutatingAdmissionPolicy]},
	{group: "admissionregistration.k8s.io", resource: "mutatingadmissionpolicybindings", run: crud[admissionregistrationv1.MutatingAdmissionPolicyBinding]},
	{group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", run: crud[admissionregistrationv1.MutatingWebhookConfiguration]},
	{group: "admissionregistration.k8s.io", resource: "validatingadmissionpolicies", run: crud[admissionregistrationv1.ValidatingAdmissionPolicy]},
	{group: "admissionregistration.k8s.io", resource: "validatingadmissionpolicybindings", run: crud[admissionregistrationv1.ValidatingAdmissionPolicyBinding]},
	{group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", run: crud[admissionregistrationv1.ValidatingWebhookConfiguration]},
	{group: "scheduling.k8s.io", resource: "priorityclasses", run: crud[schedulingv1.PriorityClass]},
	{group: "coordination.k8s.io", resource: "leases", run: crud[coordinationv1.Lease]},
	{group: "node.k8s.io", resource: "runtimeclasses", run: crud[nodev1.RuntimeClass]},
	{group: "discovery.k8s.io", resource: "endpointslices", run: crud[discoveryv1.EndpointSlice]},
	{group: "resource.k8s.io", resource: "deviceclasses", run: crud[resourcev1.DeviceClass]},
	{group: "resource.k8s.io", resource: "devicetaintrules", run: crud[resourcev1.DeviceTaintRule]},
	{group: "resource.k8s.io", resource: "resourceclaims", run: crud[resourcev1.ResourceClaim]},
	{group: "resource.k8s.io", resource: "resourceclaimtemplates", run: crud[resourcev1.ResourceClaimTemplate]},
	{group: "resource.k8s.io", resource: "resourceslices", run: crud[resourcev1.ResourceSlice]},
	{group: "flowcontrol.apiserver.k8s.io", resource: "flowschemas", run: crud[flowcontrolv1.FlowSchema]},
	{group: "flowcontrol.apiserver.k8s.io", resource: "prioritylevelconfigurations", run: crud[flowcontrolv1.PriorityLevelConfiguration]},
	{group: "storagemigration.k8s.io", resource: "storageversionmigrations", run: crud[storagemigrationv1.StorageVersionMigration]},
}

// notStored are the resources of kube-apiserver v1.37 without a storage of
// their own: created and answered (reviews, bindings) or computed
// (componentstatuses); and CustomResourceDefinitions, which crd tests cover.
var notStored = map[string]bool{
	"/bindings": true, "/componentstatuses": true,
	"authentication.k8s.io/selfsubjectreviews": true, "authentication.k8s.io/tokenreviews": true,
	"authorization.k8s.io/localsubjectaccessreviews": true, "authorization.k8s.io/selfsubjectaccessreviews": true,
	"authorization.k8s.io/selfsubjectrulesreviews": true, "authorization.k8s.io/subjectaccessreviews": true,
	"apiextensions.k8s.io/customresourcedefinitions": true,
}

// Every stored built-in resource has a case.
func TestStoredKindsCovered(t *testing.T) {
	have := map[string]bool{}
	for _, k := range storedKinds {
		have[k.group+"/"+cmpOr(k.version, "v1")+"/"+k.resource] = true
	}
	for _, r := range builtin.Resources() {
		key := r.Group + "/" + r.Version + "/" + r.Resource
		if !have[key] && !notStored[r.Group+"/"+r.Resource] {
			t.Errorf("no case for %s", key)
		}
		delete(have, key)
	}
	for k := range have {
		t.Errorf("case for %s, which kube-apiserver v1.37 does not serve", k)
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Every stored built-in resource is created, read, listed, watched, updated
// and deleted through client.For[T] on the fake, in JSON and in protobuf.
func TestStoredKindsTypedCRUD(t *testing.T) {
	for _, k := range storedKinds {
		name := k.group + "/" + cmpOr(k.version, "v1") + "/" + k.resource
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body, ns := []byte(k.body), "kinds-test"
			if k.body == "" {
				var err error
				if body, ns, err = capturedCreate(k.group, k.resource); err != nil {
					t.Fatal(err)
				}
			}
			for _, ct := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
				t.Run(ct, func(t *testing.T) {
					f := fake.NewWithOptions(t, fake.Options{ContentType: ct})
					k.run(t, f.Client(), ns, body)
				})
			}
		})
	}
}

// capturedCreate is the request body of the minimal create in the kinds
// captures, and the namespace it was created in ("" if cluster-scoped).
func capturedCreate(group, resource string) (body []byte, namespace string, err error) {
	x, err := golden.LoadKind("create-" + cmpOr(group, "core") + "-" + resource)
	if err != nil {
		return nil, "", err
	}
	if _, rest, ok := strings.Cut(x.Path, "/namespaces/"); ok {
		namespace, _, _ = strings.Cut(rest, "/")
	}
	return x.RequestBody, namespace, nil
}

func crud[T any, PT client.ObjectPtr[T]](t *testing.T, c *client.Client, ns string, body []byte) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	obj := PT(new(T))
	if err := kjson.Unmarshal(body, obj); err != nil {
		t.Fatalf("the capture's object: %v", err)
	}
	tc := client.For[T, PT](c)
	if tc.Kind().Namespaced {
		if _, err := client.For[corev1.Namespace](c).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		obj.SetNamespace(ns)
		tc = tc.Namespace(ns)
	}
	name := obj.GetName()
	w, err := tc.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created, err := tc.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if PT(created).GetUID() == "" || PT(created).GetResourceVersion() == "" {
		t.Fatalf("created object without uid or resourceVersion: %+v", created)
	}
	got, err := tc.Get(ctx, name, metav1.GetOptions{})
	if err != nil || PT(got).GetUID() != PT(created).GetUID() {
		t.Fatalf("get: %v", err)
	}
	list, err := tc.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	found := false
	for i := range list.Items {
		found = found || PT(&list.Items[i]).GetName() == name
	}
	if !found {
		t.Fatalf("list of %d items lacks %s", len(list.Items), name)
	}
	labels := maps.Clone(PT(got).GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	labels["kapi.dev/updated"] = "yes"
	PT(got).SetLabels(labels)
	updated, err := tc.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if PT(updated).GetLabels()["kapi.dev/updated"] != "yes" || PT(updated).GetResourceVersion() == PT(got).GetResourceVersion() {
		t.Fatalf("update did not take: %+v", updated)
	}
	if err := tc.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	// What admission gave finalizers (a PVC's pvc-protection, a
	// namespace's kubernetes) a controller would remove; do it here.
	if left, err := tc.Get(ctx, name, metav1.GetOptions{}); err == nil && len(PT(left).GetFinalizers()) > 0 {
		PT(left).SetFinalizers(nil)
		if _, err := tc.Update(ctx, left, metav1.UpdateOptions{}); err != nil && !client.IsNotFound(err) {
			t.Fatalf("removing finalizers: %v", err)
		}
	}
	var seen []string
	for ev := range w.Events() {
		if ev.Err != nil {
			t.Fatalf("watch: %v", ev.Err)
		}
		seen = append(seen, string(ev.Type))
		if ev.Type == client.EventDeleted {
			break
		}
	}
	if ctx.Err() != nil || seen[0] != string(client.EventAdded) || !containsModified(seen) {
		t.Fatalf("watch events %v (%v)", seen, ctx.Err())
	}
	if _, err := tc.Get(ctx, name, metav1.GetOptions{}); !client.IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
	applyRoundTrip[T, PT](t, tc, body)
}

// applyRoundTrip applies the capture's object, once the test deleted it, with
// typed server-side apply (apply.Of), extracts the fields the applier owns
// (apply.Extract) and applies them again: the applier's managedFields entry
// must not change, and applying them once more must change nothing at all
// (the first re-apply may let the server's controllers catch up, as a
// ResourceQuota's status, or record "before-first-apply" for an object the
// applier owns nothing of).
func applyRoundTrip[T any, PT client.ObjectPtr[T]](t *testing.T, tc client.Resource[T], body []byte) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	obj := PT(new(T))
	if err := kjson.Unmarshal(body, obj); err != nil {
		t.Fatal(err)
	}
	opts := metav1.ApplyOptions{FieldManager: "kinds-test"}
	live, err := tc.ApplyConfig(ctx, apply.Of((*T)(obj)), opts)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	cfg, err := apply.Extract(live, "kinds-test")
	if err != nil {
		t.Fatalf("extract: %v", err)
	}
	if _, ok := any(obj).(*corev1.Secret); ok {
		// A Secret's stringData is write-only: what was applied cannot be
		// read back, and applying without it releases it.
		return
	}
	again, err := tc.ApplyConfig(ctx, cfg, opts)
	if err != nil {
		t.Fatalf("applying the extracted configuration: %v", err)
	}
	entry := func(o *T) string {
		for _, e := range PT(o).GetManagedFields() {
			if e.Manager == "kinds-test" {
				b, _ := kjson.Marshal(e)
				return string(b)
			}
		}
		return ""
	}
	b, _ := cfg.MarshalJSON()
	if entry(again) != entry(live) {
		t.Errorf("applying the extracted %s changed the applier's fields\n%s\n%s", b, entry(live), entry(again))
	}
	last, err := tc.ApplyConfig(ctx, cfg, opts)
	if err != nil {
		t.Fatalf("applying the extracted configuration again: %v", err)
	}
	if !reflect.DeepEqual(last, again) {
		x, _ := kjson.Marshal(again)
		y, _ := kjson.Marshal(last)
		t.Errorf("applying the extracted %s again changed the object\n%s\n%s", b, x, y)
	}
}

func containsModified(types []string) bool {
	return strings.Contains(fmt.Sprint(types), string(client.EventModified))
}
