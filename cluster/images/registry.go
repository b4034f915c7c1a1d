package images

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Registry is an OCI registry in memory, serving on one listener. It starts
// empty and not ready; Push fills it and makes /healthz answer 200, so a
// caller that waits for /healthz can pull at once.
//
// Everything but /healthz is go-containerregistry's pkg/registry: the
// distribution API (pull and push), with no authentication. Bind it to
// 127.0.0.1.
type Registry struct {
	ln    net.Listener
	srv   *http.Server
	ready atomic.Bool
	done  chan struct{}
	err   error // of Serve, once done is closed
}

// WithRequestLog logs every request the registry serves to l. By default
// requests are not logged. Build ignores it.
func WithRequestLog(l *log.Logger) Option {
	return func(o *options) { o.requestLog = l }
}

// Serve starts a Registry on ln. It serves until Close. Of opts it uses
// WithRequestLog.
func Serve(ln net.Listener, opts ...Option) *Registry {
	o := options{requestLog: log.New(io.Discard, "", 0)}
	for _, opt := range opts {
		opt(&o)
	}
	r := &Registry{ln: ln, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", r.healthz)
	mux.Handle("/", registry.New(registry.Logger(o.requestLog)))
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(r.done)
		if err := r.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			r.err = err
		}
	}()
	return r
}

// Start listens on addr (host:port; port 0 picks one), serves, and pushes
// the images built from binDir with opts. It is what `kstep registry` runs.
func Start(ctx context.Context, addr, binDir string, opts ...Option) (*Registry, error) {
	set, err := Build(binDir, opts...)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	r := Serve(ln, opts...)
	if err := r.Push(ctx, set); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Addr is the host:port the registry serves on.
func (r *Registry) Addr() string { return r.ln.Addr().String() }

// Ready reports whether Push has completed: /healthz answers 200.
func (r *Registry) Ready() bool { return r.ready.Load() }

func (r *Registry) healthz(w http.ResponseWriter, _ *http.Request) {
	if !r.ready.Load() {
		http.Error(w, "no images yet", http.StatusServiceUnavailable)
		return
	}
	io.WriteString(w, "ok\n")
}

// Push uploads images through the registry's own HTTP API, as any client
// would (remote.Write to 127.0.0.1:<port>/<repo>:<tag>), then marks the
// registry ready.
func (r *Registry) Push(ctx context.Context, set []Image) error {
	_, port, err := net.SplitHostPort(r.Addr())
	if err != nil {
		return err
	}
	// The loopback address, not the listener's: a registry on 0.0.0.0 is
	// pushed to locally as well. No proxy, whatever the environment says.
	transport := &http.Transport{Proxy: nil}
	defer transport.CloseIdleConnections()
	for _, img := range set {
		ref, err := name.NewTag(net.JoinHostPort("127.0.0.1", port)+"/"+img.Repo+":"+img.Tag, name.Insecure)
		if err != nil {
			return err
		}
		if err := remote.Write(ref, img.Image, remote.WithContext(ctx), remote.WithTransport(transport)); err != nil {
			return fmt.Errorf("push %s:%s: %w", img.Repo, img.Tag, err)
		}
	}
	r.ready.Store(true)
	return nil
}

// Close stops serving at once, dropping pulls in flight.
func (r *Registry) Close() error {
	err := r.srv.Close()
	<-r.done
	return errors.Join(err, r.err)
}

// Shutdown stops accepting connections and waits, until ctx ends, for pulls
// in flight to finish.
func (r *Registry) Shutdown(ctx context.Context) error {
	err := r.srv.Shutdown(ctx)
	<-r.done
	return errors.Join(err, r.err)
}
