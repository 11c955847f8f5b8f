package client

import (
	"fmt"
	"net/http"
	"net/url"
)

// maxIdleConnsPerHost keeps enough idle connections to one server for a
// controller's concurrent requests (net/http's default of 2 makes them queue
// for new handshakes); it is client-go's value.
const maxIdleConnsPerHost = 25

// newTransport builds the http.RoundTripper requests go through:
// Config.Transport if set (the fake client's in-memory one), otherwise a
// network transport with the Config's TLS and proxy settings; either way
// wrapped in the Config's credentials (bearer token, token file re-read as it
// rotates, basic credentials or exec plugin: Config.AuthRoundTripper), with
// Config.WrapTransport, if set, between the credentials and the network, as
// client-go's.
func newTransport(cfg *Config) (http.RoundTripper, error) {
	rt := cfg.Transport
	if rt == nil {
		tlsCfg, err := cfg.TLSClientConfig()
		if err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
		proxy, err := proxyFor(cfg.ProxyURL)
		if err != nil {
			return nil, err
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = tlsCfg
		tr.Proxy = proxy
		tr.ForceAttemptHTTP2 = true
		tr.MaxIdleConnsPerHost = maxIdleConnsPerHost
		rt = tr
	}
	if cfg.WrapTransport != nil {
		rt = cfg.WrapTransport(rt)
	}
	rt, err := cfg.AuthRoundTripper(rt)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return rt, nil
}

// proxyFor returns the proxy function of a transport: the proxy at raw
// (http, https or socks5), or the environment's (HTTPS_PROXY, NO_PROXY …)
// when raw is empty.
func proxyFor(raw string) (func(*http.Request) (*url.URL, error), error) {
	if raw == "" {
		return http.ProxyFromEnvironment, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("client: ProxyURL: %w", err)
	}
	switch u.Scheme {
	case "http", "https", "socks5", "socks5h":
	default:
		return nil, fmt.Errorf("client: ProxyURL %q: scheme must be http, https or socks5", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("client: ProxyURL %q has no host", raw)
	}
	return http.ProxyURL(u), nil
}
