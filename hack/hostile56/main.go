package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kstep-dev/kstep/cluster/pki"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "the admin's kubeconfig (kstep up's); its current context's apiserver is the one measured")
	stateDir := flag.String("state-dir", "", "the cluster's state directory (kstep up --state-dir): cluster.json for the apiserver's PID, pki/ca.key to mint alice")
	kubectl := flag.String("kubectl", "kubectl", "the kubectl binary (v1.32)")
	kstep := flag.String("kstep", "bin/kstep", "the kstep binary --down runs")
	down := flag.Bool("down", false, "end with `kstep down --purge --state-dir DIR` and check it left nothing under nodes/")
	timeout := flag.Duration("timeout", time.Minute, "bound on every request and kubectl run")
	only := flag.String("findings", "1,2,3,4,5,6", "the findings to reproduce, by the issue's numbers")
	flag.Parse()
	if *kubeconfig == "" || *stateDir == "" {
		fmt.Fprintln(os.Stderr, "hostile56: --kubeconfig and --state-dir are required")
		os.Exit(2)
	}
	e, err := newEnv(*kubeconfig, *stateDir, *kubectl, *timeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile56:", err)
		os.Exit(2)
	}
	defer e.cleanup()
	fmt.Fprintf(os.Stderr, "hostile56: %s (PID %d, %s); alice in namespace %s\n", e.api.Name, e.api.PID, e.host, e.ns)
	if err := e.setup(); err != nil {
		fmt.Fprintln(os.Stderr, "hostile56: setup:", err)
		os.Exit(1)
	}
	for i, f := range []func(){e.finding1, e.finding2, e.finding3, e.finding4, e.finding5, e.finding6} {
		if slices.Contains(strings.Split(*only, ","), strconv.Itoa(i+1)) {
			f()
		}
	}
	e.deleteOwn()
	if *down {
		e.purge(*kstep)
	}
	e.print(os.Stdout)
	if e.failed {
		os.Exit(1)
	}
}

// env is the cluster as the admin and alice see it, and the table so far.
type env struct {
	kubeconfig, stateDir, kubectlBin string
	timeout                          time.Duration
	host                             string
	api                              actor
	ns                               string
	tmp                              string // alice's kubeconfig
	aliceKubeconfig                  string

	admin, alice           *rest.Config
	adminCS, aliceCS       kubernetes.Interface
	adminHTTP, aliceHTTP   *http.Client // HTTP/2 where the server offers it
	adminHTTP1, aliceHTTP1 *http.Client // HTTP/1.1 only: upgrades

	node     string // the node the pods run on (a real one when there is one)
	realNode bool

	rows   []row
	last   row // the measurements of the step being checked
	failed bool
}

type row struct {
	finding, who, request, status string
	wall, cpu                     time.Duration
	before, after                 sample
	check                         string
	held                          bool
}

func newEnv(kubeconfig, stateDir, kubectl string, timeout time.Duration) (*env, error) {
	admin, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	admin.QPS, admin.Burst, admin.Timeout = -1, 0, timeout
	if len(admin.CAData) == 0 && admin.CAFile != "" {
		if admin.CAData, err = os.ReadFile(admin.CAFile); err != nil {
			return nil, err
		}
	}
	api, err := apiserverFor(stateDir, admin.Host)
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath(kubectl); err != nil {
		return nil, err
	}
	ca, err := pki.LoadCA(filepath.Join(stateDir, "pki", "ca.crt"), filepath.Join(stateDir, "pki", "ca.key"))
	if err != nil {
		return nil, fmt.Errorf("%w (alice's certificate is signed by the cluster's CA)", err)
	}
	pair, err := ca.ClientCert("alice", "developers")
	if err != nil {
		return nil, err
	}
	alice := rest.AnonymousClientConfig(admin)
	alice.CertData, alice.KeyData = pair.CertPEM, pair.KeyPEM
	alice.QPS, alice.Burst, alice.Timeout = -1, 0, timeout
	e := &env{kubeconfig: kubeconfig, stateDir: stateDir, kubectlBin: kubectl, timeout: timeout,
		host: admin.Host, api: api, admin: admin, alice: alice, ns: fmt.Sprintf("h56-%d", time.Now().Unix())}
	if e.tmp, err = os.MkdirTemp("", "hostile56-"); err != nil {
		return nil, err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kstep"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	kc.AuthInfos["alice"] = &clientcmdapi.AuthInfo{ClientCertificateData: pair.CertPEM, ClientKeyData: pair.KeyPEM}
	kc.Contexts["alice"] = &clientcmdapi.Context{Cluster: "kstep", AuthInfo: "alice", Namespace: e.ns}
	kc.CurrentContext = "alice"
	e.aliceKubeconfig = filepath.Join(e.tmp, "alice.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, e.aliceKubeconfig); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		cfg   *rest.Config
		cs    *kubernetes.Interface
		h, h1 **http.Client
	}{{admin, &e.adminCS, &e.adminHTTP, &e.adminHTTP1}, {alice, &e.aliceCS, &e.aliceHTTP, &e.aliceHTTP1}} {
		cs, err := kubernetes.NewForConfig(c.cfg)
		if err != nil {
			return nil, err
		}
		*c.cs = cs
		tlsCfg, err := rest.TLSConfigFor(c.cfg)
		if err != nil {
			return nil, err
		}
		*c.h = &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: tlsCfg, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 16}}
		t1 := tlsCfg.Clone()
		t1.NextProtos = []string{"http/1.1"}
		*c.h1 = &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: t1, TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}, MaxIdleConnsPerHost: 16}}
	}
	return e, nil
}

func (e *env) cleanup() { os.RemoveAll(e.tmp) }

// ctx is a context bounded by the request timeout.
func (e *env) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), e.timeout)
}

// sample reads the measured apiserver's /proc, finding its PID again in
// cluster.json (a supervised apiserver that died comes back as another).
func (e *env) sample() sample {
	if a, err := apiserverFor(e.stateDir, e.host); err == nil {
		e.api = a
	}
	s, err := readSample(e.api.PID)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hostile56: /proc of %s (PID %d): %v\n", e.api.Name, e.api.PID, err)
	}
	return s
}

// step runs do, measured: its wall time, the apiserver's CPU over it, its
// memory before and after. Then check says what the outcome was and
// whether it held. do's status is the HTTP status (or kubectl's exit).
func (e *env) step(finding, who, request string, do func() string, check func() (string, bool)) {
	fmt.Fprintf(os.Stderr, "hostile56: %s %s: %s\n", finding, who, request)
	before := e.sample()
	start := time.Now()
	status := do()
	wall := time.Since(start)
	after := e.sample()
	e.last = row{before: before, after: after, cpu: after.CPU - before.CPU}
	what, held := check()
	r := row{finding: finding, who: who, request: request, status: status, wall: wall,
		before: before, after: after, cpu: after.CPU - before.CPU, check: what, held: held}
	if before.PID != after.PID {
		r.check += fmt.Sprintf("; THE APISERVER RESTARTED (PID %d → %d)", before.PID, after.PID)
		r.held = false
	}
	if !r.held {
		e.failed = true
	}
	fmt.Fprintf(os.Stderr, "hostile56:   → %s in %v, CPU %v; %s (held: %v)\n", status, wall.Round(time.Millisecond), r.cpu, r.check, r.held)
	e.rows = append(e.rows, r)
}

// print writes the table.
func (e *env) print(w io.Writer) {
	fmt.Fprintf(w, "Apiserver measured: %s (%s), PID %d. alice: client certificate CN=alice O=developers, Role in namespace %s. Node of the pods: %s (real: %v).\n\n",
		e.api.Name, e.host, e.api.PID, e.ns, e.node, e.realNode)
	fmt.Fprintln(w, "| # | as | request | status | wall | apiserver CPU | VmRSS MiB before→after | VmHWM MiB before→after | outcome | held |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range e.rows {
		held := "yes"
		if !r.held {
			held = "**NO**"
		}
		mem, hwm := "–", "–"
		if r.before.PID != 0 && r.after.PID != 0 {
			mem = mib(r.before.RSS) + "→" + mib(r.after.RSS)
			hwm = mib(r.before.HWM) + "→" + mib(r.after.HWM)
		}
		cpu := "–"
		if r.before.PID != 0 && r.before.PID == r.after.PID {
			cpu = fmt.Sprintf("%.2f s", r.cpu.Seconds())
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.finding, r.who, cell(r.request), cell(r.status),
			fmtDur(r.wall), cpu, mem, hwm, cell(r.check), held)
	}
}

func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}

// do sends one request and reads the answer (bounded by the client's
// timeout): its status, or -1 and the error.
func do(c *http.Client, method, url, ctype string, body []byte, hdr ...string) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return -1, nil, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return -1, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, b, err
}

// statuses counts the answers of many requests.
type statuses struct {
	mu    sync.Mutex
	n     map[string]int
	first map[string]string // each status's first message
}

func (s *statuses) add(code int, err error) { s.addBody(code, nil, err) }

// addBody counts an answer, and keeps the message of the first of its
// status.
func (s *statuses) addBody(code int, body []byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n, s.first = map[string]int{}, map[string]string{}
	}
	k := fmt.Sprint(code)
	msg := statusMessage(body)
	if err != nil {
		k, msg = "error", err.Error()
	}
	if _, ok := s.first[k]; !ok {
		s.first[k] = msg
	}
	s.n[k]++
}

// messages are the first message of each status that is none of codes.
func (s *statuses) messages(codes ...int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k, msg := range s.first {
		if !slices.Contains(codes, atoi(k)) {
			out = append(out, fmt.Sprintf("%s: %s", k, excerpt(msg, 160)))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

func (s *statuses) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	for k := range s.n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s×%d", k, s.n[k]))
	}
	return strings.Join(parts, ", ")
}

// only reports whether every answer was one of codes.
func (s *statuses) only(codes ...int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.n {
		ok := false
		for _, c := range codes {
			ok = ok || k == fmt.Sprint(c)
		}
		if !ok {
			return false
		}
	}
	return len(s.n) > 0
}

// parallel runs fn(0..n-1) on conc goroutines.
func parallel(n, conc int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// kubectl runs kubectl with a kubeconfig, bounded: its combined output
// and its exit ("exit 0", "exit 1", ...).
func (e *env) kubectl(kubeconfig string, args ...string) (string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*e.timeout)
	defer cancel()
	args = append([]string{"--kubeconfig", kubeconfig, "--request-timeout", e.timeout.String()}, args...)
	out, err := exec.CommandContext(ctx, e.kubectlBin, args...).CombinedOutput()
	code := 0
	if err != nil {
		code = -1
		if x, ok := err.(*exec.ExitError); ok {
			code = x.ExitCode()
		}
	}
	return string(out), fmt.Sprintf("exit %d", code)
}

func excerpt(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

var propagation = metav1.DeletePropagationBackground
