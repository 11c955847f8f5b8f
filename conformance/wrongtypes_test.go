package conformance

import (
	"net/http"
	"testing"
)

// TestWrongTypeMessages checks the 400 for a typed object with a JSON
// value of the wrong type, as kubectl's validation shows it: the message
// names the innermost struct holding the field and the path of field names
// to it, without list indices and map keys.
func TestWrongTypeMessages(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	cases := []struct {
		name, path, body, message string
	}{{
		"container-image", "/api/v1/namespaces/" + ns + "/pods",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"c","image":5}]}}`,
		`Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string`,
	}, {
		"replicas", "/apis/apps/v1/namespaces/" + ns + "/deployments",
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"replicas":"two"}}`,
		`Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`,
	}, {
		"label-value", "/api/v1/namespaces/" + ns + "/configmaps",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"app.kubernetes.io/name":1}}}`,
		`ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string`,
	}, {
		"embedded-volume-source", "/api/v1/namespaces/" + ns + "/pods",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"volumes":[{"name":"v","secret":{"secretName":"s","defaultMode":"0644"}}],"containers":[{"name":"c","image":"i"}]}}`,
		`Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field SecretVolumeSource.spec.volumes.VolumeSource.secret.defaultMode of type int32`,
	}, {
		"int-or-string", "/apis/apps/v1/namespaces/" + ns + "/deployments",
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"strategy":{"rollingUpdate":{"maxSurge":true}}}}`,
		`Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32`,
	}, {
		"time", "/api/v1/namespaces/" + ns + "/configmaps",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","creationTimestamp":"yesterday"}}`,
		`ConfigMap in version "v1" cannot be handled as a ConfigMap: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`,
	}, {
		"quantity", "/api/v1/namespaces/" + ns + "/pods",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"cpu":"lots"}}}]}}`,
		`Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
	}, {
		"base64", "/api/v1/namespaces/" + ns + "/secrets",
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"},"data":{"a":"!!"}}`,
		`Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, validation := range []string{"Strict", "Warn"} {
				st := checkStatus(t, e.post(t, c.path+q("fieldValidation", validation), c.body), http.StatusBadRequest, "BadRequest", c.message)
				if m := str(st, "message"); st != nil && m != c.message {
					t.Errorf("%s: message\n%s\nwant\n%s", validation, m, c.message)
				}
			}
		})
	}
}
