package external

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kstep-dev/kstep/cluster/provider"
)

func meta(ns, name, run string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Namespace: ns, Name: name}
	if run != "" {
		m.Labels = map[string]string{provider.RunLabel: run, "app": name}
	}
	return m
}

// labelledCluster has objects of runs a and b, and the same kinds without
// kstep's label.
func labelledCluster() *fake.Clientset {
	var objs []runtime.Object
	for _, run := range []string{"a", "b", ""} {
		ns := "ns-" + run
		if run == "" {
			ns = "theirs"
		}
		objs = append(objs,
			&corev1.Namespace{ObjectMeta: meta("", ns, run)},
			&appsv1.ReplicaSet{ObjectMeta: meta(ns, "rs", run)},
			&appsv1.Deployment{ObjectMeta: meta(ns, "d", run)},
			&corev1.Service{ObjectMeta: meta(ns, "svc", run)},
			&corev1.Pod{ObjectMeta: meta(ns, "pod", run)},
			// An object of theirs in kstep's namespace, and kstep's in theirs.
			&corev1.Pod{ObjectMeta: meta(ns, "other", "")},
		)
	}
	objs = append(objs, &corev1.Pod{ObjectMeta: meta("theirs", "kstep-pod", "a")})
	return fake.NewClientset(objs...)
}

func left(t *testing.T, cs *fake.Clientset) []string {
	t.Helper()
	var out []string
	ctx := context.Background()
	nss, _ := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	for _, n := range nss.Items {
		out = append(out, "ns/"+n.Name)
	}
	pods, _ := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	for _, p := range pods.Items {
		out = append(out, "pod/"+p.Namespace+"/"+p.Name)
	}
	rss, _ := cs.AppsV1().ReplicaSets("").List(ctx, metav1.ListOptions{})
	for _, r := range rss.Items {
		out = append(out, "rs/"+r.Namespace+"/"+r.Name)
	}
	ds, _ := cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	for _, d := range ds.Items {
		out = append(out, "deploy/"+d.Namespace+"/"+d.Name)
	}
	svcs, _ := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	for _, s := range svcs.Items {
		out = append(out, "svc/"+s.Namespace+"/"+s.Name)
	}
	return out
}

// Clean of one run deletes that run's objects and nothing else: not
// another run's, not an unlabelled object (the fake does not cascade a
// namespace's deletion, so what is in a deleted namespace shows here).
func TestCleanOneRun(t *testing.T) {
	cs := labelledCluster()
	removed, err := Clean(context.Background(), cs, provider.RunLabel+"=a")
	if err != nil {
		t.Fatal(err)
	}
	if removed.String() != "1 Deployment, 1 Namespace, 2 Pod, 1 ReplicaSet, 1 Service" {
		t.Errorf("removed %s", removed)
	}
	got := strings.Join(left(t, cs), " ")
	for _, gone := range []string{"ns/ns-a ", "pod/ns-a/pod ", "rs/ns-a/rs", "deploy/ns-a/d", "svc/ns-a/svc", "pod/theirs/kstep-pod"} {
		if strings.Contains(got+" ", gone) {
			t.Errorf("%s left: %s", gone, got)
		}
	}
	for _, kept := range []string{"ns/ns-b", "ns/theirs", "pod/ns-a/other", "pod/ns-b/pod", "rs/ns-b/rs", "rs/theirs/rs", "deploy/theirs/d", "svc/theirs/svc", "pod/theirs/pod"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%s deleted: left %s", kept, got)
		}
	}
}

// Clean of every run (kstep clean) leaves exactly the unlabelled objects.
func TestCleanEveryRun(t *testing.T) {
	cs := labelledCluster()
	if _, err := Clean(context.Background(), cs, provider.RunLabel); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(left(t, cs), " ")
	want := "ns/theirs pod/ns-a/other pod/ns-b/other pod/theirs/other pod/theirs/pod rs/theirs/rs deploy/theirs/d svc/theirs/svc"
	if got != want {
		t.Errorf("left %q, want %q", got, want)
	}
}

// An object being deleted already is waited for, not deleted again, and
// Clean says what is left when ctx ends first.
func TestCleanWaitsForWhatIsBeingDeleted(t *testing.T) {
	old := cleanPoll
	cleanPoll = 10 * time.Millisecond
	defer func() { cleanPoll = old }()
	now := metav1.Now()
	m := meta("ns-a", "stuck", "a")
	m.DeletionTimestamp = &now
	cs := fake.NewClientset(&corev1.Pod{ObjectMeta: m})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	removed, err := Clean(ctx, cs, provider.RunLabel+"=a")
	if len(removed) != 0 || err == nil || !strings.Contains(err.Error(), "Pod ns-a/stuck") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("removed %v err %v, want nothing deleted and the stuck pod named", removed, err)
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "delete" {
			t.Errorf("deleted an object being deleted: %v", a)
		}
	}
}

// Selected keeps the chosen context alone, with its files embedded.
func TestSelected(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("CA"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := clientcmdapi.NewConfig()
	c.Clusters["one"] = &clientcmdapi.Cluster{Server: "https://one:6443", CertificateAuthority: "ca.crt"}
	c.Clusters["two"] = &clientcmdapi.Cluster{Server: "https://two:6443"}
	c.AuthInfos["u1"] = &clientcmdapi.AuthInfo{Token: "t1", Impersonate: "nobody"}
	c.AuthInfos["u2"] = &clientcmdapi.AuthInfo{Token: "t2"}
	c.Contexts["c1"] = &clientcmdapi.Context{Cluster: "one", AuthInfo: "u1"}
	c.Contexts["c2"] = &clientcmdapi.Context{Cluster: "two", AuthInfo: "u2"}
	c.CurrentContext = "c2"
	path := filepath.Join(dir, "config")
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		t.Fatal(err)
	}
	got, err := Selected(path, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Contexts) != 1 || len(got.Clusters) != 1 || got.CurrentContext != "c1" || string(got.Clusters["one"].CertificateAuthorityData) != "CA" ||
		got.AuthInfos["u1"].Impersonate != "nobody" {
		t.Errorf("selected %+v", got)
	}
	if cur, err := Selected(path, ""); err != nil || cur.Clusters["two"] == nil || len(cur.Clusters) != 1 {
		t.Errorf("current context: %v %+v", err, cur)
	}
	if _, err := Selected(path, "c3"); err == nil || !strings.Contains(err.Error(), `no context "c3"`) {
		t.Errorf("unknown context: %v", err)
	}
}

// Every actor-level fault is refused with ErrUnsupported and the reason.
func TestActorFaultsUnsupported(t *testing.T) {
	p, err := New(provider.Spec{StateDir: t.TempDir(), Kubeconfig: "kc"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, logsErr := p.Logs(ctx, "etcd-0")
	for name, err := range map[string]error{
		"start": p.Start(ctx, "etcd-0"), "stop": p.Stop(ctx, "etcd-0", syscall.SIGKILL), "pause": p.Pause(ctx, "etcd-0"),
		"unpause": p.Unpause(ctx, "etcd-0"), "signal": p.Signal(ctx, "node-0", "containerd", syscall.SIGKILL),
		"partition": p.Partition(ctx, "etcd-0", provider.ScopePeers), "heal": p.Heal(ctx, "etcd-0"), "logs": logsErr,
	} {
		if !errors.Is(err, provider.ErrUnsupported) || !strings.Contains(err.Error(), "does not run this cluster's actors") {
			t.Errorf("%s: %v, want ErrUnsupported with the reason", name, err)
		}
	}
	if len(p.Actors()) != 0 || p.Kubeconfig() != "" {
		t.Errorf("actors %v kubeconfig %q before Up", p.Actors(), p.Kubeconfig())
	}
	if _, err := New(provider.Spec{StateDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "--kubeconfig") {
		t.Errorf("no kubeconfig: %v", err)
	}
}
