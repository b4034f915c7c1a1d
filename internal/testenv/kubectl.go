package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Kubectl runs the real kubectl binary (v1.32 in CI) against a test
// apiserver, as a user types it: no client-side shortcuts, so what it
// shows is what kubectl makes of the served API.
type Kubectl struct {
	t          *testing.T
	path       string
	kubeconfig string
}

// NewKubectl writes a kubeconfig for server (as the admin, namespace
// namespace) and returns a Kubectl on it. The test is skipped when kubectl
// is not installed.
func NewKubectl(t *testing.T, server, namespace string) *Kubectl {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed")
	}
	conf := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: kstep, cluster: {server: %q}}]
users: [{name: admin, user: {}}]
contexts: [{name: kstep, context: {cluster: kstep, user: admin, namespace: %q}}]
current-context: kstep
`, server, namespace)
	if err := os.WriteFile(conf, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return &Kubectl{t: t, path: path, kubeconfig: conf}
}

// Run runs kubectl with args and returns its trimmed combined output,
// failing the test if kubectl fails.
func (k *Kubectl) Run(args ...string) string {
	k.t.Helper()
	out, err := k.Try(args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// Try runs kubectl with args and returns its trimmed combined output and
// its error (an *exec.ExitError when kubectl itself failed).
func (k *Kubectl) Try(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, k.path, append([]string{"--kubeconfig", k.kubeconfig}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
