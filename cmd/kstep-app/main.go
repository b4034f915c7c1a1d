package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 {
		// A mode for kubectl exec: the image holds no other program.
		os.Exit(mode(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kstep-app:", err)
		os.Exit(1)
	}
}

func run() error {
	// The handler first: a liveness probe may fail, and the kubelet send
	// SIGTERM, the moment the process starts. Until NotifyContext the
	// signal is lost to the app (as PID 1 of its PID namespace the kernel
	// drops it; otherwise the runtime exits without a shutdown line).
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
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
		// One line per request: what kubectl logs -f shows arriving.
		fmt.Fprintf(os.Stderr, "kstep-app: %s %s from %s\n", r.Method, r.URL.Path, r.RemoteAddr)
		fmt.Fprintf(w, "hello from %s (kstep-app %s)\n", host, version)
	})
	return mux
}

// mode runs one of the exec modes and returns the exit code:
//
//	version   prints "kstep-app <version>" and exits 0
//	echo      copies stdin to stdout until EOF (kubectl exec -i)
//	exit N    exits with code N (a failing command)
func mode(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch args[0] {
	case "version":
		fmt.Fprintf(stdout, "kstep-app %s\n", envOr("KSTEP_APP_VERSION", "dev"))
		return 0
	case "echo":
		if _, err := io.Copy(stdout, stdin); err != nil {
			fmt.Fprintln(stderr, "kstep-app echo:", err)
			return 1
		}
		return 0
	case "exit":
		if len(args) == 2 {
			if n, err := strconv.Atoi(args[1]); err == nil && n >= 0 && n < 256 {
				return n
			}
		}
		fmt.Fprintln(stderr, "kstep-app exit: want one code, 0 to 255")
		return 2
	}
	fmt.Fprintf(stderr, "kstep-app: unknown mode %q (modes: version, echo, exit N; no argument serves HTTP)\n", args[0])
	return 2
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
