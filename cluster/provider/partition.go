package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/kstep-dev/kstep/cluster/etcd"
)

// SetPeerCut partitions (cut) or heals an etcd member from its peers
// through the peer proxies inside every member (Topology.EtcdPeerProxies):
// each running member's proxy gets member added to, or removed from, its
// cut set, over its control on the member's client URL (Endpoint). Every
// provider partitions etcd peers with this one mechanism. A member that is
// down is skipped; when it starts again its proxy starts with an empty cut
// set.
func SetPeerCut(ctx context.Context, actors []Actor, member string, cut bool) error {
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
	var errs []error
	for _, m := range members {
		if err := updatePeerCut(ctx, m, member, cut); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.Name, err))
		}
	}
	return errors.Join(errs...)
}

var controlClient = &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{Proxy: nil}}

func updatePeerCut(ctx context.Context, m Actor, member string, cut bool) error {
	url := m.Endpoint + etcd.PeerProxyPath
	st, err := peerProxyCall(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	set := slices.DeleteFunc(st.Cut, func(s string) bool { return s == member })
	if cut {
		set = append(set, member)
	}
	body, _ := json.Marshal(etcd.PeerProxyState{Member: st.Member, Cut: set})
	_, err = peerProxyCall(ctx, http.MethodPut, url, body)
	return err
}

func peerProxyCall(ctx context.Context, method, url string, body []byte) (etcd.PeerProxyState, error) {
	var st etcd.PeerProxyState
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return st, err
	}
	resp, err := controlClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return st, fmt.Errorf("no peer proxy (the cluster runs without etcdPeerProxies): %w", ErrUnsupported)
	}
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("%s %s: %s", method, url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("%s %s: %w", method, url, err)
	}
	return st, nil
}
