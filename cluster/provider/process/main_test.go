package process

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// fakeEnv turns the test binary into a stand-in kstep binary for the tests
// that need apiservers without depending on cluster/apiserver: "apiserver"
// serves /readyz, "etcd" runs the real `kstep etcd` from KSTEP_BIN.
const fakeEnv = "KSTEP_PROCESS_TEST_FAKE_BINARY"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "1" && len(os.Args) > 1 {
		os.Exit(fakeActor(os.Args[1], os.Args[2:]))
	}
	os.Exit(m.Run())
}

func fakeActor(role string, args []string) int {
	switch role {
	case "etcd":
		bin := os.Getenv("KSTEP_BIN")
		// Exec keeps the PID and argv[1:], which is how the provider
		// recognises its actors.
		err := syscall.Exec(bin, append([]string{bin, role}, args...), os.Environ())
		fmt.Fprintf(os.Stderr, "exec %s: %v\n", bin, err)
		return 1
	case "apiserver":
		fs := flag.NewFlagSet("apiserver", flag.ContinueOnError)
		listen := fs.String("listen", "", "")
		fs.String("name", "", "")
		fs.String("etcd-servers", "", "")
		fs.String("max-request-bytes", "", "")
		fs.String("etcd-attempt-timeout", "", "")
		fs.String("link-listen", "", "")
		cert := fs.String("tls-cert-file", "", "")
		key := fs.String("tls-private-key-file", "", "")
		fs.String("client-ca-file", "", "")
		fs.String("token-auth-file", "", "")
		fs.String("authorization-mode", "", "")
		fs.String("kubelet-client-certificate", "", "")
		fs.String("kubelet-client-key", "", "")
		fs.String("kubelet-certificate-authority", "", "")
		fs.String("etcd-cafile", "", "")
		fs.String("etcd-certfile", "", "")
		fs.String("etcd-keyfile", "", "")
		// kstep's own root flag, which the plan gives every actor.
		fs.Int("gomaxprocs", 0, "")
		if err := fs.Parse(args); err != nil {
			return 2
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		mux := http.NewServeMux()
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
		srv := &http.Server{Addr: *listen, Handler: mux}
		go func() {
			<-ctx.Done()
			srv.Close()
		}()
		fmt.Fprintln(os.Stderr, "fake apiserver listening on", *listen)
		serve := srv.ListenAndServe
		if *cert != "" {
			serve = func() error { return srv.ListenAndServeTLS(*cert, *key) }
		}
		if err := serve(); err != http.ErrServerClosed {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	default:
		fmt.Fprintf(os.Stderr, "fake kstep: unknown role %q\n", role)
		return 2
	}
}
