// Package etcdtest starts a real etcd member in process, for the tests of
// the API server's etcd backend: go.etcd.io/etcd/server/v3/embed on
// loopback, in a temporary directory, on ports the system picks, without
// fsync unless asked (a test's data need not survive a crash of the
// machine).
//
// # Use
//
//	m, err := etcdtest.Start(etcdtest.Config{})
//	if err != nil { ... }
//	defer m.Stop()
//	store, err := storage.OpenEtcd(storage.EtcdConfig{Endpoints: m.Endpoints, Codec: c})
//
// # Goroutines
//
// Stop waits for the member's goroutines to exit. A few of etcd's own are
// process-wide and outlive any member (the loggers' and gRPC's); IgnoreLeaks
// lists them for goleak.
package etcdtest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/goleak"
)

// Member is a running etcd cluster of one member, or of Config.Members.
type Member struct {
	// Endpoints are the client URLs (http://127.0.0.1:PORT, https with
	// Config.TLS), one per member.
	Endpoints []string
	etcds     []*embed.Etcd
	dirs      []string
}

// Config configures a cluster; the zero value is a test's single member.
type Config struct {
	// Members is the number of members (default 1).
	Members int
	// Fsync makes the members fsync their logs as production members do
	// (benchmarks); by default they do not, a test's data need not
	// survive a crash of the machine.
	Fsync bool
	// TLS, if set, makes the members serve their clients over TLS with
	// this certificate and require client certificates signed by its CA,
	// as a production cluster does (Endpoints are then https URLs).
	TLS *TLSFiles
}

// TLSFiles are the PEM files of a member's TLS (Config.TLS).
type TLSFiles struct {
	CertFile, KeyFile string // the member's serving certificate and key
	CAFile            string // the CA that signs the clients' certificates
}

// Start starts the members, each in a new temporary directory, and waits
// until they serve (at most a minute).
func Start(c Config) (*Member, error) {
	n := max(c.Members, 1)
	m := &Member{}
	var cfgs []*embed.Config
	var initial []string
	for i := range n {
		dir, err := os.MkdirTemp("", "kapi-etcd-")
		if err != nil {
			m.Stop()
			return nil, err
		}
		m.dirs = append(m.dirs, dir)
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("kapi-test-%d", i)
		cfg.Dir = dir
		cfg.UnsafeNoFsync = !c.Fsync
		cfg.LogLevel = "panic" // its errors at Stop ("server closed") are expected
		cfg.Logger = "zap"
		cfg.LogOutputs = []string{"stderr"}
		client, peer, err := freeURLs()
		if err != nil {
			m.Stop()
			return nil, err
		}
		if c.TLS != nil {
			client.Scheme = "https"
			cfg.ClientTLSInfo = transport.TLSInfo{CertFile: c.TLS.CertFile, KeyFile: c.TLS.KeyFile,
				TrustedCAFile: c.TLS.CAFile, ClientCertAuth: true}
		}
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
		initial = append(initial, cfg.Name+"="+peer.String())
		m.Endpoints = append(m.Endpoints, client.String())
		cfgs = append(cfgs, cfg)
	}
	for _, cfg := range cfgs {
		cfg.InitialCluster = strings.Join(initial, ",")
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			m.Stop()
			return nil, fmt.Errorf("etcdtest: starting etcd: %w", err)
		}
		m.etcds = append(m.etcds, e)
	}
	timeout := time.After(time.Minute)
	for _, e := range m.etcds {
		select {
		case <-e.Server.ReadyNotify():
		case err := <-e.Err():
			m.Stop()
			return nil, fmt.Errorf("etcdtest: etcd failed: %w", err)
		case <-timeout:
			m.Stop()
			return nil, errors.New("etcdtest: etcd did not become ready within a minute")
		}
	}
	return m, nil
}

// Stop stops the members and removes their directories.
func (m *Member) Stop() {
	for _, e := range m.etcds {
		e.Close()
		<-e.Server.StopNotify()
	}
	for _, d := range m.dirs {
		os.RemoveAll(d)
	}
}

// freeURLs returns two loopback URLs on ports free now.
func freeURLs() (client, peer url.URL, err error) {
	var ports [2]int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return url.URL{}, url.URL{}, err
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[0])},
		url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[1])}, nil
}

// IgnoreLeaks are the goleak options for the goroutines etcd's packages
// start once per process and never stop (filled in from what goleak finds
// after Stop; none of them belongs to a member).
func IgnoreLeaks() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreAnyFunction("github.com/golang/glog.(*fileSink).flushDaemon"),
	}
}
