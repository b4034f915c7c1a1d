package testenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/cluster/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Etcd starts a one-member etcd in this process, stopped at test cleanup,
// and returns its client URL and a client.
func Etcd(t testing.TB) (string, *clientv3.Client) {
	t.Helper()
	return EtcdWith(t, nil)
}

// EtcdWith is Etcd with its configuration changed by mutate (nil: none).
func EtcdWith(t testing.TB, mutate func(*etcd.Config)) (string, *clientv3.Client) {
	t.Helper()
	var m *etcd.Member
	var client string
	// A free port is free only until someone else takes it: test packages
	// run side by side, so a port taken between FreePort and etcd's bind
	// is tried again with new ones.
	for attempt := 1; ; attempt++ {
		cfg := memberConfig(t, "test", t.TempDir())
		client = cfg.AdvertiseClientURLs[0]
		cfg.InitialCluster = "test=" + cfg.AdvertisePeerURLs[0]
		if mutate != nil {
			mutate(&cfg)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var err error
		m, err = etcd.Start(ctx, cfg)
		cancel()
		if err == nil {
			break
		}
		if attempt < 5 && errors.Is(err, syscall.EADDRINUSE) {
			continue
		}
		t.Fatalf("start etcd: %v", err)
	}
	t.Cleanup(m.Close)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{client}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return client, cli
}

// memberConfig is etcd's default configuration for a member called name,
// its data in dir, its client and peer URLs on loopback ports free a
// moment ago (its cluster is the caller's to set).
func memberConfig(t testing.TB, name, dir string) etcd.Config {
	c := etcd.DefaultConfig()
	c.Name, c.DataDir = name, dir
	client := fmt.Sprintf("http://127.0.0.1:%d", FreePort(t))
	peer := fmt.Sprintf("http://127.0.0.1:%d", FreePort(t))
	c.ListenClientURLs, c.AdvertiseClientURLs = []string{client}, []string{client}
	c.ListenPeerURLs, c.AdvertisePeerURLs = []string{peer}, []string{peer}
	return c
}

// EtcdCluster starts an n-member etcd cluster in this process (Raft
// heartbeat 50 ms, election timeout 500 ms, as kstep's clusters run),
// stopped at test cleanup, and returns its members in order with their
// client URLs. A test closes a member to kill it.
func EtcdCluster(t testing.TB, n int) ([]*etcd.Member, []string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		dir := t.TempDir()
		cfgs := make([]etcd.Config, n)
		var initial, clients []string
		for i := range n {
			name := fmt.Sprintf("m%d", i)
			c := memberConfig(t, name, fmt.Sprintf("%s/%s", dir, name))
			c.HeartbeatInterval, c.ElectionTimeout = 50*time.Millisecond, 500*time.Millisecond
			c.LogLevel = "error"
			cfgs[i] = c
			initial = append(initial, name+"="+c.AdvertisePeerURLs[0])
			clients = append(clients, c.AdvertiseClientURLs[0])
		}
		members := make([]*etcd.Member, n)
		errs := make([]error, n)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var wg sync.WaitGroup
		for i := range cfgs {
			cfgs[i].InitialCluster = strings.Join(initial, ",")
			// Members of a new cluster become ready together.
			wg.Go(func() { members[i], errs[i] = etcd.Start(ctx, cfgs[i]) })
		}
		wg.Wait()
		cancel()
		err := errors.Join(errs...)
		if err == nil {
			for _, m := range members {
				t.Cleanup(m.Close)
			}
			return members, clients
		}
		for _, m := range members {
			if m != nil {
				m.Close()
			}
		}
		if attempt < 5 && errors.Is(err, syscall.EADDRINUSE) {
			continue
		}
		t.Fatalf("start etcd cluster: %v", err)
	}
}

// Cluster is a real etcd and apiserver for one test, a client on the
// apiserver, and a context that ends with the test.
type Cluster struct {
	API    *APIServer
	Client kubernetes.Interface
	// Ctx ends when the test does.
	Ctx context.Context
}

// StartCluster starts a Cluster, stopped at test cleanup.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	url, _ := Etcd(t)
	api := StartAPIServer(t, url, nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &Cluster{API: api, Client: kubernetes.NewForConfigOrDie(api.Config), Ctx: ctx}
}

// APIServer is an apiserver running in this process.
type APIServer struct {
	URL    string
	Config *rest.Config
	Server *apiserver.Server
	cancel context.CancelFunc
	done   chan error
	stop   sync.Once
}

// Stop stops the apiserver and waits for it; stopping it again (the test's
// cleanup after the test stopped it) does nothing.
func (a *APIServer) Stop() {
	a.stop.Do(func() {
		a.cancel()
		<-a.done
	})
}

// StartAPIServer starts an apiserver on etcdURL, waits until it is ready,
// and stops it at test cleanup. opts may be nil for the defaults.
func StartAPIServer(t testing.TB, etcdURL string, mutate func(*apiserver.Options)) *APIServer {
	t.Helper()
	return StartAPIServerOn(t, etcdURL, "127.0.0.1:0", mutate)
}

// StartAPIServerOn is StartAPIServer listening on addr (to start an
// apiserver again where a stopped one was).
func StartAPIServerOn(t testing.TB, etcdURL, addr string, mutate func(*apiserver.Options)) *APIServer {
	t.Helper()
	opts := apiserver.DefaultOptions()
	opts.Name = "test-apiserver"
	opts.EtcdServers = []string{etcdURL}
	opts.BookmarkInterval = time.Second
	if mutate != nil {
		mutate(&opts)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: opts.EtcdServers, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := apiserver.New(opts, cli, log)
	if err != nil {
		t.Fatalf("apiserver: %v", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	scheme, probe := "http://", http.DefaultClient
	if opts.TLSCertFile != "" {
		// /readyz is public; the probe needs no identity, and the tests
		// that enable TLS check the certificate through a.Config.
		scheme, probe = "https://", &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	}
	a := &APIServer{URL: scheme + ln.Addr().String(), Server: s, cancel: cancel, done: make(chan error, 1)}
	go func() {
		a.done <- s.Serve(ctx, ln)
		cli.Close()
	}()
	t.Cleanup(a.Stop)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := probe.Get(a.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("apiserver not ready after 30s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.Config = &rest.Config{Host: a.URL, QPS: -1, Burst: -1}
	if opts.TLSCertFile != "" {
		// Anonymous: PKI.ClientConfig and TokenConfig add an identity.
		a.Config.TLSClientConfig.CAFile = opts.ClientCAFile
	}
	return a
}
