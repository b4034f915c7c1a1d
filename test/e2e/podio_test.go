package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
)

// podIOManifest: an app pod on one real node, a pod whose liveness probe
// fails so its container restarts (for --previous), and alice, who may read
// pods and their logs but not exec into them.
const podIOManifest = `apiVersion: v1
kind: Namespace
metadata:
  name: io
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: io
spec:
  nodeSelector:
    kubernetes.io/hostname: %[1]s
  containers:
  - name: app
    image: registry.kstep.local/app:v1
    ports:
    - containerPort: 8080
    readinessProbe:
      periodSeconds: 1
      httpGet:
        path: /readyz
        port: 8080
---
apiVersion: v1
kind: Pod
metadata:
  name: restarter
  namespace: io
spec:
  nodeSelector:
    kubernetes.io/hostname: %[1]s
  containers:
  - name: app
    image: registry.kstep.local/app:v1
    livenessProbe:
      initialDelaySeconds: 1
      periodSeconds: 1
      failureThreshold: 1
      httpGet:
        path: /healthz
        port: 9999
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: pod-reader
  namespace: io
rules:
- apiGroups: [""]
  resources: ["pods", "pods/log"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: alice-reads-pods
  namespace: io
subjects:
- kind: User
  name: alice
  apiGroup: rbac.authorization.k8s.io
roleRef:
  kind: Role
  name: pod-reader
  apiGroup: rbac.authorization.k8s.io
`

// checkPodIO is a user's first look at a pod on a real containerd node,
// with real kubectl through the apiserver and the node's kubelet server:
// logs (also -f and --previous), exec (also -i with stdin), port-forward
// with an HTTP GET through it, top pod and top node, and exec refused
// to a user without pods/exec.
func checkPodIO(t *testing.T, kubeconfig, node string) {
	t.Helper()
	k := kubectl{t: t, path: kubectlPath(t), conf: kubeconfig}
	k.run("apply", "-f", writeTemp(t, "podio.yaml", fmt.Sprintf(podIOManifest, node)))
	k.run("wait", "-n", "io", "--for=condition=Ready", "pod/web", "--timeout=3m")

	start := time.Now()
	if out := k.run("logs", "-n", "io", "web"); !strings.Contains(out, "kstep-app: serving on") {
		t.Errorf("kubectl logs web:\n%s", out)
	}
	if out := k.run("logs", "-n", "io", "web", "--timestamps", "--tail=1"); !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\S+ kstep-app: `).MatchString(out) || strings.Count(out, "\n") != 1 {
		t.Errorf("kubectl logs --timestamps --tail=1: %q", out)
	}
	if out := k.run("exec", "-n", "io", "web", "--", "/app", "version"); strings.TrimSpace(out) != "kstep-app v1" {
		t.Errorf("kubectl exec web -- /app version: %q", out)
	}
	cmd := exec.Command(k.path, "--kubeconfig", k.conf, "exec", "-i", "-n", "io", "web", "--", "/app", "echo")
	cmd.Stdin = strings.NewReader("through stdin\nand back\n")
	// stdout alone: kubectl v1.32's WebSocket client may log "Unknown
	// stream id 1" to stderr when the first frame beats its stream's setup
	// (client-go since waits for its streams before reading).
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil || string(out) != "through stdin\nand back\n" {
		t.Errorf("kubectl exec -i web -- /app echo: %v stdout %q stderr %q", err, out, stderr.String())
	}
	if out, err := k.try("exec", "-n", "io", "web", "--", "/app", "exit", "3"); err == nil || !strings.Contains(out, "exit code 3") {
		t.Errorf("kubectl exec of a failing command: %v %q, want exit code 3", err, out)
	}

	// port-forward, then a GET through it; logs -f shows the request's
	// line arrive.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	follow := exec.CommandContext(ctx, k.path, "--kubeconfig", k.conf, "logs", "-f", "-n", "io", "web")
	followOut, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = follow.Process.Kill(); _ = follow.Wait() }()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(followOut)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// attach: the container's own output from now on.
	attach := exec.CommandContext(ctx, k.path, "--kubeconfig", k.conf, "attach", "-n", "io", "web", "-c", "app")
	var attached safeBuffer
	attach.Stdout, attach.Stderr = &attached, &attached
	if err := attach.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = attach.Process.Kill(); _ = attach.Wait() }()
	time.Sleep(2 * time.Second) // attached before the request below
	pf := exec.CommandContext(ctx, k.path, "--kubeconfig", k.conf, "port-forward", "-n", "io", "pod/web", ":8080")
	pfOut, err := pf.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := pf.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pf.Process.Kill(); _ = pf.Wait() }()
	local := ""
	sc := bufio.NewScanner(pfOut)
	for sc.Scan() {
		// "Forwarding from 127.0.0.1:41234 -> 8080"
		if m := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> 8080`).FindStringSubmatch(sc.Text()); m != nil {
			local = m[1]
			break
		}
	}
	if local == "" {
		t.Fatalf("kubectl port-forward printed no local port")
	}
	go func() { _, _ = io.Copy(io.Discard, pfOut) }()
	resp, err := http.Get("http://127.0.0.1:" + local + "/")
	if err != nil {
		t.Fatalf("GET through port-forward: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "hello from web (kstep-app v1)") {
		t.Errorf("GET through port-forward: %d %q", resp.StatusCode, body)
	}
	sawGet, deadline := false, time.After(20*time.Second)
	for !sawGet {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("kubectl logs -f ended by itself")
			}
			sawGet = strings.Contains(l, "kstep-app: GET / from")
		case <-deadline:
			t.Fatalf("kubectl logs -f did not show the GET within 20 s")
		}
	}
	time.Sleep(2 * time.Second)
	if follow.ProcessState != nil {
		t.Errorf("kubectl logs -f ended within 2 s")
	}
	testenv.Eventually(t, 20*time.Second, "kubectl attach to show the GET", func() bool {
		return strings.Contains(attached.String(), "kstep-app: GET / from")
	})

	// --previous: the restarter's liveness probe fails, the kubelet kills
	// its container and starts another. Its first probe waits a second
	// (initialDelaySeconds): with none it runs the moment the container
	// starts, and a SIGTERM that lands while the app, PID 1 of its PID
	// namespace, has no handler yet is dropped by the kernel; the app
	// then runs on, never logs its shutdown, and is SIGKILLed after the
	// 30 s grace (on a loaded machine about once in eight runs).
	testenv.Eventually(t, 2*time.Minute, "the restarter restarted", func() bool {
		out, _ := k.try("get", "pod", "-n", "io", "restarter", "-o", "jsonpath={.status.containerStatuses[0].restartCount}")
		return out != "" && out != "0"
	})
	if out := k.run("logs", "-n", "io", "restarter", "--previous"); !strings.Contains(out, "kstep-app: serving on") || !strings.Contains(out, "signalled, shutting down") {
		t.Errorf("kubectl logs --previous:\n%s", out)
	}

	// top: the Metrics API from the kubelets' summaries.
	for _, args := range [][]string{{"top", "pod", "-n", "io", "web"}, {"top", "node", node}} {
		var out string
		testenv.Eventually(t, time.Minute, "kubectl "+strings.Join(args, " "), func() bool {
			var err error
			out, err = k.try(args...)
			return err == nil && regexp.MustCompile(`\d+m\s.*\d+Mi`).MatchString(out)
		})
		t.Logf("kubectl %s:\n%s", strings.Join(args, " "), out)
	}

	// RBAC: alice reads pods and logs, and may not exec.
	retry(t, "alice reads web's log", func() error {
		out, err := k.try("--as", "alice", "logs", "-n", "io", "web")
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})
	out, err := k.try("--as", "alice", "exec", "-n", "io", "web", "--", "/app", "version")
	if err == nil || !strings.Contains(out, "Forbidden") || !strings.Contains(out, "pods/exec") {
		t.Errorf("alice's exec: %v %q, want Forbidden naming pods/exec", err, out)
	}
	if out, err := k.try("--as", "alice", "port-forward", "-n", "io", "pod/web", ":8080"); err == nil || !strings.Contains(out, "forbidden") || !strings.Contains(out, "pods/portforward") {
		t.Errorf("alice's port-forward: %v %q, want forbidden naming pods/portforward", err, out)
	}
	t.Logf("pod IO on %s checked in %v", node, time.Since(start).Round(time.Millisecond))
	// Gone again, so the caller's own counts of the node's pods hold.
	k.run("delete", "namespace", "io", "--timeout=2m")
}

// TestHollowPodIO: kubectl logs, exec and top on hollow nodes, on both
// providers (in a docker cluster the apiserver reaches the hollow-nodes
// container's kubelet server on the cluster's network).
func TestHollowPodIO(t *testing.T) {
	t.Parallel()
	for _, prov := range []string{"process", "docker"} {
		t.Run(prov, func(t *testing.T) {
			inLane(t, providerLane(prov, false))
			if prov == "docker" {
				needDocker(t)
			}
			conf, dir := upCLI(t, "--provider", prov, "--etcd-members", "1", "--apiservers", "1",
				"--controller-managers", "1", "--schedulers", "1", "--hollow-nodes", "2")
			// Each actor holds only its own credentials (#57).
			if prov == "docker" {
				checkContainerCredentials(t.Context(), t, dir)
			} else {
				checkProcessCredentials(t, dir)
			}
			k := kubectl{t: t, path: kubectlPath(t), conf: conf}
			k.run("create", "deployment", "web", "--image=registry.kstep.local/app:v1", "--replicas=2")
			k.run("rollout", "status", "deployment/web", "--timeout=60s")
			pod := strings.TrimSpace(k.run("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[0].metadata.name}"))
			checkHollowPodIO(t, k, pod)
		})
	}
}

// checkHollowPodIO: on a hollow node, kubectl logs returns the simulated
// container's short log, exec is refused with a clear reason (its
// containers run no process), and kubectl top reads the simulated stats.
func checkHollowPodIO(t *testing.T, k kubectl, pod string) {
	t.Helper()
	if out := k.run("logs", pod); !strings.Contains(out, "hollow") {
		t.Errorf("kubectl logs %s (hollow):\n%s", pod, out)
	}
	if out, err := k.try("exec", pod, "--", "/app", "version"); err == nil || !strings.Contains(out, "hollow node") {
		t.Errorf("kubectl exec on a hollow pod: %v %q, want a refusal naming the hollow node", err, out)
	}
	testenv.Eventually(t, time.Minute, "kubectl top pod on a hollow node", func() bool {
		out, err := k.try("top", "pod", pod)
		return err == nil && strings.Contains(out, pod)
	})
	testenv.Eventually(t, time.Minute, "kubectl top node on hollow nodes", func() bool {
		out, err := k.try("top", "node")
		return err == nil && strings.Contains(out, "hollow-0")
	})
}

// safeBuffer is a strings.Builder a command writes and a test reads.
type safeBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
