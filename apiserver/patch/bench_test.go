package patch_test

import (
	"testing"

	"github.com/kapi-dev/kapi/apiserver/patch"
)

var benchPod = []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-7d4b9c","namespace":"default","uid":"6f1c","resourceVersion":"1234","labels":{"app":"web","tier":"front"},"annotations":{"note":"x"},"finalizers":["a/b"],"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d4b9c","uid":"1","controller":true}],"managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:containers":{}}}}]},"spec":{"volumes":[{"name":"data","emptyDir":{}},{"name":"cfg","configMap":{"name":"cfg"}}],"containers":[{"name":"app","image":"nginx:1.27","ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":443,"protocol":"TCP"}],"env":[{"name":"A","value":"1"},{"name":"B","value":"2"},{"name":"C","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],"resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"500m"}},"volumeMounts":[{"name":"data","mountPath":"/data"},{"name":"cfg","mountPath":"/etc/cfg"}]},{"name":"sidecar","image":"busybox","args":["sleep","infinity"]}],"tolerations":[{"key":"k","operator":"Exists"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)

var benchPatch = []byte(`{"metadata":{"labels":{"version":"2"},"$deleteFromPrimitiveList/finalizers":["a/b"]},"spec":{"$setElementOrder/containers":[{"name":"app"},{"name":"sidecar"},{"name":"log"}],"containers":[{"name":"app","image":"nginx:1.28","env":[{"name":"B","$patch":"delete"},{"name":"D","value":"4"}]},{"name":"log","image":"fluent-bit"}],"volumes":[{"name":"data","$retainKeys":["name","hostPath"],"hostPath":{"path":"/var/data"}}]}}`)

// BenchmarkStrategicPod applies one strategic merge patch, touching containers,
// env, volumes with retainKeys, labels and finalizers, to a typical pod.
func BenchmarkStrategicPod(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchPod)))
	for b.Loop() {
		if _, err := patch.Strategic(benchPod, benchPatch, podType); err != nil {
			b.Fatal(err)
		}
	}
}
