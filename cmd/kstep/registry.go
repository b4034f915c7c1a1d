package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/cluster/images"
)

func newRegistryCmd() *cobra.Command {
	var (
		listen, binDir string
		padMiB         int
		logRequests    bool
	)
	cmd := &cobra.Command{
		Use:   "registry",
		Short: "Serve kstep's images from an in-memory registry until SIGINT or SIGTERM",
		Long: `Build kstep's images (pause:v1, app:v1, app:v2 and, with --pad-mib N,
app:v1-padN) from the programs in --bin-dir and serve them from an
in-memory OCI registry. Users name them registry.kstep.local/<repo>:<tag>;
each node maps that host to this registry (kstep node --registry).

GET /healthz answers 200 once every image is pushed: wait for it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			start := time.Now()
			opts := []images.Option{images.WithPadding(padMiB)}
			if logRequests {
				opts = append(opts, images.WithRequestLog(log.New(cmd.ErrOrStderr(), "kstep registry: ", log.LstdFlags)))
			}
			r, err := images.Start(ctx, listen, binDir, opts...)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "kstep registry: serving on %s (%s/<repo>:<tag>), ready in %v\n",
				r.Addr(), images.Host, time.Since(start).Round(time.Millisecond))
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return r.Shutdown(sctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:5000", "host:port to serve on")
	f.StringVar(&binDir, "bin-dir", defaultBinDir(), "directory holding kstep-pause and kstep-app (make build puts them beside kstep)")
	f.IntVar(&padMiB, "pad-mib", 0, "also serve app:v1-padN, app:v1 with an N MiB incompressible layer (0: none)")
	f.BoolVar(&logRequests, "log-requests", false, "log every registry request to stderr")
	return cmd
}

// defaultBinDir is the directory of the running kstep binary: make build
// puts kstep, the image programs and the node binaries side by side in bin/.
func defaultBinDir() string {
	exe, err := os.Executable()
	if err != nil {
		return "bin"
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return filepath.Dir(exe)
}
