package etcd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// PeerProxyPath is where a member with a peer proxy serves the proxy's
// control, on its client URLs: GET answers PeerProxyState, PUT replaces the
// cut set with the body's.
const PeerProxyPath = "/kstep/peer-proxy"

// PeerProxyState is the control's document.
type PeerProxyState struct {
	// Member is the member this proxy stands in front of.
	Member string `json:"member"`
	// Cut are the partitioned members (by name).
	Cut []string `json:"cut"`
}

// PeerProxy stands in front of one member's peer listener: the member
// advertises the proxy's address, the proxy forwards to where the member
// really listens. It runs inside the member's own process (`kstep etcd
// --peer-proxy-listen`), so it lives exactly as long as the member, on
// every provider, and needs no network namespace or root.
//
// Cutting a member M off its peers is a cut set on every member's proxy:
// M's own proxy then refuses and closes every connection into M, and every
// other proxy closes the connections M opened to its member. A member's
// raft traffic flows over connections either side dials, so a proxy must
// know who sent each connection, not only where it goes: etcd names the
// sender in every raft request (X-PeerURLs: the sender's advertised peer
// URLs, i.e. its proxy's address), and a peer connection only ever carries
// one member's requests. The members' names and advertised addresses come
// from --initial-cluster.
type PeerProxy struct {
	member string
	ln     net.Listener
	target string
	// byAdvertised: an advertised peer address ("host:port") → member name.
	byAdvertised map[string]string

	mu    sync.Mutex
	cut   map[string]bool
	conns map[*proxyConn]struct{}
}

type proxyConn struct {
	sender    string
	in, out   net.Conn
	closeOnce sync.Once
}

func (c *proxyConn) close() {
	c.closeOnce.Do(func() {
		c.in.Close()
		if c.out != nil {
			c.out.Close()
		}
	})
}

// StartPeerProxy listens on listen and forwards to target (the member's
// own peer listener). initialCluster is etcd's --initial-cluster.
func StartPeerProxy(member, listen, target, initialCluster string) (*PeerProxy, error) {
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
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("etcd peer proxy for %s: %w", member, err)
	}
	p := &PeerProxy{member: member, ln: ln, target: target, byAdvertised: byAdv,
		cut: map[string]bool{}, conns: map[*proxyConn]struct{}{}}
	go p.serve()
	return p, nil
}

// Close stops the proxy and drops every connection.
func (p *PeerProxy) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.close()
	}
}

// State is the proxy's member and cut set.
func (p *PeerProxy) State() PeerProxyState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := PeerProxyState{Member: p.member, Cut: []string{}}
	for m := range p.cut {
		st.Cut = append(st.Cut, m)
	}
	slices.Sort(st.Cut)
	return st
}

// SetCut replaces the cut set: connections it now cuts close at once, and
// new ones are refused, until a later SetCut lifts them.
func (p *PeerProxy) SetCut(members []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = map[string]bool{}
	for _, m := range members {
		p.cut[m] = true
	}
	for c := range p.conns {
		if p.cutLocked(c.sender) {
			c.close()
		}
	}
}

func (p *PeerProxy) cutLocked(sender string) bool {
	return p.cut[p.member] || (sender != "" && p.cut[sender])
}

// ServeHTTP is the control (PeerProxyPath).
func (p *PeerProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
	case http.MethodPut:
		var st PeerProxyState
		if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&st); err != nil {
			http.Error(w, "peer proxy: "+err.Error(), http.StatusBadRequest)
			return
		}
		p.SetCut(st.Cut)
	default:
		http.Error(w, "peer proxy: GET or PUT", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(p.State())
}

func (p *PeerProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		go p.forward(c)
	}
}

// maxHeader bounds how much of a connection's first request is read to find
// its sender.
const maxHeader = 64 << 10

func (p *PeerProxy) forward(in net.Conn) {
	br := bufio.NewReaderSize(in, maxHeader)
	_ = in.SetReadDeadline(time.Now().Add(10 * time.Second))
	sender := p.senderOf(br)
	_ = in.SetReadDeadline(time.Time{})
	pc := &proxyConn{sender: sender, in: in}
	p.mu.Lock()
	if p.cutLocked(sender) {
		p.mu.Unlock()
		in.Close()
		return
	}
	p.conns[pc] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, pc)
		p.mu.Unlock()
		pc.close()
	}()

	out, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	p.mu.Lock()
	pc.out = out
	cut := p.cutLocked(sender)
	p.mu.Unlock()
	if cut {
		out.Close()
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, br); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
}

// senderOf peeks at the connection's first HTTP request and returns the
// member named by its X-PeerURLs header, "" when it names none of ours
// (etcd's version and membership probes carry no header).
func (p *PeerProxy) senderOf(br *bufio.Reader) string {
	for n := 512; n <= maxHeader; n *= 2 {
		b, err := br.Peek(n)
		if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
			return p.senderIn(b[:i+4])
		}
		if err != nil {
			// Fewer bytes than n arrived before the deadline or EOF: use
			// what there is.
			if b2, _ := br.Peek(br.Buffered()); bytes.Contains(b2, []byte("\r\n\r\n")) {
				return p.senderIn(b2)
			}
			return ""
		}
	}
	return ""
}

func (p *PeerProxy) senderIn(head []byte) string {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
	if err != nil {
		return ""
	}
	for _, raw := range strings.Split(req.Header.Get("X-PeerURLs"), ",") {
		if u, err := url.Parse(strings.TrimSpace(raw)); err == nil {
			if name, ok := p.byAdvertised[u.Host]; ok {
				return name
			}
		}
	}
	return ""
}
