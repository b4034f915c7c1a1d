package testenv

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/trace"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// APIServerProcess is the real `kstep apiserver` (KSTEP_BIN) as a child
// process, for tests that measure the process itself: its memory, read
// from /proc, apart from the test's own heap.
type APIServerProcess struct {
	URL string
	// Config reaches it anonymously; PKI.ClientConfig and TokenConfig add
	// an identity.
	Config *rest.Config
	cmd    *exec.Cmd
	log    *SyncBuffer
}

// SyncBuffer is a bytes.Buffer safe to write from one goroutine (a child's
// stderr, a tracer's writer, a command) and read from the test's: the one
// such buffer the tests share.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// StartAPIServerProcess runs KSTEP_BIN apiserver on etcdURL with the extra
// flags (--flag=value), waits until it is ready, and stops it at cleanup. It skips the
// test without KSTEP_BIN (`make test` sets it) or without /proc.
func StartAPIServerProcess(t testing.TB, etcdURL string, flags ...string) *APIServerProcess {
	t.Helper()
	bin := os.Getenv("KSTEP_BIN")
	if bin == "" {
		t.Skip("KSTEP_BIN is not set: run through `make test`, or build bin/kstep and set KSTEP_BIN=$PWD/bin/kstep")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: the process's memory cannot be read")
	}
	addr := fmt.Sprintf("127.0.0.1:%d", FreePort(t))
	args := append([]string{"apiserver", "--name=test-apiserver", "--listen=" + addr, "--etcd-servers=" + etcdURL}, flags...)
	p := &APIServerProcess{cmd: exec.Command(bin, args...), log: &SyncBuffer{}}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("apiserver output:\n%s", p.log.String())
		}
	})
	scheme, probe := "http://", http.DefaultClient
	p.Config = &rest.Config{QPS: -1, Burst: -1}
	for _, f := range flags { // --flag=value, as PKI.Flags writes them
		if v, ok := strings.CutPrefix(f, "--client-ca-file="); ok {
			p.Config.TLSClientConfig.CAFile = v
		}
		if strings.HasPrefix(f, "--tls-cert-file=") {
			scheme = "https://"
			probe = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		}
	}
	p.URL = scheme + addr
	p.Config.Host = p.URL
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("apiserver exited: %v\n%s", err, p.log.String())
		default:
		}
		resp, err := probe.Get(p.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("apiserver not ready after 60s: %v\n%s", err, p.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Pid is the child's process id.
func (p *APIServerProcess) Pid() int { return p.cmd.Process.Pid }

// Memory is the process's resident set now (VmRSS) and its peak since it
// started or since ResetPeak (VmHWM), in bytes, from /proc/<pid>/status.
func (p *APIServerProcess) Memory(t testing.TB) (rss, peak int64) {
	t.Helper()
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(p.Pid()), "status"))
	if err != nil {
		t.Fatalf("apiserver memory: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			t.Fatalf("apiserver memory: %s: %v", sc.Text(), err)
		}
		if key == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	if rss == 0 || peak == 0 {
		t.Fatalf("apiserver memory: no VmRSS or VmHWM in /proc/%d/status", p.Pid())
	}
	return rss, peak
}

// ResetPeak sets the process's VmHWM back to its VmRSS (Linux's
// clear_refs 5), so that the next Memory's peak is what came after.
func (p *APIServerProcess) ResetPeak(t testing.TB) {
	t.Helper()
	path := filepath.Join("/proc", strconv.Itoa(p.Pid()), "clear_refs")
	if err := os.WriteFile(path, []byte("5"), 0); err != nil {
		t.Fatalf("reset the apiserver's peak RSS: %v", err)
	}
}

// PodStamps counts the step events of kind Pod, by pod UID, that a tracer
// wrote to s (JSON lines).
func (s *SyncBuffer) PodStamps(t testing.TB, step string) map[types.UID]int {
	t.Helper()
	out := map[types.UID]int{}
	sc := bufio.NewScanner(strings.NewReader(s.String()))
	for sc.Scan() {
		var ev trace.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		if ev.Step == step && ev.Kind == "Pod" {
			out[ev.UID]++
		}
	}
	return out
}
