package etcd

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/kstep-dev/kstep/cluster/netfault"
)

// The links a member hosts (netfault proxies, controlled at
// netfault.ControlPath on the member's client URLs):
//
//   - LinkPeer, in front of its peer listener (Config.PeerProxyListen): the
//     member advertises the proxy's address, so every raft message into
//     it crosses the link, and the link knows which member sent each
//     connection (peerSender). Cutting member M off its peers is a cut on
//     M's own link (nothing gets into M) and a cut From M on every other
//     member's (nothing M sends gets in): a member's raft traffic flows
//     over connections either side dials.
//   - LinkClient, in front of its client listener
//     (Config.ClientProxyListen): the apiservers' --etcd-servers point at
//     it, so a fault on it is a fault on apiserver → etcd.
const (
	LinkPeer   = "etcd-peer"
	LinkClient = "etcd-client"
)

// startLinks starts the member's links, nil when it has none.
func startLinks(cfg Config, ec *embed.Config) (*netfault.Links, error) {
	if cfg.PeerProxyListen == "" && cfg.ClientProxyListen == "" {
		return nil, nil
	}
	links := &netfault.Links{}
	if cfg.PeerProxyListen != "" {
		p, err := netfault.Listen(LinkPeer, cfg.PeerProxyListen, loopbackTarget(ec.ListenPeerUrls[0]), peerSenders(cfg.InitialCluster))
		if err != nil {
			return nil, fmt.Errorf("etcd member %s: %w", cfg.Name, err)
		}
		links.Add(p)
	}
	if cfg.ClientProxyListen != "" {
		p, err := netfault.Listen(LinkClient, cfg.ClientProxyListen, loopbackTarget(ec.ListenClientUrls[0]), netfault.Senders{})
		if err != nil {
			links.Close()
			return nil, fmt.Errorf("etcd member %s: %w", cfg.Name, err)
		}
		links.Add(p)
	}
	return links, nil
}

// loopbackTarget is where a link forwards: the listener of u, on loopback
// when it binds every address.
func loopbackTarget(u url.URL) string {
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return u.Host
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// maxHeader bounds how much of a connection's first request is read to find
// its sender.
const maxHeader = 64 << 10

// peerSenders names the member that opened a peer connection: etcd names
// the sender in every raft request (X-PeerURLs: its advertised peer URLs,
// i.e. its own link's address). The members' advertised addresses come
// from --initial-cluster. etcd's version and membership probes carry no
// header, and its prober shares the raft pipeline's HTTP transport, so a
// keep-alive connection a probe opened (sender "") may carry raft requests
// later: Reidentify finds the header in those.
func peerSenders(initialCluster string) netfault.Senders {
	byAdv := map[string]string{}
	for _, kv := range strings.Split(initialCluster, ",") {
		name, raw, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if u, err := url.Parse(raw); err == nil {
			byAdv[u.Host] = name
		}
	}
	named := func(value string) string {
		for _, raw := range strings.Split(value, ",") {
			if u, err := url.Parse(strings.TrimSpace(raw)); err == nil {
				if name, ok := byAdv[u.Host]; ok {
					return name
				}
			}
		}
		return ""
	}
	in := func(head []byte) string {
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
		if err != nil {
			return ""
		}
		return named(req.Header.Get("X-PeerURLs"))
	}
	identify := func(br *bufio.Reader) string {
		for n := 512; n <= maxHeader && n <= br.Size(); n *= 2 {
			b, err := br.Peek(n)
			if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
				return in(b[:i+4])
			}
			if err != nil {
				// Fewer bytes than n arrived before the deadline or EOF: use
				// what there is.
				if b2, _ := br.Peek(br.Buffered()); bytes.Contains(b2, []byte("\r\n\r\n")) {
					return in(b2)
				}
				return ""
			}
		}
		return ""
	}
	// Go's HTTP client writes the header canonicalized, "X-Peerurls"
	// (etcd spells it "X-PeerURLs"); the chunk is searched as it is, with
	// no lower-cased copy of each one.
	keys := [][]byte{[]byte("\r\nX-Peerurls:"), []byte("\r\nX-PeerURLs:")}
	reidentify := func(chunk []byte) string {
		i, key := -1, keys[0]
		for _, key = range keys {
			if i = bytes.Index(chunk, key); i >= 0 {
				break
			}
		}
		if i < 0 {
			return ""
		}
		rest := chunk[i+len(key):]
		if j := bytes.Index(rest, []byte("\r\n")); j >= 0 {
			rest = rest[:j]
		}
		return named(string(rest))
	}
	return netfault.Senders{Identify: identify, Reidentify: reidentify}
}
