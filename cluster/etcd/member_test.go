package etcd

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// freePorts returns n distinct free TCP ports on 127.0.0.1. All listeners are
// held until every port is chosen so the kernel cannot hand one out twice.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("reserve port: %v", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// clusterConfigs returns the configs of an n-member cluster on free ports.
func clusterConfigs(t *testing.T, n int) []Config {
	t.Helper()
	ports := freePorts(t, 2*n)
	dir := t.TempDir()
	var initial []string
	cfgs := make([]Config, n)
	for i := range n {
		client := fmt.Sprintf("http://127.0.0.1:%d", ports[2*i])
		peer := fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1])
		c := DefaultConfig()
		c.Name = fmt.Sprintf("m%d", i)
		c.DataDir = filepath.Join(dir, c.Name)
		c.ListenClientURLs, c.AdvertiseClientURLs = []string{client}, []string{client}
		c.ListenPeerURLs, c.AdvertisePeerURLs = []string{peer}, []string{peer}
		c.LogLevel = "error"
		cfgs[i] = c
		initial = append(initial, c.Name+"="+peer)
	}
	for i := range cfgs {
		cfgs[i].InitialCluster = strings.Join(initial, ",")
	}
	return cfgs
}

func newClient(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatalf("client for %s: %v", endpoint, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestThreeMembersFormACluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cfgs := clusterConfigs(t, 3)

	// Members of a new cluster become ready together, so start them at once.
	members := make([]*Member, len(cfgs))
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i, c := range cfgs {
		wg.Go(func() { members[i], errs[i] = Start(ctx, c) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start %s: %v", cfgs[i].Name, err)
		}
		t.Cleanup(members[i].Close)
	}

	writer := newClient(t, members[0].ClientURLs()[0])
	reader := newClient(t, members[2].ClientURLs()[0])
	put, err := writer.Put(ctx, "/kstep/test", "hello")
	if err != nil {
		t.Fatalf("put on %s: %v", members[0].Name(), err)
	}
	// A linearizable read on another member must see the write.
	got, err := reader.Get(ctx, "/kstep/test")
	if err != nil {
		t.Fatalf("get on %s: %v", members[2].Name(), err)
	}
	if len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "hello" {
		t.Fatalf("get on %s = %v, want hello", members[2].Name(), got.Kvs)
	}
	if got.Kvs[0].ModRevision != put.Header.Revision {
		t.Errorf("mod revision %d, want put revision %d", got.Kvs[0].ModRevision, put.Header.Revision)
	}
	mem, err := reader.MemberList(ctx)
	if err != nil {
		t.Fatalf("member list: %v", err)
	}
	if len(mem.Members) != 3 {
		t.Errorf("cluster has %d members, want 3", len(mem.Members))
	}
}

func TestRunClosesOnCancel(t *testing.T) {
	cfg := clusterConfigs(t, 1)[0]
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()

	c := newClient(t, cfg.AdvertiseClientURLs[0])
	deadline := time.Now().Add(30 * time.Second)
	for {
		rctx, rcancel := context.WithTimeout(t.Context(), time.Second)
		_, err := c.Put(rctx, "k", "v")
		rcancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("member never served a put: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel = %v, want nil", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return within 15s of cancel")
	}
	// The client port is closed once Run returns.
	if conn, err := net.DialTimeout("tcp", strings.TrimPrefix(cfg.ListenClientURLs[0], "http://"), time.Second); err == nil {
		conn.Close()
		t.Error("client port still accepts connections after Run returned")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"empty name", func(c *Config) { c.Name = "" }, "name is empty"},
		{"empty data dir", func(c *Config) { c.DataDir = "" }, "data dir is empty"},
		{"bad url", func(c *Config) { c.ListenClientURLs = []string{"127.0.0.1:2379"} }, "listen-client-urls"},
		{"sub-ms heartbeat", func(c *Config) { c.HeartbeatInterval = 1500 * time.Microsecond }, "whole milliseconds"},
		{"election too short", func(c *Config) { c.ElectionTimeout = 2 * c.HeartbeatInterval }, "election-timeout"},
		{"bad state", func(c *Config) { c.InitialClusterState = "maybe" }, "clusterState"},
		// etcd itself panics on an unknown level.
		{"bad log level", func(c *Config) { c.LogLevel = "loudest" }, `--log-level "loudest"`},
		{"peer proxy, two peer urls", func(c *Config) {
			c.PeerProxyListen = "127.0.0.1:0"
			c.ListenPeerURLs = []string{"http://127.0.0.1:1", "http://127.0.0.1:2"}
		}, "exactly one --listen-peer-urls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.DataDir = t.TempDir()
			tc.mutate(&c)
			_, err := c.embedConfig()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("embedConfig() error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}
