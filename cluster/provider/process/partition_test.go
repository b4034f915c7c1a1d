package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// leaderOf asks each endpoint for its status and returns the endpoint of
// the member they agree leads ("" while they do not).
func leaderOf(ctx context.Context, cli *clientv3.Client, endpoints []string) (string, error) {
	byID := map[uint64]string{}
	var leaders []uint64
	for _, ep := range endpoints {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		st, err := cli.Status(sctx, strings.TrimPrefix(ep, "http://"))
		cancel()
		if err != nil {
			return "", err
		}
		byID[st.Header.MemberId] = ep
		leaders = append(leaders, st.Leader)
	}
	for _, l := range leaders {
		if l != leaders[0] || l == 0 {
			return "", fmt.Errorf("members disagree: %v", leaders)
		}
	}
	return byID[leaders[0]], nil
}

// TestPartitionEtcdLeader cuts the leader's peer traffic through the peer
// proxies inside the members: the two others elect a new leader and take writes; after Heal
// the old leader follows the new one.
func TestPartitionEtcdLeader(t *testing.T) {
	bin := kstepBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	p := newCluster(t, bin, 3, 0, func(c *provider.Spec) { c.LinkProxies = true; c.Etcd.LogLevel = os.Getenv("KSTEP_TEST_ETCD_LOG") })
	if err := p.Up(ctx); err != nil {
		t.Fatalf("Up: %v", err)
	}
	names := map[string]string{}
	var endpoints []string
	for _, a := range p.Actors() {
		endpoints = append(endpoints, a.Endpoint)
		names[a.Endpoint] = a.Name
	}
	cli := etcdClient(t, p, endpoints...)
	old, err := leaderOf(ctx, cli, endpoints)
	if err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	if err := p.Partition(ctx, names[old], provider.ScopePeers); err != nil {
		t.Fatalf("Partition %s: %v", names[old], err)
	}
	var rest []string
	for _, ep := range endpoints {
		if ep != old {
			rest = append(rest, ep)
		}
	}
	var now string
	deadline := time.Now().Add(30 * time.Second)
	for {
		if now, err = leaderOf(ctx, cli, rest); err == nil && now != old && now != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new leader among %v 30 s after partitioning %s: %v", rest, names[old], err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("partitioned %s at %s; %s leads, seen %v after the cut", names[old], cut.UTC().Format("15:04:05.000"), names[now], time.Since(cut).Round(time.Millisecond))
	if os.Getenv("KSTEP_TEST_ETCD_LOG") != "" {
		for _, a := range p.Actors() {
			b, _ := os.ReadFile(a.LogPath)
			t.Logf("== %s\n%s", a.Name, b)
		}
	}
	majority := etcdClient(t, p, rest...)
	if _, err := majority.Put(ctx, "/partition-test", "written by the majority"); err != nil {
		t.Fatalf("put through the majority: %v", err)
	}

	if err := p.Heal(ctx, names[old]); err != nil {
		t.Fatalf("Heal: %v", err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		if l, err := leaderOf(ctx, cli, endpoints); err == nil && l != "" {
			solo := etcdClient(t, p, old)
			g, gerr := solo.Get(ctx, "/partition-test")
			if gerr == nil && len(g.Kvs) == 1 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not rejoin within 30 s of Heal", names[old])
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestPartitionUnsupported: without link proxies there is nothing to cut.
func TestPartitionUnsupported(t *testing.T) {
	bin := kstepBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p := newCluster(t, bin, 1, 0)
	if err := p.Up(ctx); err != nil {
		t.Fatalf("Up: %v", err)
	}
	if err := p.Partition(ctx, "etcd-0", provider.ScopePeers); !errors.Is(err, provider.ErrUnsupported) {
		t.Errorf("Partition without proxies = %v, want ErrUnsupported", err)
	}
	// Every actor shares the loopback: none can be taken off the network.
	if err := p.Partition(ctx, "etcd-0", provider.ScopeAll); !errors.Is(err, provider.ErrUnsupported) {
		t.Errorf("Partition scope all = %v, want ErrUnsupported", err)
	}
}
