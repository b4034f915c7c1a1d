package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/provider/process"
	"github.com/kstep-dev/kstep/internal/testenv"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// up brings p's cluster up within timeout and registers its teardown: the
// actors' logs when the test failed, then Down (bounded by a minute, two for
// containers). Up's failure ends the test with the logs.
func up(t *testing.T, p provider.Provider, stateDir string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v\n%s", err, logs(stateDir))
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("actor logs:\n%s", logs(stateDir))
		}
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := p.Down(dctx); err != nil {
			t.Errorf("down: %v", err)
		}
	})
}

// binary returns the kstep binary under test, or skips when it is not
// given or the test belongs to another tier (docs/testing.md): every test
// here that starts a cluster asks for the binary first.
func binary(t *testing.T) string {
	t.Helper()
	testenv.Tier(t)
	bin := os.Getenv("KSTEP_BIN")
	if bin == "" {
		t.Skip("KSTEP_BIN is not set: run through `make test`, which builds bin/kstep")
	}
	return bin
}

func kubectlPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed")
	}
	return p
}

// upCLI runs `kstep up -d` like a user and returns the kubeconfig path it
// printed last. The cluster is brought down at cleanup.
func upCLI(t *testing.T, extra ...string) (string, string) {
	t.Helper()
	bin := binary(t)
	dir := t.TempDir()
	args := append([]string{"up", "-d", "--state-dir", dir}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	t.Cleanup(func() {
		if out, err := exec.Command(bin, "down", "--state-dir", dir, "--purge").CombinedOutput(); err != nil {
			t.Logf("kstep down: %v\n%s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("kstep up: %v\n%s\n%s", err, out, logs(dir))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "KUBECONFIG=") {
		t.Fatalf("last line of kstep up -d is %q, want KUBECONFIG=<path>", last)
	}
	return strings.TrimPrefix(last, "KUBECONFIG="), dir
}

// logs returns the tail of every actor log in a state dir, for failures.
func logs(dir string) string {
	var b bytes.Buffer
	files, _ := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if len(data) > 2000 {
			data = data[len(data)-2000:]
		}
		b.WriteString("== " + f + "\n" + string(data) + "\n")
	}
	return b.String()
}

// upProvider brings up etcd and apiservers only (no actor writes on its own)
// through the process provider library, for tests that kill and restart
// apiservers.
func upProvider(t *testing.T, apiservers int) *process.Provider {
	t.Helper()
	cfg := provider.Spec{Topology: provider.DefaultTopology(), ReadyTimeout: time.Minute, StopGrace: 10 * time.Second}
	cfg.Binary = binary(t)
	cfg.StateDir = t.TempDir()
	cfg.APIServers = apiservers
	cfg.ControllerManagers, cfg.Schedulers = 0, 0
	p, err := process.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v\n%s", err, logs(cfg.StateDir))
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.Down(ctx); err != nil {
			t.Logf("down: %v", err)
		}
	})
	return p
}

// clientFor returns a clientset for one kubeconfig context.
func clientFor(t *testing.T, kubeconfig, context string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, -1
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
