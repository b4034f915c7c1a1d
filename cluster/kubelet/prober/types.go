package prober

import (
	"context"
	"net/http"
	"time"
)

// Result is a probe's outcome.
type Result int8

const (
	// Unknown: the probe could not be run (an error of the prober, not of
	// the container). It is not counted towards any threshold.
	Unknown Result = iota
	Success
	Failure
)

func (r Result) String() string {
	switch r {
	case Success:
		return "success"
	case Failure:
		return "failure"
	}
	return "unknown"
}

// Kind is which of a container's probes.
type Kind int8

const (
	Readiness Kind = iota
	Liveness
	Startup
)

func (k Kind) String() string {
	switch k {
	case Liveness:
		return "liveness"
	case Startup:
		return "startup"
	}
	return "readiness"
}

// Title is the kind as upstream's events spell it: "Readiness",
// "Liveness", "Startup".
func (k Kind) Title() string {
	switch k {
	case Liveness:
		return "Liveness"
	case Startup:
		return "Startup"
	}
	return "Readiness"
}

// HTTPRequest is one HTTP GET probe.
type HTTPRequest struct {
	// ContainerID is the container probed; a real network ignores it (the
	// packet goes to Host:Port), a simulated one answers for it.
	ContainerID string
	Scheme      string // "http" or "https"
	Host        string // the pod IP unless the probe names a host
	Port        int
	Path        string
	Header      http.Header
	Timeout     time.Duration
}

// TCPRequest is one TCP connect probe.
type TCPRequest struct {
	ContainerID string
	Host        string
	Port        int
	Timeout     time.Duration
}

// Network runs the probes that reach a container over the pod network.
// Real nodes use Net (real HTTP and TCP to the pod IP); hollow nodes use
// their simruntime, which answers in process, so a hollow pod's fake IP is
// never dialled.
type Network interface {
	HTTPGet(ctx context.Context, r HTTPRequest) (Result, string)
	TCPConnect(ctx context.Context, r TCPRequest) (Result, string)
}

// Exec runs a command in a container (CRI ExecSync) and reports Success
// for exit code 0.
type Exec func(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (Result, string)
