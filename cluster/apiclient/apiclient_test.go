package apiclient

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kstep-dev/kstep/internal/testenv"
)

// fastProbes shortens the prober's timing for a test.
func fastProbes(t *testing.T) {
	pi, pt, dt := ProbeInterval, ProbeTimeout, DialTimeout
	ProbeInterval, ProbeTimeout, DialTimeout = 100*time.Millisecond, 300*time.Millisecond, time.Second
	t.Cleanup(func() { ProbeInterval, ProbeTimeout, DialTimeout = pi, pt, dt })
}

// kubeconfig writes a kubeconfig with one context per server, the first
// current, as the provider writes an actor's.
func kubeconfig(t *testing.T, servers ...string) string {
	c := clientcmdapi.NewConfig()
	c.AuthInfos["actor"] = clientcmdapi.NewAuthInfo()
	for i, s := range servers {
		name := fmt.Sprintf("apiserver-%d", i)
		c.Clusters[name] = &clientcmdapi.Cluster{Server: s}
		ctx := clientcmdapi.NewContext()
		ctx.Cluster, ctx.AuthInfo = name, "actor"
		ctxName := "actor"
		if i > 0 {
			ctxName = "actor@" + name
		}
		c.Contexts[ctxName] = ctx
	}
	c.CurrentContext = "actor"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func testLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func TestLoadOrdersTheCurrentContextFirst(t *testing.T) {
	path := kubeconfig(t, "https://b:6443", "https://a:6443", "https://c")
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(s.Hosts(), ","), "b:6443,a:6443,c:443"; got != want {
		t.Fatalf("hosts %s, want %s", got, want)
	}
	cfg, b := s.balance(t.Context(), 1, nil)
	if cfg.Host != "https://a:6443" || b.servers[0].host != "a:6443" || b.servers[1].host != "c:443" || b.servers[2].host != "b:6443" {
		t.Fatalf("prefer 1: host %s, order %s %s %s", cfg.Host, b.servers[0].host, b.servers[1].host, b.servers[2].host)
	}
	one, err := Load(kubeconfig(t, "http://127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg, b := one.balance(t.Context(), 3, nil); b != nil || cfg.Dial != nil {
		t.Fatal("one apiserver: a balancer")
	}
}

// TestFailoverAndBack: a client of two real apiservers keeps working, its
// watch included, when its preferred one stops, and returns to it (closing
// its connections to the other) when it is back.
func TestFailoverAndBack(t *testing.T) {
	fastProbes(t)
	// The stopped apiserver refuses at once; nothing here hangs. A 300 ms
	// probe timeout on a loaded machine (make test's other packages beside
	// it) failed three /readyz of the healthy preferred apiserver in a row,
	// and the switch cut the request in flight on it.
	ProbeTimeout = 2 * time.Second
	etcdURL, _ := testenv.Etcd(t)
	a0 := testenv.StartAPIServer(t, etcdURL, nil)
	a1 := testenv.StartAPIServer(t, etcdURL, nil)
	s, err := Load(kubeconfig(t, a0.URL, a1.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	cfg, b := s.balance(ctx, 0, testLog())
	cs := kubernetes.NewForConfigOrDie(cfg)
	addr0 := strings.TrimPrefix(a0.URL, "http://")
	addr1 := strings.TrimPrefix(a1.URL, "http://")

	var mu sync.Mutex
	seen := map[string]bool{}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("default"))
	inf := f.Core().V1().ConfigMaps().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		mu.Lock()
		seen[o.(*corev1.ConfigMap).Name] = true
		mu.Unlock()
	}})
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer never synced")
	}
	create := func(name string) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s (active %s): %v", name, b.Active(), err)
		}
		testenv.Eventually(t, 10*time.Second, "the informer sees "+name, func() (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			return seen[name], nil
		})
	}
	create("before")
	if b.Active() != addr0 {
		t.Fatalf("active %s, want the preferred %s", b.Active(), addr0)
	}

	a0.Stop()
	start := time.Now()
	create("failed-over")
	t.Logf("first write after the preferred apiserver stopped: %v later", time.Since(start).Round(time.Millisecond))
	if b.Active() != addr1 {
		t.Fatalf("active %s, want %s", b.Active(), addr1)
	}

	testenv.StartAPIServerOn(t, etcdURL, addr0, nil)
	back := time.Now()
	testenv.Eventually(t, 10*time.Second, "back on the preferred apiserver", func() (bool, error) {
		return b.Active() == addr0, nil
	})
	t.Logf("back on the preferred apiserver %v after it listened again", time.Since(back).Round(time.Millisecond))
	testenv.Eventually(t, 10*time.Second, "connections to the other apiserver closed", func() (bool, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.servers[1].conns) == 0, nil
	})
	create("back")
	b.mu.Lock()
	n0 := len(b.servers[0].conns)
	b.mu.Unlock()
	if n0 == 0 {
		t.Fatal("no connection to the preferred apiserver after returning to it")
	}
}

// TestHungApiserverIsLeft: a preferred "apiserver" that accepts
// connections and never answers is left once its probes fail, and a
// request that hung on it is cut off, so the client moves on.
func TestHungApiserverIsLeft(t *testing.T) {
	fastProbes(t)
	etcdURL, _ := testenv.Etcd(t)
	a1 := testenv.StartAPIServer(t, etcdURL, nil)
	hung, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := hung.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	s, err := Load(kubeconfig(t, "http://"+hung.Addr().String(), a1.URL))
	if err != nil {
		t.Fatal(err)
	}
	cfg, b := s.balance(t.Context(), 0, testLog())
	cs := kubernetes.NewForConfigOrDie(cfg)
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	// The first request hangs on the preferred server until the prober
	// leaves it and closes its connection; the retry goes to a1.
	var last error
	for ctx.Err() == nil {
		if _, last = cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); last == nil {
			break
		}
	}
	if last != nil {
		t.Fatalf("no answer in 20 s: %v", last)
	}
	t.Logf("hung preferred apiserver left, first answer after %v", time.Since(start).Round(time.Millisecond))
	if want := strings.TrimPrefix(a1.URL, "http://"); b.Active() != want {
		t.Fatalf("active %s, want %s", b.Active(), want)
	}
}
