package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
)

// TestSchedulingPlugins is issue 58's host-port, spread, pod-affinity and
// gate bullets with real kubectl on 5 hollow nodes, on the process and
// docker providers, one cluster per provider shared by the subtests:
//   - two pods with hostPort 8080 pinned to one node: the second stays
//     Pending with the NodePorts reason; a third naming the node itself
//     (no scheduler) is refused by the kubelet, Failed with upstream's
//     reason and message;
//   - 5 pods with a hostname spread constraint (maxSkew 1, DoNotSchedule)
//     and a preferred node affinity for one node land 1 per node;
//   - 4 pods preferring the anchor pod's node land beside it;
//   - a gated pod gets PodScheduled=False SchedulingGated, and is
//     scheduled once its gate is removed.
func TestSchedulingPlugins(t *testing.T) {
	t.Parallel()
	for _, prov := range []string{"process", "docker"} {
		t.Run(prov, func(t *testing.T) {
			inLane(t, providerLane(prov, false))
			if prov == "docker" {
				needDocker(t)
			}
			conf, _ := upCLI(t, "--provider", prov, "--etcd-members", "1", "--apiservers", "1",
				"--controller-managers", "1", "--schedulers", "1", "--hollow-nodes", "5")
			k := kubectl{t: t, path: kubectlPath(t), conf: conf}
			var nodes []string
			testenv.Eventually(t, time.Minute, "5 nodes", func() bool {
				nodes = strings.Fields(k.run("get", "nodes", "-o", "jsonpath={.items[*].metadata.name}"))
				return len(nodes) == 5
			})
			t.Run("NodePorts", func(t *testing.T) { checkHostPorts(t, k, nodes[0]) })
			t.Run("TopologySpread", func(t *testing.T) { checkSpread(t, k, nodes[1]) })
			t.Run("PreferredPodAffinity", func(t *testing.T) { checkPreferredAffinity(t, k) })
			t.Run("SchedulingGated", func(t *testing.T) { checkGated(t, k) })
		})
	}
}

func hostPortPod(name, spec string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
%s  containers:
  - name: app
    image: registry.kstep.local/app:v1
    ports:
    - containerPort: 80
      hostPort: 8080
`, name, spec)
}

func checkHostPorts(t *testing.T, k kubectl, node string) {
	pin := fmt.Sprintf("  nodeSelector:\n    kubernetes.io/hostname: %s\n", node)
	k.run("apply", "-f", writeTemp(t, "hp1.yaml", hostPortPod("hp-1", pin)))
	testenv.Eventually(t, time.Minute, "hp-1 running", func() bool {
		return k.run("get", "pod", "hp-1", "-o", "jsonpath={.status.phase}") == "Running"
	})
	k.run("apply", "-f", writeTemp(t, "hp2.yaml", hostPortPod("hp-2", pin)))
	const reason = "node(s) didn't have free ports for the requested pod ports"
	testenv.Eventually(t, time.Minute, "hp-2 unschedulable for its host port", func() bool {
		out := k.run("get", "pod", "hp-2", "-o", `jsonpath={.status.phase}/{.spec.nodeName}/{.status.conditions[?(@.type=="PodScheduled")].reason}/{.status.conditions[?(@.type=="PodScheduled")].message}`)
		return strings.HasPrefix(out, "Pending//Unschedulable/") && strings.Contains(out, "1 "+reason)
	})
	// Past the scheduler: the kubelet's admission refuses it.
	k.run("apply", "-f", writeTemp(t, "hp3.yaml", hostPortPod("hp-3", "  nodeName: "+node+"\n")))
	want := "Failed/NodePorts/Pod was rejected: Predicate NodePorts failed: " + reason
	var got string
	testenv.Eventually(t, time.Minute, "hp-3 rejected by the kubelet", func() bool {
		got = k.run("get", "pod", "hp-3", "-o", "jsonpath={.status.phase}/{.status.reason}/{.status.message}")
		return got == want
	})
	if out := k.run("get", "pod", "hp-1", "-o", "jsonpath={.status.phase}"); out != "Running" {
		t.Errorf("hp-1 is %s after the conflicting pods, want Running", out)
	}
	k.run("delete", "pod", "hp-1", "hp-2", "hp-3", "--wait=false")
}

func checkSpread(t *testing.T, k kubectl, preferred string) {
	var b strings.Builder
	for i := range 5 {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Pod
metadata:
  name: spread-%d
  labels: {app: spread}
spec:
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: spread}}
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        preference:
          matchExpressions:
          - {key: kubernetes.io/hostname, operator: In, values: [%s]}
  containers:
  - name: app
    image: registry.kstep.local/app:v1
`, i, preferred)
	}
	k.run("apply", "-f", writeTemp(t, "spread.yaml", b.String()))
	var placed []string
	testenv.Eventually(t, time.Minute, "5 spread pods bound", func() bool {
		placed = strings.Fields(k.run("get", "pods", "-l", "app=spread", "-o", "jsonpath={range .items[*]}{.spec.nodeName} {end}"))
		return len(placed) == 5
	})
	per := map[string]int{}
	for _, n := range placed {
		per[n]++
	}
	if len(per) != 5 {
		t.Errorf("5 pods spread with maxSkew 1 over 5 nodes landed %v, want 1 per node", per)
	}
	k.run("delete", "pods", "-l", "app=spread", "--wait=false")
}

func checkPreferredAffinity(t *testing.T, k kubectl) {
	k.run("apply", "-f", writeTemp(t, "anchor.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: anchor
  labels: {app: anchor}
spec:
  containers:
  - name: app
    image: registry.kstep.local/app:v1
`))
	var anchorNode string
	testenv.Eventually(t, time.Minute, "anchor bound", func() bool {
		anchorNode = k.run("get", "pod", "anchor", "-o", "jsonpath={.spec.nodeName}")
		return anchorNode != ""
	})
	var b strings.Builder
	for i := range 4 {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Pod
metadata:
  name: friend-%d
  labels: {app: friend}
spec:
  affinity:
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector: {matchLabels: {app: anchor}}
  containers:
  - name: app
    image: registry.kstep.local/app:v1
    resources: {requests: {cpu: 100m}}
`, i)
	}
	k.run("apply", "-f", writeTemp(t, "friends.yaml", b.String()))
	var placed []string
	testenv.Eventually(t, time.Minute, "4 friends bound", func() bool {
		placed = strings.Fields(k.run("get", "pods", "-l", "app=friend", "-o", "jsonpath={range .items[*]}{.spec.nodeName} {end}"))
		return len(placed) == 4
	})
	beside := 0
	for _, n := range placed {
		if n == anchorNode {
			beside++
		}
	}
	if beside != 4 {
		t.Errorf("%d of 4 preferred-affinity pods beside the anchor on %s (placed %v), want 4", beside, anchorNode, placed)
	}
	k.run("delete", "pods", "-l", "app in (anchor,friend)", "--wait=false")
}

func checkGated(t *testing.T, k kubectl) {
	k.run("apply", "-f", writeTemp(t, "gated.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: gated
spec:
  schedulingGates:
  - name: example.com/wait
  containers:
  - name: app
    image: registry.kstep.local/app:v1
`))
	got := k.run("get", "pod", "gated", "-o", `jsonpath={.spec.nodeName}/{.status.conditions[?(@.type=="PodScheduled")].status}/{.status.conditions[?(@.type=="PodScheduled")].reason}/{.status.conditions[?(@.type=="PodScheduled")].message}`)
	if want := "/False/SchedulingGated/Scheduling is blocked due to non-empty scheduling gates"; got != want {
		t.Errorf("gated pod: %q, want %q", got, want)
	}
	if out := k.run("get", "pod", "gated"); !strings.Contains(out, "SchedulingGated") {
		t.Errorf("kubectl get pod shows no SchedulingGated status:\n%s", out)
	}
	k.run("patch", "pod", "gated", "--type=json", "-p", `[{"op":"remove","path":"/spec/schedulingGates"}]`)
	testenv.Eventually(t, time.Minute, "the ungated pod bound", func() bool {
		return k.run("get", "pod", "gated", "-o", "jsonpath={.spec.nodeName}") != ""
	})
}
