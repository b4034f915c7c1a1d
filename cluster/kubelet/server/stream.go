package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/proxy"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kstep-dev/kstep/cluster/kubelet"
)

// streamOptions are exec's and attach's query parameters (upstream's
// remotecommand options: "1" or "true" for yes).
type streamOptions struct {
	stdin, stdout, stderr, tty bool
	command                    []string
}

func parseStreamOptions(q url.Values, exec bool) (streamOptions, error) {
	var o streamOptions
	// Upstream's apiserver sends input, output and error (corev1's
	// Exec*Param); PodExecOptions' own names are accepted too.
	for _, b := range []struct {
		names []string
		v     *bool
	}{
		{[]string{corev1.ExecStdinParam, "stdin"}, &o.stdin},
		{[]string{corev1.ExecStdoutParam, "stdout"}, &o.stdout},
		{[]string{corev1.ExecStderrParam, "stderr"}, &o.stderr},
		{[]string{corev1.ExecTTYParam}, &o.tty},
	} {
		for _, name := range b.names {
			v, err := parseBool(q, name)
			if err != nil {
				return o, err
			}
			*b.v = *b.v || v
		}
	}
	if !o.stdin && !o.stdout && !o.stderr {
		return o, errors.New("you must specify at least 1 of stdin, stdout, stderr")
	}
	if o.tty && o.stderr {
		// A terminal has one output stream (upstream drops stderr too).
		o.stderr = false
	}
	if exec {
		o.command = q[corev1.ExecCommandParam]
		if len(o.command) == 0 {
			return o, errors.New("you must specify a command (the command parameter)")
		}
		if len(o.command) > 1024 {
			return o, errors.New("too many command arguments")
		}
	}
	return o, nil
}

// runningContainer finds the request's pod and its running container,
// answering itself when there is none.
func runningContainer(w http.ResponseWriter, r *http.Request) (*kubelet.Kubelet, *kubelet.ContainerInfo, bool) {
	k := nodeOf(r)
	pod, name, ok := podContainer(w, k, r.PathValue("ns"), r.PathValue("pod"), r.PathValue("uid"), r.PathValue("container"))
	if !ok {
		return nil, nil, false
	}
	c, err := k.Container(r.Context(), pod, name, false)
	if err != nil {
		writeRuntimeError(w, err)
		return nil, nil, false
	}
	if !c.Running() {
		http.Error(w, fmt.Sprintf("container %q in pod %q is not running", name, pod.Name), http.StatusBadRequest)
		return nil, nil, false
	}
	return k, c, true
}

func (s *Server) exec(w http.ResponseWriter, r *http.Request)   { s.containerStream(w, r, true) }
func (s *Server) attach(w http.ResponseWriter, r *http.Request) { s.containerStream(w, r, false) }

// containerStream serves /exec (a command) and /attach (the container's
// own process): the runtime's stream URL for the container, proxied.
func (s *Server) containerStream(w http.ResponseWriter, r *http.Request, exec bool) {
	if !upgradeRequested(w, r) {
		return
	}
	o, err := parseStreamOptions(r.URL.Query(), exec)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	k, c, ok := runningContainer(w, r)
	if !ok {
		return
	}
	var u string
	if exec {
		u, err = k.Runtime().Exec(r.Context(), &runtimeapi.ExecRequest{ContainerId: c.ID, Cmd: o.command,
			Tty: o.tty, Stdin: o.stdin, Stdout: o.stdout, Stderr: o.stderr})
	} else {
		u, err = k.Runtime().Attach(r.Context(), &runtimeapi.AttachRequest{ContainerId: c.ID,
			Tty: o.tty, Stdin: o.stdin, Stdout: o.stdout, Stderr: o.stderr})
	}
	if err != nil {
		writeRuntimeError(w, err)
		return
	}
	s.proxyStream(w, r, u)
}

func (s *Server) portForward(w http.ResponseWriter, r *http.Request) {
	if !upgradeRequested(w, r) {
		return
	}
	var ports []int32
	for _, v := range r.URL.Query()[corev1.PortHeader] {
		p, err := strconv.ParseUint(v, 10, 16)
		if err != nil || p == 0 {
			http.Error(w, fmt.Sprintf("invalid port %q: want 1 to 65535", bounded(v)), http.StatusBadRequest)
			return
		}
		ports = append(ports, int32(p))
	}
	k := nodeOf(r)
	pod, _, ok := podContainer(w, k, r.PathValue("ns"), r.PathValue("pod"), r.PathValue("uid"), "")
	if !ok {
		return
	}
	sb, err := k.Sandbox(r.Context(), pod)
	if err != nil {
		writeRuntimeError(w, err)
		return
	}
	u, err := k.Runtime().PortForward(r.Context(), sb, ports)
	if err != nil {
		writeRuntimeError(w, err)
		return
	}
	s.proxyStream(w, r, u)
}

// upgradeRequested answers 400 to a request that asks no upgrade, before
// the runtime prepares a stream for it.
func upgradeRequested(w http.ResponseWriter, r *http.Request) bool {
	if httpstream.IsUpgradeRequest(r) {
		return true
	}
	http.Error(w, "Upgrade request required: exec, attach and port-forward are SPDY or WebSocket streams", http.StatusBadRequest)
	return false
}

// proxyStream hands the caller's upgraded connection to the runtime's
// stream server (upstream kubelet's non-redirect mode).
func (s *Server) proxyStream(w http.ResponseWriter, r *http.Request, streamURL string) {
	u, err := url.Parse(streamURL)
	if err != nil || !u.IsAbs() {
		http.Error(w, fmt.Sprintf("the runtime answered an unusable stream URL %q", bounded(streamURL)), http.StatusInternalServerError)
		return
	}
	h := proxy.NewUpgradeAwareHandler(u, nil, false, true, responder{s})
	h.ServeHTTP(w, r)
}

type responder struct{ s *Server }

func (p responder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	p.s.log.Warn("kubelet server: stream proxy", "err", err)
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// writeRuntimeError answers a runtime or lookup error with the status its
// gRPC code means.
func writeRuntimeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, kubelet.ErrNoContainer):
		code = http.StatusBadRequest
	default:
		switch status.Code(err) {
		case codes.NotFound:
			code = http.StatusNotFound
		case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
			code = http.StatusBadRequest
		case codes.Unimplemented:
			code = http.StatusNotImplemented
		case codes.Unavailable, codes.DeadlineExceeded:
			code = http.StatusServiceUnavailable
		}
	}
	http.Error(w, err.Error(), code)
}
