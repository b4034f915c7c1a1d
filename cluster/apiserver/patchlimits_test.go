package apiserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/pki"
	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// patchProbe is one patch of issue #13's probes: what a hostile client,
// here a node patching its own Node, sends to make the apiserver grow.
type patchProbe struct {
	name string
	pt   types.PatchType
	body []byte
	code int32
}

// patchProbes are the amplification probes: each must be refused with its
// code, and the control, as large but harmless, must be applied.
func patchProbes() (probes []patchProbe, control patchProbe) {
	copies := make([]string, 30)
	for i := range copies {
		copies[i] = fmt.Sprintf(`{"op":"copy","from":"/status","path":"/status/c%d"}`, i)
	}
	return []patchProbe{
			{"30 copy operations", types.JSONPatchType, []byte("[" + strings.Join(copies, ",") + "]"), 422},
			{"20,000 operations", types.JSONPatchType, testOps(20000), 413},
			{"merge patch 10,000 deep", types.MergePatchType, deepPatch(10000), 422},
			{"strategic merge patch 10,000 deep", types.StrategicMergePatchType, deepPatch(10000), 422},
		},
		patchProbe{"10,000 operations", types.JSONPatchType, testOps(10000), 200}
}

// testOps is n operations that test the Node's name: harmless, and each
// costs a lookup.
func testOps(n int) []byte {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = `{"op":"test","path":"/metadata/name","value":"n1"}`
	}
	return []byte("[" + strings.Join(ops, ",") + "]")
}

func deepPatch(depth int) []byte {
	return []byte(`{"metadata":{"annotations":{"a":"b"}},"spec":` + strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth) + "}")
}

// probeNode is a Node as a kubelet registers it, with the status a copy
// patch doubles.
func probeNode() *corev1.Node {
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{corev1.LabelHostname: "n1", corev1.LabelOSStable: "linux"}},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.1"}, {Type: corev1.NodeHostName, Address: "n1"}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.37.0", OperatingSystem: "linux", Architecture: "amd64"}},
	}
}

// sendPatch patches node n1 and returns the answer's code.
func sendPatch(ctx context.Context, cs kubernetes.Interface, p patchProbe) (int32, error) {
	var code int
	err := cs.CoreV1().RESTClient().Patch(p.pt).Resource("nodes").Name("n1").Body(p.body).Do(ctx).StatusCode(&code).Error()
	return int32(code), err
}

// registerProbeNode has n1's kubelet register its Node and write its
// status, and returns the Node.
func registerProbeNode(t *testing.T, ctx context.Context, node kubernetes.Interface) *corev1.Node {
	t.Helper()
	n, err := node.CoreV1().Nodes().Create(ctx, probeNode(), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("n1 registers: %v", err)
	}
	n.Status = probeNode().Status
	if n, err = node.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("n1 writes its status: %v", err)
	}
	return n
}

// A node patching its own Node (which the node authorizer allows) cannot
// make the apiserver amplify: each probe gets its 4xx and writes nothing,
// and the as-large harmless patch is applied.
func TestPatchLimits(t *testing.T) {
	e := newSecureEnv(t)
	ctx := ctxT(t)
	n1 := e.certClient(pki.NodeUser("n1"), pki.NodesGroup)
	before := registerProbeNode(t, ctx, n1)
	probes, control := patchProbes()
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			code, err := sendPatch(ctx, n1, p)
			if code != p.code {
				t.Fatalf("HTTP %d (%v), want %d", code, err, p.code)
			}
			if s := statusFromErr(err); s == nil || s.Code != p.code || len(s.Message) > 8<<10 {
				t.Fatalf("want a %d Status with a short message, got %v", p.code, err)
			}
			after, err := e.admin.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
			if err != nil || after.ResourceVersion != before.ResourceVersion {
				t.Fatalf("the Node changed: resourceVersion %s, was %s (%v)", after.ResourceVersion, before.ResourceVersion, err)
			}
		})
	}
	t.Run(control.name, func(t *testing.T) {
		if code, err := sendPatch(ctx, n1, control); code != control.code {
			t.Fatalf("HTTP %d (%v), want %d", code, err, control.code)
		}
	})
	t.Run("a merge patch within the nesting limit", func(t *testing.T) {
		p := patchProbe{"", types.MergePatchType, []byte(`{"metadata":{"labels":{"deep":"ok"}},"spec":` + strings.Repeat(`{"a":`, 25) + "1" + strings.Repeat("}", 25) + "}"), 200}
		if code, err := sendPatch(ctx, n1, p); code != 200 {
			t.Fatalf("HTTP %d (%v), want 200", code, err)
		}
	})
}

// The probes against the real binary, its memory read from /proc: each is
// refused, and the apiserver's peak RSS during it stays within 50 MB of
// what it was before (upstream's JSON patch library let 30 copies grow one
// from 143 MB to 14.7 GB). Times are logged against a generous ceiling.
func TestPatchAmplificationMemory(t *testing.T) {
	etcdURL, _ := testenv.Etcd(t)
	p := testenv.NewPKI(t)
	api := testenv.StartAPIServerProcess(t, etcdURL, p.Flags(t, nil)...)
	ctx := ctxT(t)
	clientFor := func(user string, groups ...string) *kubernetes.Clientset {
		cs, err := kubernetes.NewForConfig(p.ClientConfig(t, api.Config, user, groups...))
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	n1 := clientFor(pki.NodeUser("n1"), pki.NodesGroup)
	testenv.Eventually(t, 30*time.Second, "n1 registers (the bootstrap RBAC policy is in place)", func() (bool, error) {
		_, err := n1.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
		return err == nil || strings.Contains(err.Error(), "not found"), err
	})
	registerProbeNode(t, ctx, n1)
	probes, control := patchProbes()
	// Warm up: the code paths the probes take, and the allocator.
	for range 3 {
		if code, err := sendPatch(ctx, n1, control); code != 200 {
			t.Fatalf("warm-up: HTTP %d (%v)", code, err)
		}
	}
	const ceiling = 50 << 20
	for _, pr := range append(probes, control) {
		rss, _ := api.Memory(t)
		api.ResetPeak(t)
		start := time.Now()
		code, err := sendPatch(ctx, n1, pr)
		took := time.Since(start)
		after, peak := api.Memory(t)
		if code != pr.code {
			t.Errorf("%s: HTTP %d (%v), want %d", pr.name, code, err, pr.code)
		}
		growth := peak - rss
		t.Logf("%s (%d bytes): HTTP %d in %v; RSS %.1f MB before, peak %.1f MB (+%.1f MB), %.1f MB after",
			pr.name, len(pr.body), code, took.Round(time.Millisecond), mb(rss), mb(peak), mb(growth), mb(after))
		if growth > ceiling {
			t.Errorf("%s: the apiserver's RSS grew by %.1f MB, over %d MB", pr.name, mb(growth), ceiling>>20)
		}
		if took > 10*time.Second {
			t.Errorf("%s took %v", pr.name, took)
		}
	}
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }
