package netfault_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/netfault"
)

// echo serves a line echo on loopback: every line comes back.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func link(t *testing.T, identify func(*bufio.Reader) string) *netfault.Proxy {
	t.Helper()
	p, err := netfault.Listen("test", "127.0.0.1:0", echo(t), netfault.Senders{Identify: identify})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func dial(t *testing.T, p *netfault.Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// roundTrip sends a line and times its echo.
func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, line string) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return 0, err
	}
	got, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if got != line+"\n" {
		t.Fatalf("echo %q, want %q", got, line)
	}
	return time.Since(start), nil
}

func ms(d time.Duration) netfault.Duration { return netfault.Duration{Duration: d} }

func TestDelayPerDirection(t *testing.T) {
	p := link(t, nil)
	c, r := dial(t, p)
	if d, err := roundTrip(t, c, r, "warm"); err != nil || d > 100*time.Millisecond {
		t.Fatalf("no rule: %v %v", d, err)
	}
	if err := p.Set([]netfault.Rule{{Name: "slow", Up: netfault.Fault{Delay: ms(150 * time.Millisecond)}, Down: netfault.Fault{Delay: ms(100 * time.Millisecond)}}}); err != nil {
		t.Fatal(err)
	}
	d, err := roundTrip(t, c, r, "slow")
	if err != nil {
		t.Fatal(err)
	}
	if d < 250*time.Millisecond || d > 2*time.Second {
		t.Fatalf("round trip %v with 150 ms up + 100 ms down", d)
	}
	if err := p.Set(nil); err != nil {
		t.Fatal(err)
	}
	if d, err := roundTrip(t, c, r, "fast"); err != nil || d > 100*time.Millisecond {
		t.Fatalf("lifted: %v %v", d, err)
	}
}

func TestBlackholeHoldsAndDeliversWhenItLifts(t *testing.T) {
	p := link(t, nil)
	c, r := dial(t, p)
	if _, err := roundTrip(t, c, r, "warm"); err != nil {
		t.Fatal(err)
	}
	if err := p.Set([]netfault.Rule{{Name: "hole", Down: netfault.Fault{Blackhole: true}, For: ms(400 * time.Millisecond)}}); err != nil {
		t.Fatal(err)
	}
	d, err := roundTrip(t, c, r, "held")
	if err != nil {
		t.Fatal(err)
	}
	if d < 300*time.Millisecond || d > 3*time.Second {
		t.Fatalf("answer after %v; the blackhole held for 400 ms", d)
	}
	if st := p.State(); len(st.Rules) != 0 {
		t.Fatalf("rule outlived its time: %+v", st.Rules)
	}
}

func TestCutRefusesAndClosesOnlyTheSender(t *testing.T) {
	// The sender names itself in its first line.
	identify := func(br *bufio.Reader) string {
		b, _ := br.Peek(2)
		return string(b)
	}
	p := link(t, identify)
	a, ra := dial(t, p)
	b, rb := dial(t, p)
	if _, err := roundTrip(t, a, ra, "m1 hello"); err != nil {
		t.Fatal(err)
	}
	if _, err := roundTrip(t, b, rb, "m2 hello"); err != nil {
		t.Fatal(err)
	}
	if err := p.Set([]netfault.Rule{{Name: "part", From: []string{"m1"}, Cut: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := roundTrip(t, a, ra, "m1 again"); err == nil {
		t.Fatal("m1's connection survived its cut")
	}
	if _, err := roundTrip(t, b, rb, "m2 again"); err != nil {
		t.Fatalf("m2 was cut too: %v", err)
	}
	a2, ra2 := dial(t, p)
	if _, err := roundTrip(t, a2, ra2, "m1 new"); err == nil {
		t.Fatal("a new m1 connection was let in")
	}
}

func TestLossHoldsAShareOfChunks(t *testing.T) {
	p := link(t, nil)
	c, r := dial(t, p)
	if err := p.Set([]netfault.Rule{{Name: "loss", Up: netfault.Fault{Loss: 0.5}}}); err != nil {
		t.Fatal(err)
	}
	slow := 0
	const n = 20
	for i := range n {
		d, err := roundTrip(t, c, r, strings.Repeat("x", i+1))
		if err != nil {
			t.Fatal(err)
		}
		if d >= netfault.RetransmitDelay-20*time.Millisecond {
			slow++
		}
	}
	// Binomial(20, 0.5): fewer than 3 or more than 17 has probability < 0.05 %.
	if slow < 3 || slow > 17 {
		t.Fatalf("%d of %d chunks held back with loss 0.5", slow, n)
	}
}

func TestBandwidthCaps(t *testing.T) {
	p := link(t, nil)
	c, r := dial(t, p)
	if err := p.Set([]netfault.Rule{{Name: "thin", Up: netfault.Fault{BandwidthBytes: 100 << 10}}}); err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("y", 200<<10)
	d, err := roundTrip(t, c, r, line)
	if err != nil {
		t.Fatal(err)
	}
	// 200 KiB at 100 KiB/s, less the first burst (10 KiB): ≥ 1.5 s.
	if d < 1500*time.Millisecond {
		t.Fatalf("200 KiB through a 100 KiB/s link in %v", d)
	}
}

func TestRulesAreValidated(t *testing.T) {
	p := link(t, nil)
	for name, r := range map[string]netfault.Rule{
		"no name":        {},
		"loss over 1":    {Name: "x", Up: netfault.Fault{Loss: 1.5}},
		"negative delay": {Name: "x", Down: netfault.Fault{Delay: ms(-time.Second)}},
		"huge delay":     {Name: "x", Down: netfault.Fault{Delay: ms(time.Hour)}},
		"negative for":   {Name: "x", For: ms(-time.Second)},
		"reset over 1":   {Name: "x", Reset: 2},
	} {
		if err := p.Set([]netfault.Rule{r}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := p.Set([]netfault.Rule{{Name: "a"}, {Name: "a"}}); err == nil {
		t.Error("two rules of one name accepted")
	}
}

func TestControl(t *testing.T) {
	p := link(t, nil)
	var links netfault.Links
	links.Add(p)
	srv := httptest.NewServer(&links)
	defer srv.Close()
	cl := netfault.Client{HC: srv.Client(), Base: srv.URL}
	ctx := context.Background()
	if _, err := cl.Update(ctx, "test", netfault.Rule{Name: "a", Up: netfault.Fault{Delay: ms(time.Millisecond)}, For: ms(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	st, err := cl.Update(ctx, "test", netfault.Rule{Name: "b", Cut: true})
	if err != nil || len(st.Rules) != 2 {
		t.Fatalf("%+v %v", st, err)
	}
	if st.Rules[0].Until.IsZero() || time.Until(st.Rules[0].Until) < 50*time.Second {
		t.Fatalf("rule a lost its time when b was added: %+v", st.Rules[0])
	}
	if st, err = cl.Remove(ctx, "test", "a"); err != nil || len(st.Rules) != 1 || st.Rules[0].Name != "b" {
		t.Fatalf("%+v %v", st, err)
	}
	if _, err := cl.Get(ctx, "nope"); !errors.Is(err, netfault.ErrNoLink) {
		t.Fatalf("unknown link: %v", err)
	}
	resp, err := http.DefaultClient.Do(mustReq(t, http.MethodPut, srv.URL+netfault.ControlPath+"/test", `[{"name":"x","up":{"loss":7}}]`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("bad rule: %s", resp.Status)
	}
	all, err := cl.States(ctx)
	if err != nil || len(all) != 1 || all[0].Link != "test" {
		t.Fatalf("%+v %v", all, err)
	}
}

func mustReq(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResetOpenAndNewConnections(t *testing.T) {
	p := link(t, nil)
	c, r := dial(t, p)
	if _, err := roundTrip(t, c, r, "warm"); err != nil {
		t.Fatal(err)
	}
	if err := p.Set([]netfault.Rule{{Name: "rst", Reset: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := roundTrip(t, c, r, "after"); err == nil {
		t.Fatal("an open connection survived reset 1")
	}
	// A new connection is reset as it arrives: the dial itself or its
	// first round trip fails.
	if c2, err := net.Dial("tcp", p.Addr().String()); err == nil {
		defer c2.Close()
		if _, err := roundTrip(t, c2, bufio.NewReader(c2), "new"); err == nil {
			t.Fatal("a new connection survived reset 1")
		}
	}
	if err := p.Set(nil); err != nil {
		t.Fatal(err)
	}
	c3, r3 := dial(t, p)
	if _, err := roundTrip(t, c3, r3, "healed"); err != nil {
		t.Fatalf("after the rule is lifted: %v", err)
	}
}

// A keep-alive connection that opened unnamed (etcd's prober shares the
// raft pipeline's transport) and later carries a named request is cut
// when that request shows a cut sender.
func TestCutCatchesAConnectionNamedLater(t *testing.T) {
	senders := netfault.Senders{
		Identify: func(*bufio.Reader) string { return "" },
		Reidentify: func(chunk []byte) string {
			if s, ok := strings.CutPrefix(string(chunk), "from:"); ok {
				return strings.TrimSpace(s)
			}
			return ""
		},
	}
	p, err := netfault.Listen("test", "127.0.0.1:0", echo(t), senders)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	c, r := dial(t, p)
	if _, err := roundTrip(t, c, r, "probe"); err != nil {
		t.Fatal(err)
	}
	if err := p.Set([]netfault.Rule{{Name: "part", From: []string{"m1"}, Cut: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := roundTrip(t, c, r, "probe again"); err != nil {
		t.Fatalf("an unnamed connection was cut: %v", err)
	}
	if _, err := roundTrip(t, c, r, "from: m1"); err == nil {
		t.Fatal("m1's request crossed a cut on a connection that opened unnamed")
	}
}
