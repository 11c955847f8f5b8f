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
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/goleak"
)

// Member is a running single-member etcd cluster.
type Member struct {
	// Endpoints are the client URLs (http://127.0.0.1:PORT).
	Endpoints []string
	etcd      *embed.Etcd
	dir       string
}

// Config configures a member; the zero value is a test's member.
type Config struct {
	// Fsync makes the member fsync its log as a production member does
	// (benchmarks); by default it does not, a test's data need not
	// survive a crash of the machine.
	Fsync bool
}

// Start starts a member in a new temporary directory and waits until it
// serves (at most a minute).
func Start(c Config) (*Member, error) {
	dir, err := os.MkdirTemp("", "kapi-etcd-")
	if err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = "kapi-test"
	cfg.Dir = dir
	cfg.UnsafeNoFsync = !c.Fsync
	cfg.LogLevel = "panic" // its errors at Stop ("server closed") are expected
	cfg.Logger = "zap"
	cfg.LogOutputs = []string{"stderr"}
	client, peer, err := freeURLs()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("etcdtest: starting etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("etcdtest: etcd failed: %w", err)
	case <-time.After(time.Minute):
		e.Close()
		os.RemoveAll(dir)
		return nil, errors.New("etcdtest: etcd did not become ready within a minute")
	}
	return &Member{Endpoints: []string{client.String()}, etcd: e, dir: dir}, nil
}

// Stop stops the member and removes its directory.
func (m *Member) Stop() {
	m.etcd.Close()
	<-m.etcd.Server.StopNotify()
	os.RemoveAll(m.dir)
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
