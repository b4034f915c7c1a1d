package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kstep-dev/kstep/cluster/netfault"
)

// SetPeerCut partitions (cut) or heals an etcd member from its peers
// through the etcd-peer links inside every member (Topology.LinkProxies):
// each running member's proxy gets member added to, or removed from, its
// cut set, over its control on the member's client URL (Endpoint), as
// kstep-etcd-admin on a secure cluster (the one in stateDir). Every
// provider partitions etcd peers with this one mechanism. A member that is
// down is skipped; when it starts again its proxy starts with an empty cut
// set.
func SetPeerCut(ctx context.Context, stateDir string, actors []Actor, member string, cut bool) error {
	var members []Actor
	found := false
	for _, a := range actors {
		if a.Role != RoleEtcd {
			continue
		}
		if a.Name == member {
			found = true
		}
		if a.Running() {
			members = append(members, a)
		}
	}
	if !found {
		return fmt.Errorf("etcd member %q: %w", member, ErrUnknownActor)
	}
	hc, err := EtcdControlClient(stateDir, actors)
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range members {
		if err := updatePeerCut(ctx, hc, m, member, cut); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.Name, err))
		}
	}
	return errors.Join(errs...)
}

// EtcdControlClient is the HTTP client of the etcd members' link control
// in actors: kstep-etcd-admin's (EtcdAdminTLS) on a secure cluster.
func EtcdControlClient(stateDir string, actors []Actor) (*http.Client, error) {
	tlsCfg, err := EtcdAdminTLS(stateDir, actors)
	if err != nil {
		return nil, err
	}
	return &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{Proxy: nil, TLSClientConfig: tlsCfg}}, nil
}

// partitionRule is the rule that cuts member off its peers, on member's
// own link (everything into it) or another member's (what member sends).
func partitionRule(member string, own bool) netfault.Rule {
	r := netfault.Rule{Name: "partition:" + member, Cut: true}
	if !own {
		r.From = []string{member}
	}
	return r
}

func updatePeerCut(ctx context.Context, hc *http.Client, m Actor, member string, cut bool) error {
	c := netfault.Client{HC: hc, Base: m.Endpoint}
	var err error
	if cut {
		_, err = c.Update(ctx, netfault.LinkEtcdPeer, partitionRule(member, m.Name == member))
	} else {
		_, err = c.Remove(ctx, netfault.LinkEtcdPeer, partitionRule(member, false).Name)
	}
	if errors.Is(err, netfault.ErrNoLink) {
		return fmt.Errorf("no peer link (the cluster runs without linkProxies): %w", ErrUnsupported)
	}
	return err
}
