// Package protowire checks, against k8s.io/api v0.37 itself, that kapi's
// generated types encode every built-in kind to the same protobuf bytes as
// Kubernetes' generated code, and decode Kubernetes' bytes. It holds only
// tests:
//
//	cd bench && go test ./protowire
package protowire
