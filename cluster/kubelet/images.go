package kubelet

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// imagePuller makes images present per pull policy (step ⑦-a). Pulls of
// one image by several pods at once share one PullImage call; failed pulls
// back off per pod and image.
type imagePuller struct {
	k        *Kubelet
	mu       sync.Mutex
	inflight map[string]*pullCall
}

type pullCall struct {
	done chan struct{}
	ref  string
	err  error
}

func newImagePuller(k *Kubelet) *imagePuller {
	return &imagePuller{k: k, inflight: map[string]*pullCall{}}
}

// pullPolicy is the container's policy, defaulted as the apiserver does:
// Always for ":latest" or an untagged image, IfNotPresent otherwise.
func pullPolicy(c *corev1.Container) corev1.PullPolicy {
	if c.ImagePullPolicy != "" {
		return c.ImagePullPolicy
	}
	name := c.Image
	if i := strings.LastIndex(name, "@"); i >= 0 {
		return corev1.PullIfNotPresent
	}
	slash := strings.LastIndex(name, "/")
	colon := strings.LastIndex(name, ":")
	if colon <= slash || name[colon+1:] == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// ensure makes c's image present. On failure it returns the container's
// waiting state and when to try again.
func (p *imagePuller) ensure(ctx context.Context, pod *corev1.Pod, c *corev1.Container, sb *runtimeapi.PodSandboxConfig) (*waitingState, time.Duration) {
	policy := pullPolicy(c)
	if policy != corev1.PullAlways {
		img, err := p.k.runtime.ImageStatus(ctx, c.Image)
		if err != nil {
			return &waitingState{reason: "ErrImagePull", message: err.Error()}, p.k.cfg.SyncRetryInitial
		}
		if img != nil {
			p.k.containerEvent(pod, c.Name, corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine", c.Image))
			return nil, 0
		}
		if policy == corev1.PullNever {
			msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
			p.k.containerEvent(pod, c.Name, corev1.EventTypeWarning, "ErrImageNeverPull", msg)
			return &waitingState{reason: "ErrImageNeverPull", message: msg}, p.k.cfg.BackoffInitial
		}
	}
	key := string(pod.UID) + "/image/" + c.Image
	now := p.k.clock.Now()
	if in, left := p.k.pullBackoff.InBackoffSince(key, now); in {
		msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
		p.k.containerEvent(pod, c.Name, corev1.EventTypeNormal, "BackOff", msg)
		return &waitingState{reason: "ImagePullBackOff", message: msg}, left
	}
	p.k.containerEvent(pod, c.Name, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", c.Image))
	start := p.k.clock.Now()
	if _, err := p.pull(ctx, c.Image, sb); err != nil {
		p.k.pullBackoff.Next(key, p.k.clock.Now())
		msg := fmt.Sprintf("Failed to pull image %q: %v", c.Image, err)
		p.k.containerEvent(pod, c.Name, corev1.EventTypeWarning, "Failed", msg)
		return &waitingState{reason: "ErrImagePull", message: msg}, p.k.pullBackoff.Delay(key)
	}
	p.k.pullBackoff.Reset(key)
	p.k.containerEvent(pod, c.Name, corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Successfully pulled image %q in %v", c.Image, p.k.clock.Since(start).Round(time.Millisecond)))
	return nil, 0
}

// pull runs one PullImage per image at a time; concurrent callers wait for
// it and share its outcome.
func (p *imagePuller) pull(ctx context.Context, image string, sb *runtimeapi.PodSandboxConfig) (string, error) {
	p.mu.Lock()
	call, ok := p.inflight[image]
	if !ok {
		call = &pullCall{done: make(chan struct{})}
		p.inflight[image] = call
		p.mu.Unlock()
		call.ref, call.err = p.k.runtime.PullImage(ctx, image, sb)
		p.mu.Lock()
		delete(p.inflight, image)
		p.mu.Unlock()
		close(call.done)
		return call.ref, call.err
	}
	p.mu.Unlock()
	select {
	case <-call.done:
		return call.ref, call.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
