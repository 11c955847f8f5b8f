package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"golang.org/x/sync/errgroup"
)

// Field managers of the seeded objects: pods are created as the ReplicaSet
// controller does and their status written as the kubelet does, so that
// the server records two managedFields entries, as on a real cluster.
const (
	managerCreate = "kube-controller-manager"
	managerStatus = "kubelet"
	managerSeed   = "kapi-bench"
)

// podJSON is a realistic pod (modelled on testdata/golden/11-create-pod-rich.txt,
// without its finalizer): with its status and the managedFields the server
// adds it is 9.4 KB of JSON, 6.2 KB of protobuf as stored.
func podJSON(ns string, i int) string {
	rs := i / 100
	return fmt.Sprintf(`{
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {
    "name": "web-%[2]d-%06[1]d", "namespace": %[3]q,
    "labels": {"app": "web-%[4]d", "pod-template-hash": "7d9c6b%04[2]d", "tier": "frontend"},
    "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-21T10:00:00Z", "prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-%[2]d-7d9c6b%04[2]d",
      "uid": "0b1f5a84-2f0e-4c1e-9a55-%012[2]d", "controller": true, "blockOwnerDeletion": true}]
  },
  "spec": {
    "nodeName": "node-%03[5]d", "serviceAccountName": "default", "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 15, "dnsPolicy": "ClusterFirst", "priority": 0,
    "schedulerName": "default-scheduler", "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority",
    "securityContext": {"runAsNonRoot": true, "runAsUser": 1000, "fsGroup": 2000, "seccompProfile": {"type": "RuntimeDefault"}},
    "initContainers": [{"name": "init", "image": "busybox:1.36", "command": ["sh", "-c", "true"],
      "resources": {}, "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
    "containers": [{
      "name": "app", "image": "nginx:1.27", "args": ["-g", "daemon off;"], "workingDir": "/srv",
      "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
      "env": [{"name": "A", "value": "1"},
        {"name": "FROM_CM", "valueFrom": {"configMapKeyRef": {"name": "cm1", "key": "a"}}},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
      "envFrom": [{"secretRef": {"name": "s1"}, "prefix": "S_"}],
      "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "128Mi"}},
      "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg", "readOnly": true}, {"name": "scratch", "mountPath": "/tmp"}],
      "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"}, "initialDelaySeconds": 3, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
      "readinessProbe": {"tcpSocket": {"port": 8080}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 5},
      "lifecycle": {"preStop": {"exec": {"command": ["sleep", "1"]}}},
      "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
      "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": true}
    }],
    "volumes": [
      {"name": "cfg", "configMap": {"name": "cm1", "items": [{"key": "a", "path": "a.txt"}], "defaultMode": 420}},
      {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
      {"name": "sec", "secret": {"secretName": "s1", "defaultMode": 420}}
    ],
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
      {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}},
    "tolerations": [
      {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
      {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
    "nodeSelector": {"disk": "ssd"},
    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
      "labelSelector": {"matchLabels": {"app": "web-%[4]d"}}}]
  }
}`, i, rs, ns, i%50, i%100)
}

// podStatusJSON is the status a kubelet writes for pod i.
func podStatusJSON(i int) string {
	return fmt.Sprintf(`{
  "phase": "Running", "hostIP": "192.0.2.%[2]d", "hostIPs": [{"ip": "192.0.2.%[2]d"}],
  "podIP": "10.%[3]d.%[4]d.%[5]d", "podIPs": [{"ip": "10.%[3]d.%[4]d.%[5]d"}],
  "startTime": "2026-11-21T10:00:00Z", "qosClass": "Burstable",
  "conditions": [
    {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": "2026-11-21T10:00:02Z"},
    {"type": "Initialized", "status": "True", "lastTransitionTime": "2026-11-21T10:00:03Z"},
    {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-21T10:00:05Z"},
    {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-11-21T10:00:05Z"},
    {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-21T10:00:00Z"}],
  "containerStatuses": [{"name": "app", "ready": true, "started": true, "restartCount": 2,
    "image": "docker.io/library/nginx:1.27",
    "imageID": "docker.io/library/nginx@sha256:0a399eb16751829e1af26fea27b20c3ec28d7ab1fb72182879dcae1cca21206a",
    "containerID": "containerd://%[6]064x",
    "state": {"running": {"startedAt": "2026-11-21T10:00:04Z"}},
    "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled", "startedAt": "2026-11-21T09:00:00Z", "finishedAt": "2026-11-21T09:59:00Z", "containerID": "containerd://%[1]064x"}}}]
}`, i, 1+i%100, 244, (i/250)%256, 1+i%250, i+1<<32)
}

// configMap is a ConfigMap with 1 KiB of data.
func configMap(ns string, i int) *corev1.ConfigMap {
	data := map[string]string{}
	for k := range 4 {
		data[fmt.Sprintf("key-%d", k)] = strings.Repeat(string(rune('a'+(i+k)%26)), 256)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("cm-%06d", i), Namespace: ns,
			Labels: map[string]string{"app": fmt.Sprintf("app-%d", i%50), "tier": "config"},
		},
		Data: data,
	}
}

// seed creates namespace ns with n objects of resource (pods or configmaps),
// with `workers` concurrent writers.
func seed(ctx context.Context, c *client.Client, resource, ns string, n, workers int, progress func(done int)) error {
	if _, err := client.For[corev1.Namespace](c).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !client.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	var next, done atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	for range workers {
		g.Go(func() error {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return nil
				}
				if err := seedOne(ctx, c, resource, ns, i); err != nil {
					return err
				}
				if d := done.Add(1); progress != nil && d%1000 == 0 {
					progress(int(d))
				}
			}
		})
	}
	return g.Wait()
}

func seedOne(ctx context.Context, c *client.Client, resource, ns string, i int) error {
	switch resource {
	case "configmaps":
		_, err := client.For[corev1.ConfigMap](c).Namespace(ns).Create(ctx, configMap(ns, i), metav1.CreateOptions{FieldManager: managerSeed})
		if client.IsAlreadyExists(err) {
			return nil
		}
		return err
	case "pods":
		pods := client.For[corev1.Pod](c).Namespace(ns)
		var p corev1.Pod
		if err := codec.UnmarshalJSON([]byte(podJSON(ns, i)), &p); err != nil {
			return fmt.Errorf("pod template: %w", err)
		}
		created, err := pods.Create(ctx, &p, metav1.CreateOptions{FieldManager: managerCreate})
		if client.IsAlreadyExists(err) {
			return nil
		}
		if err != nil {
			return err
		}
		// The reference server's own controllers may write the new pod
		// first (a conflict): set the status on what it holds then.
		for range 5 {
			if err := codec.UnmarshalJSON([]byte(podStatusJSON(i)), &created.Status); err != nil {
				return fmt.Errorf("pod status template: %w", err)
			}
			_, err = pods.UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: managerStatus})
			if !client.IsConflict(err) {
				return err
			}
			if created, err = pods.Get(ctx, p.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		return fmt.Errorf("pod %s: status still conflicting after 5 tries", p.Name)
	}
	return fmt.Errorf("unknown resource %q", resource)
}

// writer updates its own objects in turn and records every acknowledged
// write; the watch scenario runs several at once.
type ack struct {
	key      string // name@resourceVersion
	sent, at int64  // wall clock, Unix nanoseconds: request sent, response received
}

// updateLoop makes `count` updates of the objects named in names (in turn),
// each changing an annotation, and returns the acknowledgements.
func updateLoop[T any, PT client.ObjectPtr[T]](ctx context.Context, tc client.Resource[T], objs []PT, count int, seq *atomic.Int64) ([]ack, error) {
	acks := make([]ack, 0, count)
	for k := range count {
		i := k % len(objs)
		o := objs[i]
		ann := o.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann["bench.kapi.dev/seq"] = fmt.Sprint(seq.Add(1))
		o.SetAnnotations(ann)
		sent := time.Now().UnixNano()
		out, err := tc.Update(ctx, (*T)(o), metav1.UpdateOptions{FieldManager: managerSeed})
		if err != nil {
			return acks, fmt.Errorf("update %s: %w", o.GetName(), err)
		}
		at := time.Now().UnixNano()
		p := PT(out)
		acks = append(acks, ack{key: p.GetName() + "@" + p.GetResourceVersion(), sent: sent, at: at})
		objs[i] = p
	}
	return acks, nil
}

// splitObjects returns the objects the client lists, split round-robin into w groups.
func splitObjects[T any, PT client.ObjectPtr[T]](ctx context.Context, tc client.Resource[T], w int) ([][]PT, error) {
	l, err := tc.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	if len(l.Items) < w {
		return nil, fmt.Errorf("%d objects for %d writers", len(l.Items), w)
	}
	groups := make([][]PT, w)
	for i := range l.Items {
		groups[i%w] = append(groups[i%w], PT(&l.Items[i]))
	}
	return groups, nil
}
