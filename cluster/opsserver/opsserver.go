package opsserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"

	"github.com/kstep-dev/kstep/cluster/reviewauth"
)

// TLS are a secure port's files: its serving certificate and key, and the
// CA its callers' client certificates must chain to. All empty: a plain,
// open port.
type TLS struct {
	CertFile, KeyFile, ClientCAFile string
}

// Secure reports whether any file is set.
func (t TLS) Secure() bool { return t.CertFile != "" || t.KeyFile != "" || t.ClientCAFile != "" }

// Handler is one more handler of the port, at Path and below it.
type Handler struct {
	Path    string
	Handler http.Handler
}

// Config is one operations port.
type Config struct {
	// Addr is host:port to listen on; empty serves nothing.
	Addr string
	TLS  TLS
	// Reviews creates the SubjectAccessReviews of a secure port: the
	// actor's own apiserver client (its identity needs create on
	// subjectaccessreviews).
	Reviews authorizationclient.SubjectAccessReviewsGetter
	// Healthy answers /healthz and /readyz: nil is 200, an error 503 with
	// its text. /livez is 200 while the process serves.
	Healthy func() error
	// Metrics serves /metrics (nil: the default Prometheus registry).
	Metrics  http.Handler
	Handlers []Handler
	Log      *slog.Logger
}

// Serve listens on cfg.Addr now and serves until ctx ends.
func Serve(ctx context.Context, cfg Config) error {
	if cfg.Addr == "" {
		return nil
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	h, err := handler(cfg)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(cfg.Log.Handler(), slog.LevelDebug)}
	if cfg.TLS.Secure() {
		if srv.TLSConfig, err = reviewauth.ServerTLS(cfg.TLS.CertFile, cfg.TLS.KeyFile, cfg.TLS.ClientCAFile); err != nil {
			return fmt.Errorf("ops port %s: %w", cfg.Addr, err)
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("ops port listen %s: %w", cfg.Addr, err)
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	go func() {
		var err error
		if srv.TLSConfig != nil {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			cfg.Log.Error("ops port", "addr", cfg.Addr, "err", err)
		}
	}()
	cfg.Log.Info("serving the ops port", "addr", ln.Addr().String(), "secure", srv.TLSConfig != nil)
	return nil
}

// handler is the port's routes: the open health paths, and the rest
// behind the authorizer when the port is secure.
func handler(cfg Config) (http.Handler, error) {
	guarded := http.NewServeMux()
	metrics := cfg.Metrics
	if metrics == nil {
		metrics = promhttp.Handler()
	}
	guarded.Handle("/metrics", metrics)
	guarded.HandleFunc("/debug/pprof/", pprof.Index)
	guarded.HandleFunc("/debug/pprof/profile", pprof.Profile)
	guarded.HandleFunc("/debug/pprof/trace", pprof.Trace)
	guarded.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	for _, h := range cfg.Handlers {
		guarded.Handle(h.Path, h.Handler)
		guarded.Handle(h.Path+"/", h.Handler)
	}
	var rest http.Handler = guarded
	if cfg.TLS.Secure() {
		if cfg.Reviews == nil {
			return nil, errors.New("ops port: a secure port needs a client for its SubjectAccessReviews")
		}
		log := cfg.Log
		rest = reviewauth.NewAuthorizer().Filter(cfg.Reviews, func(a reviewauth.Attributes, err error) {
			log.Warn("ops port: authorization error", "request", a.String(), "err", err)
		}, guarded)
	}
	health := func(w http.ResponseWriter, _ *http.Request) {
		if cfg.Healthy != nil {
			if err := cfg.Healthy(); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = w.Write([]byte("ok"))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", health)
	mux.HandleFunc("/readyz", health)
	mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.Handle("/", rest)
	return mux, nil
}
