package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kstep-app:", err)
		os.Exit(1)
	}
}

func run() error {
	port := envOr("PORT", "8080")
	delay, err := time.ParseDuration(envOr("START_DELAY", "0s"))
	if err != nil {
		return fmt.Errorf("START_DELAY: %w", err)
	}
	host, _ := os.Hostname()
	start := time.Now()
	mux := newHandler(host, envOr("KSTEP_APP_VERSION", "dev"), delay, func() time.Duration { return time.Since(start) })

	ln, err := net.Listen("tcp", net.JoinHostPort("", port))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "kstep-app: serving on %s (ready after %v)\n", ln.Addr(), delay)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(os.Stderr, "kstep-app: signalled, shutting down")
	// Kubernetes grants 30 s by default; finish well inside it.
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newHandler serves the three endpoints; elapsed says how long the program
// has been up, so tests need no sleep.
func newHandler(host, version string, delay time.Duration, elapsed func() time.Duration) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if left := delay - elapsed(); left > 0 {
			http.Error(w, fmt.Sprintf("starting: ready in %v", left.Round(time.Millisecond)), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "hello from %s (kstep-app %s)\n", host, version)
	})
	return mux
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
