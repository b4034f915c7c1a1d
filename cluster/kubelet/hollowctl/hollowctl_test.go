package hollowctl_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/kstep-dev/kstep/cluster/kubelet/hollowctl"
)

type fake struct {
	mu      sync.Mutex
	running map[string]bool
	starts  map[string]int
}

func (f *fake) Kubelets() []hollowctl.Kubelet {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []hollowctl.Kubelet
	for _, n := range []string{"hollow-0", "hollow-1"} {
		out = append(out, hollowctl.Kubelet{Node: n, Running: f.running[n], Starts: f.starts[n]})
	}
	return out
}

func (f *fake) set(node string, on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.running[node]; !ok {
		return fmt.Errorf("%s: %w", node, hollowctl.ErrUnknownNode)
	}
	if on && !f.running[node] {
		f.starts[node]++
	}
	f.running[node] = on
	return nil
}

func (f *fake) Stop(_ context.Context, node string) error  { return f.set(node, false) }
func (f *fake) Start(_ context.Context, node string) error { return f.set(node, true) }

func TestControlStopsAndStartsOneKubelet(t *testing.T) {
	f := &fake{running: map[string]bool{"hollow-0": true, "hollow-1": true}, starts: map[string]int{"hollow-0": 1, "hollow-1": 1}}
	srv := httptest.NewServer(hollowctl.Handler(f))
	defer srv.Close()
	c := hollowctl.Client{HC: srv.Client(), Base: srv.URL}
	ctx := context.Background()
	k, err := c.Stop(ctx, "hollow-1")
	if err != nil || k.Running || k.Node != "hollow-1" {
		t.Fatalf("stop: %+v %v", k, err)
	}
	ks, err := c.List(ctx)
	if err != nil || !ks[0].Running || ks[1].Running {
		t.Fatalf("after stopping hollow-1 only: %+v %v", ks, err)
	}
	if k, err = c.Start(ctx, "hollow-1"); err != nil || !k.Running || k.Starts != 2 {
		t.Fatalf("start: %+v %v", k, err)
	}
	if _, err := c.Stop(ctx, "hollow-9"); !errors.Is(err, hollowctl.ErrUnknownNode) {
		t.Fatalf("unknown node: %v", err)
	}
	resp, err := http.Get(srv.URL + hollowctl.Path + "/hollow-0/stop")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET of a POST verb: %s", resp.Status)
	}
}
