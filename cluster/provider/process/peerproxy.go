package process

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// peerProxies stand in front of every etcd member's peer port when
// Config.EtcdPeerProxy is set: member i advertises its proxy's address, the
// proxy forwards to the port the member really listens on. Cutting a
// member's traffic is then closing connections, which is how Partition works
// without network namespaces or root.
//
// A member's raft traffic flows over connections either side dials, so a
// proxy must know who sent each connection, not only where it goes. etcd
// names the sender in every raft request (X-PeerURLs: the sender's
// advertised peer URLs, i.e. its proxy's address), and a peer connection
// only ever carries one member's requests. A partitioned member loses every
// connection into it and every connection it opened to the others.
//
// The proxies live in the process that ran Up: a cluster started with them
// needs that process (a foreground kstep up, kstep chaos, a test) alive.
type peerProxies struct {
	mu sync.Mutex
	// byMember: a member's name → its proxy.
	byMember map[string]*peerProxy
	// byAdvertised: a proxy's advertised address ("127.0.0.1:port") → the
	// member's name, to name a connection's sender.
	byAdvertised map[string]string
	// cut are the partitioned members.
	cut map[string]bool
}

// peerProxy forwards one member's peer port.
type peerProxy struct {
	member string
	ln     net.Listener
	target string
	// conns are the live connections, each with its sender ("" unknown).
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

// startPeerProxies listens on every member's advertised peer port. members
// maps a member's name to (advertised port, real peer port).
func startPeerProxies(members map[string][2]int) (*peerProxies, error) {
	pp := &peerProxies{byMember: map[string]*peerProxy{}, byAdvertised: map[string]string{}, cut: map[string]bool{}}
	for name, ports := range members {
		addr := "127.0.0.1:" + strconv.Itoa(ports[0])
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			pp.close()
			return nil, fmt.Errorf("etcd peer proxy for %s: %w", name, err)
		}
		p := &peerProxy{member: name, ln: ln, target: "127.0.0.1:" + strconv.Itoa(ports[1]), conns: map[*proxyConn]struct{}{}}
		pp.byMember[name] = p
		pp.byAdvertised[addr] = name
	}
	for _, p := range pp.byMember {
		go pp.serve(p)
	}
	return pp, nil
}

func (pp *peerProxies) serve(p *peerProxy) {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		go pp.forward(p, c)
	}
}

// maxHeader bounds how much of a connection's first request is read to find
// its sender.
const maxHeader = 64 << 10

func (pp *peerProxies) forward(p *peerProxy, in net.Conn) {
	br := bufio.NewReaderSize(in, maxHeader)
	_ = in.SetReadDeadline(time.Now().Add(10 * time.Second))
	sender := pp.senderOf(br)
	_ = in.SetReadDeadline(time.Time{})
	pc := &proxyConn{sender: sender, in: in}
	pp.mu.Lock()
	if pp.cut[p.member] || (sender != "" && pp.cut[sender]) {
		pp.mu.Unlock()
		in.Close()
		return
	}
	p.conns[pc] = struct{}{}
	pp.mu.Unlock()
	defer func() {
		pp.mu.Lock()
		delete(p.conns, pc)
		pp.mu.Unlock()
		pc.close()
	}()

	out, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	pp.mu.Lock()
	pc.out = out
	cut := pp.cut[p.member] || (sender != "" && pp.cut[sender])
	pp.mu.Unlock()
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
func (pp *peerProxies) senderOf(br *bufio.Reader) string {
	for n := 512; n <= maxHeader; n *= 2 {
		b, err := br.Peek(n)
		if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
			return pp.senderIn(b[:i+4])
		}
		if err != nil {
			// Fewer bytes than n arrived before the deadline or EOF: use
			// what there is.
			if b2, _ := br.Peek(br.Buffered()); bytes.Contains(b2, []byte("\r\n\r\n")) {
				return pp.senderIn(b2)
			}
			return ""
		}
	}
	return ""
}

func (pp *peerProxies) senderIn(head []byte) string {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
	if err != nil {
		return ""
	}
	for _, u := range strings.Split(req.Header.Get("X-PeerURLs"), ",") {
		u = strings.TrimPrefix(strings.TrimSpace(u), "http://")
		if name, ok := pp.byAdvertised[u]; ok {
			return name
		}
	}
	return ""
}

// partition cuts member off: every connection into it, and every connection
// it opened to another member, closes now, and new ones are refused until
// heal.
func (pp *peerProxies) partition(member string) error {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if _, ok := pp.byMember[member]; !ok {
		return fmt.Errorf("no etcd peer proxy for %q", member)
	}
	pp.cut[member] = true
	for _, p := range pp.byMember {
		for c := range p.conns {
			if p.member == member || c.sender == member {
				c.close()
			}
		}
	}
	return nil
}

func (pp *peerProxies) heal(member string) error {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if _, ok := pp.byMember[member]; !ok {
		return fmt.Errorf("no etcd peer proxy for %q", member)
	}
	delete(pp.cut, member)
	return nil
}

// close stops every proxy and drops every connection.
func (pp *peerProxies) close() {
	if pp == nil {
		return
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	for _, p := range pp.byMember {
		_ = p.ln.Close()
		for c := range p.conns {
			c.close()
		}
	}
}
