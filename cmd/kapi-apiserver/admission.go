package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/apiserver"
)

// parseAdmissionPlugins reads --enable-admission-plugins and
// --disable-admission-plugins as kube-apiserver does: comma-separated
// plugin names, unknown names refused, a name in both lists refused;
// enabling a plugin that is on by default changes nothing. It returns the
// default plugins to turn off. A plugin that is off by default cannot be
// turned on: kapi implements none of them.
func parseAdmissionPlugins(enable, disable string) ([]string, error) {
	split := func(flag, s string) ([]string, error) {
		var out []string
		for item := range strings.SplitSeq(s, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			if !slices.Contains(apiserver.KnownAdmissionPlugins, item) {
				return nil, fmt.Errorf("%s plugin %q is unknown", flag, item)
			}
			out = append(out, item)
		}
		return out, nil
	}
	on, err := split("enable-admission-plugins", enable)
	if err != nil {
		return nil, err
	}
	off, err := split("disable-admission-plugins", disable)
	if err != nil {
		return nil, err
	}
	for _, p := range on {
		if slices.Contains(off, p) {
			return nil, fmt.Errorf("%s in enable-admission-plugins and disable-admission-plugins overlapped", p)
		}
		if !slices.Contains(apiserver.DefaultAdmissionPlugins, p) {
			return nil, fmt.Errorf("enable-admission-plugins: kapi-apiserver does not implement admission plugin %q", p)
		}
	}
	return off, nil
}
