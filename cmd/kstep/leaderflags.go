package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

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

// restConfig loads a kubeconfig for an actor; actors talk to the apiserver
// at high rates, so client-side throttling is off.
func restConfig(path string) (*rest.Config, error) {
	if path == "" {
		return nil, fmt.Errorf("--kubeconfig is required")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg.QPS, cfg.Burst = -1, -1
	return cfg, nil
}
