package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/kstep-dev/kstep/cluster/apiclient"
	"github.com/kstep-dev/kstep/cluster/leader"
)

// addLeaderFlags binds the leader-election flags every leader-elected actor
// takes, upstream's names.
func addLeaderFlags(f *pflag.FlagSet, elect *bool, cfg *leader.Config) {
	f.BoolVar(elect, "leader-elect", true, "campaign for the lease and act only while holding it")
	f.DurationVar(&cfg.LeaseDuration, "leader-elect-lease-duration", cfg.LeaseDuration, "how long a lease is valid without renewal; bounds how long a dead leader goes unreplaced")
	f.DurationVar(&cfg.RenewDeadline, "leader-elect-renew-deadline", cfg.RenewDeadline, "how long the leader retries a renewal before it stops acting")
	f.DurationVar(&cfg.RetryPeriod, "leader-elect-retry-period", cfg.RetryPeriod, "interval between acquire and renew attempts")
	f.StringVar(&cfg.Namespace, "leader-elect-resource-namespace", cfg.Namespace, "namespace of the lease")
	f.StringVar(&cfg.Name, "leader-elect-resource-name", cfg.Name, "name of the lease")
}

// defaultIdentity is unique per process on a host.
func defaultIdentity(role string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%s-%d", role, host, os.Getpid())
}

// restConfig loads a kubeconfig for an actor (client-side throttling off),
// failing over between every apiserver it names until ctx ends.
func restConfig(ctx context.Context, path string) (*rest.Config, error) {
	return apiclient.Config(ctx, path, slog.Default())
}
