package kubelet

import (
	"context"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// failpointRestartContainers waits until a container runs, then d more,
// then stops every running container once: the kubelet sees them exit and restarts them (restart count +1, a
// new container ID), which is exactly what the chaos gate's
// running-pods-unaffected invariant must catch. Testing only.
func (k *Kubelet) failpointRestartContainers(ctx context.Context, d time.Duration) {
	running := func(cs []*runtimeapi.Container) bool {
		for _, c := range cs {
			if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
				return true
			}
		}
		return false
	}
	for {
		if cs, err := k.cfg.Runtime.ListContainers(ctx, nil); err == nil && running(cs) {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(d):
	}
	cs, err := k.cfg.Runtime.ListContainers(ctx, nil)
	if err != nil {
		k.log.Warn("failpoint: list containers", "err", err)
		return
	}
	n := 0
	for _, c := range cs {
		if c.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		if err := k.cfg.Runtime.StopContainer(ctx, c.GetId(), 0); err != nil {
			k.log.Warn("failpoint: stop container", "id", c.GetId(), "err", err)
			continue
		}
		n++
	}
	k.log.Warn("failpoint: stopped every running container", "containers", n)
}
