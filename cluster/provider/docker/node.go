package docker

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// Node containers run containerd, which runs runc, which runs the pods:
// nested containers. How they get the privileges for that:
const (
	// nodePrivileged is docker run --privileged, tried first.
	nodePrivileged = "privileged"
	// nodeFallback is for daemons that refuse --privileged (on kstep's
	// machines CAP_SYS_RESOURCE is outside the bounding set, so runc cannot
	// apply "all capabilities"): every capability but SYS_RESOURCE, no
	// seccomp or AppArmor profile, the host's cgroup hierarchy read-write
	// in the host's cgroup namespace (runc creates the pods' cgroups
	// there). Containerd's root is on a volume either way: overlayfs
	// snapshots do not mount on the container's own overlay.
	nodeFallback = "fallback"
)

// nodeHostConfig adds mode's privileges to a node container's host config.
func nodeHostConfig(mode string, hc *container.HostConfig) {
	// The pods' bridge is the gateway of the node's pod subnet; the CNI
	// bridge plugin would otherwise write the sysctl itself.
	hc.Sysctls = map[string]string{"net.ipv4.ip_forward": "1"}
	if mode == nodePrivileged {
		hc.Privileged = true
		return
	}
	hc.CapAdd = []string{"ALL"}
	hc.CapDrop = []string{"SYS_RESOURCE"}
	hc.SecurityOpt = []string{"seccomp=unconfined", "apparmor=unconfined"}
	hc.CgroupnsMode = container.CgroupnsModeHost
	hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: "/sys/fs/cgroup", Target: "/sys/fs/cgroup"})
}

// runNode starts a node container. The first node of a Provider tries
// --privileged; if the daemon cannot start it so, it says why and every
// node uses the fallback.
func (p *Provider) runNode(ctx context.Context, cli client.APIClient, req testcontainers.ContainerRequest, base func(*container.HostConfig)) error {
	p.nodeModeMu.Lock()
	mode := p.nodeMode
	if mode != "" {
		p.nodeModeMu.Unlock()
	} else {
		defer p.nodeModeMu.Unlock()
	}
	with := func(mode string) testcontainers.ContainerRequest {
		r := req
		r.HostConfigModifier = func(hc *container.HostConfig) {
			base(hc)
			nodeHostConfig(mode, hc)
		}
		return r
	}
	if mode != "" {
		return p.run(ctx, cli, with(mode))
	}
	err := p.run(ctx, cli, with(nodePrivileged))
	if err == nil {
		p.nodeMode = nodePrivileged
		p.logf("node containers run --privileged")
		return nil
	}
	if ctx.Err() != nil {
		return err
	}
	p.logf("the daemon cannot run a --privileged node container (%v); falling back to cap-add ALL, cap-drop SYS_RESOURCE, seccomp and apparmor unconfined, /sys/fs/cgroup rw with the host cgroup namespace", err)
	if err := p.run(ctx, cli, with(nodeFallback)); err != nil {
		return fmt.Errorf("node container, fallback privileges: %w", err)
	}
	p.nodeMode = nodeFallback
	return nil
}

// cgroupParent is the kubelet's --cgroup-parent for a node's pods: a tree
// of the cluster's own in the host's hierarchy (the fallback shares the
// host's cgroup namespace), which removeCgroups can take away.
func cgroupParent(id, node string) string { return "/kstep-" + id + "/" + node }

// removeCgroups removes the cluster's pod cgroups from the host's
// hierarchy once its node containers are gone: killed pods leave their
// (empty) cgroups behind. Best effort: a remote daemon's hosts, or a
// cgroup still in use, are left alone.
func removeCgroups(id string) {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*/kstep-" + id) // v1: one per controller
	roots = append(roots, "/sys/fs/cgroup/kstep-"+id)         // v2
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for _, d := range slices.Backward(dirs) {
			_ = syscall.Rmdir(d)
		}
	}
}
