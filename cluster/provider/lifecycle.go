package provider

import (
	"context"
	"errors"
	"slices"
	"time"
)

// The boot and the shutdown order of a cluster, written once for every
// provider. A provider supplies how to start a group of actors (and wait
// until each is ready) and how to stop one; the order is here.

// NodeStopGrace is how long a real node gets between SIGTERM and SIGKILL:
// its kubelet's stop, every pod's removal and containerd's stop, each
// bounded inside `kstep node`.
const NodeStopGrace = 45 * time.Second

// Boot starts the plan's actors group by group: the etcd members (ready
// only together, so one group), then the apiservers; once they are ready,
// apiserversReady runs (the host's kubeconfig is written then); then the
// registry, then everything that needs only the apiservers (and the nodes
// the registry): controller-managers, schedulers, hollow nodes, real nodes.
// start starts a group and returns once every member is ready; the first
// error ends the boot.
func Boot(ctx context.Context, cs []Component, start func(ctx context.Context, names []string) error, apiserversReady func() error) error {
	roles := ByRole(cs)
	if err := startGroup(ctx, start, roles[RoleEtcd]); err != nil {
		return err
	}
	if len(roles[RoleAPIServer]) == 0 {
		return nil
	}
	if err := startGroup(ctx, start, roles[RoleAPIServer]); err != nil {
		return err
	}
	if err := apiserversReady(); err != nil {
		return err
	}
	if err := startGroup(ctx, start, roles[RoleRegistry]); err != nil {
		return err
	}
	return startGroup(ctx, start, slices.Concat(roles[RoleControllerManager], roles[RoleScheduler], roles[RoleHollowNodes], roles[RoleNode]))
}

func startGroup(ctx context.Context, start func(context.Context, []string) error, names []string) error {
	if len(names) == 0 {
		return nil
	}
	return start(ctx, names)
}

// Shutdown stops the plan's actors so that no apiserver outlives its store
// and no client logs its apiserver's going as a failure: the apiservers'
// clients first (controller-managers, schedulers, hollow nodes), then the
// real nodes, which shut down like machines and get NodeStopGrace (at
// least grace); nodesStopped runs after them (a provider reaps what killed
// nodes left); then the apiservers and the registry; then the etcd members
// one at a time, last first: a leader that gets SIGTERM hands leadership
// to a follower before it exits, and when the followers are stopping at the
// same moment that handover times out (about seven seconds), while one at
// a time it takes milliseconds. stop stops a group at once (SIGTERM, then
// SIGKILL after the grace it is given). Every group is stopped whatever
// failed before it; the errors are joined.
func Shutdown(ctx context.Context, cs []Component, grace time.Duration, stop func(ctx context.Context, names []string, grace time.Duration) error, nodesStopped func() error) error {
	roles := ByRole(cs)
	var errs []error
	group := func(names []string, g time.Duration) {
		if len(names) > 0 {
			errs = append(errs, stop(ctx, names, g))
		}
	}
	group(slices.Concat(roles[RoleControllerManager], roles[RoleScheduler], roles[RoleHollowNodes]), grace)
	group(roles[RoleNode], max(grace, NodeStopGrace))
	if len(roles[RoleNode]) > 0 && nodesStopped != nil {
		errs = append(errs, nodesStopped())
	}
	group(slices.Concat(roles[RoleAPIServer], roles[RoleRegistry]), grace)
	for _, name := range slices.Backward(roles[RoleEtcd]) {
		group([]string{name}, grace)
	}
	return errors.Join(errs...)
}
