package server

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHostStatsFromProc(t *testing.T) {
	proc, cg := t.TempDir(), t.TempDir() // cg: a host's root cgroup, without memory.current
	writeFiles(t, proc, map[string]string{
		"stat":    "cpu  100 0 50 1000 7 0 0 0 0 0\ncpu0 100 0 50 1000 7 0 0 0 0 0\nbtime 1700000000\n",
		"meminfo": "MemTotal:       8000000 kB\nMemFree:        1000000 kB\nMemAvailable:   6000000 kB\n",
	})
	writeFiles(t, cg, map[string]string{"cpu.stat": "usage_usec 999999999\n"})
	h := newHostStats(proc, cg)
	// The first sample waits minRateInterval for a second one.
	start := time.Now()
	cpu, _, _, err := h.sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < minRateInterval || *cpu.UsageNanoCores != 0 || *cpu.UsageCoreNanoSeconds != 150*1e7 {
		t.Fatalf("first sample: %d nanocores, %d total", *cpu.UsageNanoCores, *cpu.UsageCoreNanoSeconds)
	}
	// 200 ticks (2 cpu-seconds) more busy time, a second later.
	writeFiles(t, proc, map[string]string{"stat": "cpu  250 0 100 1000 7 0 0 0 0 0\nbtime 1700000000\n"})
	h.last.at = h.last.at.Add(-time.Second)
	cpu, mem, boot, err := h.sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if *cpu.UsageCoreNanoSeconds != 350*1e7 {
		t.Fatalf("cumulative cpu %d, want %d (busy ticks of USER_HZ)", *cpu.UsageCoreNanoSeconds, uint64(350*1e7))
	}
	if r := *cpu.UsageNanoCores; r < 1.5e9 || r > 2e9 {
		t.Fatalf("rate %d nanocores, want about 2e9", r)
	}
	if *mem.WorkingSetBytes != 2000000*1024 || *mem.UsageBytes != 7000000*1024 || *mem.AvailableBytes != 6000000*1024 {
		t.Fatalf("memory %+v", mem)
	}
	if boot.Unix() != 1700000000 {
		t.Fatalf("boot time %v", boot)
	}
}

func TestHostStatsFromOwnCgroup(t *testing.T) {
	proc, cg := t.TempDir(), t.TempDir()
	writeFiles(t, proc, map[string]string{"stat": "cpu  1 1 1 1 1 1 1 1 0 0\n"})
	writeFiles(t, cg, map[string]string{
		"cpu.stat":       "usage_usec 5000000\nuser_usec 4000000\n",
		"memory.current": "300000000\n",
		"memory.stat":    "anon 200000000\ninactive_file 50000000\n",
	})
	h := newHostStats(proc, cg)
	cpu, mem, _, err := h.sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if *cpu.UsageCoreNanoSeconds != 5e9 || *cpu.UsageNanoCores != 0 {
		t.Fatalf("cpu %d total, %d rate", *cpu.UsageCoreNanoSeconds, *cpu.UsageNanoCores)
	}
	if *mem.UsageBytes != 300000000 || *mem.WorkingSetBytes != 250000000 || *mem.RSSBytes != 200000000 {
		t.Fatalf("memory %+v", mem)
	}
	// The host's real files parse too.
	if _, _, _, err := newHostStats("/proc", "/sys/fs/cgroup").sample(context.Background()); err != nil {
		t.Fatalf("this host: %v", err)
	}
}

func TestRatesFromCumulativeUsage(t *testing.T) {
	r := newRates()
	at := time.Unix(100, 0)
	if _, ok := r.rate("c", at, 1e9); ok {
		t.Fatal("a rate from one sample")
	}
	if v, ok := r.rate("c", at.Add(2*time.Second), 2e9); !ok || v != 5e8 {
		t.Fatalf("rate %d %v, want half a core", v, ok)
	}
	if v, ok := r.rate("c", at.Add(2100*time.Millisecond), 9e9); !ok || v != 5e8 {
		t.Fatalf("a sample too soon keeps the last rate: %d %v", v, ok)
	}
	r.last = map[string]cpuSample{"n1/a": {}, "n1/pod/s": {}, "n1/gone": {}, "n2/b": {}}
	r.forget("n1", map[string]bool{"a": true}, []*runtimeapi.PodSandboxStats{{Attributes: &runtimeapi.PodSandboxAttributes{Id: "s"}}})
	for _, want := range []string{"n1/a", "n1/pod/s", "n2/b"} {
		if _, ok := r.last[want]; !ok {
			t.Errorf("forget dropped %s", want)
		}
	}
	if _, ok := r.last["n1/gone"]; ok {
		t.Error("forget kept n1/gone")
	}
}

func TestNodesLookup(t *testing.T) {
	n := NewNodes()
	if _, ok := n.Lookup(""); ok {
		t.Fatal("an empty set found a node")
	}
	// kubelets are compared by pointer only here: no need to run them.
	a, b := newTestKubelet(t, "a"), newTestKubelet(t, "b")
	n.Set(a)
	if k, ok := n.Lookup("anything"); !ok || k != a {
		t.Fatal("a lone node is not picked whatever the name")
	}
	n.Set(b)
	if _, ok := n.Lookup(""); ok {
		t.Fatal("no name picked one of two nodes")
	}
	if k, ok := n.Lookup("b"); !ok || k != b {
		t.Fatal("b not found by name")
	}
	n.Remove("b", a) // not b's kubelet: kept
	if n.Len() != 2 {
		t.Fatal("Remove with another kubelet removed the node")
	}
	n.Remove("b", nil)
	if k, ok := n.Lookup("b"); !ok || k != a {
		t.Fatal("after removing b, the lone node a is picked")
	}
}
