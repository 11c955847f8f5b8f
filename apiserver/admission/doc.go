// Package admission holds the decisions of the admission plugins that a
// kube-apiserver v1.37 enables by default, as pure functions over the
// objects they concern: the Pod Security Standards (podsecurity.go),
// LimitRanger's defaults and limits (limitranger.go), ResourceQuota's usage
// and checks (quota.go), and the smaller ones (priority, runtime classes,
// default storage and ingress classes, in-use protection, certificate
// subject restriction). The reference server (package apiserver) reads the
// objects they need through its store and calls them in kube-apiserver's
// order; nothing here reads storage or HTTP.
//
// Each error a plugin returns is worded as kube-apiserver's plugin words it;
// the server wraps it in a 403 Forbidden Status for the object, as
// kube-apiserver does.
package admission
