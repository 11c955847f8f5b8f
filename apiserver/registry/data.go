package registry

import (
	"crypto/tls"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// Validation of the data of ConfigMaps and Secrets, as kube-apiserver's
// ValidateConfigMap(Update) and ValidateSecret(Update) do it (keys walked
// sorted where kube-apiserver's order is random).

// MaxDataSize is the most bytes a ConfigMap's or Secret's values may hold
// together.
const MaxDataSize = 1024 * 1024

const immutableMsg = "field is immutable when `immutable` is set"

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func validateConfigMap(o, old Object) metav1.FieldErrors {
	cm := o.(*corev1.ConfigMap)
	var errs metav1.FieldErrors
	if old != nil {
		prev := old.(*corev1.ConfigMap)
		if prev.Immutable != nil && *prev.Immutable {
			if cm.Immutable == nil || !*cm.Immutable {
				errs = append(errs, metav1.FieldForbidden("immutable", immutableMsg))
			}
			if !reflect.DeepEqual(cm.Data, prev.Data) {
				errs = append(errs, metav1.FieldForbidden("data", immutableMsg))
			}
			if !reflect.DeepEqual(cm.BinaryData, prev.BinaryData) {
				errs = append(errs, metav1.FieldForbidden("binaryData", immutableMsg))
			}
		}
	}
	size := 0
	for _, k := range sortedKeys(cm.Data) {
		path := "data[" + k + "]"
		for _, msg := range ValidateConfigMapKey(k) {
			errs = append(errs, metav1.FieldInvalid(path, k, msg))
		}
		if _, dup := cm.BinaryData[k]; dup {
			errs = append(errs, metav1.FieldInvalid(path, k, "duplicate of key present in binaryData"))
		}
		size += len(cm.Data[k])
	}
	for _, k := range sortedKeys(cm.BinaryData) {
		for _, msg := range ValidateConfigMapKey(k) {
			errs = append(errs, metav1.FieldInvalid("binaryData["+k+"]", k, msg))
		}
		size += len(cm.BinaryData[k])
	}
	if size > MaxDataSize {
		errs = append(errs, metav1.FieldTooLong("[]", MaxDataSize)) // kube-apiserver's path of the whole object
	}
	return errs
}

func validateSecret(o, old Object) metav1.FieldErrors {
	s := o.(*corev1.Secret)
	var errs metav1.FieldErrors
	if old != nil {
		prev := old.(*corev1.Secret)
		if s.Type != prev.Type {
			errs = append(errs, metav1.FieldInvalid("type", string(s.Type), "field is immutable"))
		}
		if prev.Immutable != nil && *prev.Immutable {
			if s.Immutable == nil || !*s.Immutable {
				errs = append(errs, metav1.FieldForbidden("immutable", immutableMsg))
			}
			if !reflect.DeepEqual(s.Data, prev.Data) {
				errs = append(errs, metav1.FieldForbidden("data", immutableMsg))
			}
		}
	}
	size := 0
	for _, k := range sortedKeys(s.Data) {
		for _, msg := range ValidateConfigMapKey(k) {
			errs = append(errs, metav1.FieldInvalid("data["+k+"]", k, msg))
		}
		size += len(s.Data[k])
	}
	if size > MaxDataSize {
		errs = append(errs, metav1.FieldTooLong("data", MaxDataSize))
	}
	required := func(key string) {
		errs = append(errs, metav1.FieldRequired("data["+key+"]", ""))
	}
	jsonData := func(key string) {
		b, ok := s.Data[key]
		if !ok {
			required(key)
			return
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			errs = append(errs, metav1.FieldInvalid("data["+key+"]", "<secret contents redacted>", err.Error()))
		}
	}
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		if s.Annotations["kubernetes.io/service-account.name"] == "" {
			errs = append(errs, metav1.FieldRequired("metadata.annotations[kubernetes.io/service-account.name]", ""))
		}
	case corev1.SecretTypeDockercfg:
		jsonData(".dockercfg")
	case corev1.SecretTypeDockerConfigJson:
		jsonData(".dockerconfigjson")
	case corev1.SecretTypeBasicAuth:
		_, user := s.Data["username"]
		_, password := s.Data["password"]
		if !user && !password {
			required("username")
			required("password")
		}
	case corev1.SecretTypeSSHAuth:
		if len(s.Data["ssh-privatekey"]) == 0 {
			required("ssh-privatekey")
		}
	case corev1.SecretTypeTLS:
		if _, ok := s.Data["tls.crt"]; !ok {
			required("tls.crt")
		}
		if _, ok := s.Data["tls.key"]; !ok {
			required("tls.key")
		}
	}
	return errs
}

// validateNamespace checks a namespace's spec.finalizers (every error on
// spec.finalizers itself).
func validateNamespace(o, old Object) metav1.FieldErrors {
	var errs metav1.FieldErrors
	for i, f := range o.(*corev1.Namespace).Spec.Finalizers {
		// kube-apiserver names the list on create, the item on an update
		// (only namespaces/finalize changes them).
		path := "spec.finalizers"
		if old != nil {
			path += "[" + strconv.Itoa(i) + "]"
		}
		errs = append(errs, ValidateFinalizerName(string(f), path)...)
	}
	return errs
}

// SecretWarnings are the warnings kube-apiserver gives when a Secret is
// created or updated: for a kubernetes.io/tls Secret whose tls.crt and
// tls.key are not a matching PEM certificate and key, why (crypto/tls's
// words, as kube-apiserver reports them).
func SecretWarnings(obj, _ Object) []string {
	s := obj.(*corev1.Secret)
	if s.Type != corev1.SecretTypeTLS {
		return nil
	}
	if _, err := tls.X509KeyPair(s.Data["tls.crt"], s.Data["tls.key"]); err != nil {
		return []string{err.Error()}
	}
	return nil
}
