package main

import (
	"fmt"
	"net"
	"slices"
	"strconv"
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

// webhookServiceMap is --webhook-service-map: each use maps a service,
// "namespace/name" or "namespace/name:port", to a host:port address
// (apiserver.Config.WebhookServiceMap).
type webhookServiceMap map[string]string

func (m *webhookServiceMap) String() string {
	if m == nil {
		return ""
	}
	keys := make([]string, 0, len(*m))
	for k := range *m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		keys[i] = k + "=" + (*m)[k]
	}
	return strings.Join(keys, ",")
}

func (m *webhookServiceMap) Set(v string) error {
	svc, addr, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("%q is not namespace/name[:port]=host:port", v)
	}
	ns, name, ok := strings.Cut(svc, "/")
	if !ok || ns == "" || name == "" {
		return fmt.Errorf("%q is not a service namespace/name[:port]", svc)
	}
	if n, port, hasPort := strings.Cut(name, ":"); hasPort {
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 || n == "" {
			return fmt.Errorf("%q is not a service namespace/name[:port]", svc)
		}
	}
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return fmt.Errorf("%q is not a host:port address", addr)
	}
	if *m == nil {
		*m = webhookServiceMap{}
	}
	(*m)[svc] = addr
	return nil
}
