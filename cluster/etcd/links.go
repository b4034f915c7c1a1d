package etcd

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/kstep-dev/kstep/cluster/netfault"
)

// The links a member hosts (netfault proxies, controlled at
// netfault.ControlPath on the member's client URLs): netfault.LinkEtcdPeer
// in front of its peer listener (Config.PeerProxyListen; the link knows
// which member sent each connection: peerSender) and netfault.LinkEtcdClient
// in front of its client listener (Config.ClientProxyListen).

// startLinks starts the member's links, nil when it has none.
func startLinks(cfg Config, ec *embed.Config) (*netfault.Links, error) {
	if cfg.PeerProxyListen == "" && cfg.ClientProxyListen == "" {
		return nil, nil
	}
	links := &netfault.Links{}
	if cfg.PeerProxyListen != "" {
		var p *netfault.Proxy
		var err error
		target := loopbackTarget(ec.ListenPeerUrls[0])
		if cfg.PeerTLS.Empty() {
			p, err = netfault.Listen(netfault.LinkEtcdPeer, cfg.PeerProxyListen, target, peerSenders(cfg.InitialCluster))
		} else {
			p, err = peerTLSLink(cfg, target)
		}
		if err != nil {
			return nil, fmt.Errorf("etcd member %s: %w", cfg.Name, err)
		}
		links.Add(p)
	}
	if cfg.ClientProxyListen != "" {
		p, err := netfault.Listen(netfault.LinkEtcdClient, cfg.ClientProxyListen, loopbackTarget(ec.ListenClientUrls[0]), netfault.Senders{})
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

// peerTLSLink is the peer link of a member whose peer URLs are TLS: the
// link terminates the TLS its peers dial (with the member's peer
// certificate, taking only certificates the peer CA signed, as the
// member's own listener does) and dials the member's listener with the
// same certificate, so a partition can name each connection's sender by
// the CommonName of the certificate it presented (a member's name, as
// kstep issues them; certSenders). The headers peerSenders reads are
// encrypted on the wire.
func peerTLSLink(cfg Config, target string) (*netfault.Proxy, error) {
	info := cfg.PeerTLS.info()
	server, err := info.ServerConfig()
	if err != nil {
		return nil, fmt.Errorf("link %s: %w", netfault.LinkEtcdPeer, err)
	}
	client, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("link %s: %w", netfault.LinkEtcdPeer, err)
	}
	// HTTP/1.1 on both legs: etcd's peer transport does not ask for h2,
	// and a link that let one leg negotiate it and not the other would
	// forward bytes neither end could read.
	server.NextProtos, client.NextProtos = nil, nil
	return netfault.ListenTLS(netfault.LinkEtcdPeer, cfg.PeerProxyListen, target, server, client, certSenders(cfg.InitialCluster))
}

// certSenders names a TLS peer connection's sender by its certificate's
// CommonName, when that is a member of --initial-cluster.
func certSenders(initialCluster string) netfault.Senders {
	members := map[string]bool{}
	for _, kv := range strings.Split(initialCluster, ",") {
		if name, _, ok := strings.Cut(kv, "="); ok {
			members[name] = true
		}
	}
	return netfault.Senders{Conn: func(c net.Conn) string {
		tc, ok := c.(*tls.Conn)
		if !ok {
			return ""
		}
		certs := tc.ConnectionState().PeerCertificates
		if len(certs) == 0 || !members[certs[0].Subject.CommonName] {
			return ""
		}
		return certs[0].Subject.CommonName
	}}
}

// linkControl is the links' control as the member serves it on its client
// URLs: open on a plain member (an insecure cluster's), else only to a
// client certificate named cn (kstep's etcd-admin), whatever else etcd's
// client-cert-auth lets in (the apiservers).
func linkControl(cfg Config, links http.Handler) http.Handler {
	if cfg.ClientTLS.Empty() {
		return links
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "links: a client certificate is required", http.StatusUnauthorized)
			return
		}
		if cn := r.TLS.PeerCertificates[0].Subject.CommonName; cn != cfg.LinkControlCN {
			http.Error(w, fmt.Sprintf("links: %q may not control links", cn), http.StatusForbidden)
			return
		}
		links.ServeHTTP(w, r)
	})
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
