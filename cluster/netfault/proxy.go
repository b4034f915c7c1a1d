package netfault

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Duration is a JSON duration ("200ms"), as the rest of kstep writes them.
type Duration = metav1.Duration

// RetransmitDelay is how long a lost chunk is held back: Linux's minimum
// TCP retransmission timeout.
const RetransmitDelay = 200 * time.Millisecond

// Direction is one way of a link: Up from the client to the proxied
// target, Down back.
type Direction int

const (
	Up Direction = iota
	Down
)

func (d Direction) String() string {
	if d == Up {
		return "up"
	}
	return "down"
}

// Fault is what one direction of a link does to its bytes.
type Fault struct {
	// Delay is added to every chunk; Jitter adds a uniform [0, Jitter) on
	// top. Order is kept: a chunk never overtakes the one before it.
	Delay  Duration `json:"delay,omitzero"`
	Jitter Duration `json:"jitter,omitzero"`
	// Loss is the share of chunks held back one RetransmitDelay (0–1).
	Loss float64 `json:"loss,omitempty"`
	// Blackhole forwards nothing until the rule lifts.
	Blackhole bool `json:"blackhole,omitempty"`
	// BandwidthBytes caps the direction's throughput, bytes per second
	// over every matching connection of the link together (0: no cap).
	BandwidthBytes int64 `json:"bandwidthBytes,omitempty"`
}

// Zero says the fault does nothing.
func (f Fault) Zero() bool { return f == Fault{} }

// Rule is a fault on a link.
type Rule struct {
	// Name identifies the rule in the link's state (the chaos fault's).
	Name string `json:"name"`
	// From limits the rule to connections from these senders (as the
	// link's Identify names them); empty: every connection.
	From []string `json:"from,omitempty"`
	// Cut closes the matching connections and refuses new ones: a
	// partition.
	Cut bool `json:"cut,omitempty"`
	// Reset is the share of matching connections reset (0–1): open ones
	// when the rule is set, new ones as they arrive.
	Reset float64 `json:"reset,omitempty"`
	Up    Fault   `json:"up,omitzero"`
	Down  Fault   `json:"down,omitzero"`
	// For is how long the rule holds (0: until replaced); Until is when
	// it lifts, set by the proxy.
	For   Duration  `json:"for,omitzero"`
	Until time.Time `json:"until,omitzero"`
}

// Validate says what is wrong with r, naming the field.
func (r Rule) Validate() error {
	if r.Name == "" {
		return errors.New("rule: name is empty")
	}
	share := func(field string, v float64) error {
		if v < 0 || v > 1 {
			return fmt.Errorf("rule %s: %s %g is not a share between 0 and 1", r.Name, field, v)
		}
		return nil
	}
	if err := errors.Join(share("reset", r.Reset), share("up.loss", r.Up.Loss), share("down.loss", r.Down.Loss)); err != nil {
		return err
	}
	for _, f := range []struct {
		dir string
		f   Fault
	}{{"up", r.Up}, {"down", r.Down}} {
		switch {
		case f.f.Delay.Duration < 0 || f.f.Jitter.Duration < 0:
			return fmt.Errorf("rule %s: %s delay and jitter must not be negative", r.Name, f.dir)
		case f.f.Delay.Duration > maxDelay || f.f.Jitter.Duration > maxDelay:
			return fmt.Errorf("rule %s: %s delay and jitter must be at most %v", r.Name, f.dir, maxDelay)
		case f.f.BandwidthBytes < 0:
			return fmt.Errorf("rule %s: %s bandwidthBytes must not be negative", r.Name, f.dir)
		}
	}
	if r.For.Duration < 0 {
		return fmt.Errorf("rule %s: for must not be negative", r.Name)
	}
	return nil
}

// maxDelay bounds a rule's delay and jitter: a chaos fault, not a parking
// lot for connections.
const maxDelay = 5 * time.Minute

// maxRules bounds one link's rules.
const maxRules = 64

func (r *Rule) matches(sender string) bool {
	return len(r.From) == 0 || (sender != "" && slices.Contains(r.From, sender))
}

func (r *Rule) fault(d Direction) Fault {
	if d == Up {
		return r.Up
	}
	return r.Down
}

// Senders names the sender of a connection. Identify reads as much of a
// new connection's first bytes as it needs (through br, which the proxy
// then forwards whole) and names it, "" when it cannot. Reidentify, when
// set, looks at each later chunk a still unnamed connection sends: a
// keep-alive connection whose first request carried no name (etcd's
// prober shares its HTTP transport with the raft pipeline) may carry a
// named one later, and a cut from that sender must catch it then.
// On a TLS link (ListenTLS) the bytes a sender would name itself with
// are the link's own to decrypt only after the handshake, and the sender's
// certificate names it better: Conn, when set, names a connection from the
// connection itself (its *tls.Conn, handshake done) before any byte is
// read.
type Senders struct {
	Identify   func(br *bufio.Reader) string
	Reidentify func(chunk []byte) string
	Conn       func(c net.Conn) string
}

// Proxy forwards one link: it accepts on its listener and forwards every
// connection to target, through the link's rules.
type Proxy struct {
	name   string
	ln     net.Listener
	target string
	// tls, when set, is the client side of a TLS link: the proxy dials
	// target with it (ListenTLS).
	tls     *tls.Config
	senders Senders
	now     func() time.Time

	// active says the link has rules: without any, a chunk passes without
	// taking mu (the fast path of every byte of a healthy link).
	active atomic.Bool

	mu    sync.Mutex
	rules []Rule
	// changed is closed (and replaced) whenever the rules change, to wake
	// directions waiting on a blackhole or a delay.
	changed chan struct{}
	conns   map[*conn]struct{}
	// limit is the link's bandwidth cap per direction, nil for none.
	limit  [2]*rate.Limiter
	expiry *time.Timer
	closed bool
}

// Listen starts a link named name on listen, forwarding to target. With
// zero Senders every sender is "".
func Listen(name, listen, target string, senders Senders) (*Proxy, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("link %s: %w", name, err)
	}
	p := &Proxy{name: name, ln: ln, target: target, senders: senders, now: time.Now,
		changed: make(chan struct{}), conns: map[*conn]struct{}{}}
	go p.serve()
	return p, nil
}

// ListenTLS starts a link that terminates TLS: it accepts with server
// (which decides which client certificates it takes) and dials target
// with client, so the rules see, and Senders.Conn names, each
// connection's sender by the certificate it presented, where a link that
// forwards TLS bytes as they are could tell nothing. Both legs stay
// encrypted; the plaintext exists only inside the link's process.
func ListenTLS(name, listen, target string, server, client *tls.Config, senders Senders) (*Proxy, error) {
	if server == nil || client == nil {
		return nil, fmt.Errorf("link %s: TLS needs a server and a client configuration", name)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("link %s: %w", name, err)
	}
	p := &Proxy{name: name, ln: tls.NewListener(ln, server), target: target, tls: client, senders: senders,
		now: time.Now, changed: make(chan struct{}), conns: map[*conn]struct{}{}}
	go p.serve()
	return p, nil
}

// Name is the link's name; Addr where it listens.
func (p *Proxy) Name() string   { return p.name }
func (p *Proxy) Addr() net.Addr { return p.ln.Addr() }

// Close stops the link and drops every connection.
func (p *Proxy) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.expiry != nil {
		p.expiry.Stop()
	}
	for c := range p.conns {
		c.close(false)
	}
}

// State is a link's rules and open connections.
type State struct {
	Link   string `json:"link"`
	Target string `json:"target"`
	Rules  []Rule `json:"rules"`
	Conns  int    `json:"conns"`
}

// State reports the link's rules in force.
func (p *Proxy) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireLocked()
	return State{Link: p.name, Target: p.target, Rules: slices.Clone(p.rules), Conns: len(p.conns)}
}

// Set replaces the link's rules. A rule with For lifts itself after it.
// Connections a new rule cuts close at once; a new rule's Reset share of
// the open connections it matches is reset.
func (p *Proxy) Set(rules []Rule) error {
	if len(rules) > maxRules {
		return fmt.Errorf("link %s: %d rules, at most %d", p.name, len(rules), maxRules)
	}
	names := map[string]bool{}
	for _, r := range rules {
		if err := r.Validate(); err != nil {
			return err
		}
		if names[r.Name] {
			return fmt.Errorf("link %s: two rules named %s", p.name, r.Name)
		}
		names[r.Name] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	old := map[string]bool{}
	for _, r := range p.rules {
		old[r.Name] = true
	}
	p.rules = make([]Rule, len(rules))
	for i, r := range rules {
		r.From = slices.Clone(r.From)
		r.Until = time.Time{}
		if r.For.Duration > 0 {
			r.Until = now.Add(r.For.Duration)
		}
		p.rules[i] = r
	}
	for c := range p.conns {
		for i := range p.rules {
			r := &p.rules[i]
			if !r.matches(c.sender) {
				continue
			}
			if r.Cut || (!old[r.Name] && r.Reset > 0 && rand.Float64() < r.Reset) {
				c.close(!r.Cut)
				break
			}
		}
	}
	p.applyLocked()
	return nil
}

// applyLocked recomputes the bandwidth caps, arms the expiry and wakes
// every waiting direction.
func (p *Proxy) applyLocked() {
	for d := Up; d <= Down; d++ {
		var bps int64
		for i := range p.rules {
			if b := p.rules[i].fault(d).BandwidthBytes; b > 0 && (bps == 0 || b < bps) {
				bps = b
			}
		}
		switch {
		case bps == 0:
			p.limit[d] = nil
		case p.limit[d] == nil:
			p.limit[d] = rate.NewLimiter(rate.Limit(bps), int(max(bps/10, chunk)))
		default:
			p.limit[d].SetLimit(rate.Limit(bps))
			p.limit[d].SetBurst(int(max(bps/10, chunk)))
		}
	}
	var next time.Time
	for _, r := range p.rules {
		if !r.Until.IsZero() && (next.IsZero() || r.Until.Before(next)) {
			next = r.Until
		}
	}
	if p.expiry != nil {
		p.expiry.Stop()
		p.expiry = nil
	}
	if !next.IsZero() && !p.closed {
		p.expiry = time.AfterFunc(max(0, next.Sub(p.now())), func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.expireLocked()
		})
	}
	p.active.Store(len(p.rules) > 0)
	close(p.changed)
	p.changed = make(chan struct{})
}

// expireLocked drops the rules whose time ran out.
func (p *Proxy) expireLocked() {
	now := p.now()
	n := len(p.rules)
	p.rules = slices.DeleteFunc(p.rules, func(r Rule) bool { return !r.Until.IsZero() && !now.Before(r.Until) })
	if len(p.rules) != n {
		p.applyLocked()
	}
}

// effect is what the rules do to one direction of one connection now.
type effect struct {
	delay, jitter time.Duration
	loss          float64
	blackhole     bool
	limit         *rate.Limiter
	changed       <-chan struct{}
}

func (p *Proxy) effect(c *conn, d Direction) effect {
	if !p.active.Load() {
		return effect{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e := effect{changed: p.changed}
	for i := range p.rules {
		r := &p.rules[i]
		if !r.matches(c.sender) {
			continue
		}
		f := r.fault(d)
		e.delay += f.Delay.Duration
		e.jitter += f.Jitter.Duration
		e.loss = 1 - (1-e.loss)*(1-f.Loss)
		e.blackhole = e.blackhole || f.Blackhole
		if f.BandwidthBytes > 0 {
			e.limit = p.limit[d]
		}
	}
	return e
}

// reidentify names an unnamed connection from a chunk it sent, if the
// chunk names its sender, and closes it if a rule cuts that sender off; it
// reports whether it closed it.
func (p *Proxy) reidentify(c *conn, chunk []byte) bool {
	if c.named.Load() {
		return false
	}
	s := p.senders.Reidentify(chunk)
	if s == "" {
		return false
	}
	p.mu.Lock()
	c.sender = s
	c.named.Store(true)
	cut := false
	for i := range p.rules {
		if r := &p.rules[i]; r.Cut && r.matches(s) {
			cut = true
		}
	}
	p.mu.Unlock()
	if cut {
		c.close(false)
	}
	return cut
}

// admit says whether a new connection from sender may open, and whether
// it is to be reset.
func (p *Proxy) admit(sender string) (ok, reset bool) {
	if !p.active.Load() {
		return true, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.rules {
		r := &p.rules[i]
		if !r.matches(sender) {
			continue
		}
		if r.Cut {
			return false, false
		}
		if r.Reset > 0 && rand.Float64() < r.Reset {
			return false, true
		}
	}
	return true, false
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		go p.forward(c)
	}
}

// maxIdentify bounds how long a new connection has to show who it is.
const maxIdentify = 10 * time.Second

// chunk is the largest piece a direction reads at once.
const chunk = 32 << 10

// queued bounds the chunks one direction holds (delayed or blackholed)
// before it stops reading, so the sender feels the back-pressure.
const queued = 64

type conn struct {
	p *Proxy
	// sender is who opened it ("" unknown); guarded by p.mu once the
	// connection is registered.
	sender string
	// named is sender != "", readable without p.mu.
	named     atomic.Bool
	in, out   net.Conn
	closeOnce sync.Once
	// done is closed with the connection.
	done chan struct{}
}

// close drops both sides; reset makes the client see a connection reset.
func (c *conn) close(reset bool) {
	c.closeOnce.Do(func() {
		close(c.done)
		if reset {
			in := c.in
			if tc, ok := in.(*tls.Conn); ok {
				in = tc.NetConn()
			}
			if tc, ok := in.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
		}
		c.in.Close()
		if c.out != nil {
			c.out.Close()
		}
	})
}

func (p *Proxy) forward(in net.Conn) {
	br := bufio.NewReaderSize(in, chunk)
	sender := ""
	if tc, ok := in.(*tls.Conn); ok {
		// A client that cannot complete the handshake (no certificate, one
		// server does not trust) never reaches the target.
		ctx, cancel := context.WithTimeout(context.Background(), maxIdentify)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			in.Close()
			return
		}
	}
	if p.senders.Conn != nil {
		sender = p.senders.Conn(in)
	}
	if p.senders.Identify != nil {
		_ = in.SetReadDeadline(time.Now().Add(maxIdentify))
		sender = p.senders.Identify(br)
		_ = in.SetReadDeadline(time.Time{})
	}
	c := &conn{p: p, sender: sender, in: in, done: make(chan struct{})}
	c.named.Store(sender != "")
	if ok, reset := p.admit(sender); !ok {
		c.close(reset)
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		in.Close()
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
		c.close(false)
	}()

	out, err := p.dial()
	if err != nil {
		return
	}
	p.mu.Lock()
	c.out = out
	_, open := p.conns[c]
	p.mu.Unlock()
	if !open {
		out.Close()
		return
	}
	done := make(chan struct{}, 2)
	go func() { c.pump(Up, br, out); done <- struct{}{} }()
	go func() { c.pump(Down, out, in); done <- struct{}{} }()
	<-done
	<-done
}

// dial opens the connection to the target, over TLS on a TLS link.
func (p *Proxy) dial() (net.Conn, error) {
	if p.tls == nil {
		return net.DialTimeout("tcp", p.target, 5*time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d := tls.Dialer{NetDialer: &net.Dialer{}, Config: p.tls}
	return d.DialContext(ctx, "tcp", p.target)
}

type piece struct {
	b   []byte
	due time.Time
}

// pump copies src to dst through the link's rules for d: a reader stamps
// each chunk with its due time (delay, jitter, loss) and a writer
// delivers it then, holding back while a blackhole lasts and pacing to
// the bandwidth cap. The fast path (no rule) is a plain copy.
func (c *conn) pump(d Direction, src io.Reader, dst io.Writer) {
	q := make(chan piece, queued)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	go func() {
		defer close(q)
		var last time.Time
		for {
			buf := make([]byte, chunk)
			n, err := src.Read(buf)
			// Naming matters only to rules: a healthy link skips it, and
			// under a rule every request of etcd's names its sender again.
			if n > 0 && d == Up && c.p.senders.Reidentify != nil && c.p.active.Load() && c.p.reidentify(c, buf[:n]) {
				return // its sender is cut off
			}
			if n > 0 {
				e := c.p.effect(c, d)
				due := time.Now().Add(e.delay)
				if e.jitter > 0 {
					due = due.Add(rand.N(e.jitter))
				}
				if e.loss > 0 && rand.Float64() < e.loss {
					due = due.Add(RetransmitDelay)
				}
				if due.Before(last) {
					due = last
				}
				last = due
				select {
				case q <- piece{b: buf[:n], due: due}:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for pc := range q {
		for {
			e := c.p.effect(c, d)
			if e.blackhole {
				select {
				case <-e.changed:
				case <-c.done:
					return
				}
				continue
			}
			if wait := time.Until(pc.due); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-c.done:
					t.Stop()
					return
				case <-e.changed:
					// A lifted delay delivers sooner: restamp from now.
					t.Stop()
					if ne := c.p.effect(c, d); ne.delay < e.delay {
						pc.due = time.Now().Add(ne.delay)
					}
					continue
				}
			}
			if e.limit != nil {
				for rem := len(pc.b); rem > 0; {
					n := min(rem, e.limit.Burst())
					if e.limit.WaitN(ctx, n) != nil {
						return
					}
					rem -= n
				}
			}
			break
		}
		if _, err := dst.Write(pc.b); err != nil {
			c.close(false)
			return
		}
	}
	// src ended: pass the half-close on, so the other side sees EOF.
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else {
		c.close(false)
	}
}

// remaining is what is left of r's time, as a For (0 for none, or a
// nanosecond for a rule already due to lift).
func remaining(r Rule) Duration {
	if r.Until.IsZero() {
		return r.For
	}
	return Duration{Duration: max(time.Nanosecond, time.Until(r.Until))}
}
