package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/apiserver"
)

// The controllers kapi-apiserver runs, by kube-controller-manager's names
// for the controllers whose work they do.
const (
	ctrlGarbageCollector = "garbage-collector-controller"
	ctrlNamespace        = "namespace-controller"
	ctrlServiceAccount   = "serviceaccount-controller"
	ctrlRootCAPublisher  = "root-ca-certificate-publisher-controller"
)

var knownControllers = []string{ctrlGarbageCollector, ctrlNamespace, ctrlServiceAccount, ctrlRootCAPublisher}

// parseControllers reads a --controllers list as kube-controller-manager
// does: "*" turns on every controller that is on by default (all of kapi's),
// "name" turns one on, "-name" turns it off; the result is the set of
// controllers that run.
func parseControllers(s string) (map[string]bool, error) {
	on := map[string]bool{}
	star := false
	explicit := map[string]bool{}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		name, off := strings.CutPrefix(item, "-")
		switch {
		case item == "":
			continue
		case item == "*":
			star = true
			continue
		case !slices.Contains(knownControllers, name):
			return nil, fmt.Errorf("unknown controller %q in --controllers (known: %s)", name, strings.Join(knownControllers, ", "))
		}
		explicit[name] = !off
	}
	for _, c := range knownControllers {
		v, set := explicit[c]
		on[c] = set && v || !set && star
	}
	return on, nil
}

// applyControllers turns off in cfg the controllers that do not run.
func applyControllers(cfg *apiserver.Config, on map[string]bool) {
	cfg.DisableGarbageCollector = !on[ctrlGarbageCollector]
	cfg.DisableNamespaceController = !on[ctrlNamespace]
	cfg.DisableServiceAccountController = !on[ctrlServiceAccount]
	cfg.DisableRootCAPublisher = !on[ctrlRootCAPublisher]
}
