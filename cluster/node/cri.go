package node

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DialCRI returns a client connection to a CRI endpoint ("unix:///path").
// It connects lazily. Reconnection backs off from 50 ms to at most 1 s
// (gRPC's default starts at 1 s and grows to 2 min), so a restarted
// containerd is found again at once.
func DialCRI(endpoint string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(endpoint,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: time.Second,
		}),
		// Lists of containers and images outgrow gRPC's 4 MiB default.
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20)),
	)
	if err != nil {
		return nil, fmt.Errorf("CRI %s: %w", endpoint, err)
	}
	return conn, nil
}

// WaitCRI calls the runtime service's Version until it answers or ctx ends.
func WaitCRI(ctx context.Context, conn *grpc.ClientConn) (*runtimeapi.VersionResponse, error) {
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		v, err := rt.Version(cctx, &runtimeapi.VersionRequest{})
		cancel()
		if err == nil {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("CRI %s not answering: %w (last: %v)", conn.Target(), context.Cause(ctx), err)
		case <-t.C:
		}
	}
}
