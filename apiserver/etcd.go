package apiserver

import (
	"crypto/tls"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/apiserver/storage"
)

// EtcdConfig keeps a server's objects in an etcd cluster, as
// kube-apiserver does: see Config.Etcd. The zero value (no Servers) keeps
// them elsewhere.
type EtcdConfig struct {
	// Servers are the URLs of the etcd members (kube-apiserver's
	// --etcd-servers).
	Servers []string
	// Prefix is the prefix of every key (--etcd-prefix; default
	// "/registry").
	Prefix string
	// TLS is the client's TLS configuration (--etcd-cafile,
	// --etcd-certfile, --etcd-keyfile); nil for plain http:// members.
	TLS *tls.Config
	// CompactInterval is how often etcd's history is compacted
	// (--etcd-compaction-interval, default 5 minutes; negative: never).
	// The servers on one cluster (kapi or kube-apiserver) compact once per
	// interval between them.
	CompactInterval time.Duration
	// ElectionLeaseDuration is the duration of the Lease
	// kube-system/kapi-controllers the servers on one etcd elect the one
	// that runs the garbage collector on (see elect.go; default
	// DefaultElectionLeaseDuration, whole seconds in the Lease).
	ElectionLeaseDuration time.Duration
}

// openEtcd opens the etcd store of cfg.Etcd, with kube-apiserver's key
// layout (etcdKey) and encodings (storageCodec).
func (s *Server) openEtcd() (storage.Interface, error) {
	return storage.OpenEtcd(storage.EtcdConfig{
		Endpoints:       s.cfg.Etcd.Servers,
		TLS:             s.cfg.Etcd.TLS,
		Prefix:          s.cfg.Etcd.Prefix,
		Key:             etcdKey,
		Codec:           newStorageCodec(s.reg),
		CompactInterval: s.cfg.Etcd.CompactInterval,
	})
}

// etcdResourcePrefixes are the resources kube-apiserver keeps under a path
// other than their name (seen in a v1.37 cluster's etcd).
var etcdResourcePrefixes = map[string]string{
	"core/services":               "services/specs",
	"core/endpoints":              "services/endpoints",
	"core/nodes":                  "minions",
	"core/replicationcontrollers": "controllers",
	"networking.k8s.io/ingresses": "ingress",
	"extensions/ingresses":        "ingress",
}

// groupedInEtcd are the groups whose resources kube-apiserver keeps under
// group/resource: those its own extension servers store (the
// CustomResourceDefinitions and the APIServices). Custom resources are
// too, and so is every group that is not built in (etcdKey).
var groupedInEtcd = map[string]bool{
	"apiextensions.k8s.io":   true,
	"apiregistration.k8s.io": true,
}

// builtinGroup reports whether kube-apiserver serves group itself, keeping
// its resources under their name alone: the legacy group and the groups
// named k8s.io or ending in .k8s.io, plus apps, batch, autoscaling, policy
// and extensions. A custom resource's group cannot be one of them
// (apiextensions refuses such CRDs without an approval annotation).
func builtinGroup(seg string) bool {
	switch seg {
	case "core", "apps", "batch", "autoscaling", "policy", "extensions":
		return true
	}
	return !groupedInEtcd[seg] && (seg == "k8s.io" || strings.HasSuffix(seg, ".k8s.io"))
}

// etcdKey maps a server key ("/core/services/default/kubernetes") to
// kube-apiserver's layout in etcd under its prefix
// ("/services/specs/default/kubernetes"): built-in resources under their
// name (or etcdResourcePrefixes'), custom resources, CRDs and APIServices
// under group/resource. A group-only prefix, or "/", is kept: kube's
// layout has no prefix for a group's resources ("/core/" names nothing
// there), so the server watches and lists by resource, or the whole store.
func etcdKey(key string) string {
	rest, ok := strings.CutPrefix(key, "/")
	if !ok {
		return key
	}
	seg, rest, ok := strings.Cut(rest, "/")
	if !ok || !builtinGroup(seg) {
		return key
	}
	res, rest, ok := strings.Cut(rest, "/")
	if !ok {
		return key
	}
	if p, ok := etcdResourcePrefixes[seg+"/"+res]; ok {
		res = p
	}
	return "/" + res + "/" + rest
}
