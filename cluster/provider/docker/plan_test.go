package docker

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// The plan in containers: every actor reached by its name on fixed ports,
// from the host on its own published port, data on a volume, the same
// security as every provider.
func TestPlanInContainers(t *testing.T) {
	spec := provider.Spec{Topology: provider.Topology{EtcdMembers: 3, APIServers: 2, ControllerManagers: 1, Schedulers: 1,
		RealNodes: 1, HollowNodes: 2, LinkProxies: true}, StateDir: "/s"}
	spec.Defaults()
	n := planSize(spec)
	ports := make([]int, n)
	for i := range ports {
		ports[i] = 30000 + i
	}
	actors := plan(spec, "abc", map[string]string{"control-plane": "cp:1", "node": "node:1"}, ports)
	// One port per actor, and each etcd member's metrics URL.
	if len(actors)+3 != n {
		t.Fatalf("%d actors for %d ports", len(actors), n)
	}
	byName := map[string]actorState{}
	for i, a := range actors {
		byName[a.Name] = a
		if a.HostPort != ports[i] || a.Container != "kstep-abc-"+a.Name || a.Alias != a.Name {
			t.Errorf("%s: host port %d container %s alias %s", a.Name, a.HostPort, a.Container, a.Alias)
		}
	}
	e := byName["etcd-1"]
	for _, want := range []string{"--advertise-client-urls=https://etcd-1:2379", "--initial-advertise-peer-urls=https://etcd-1:2381",
		"--peer-proxy-listen=0.0.0.0:2381", "--listen-peer-urls=https://0.0.0.0:2380", "--data-dir=" + etcdVolumeDir,
		"--listen-metrics-urls=http://0.0.0.0:10257"} {
		if !slices.Contains(e.Component.Args, want) {
			t.Errorf("etcd-1 lacks %s: %q", want, e.Component.Args)
		}
	}
	// The host reaches its client URL and, for readiness and metrics, its
	// metrics URL, published after every actor's own port.
	if e.Volume != "kstep-abc-etcd-1" || e.VolumeDir != etcdVolumeDir || e.Endpoint != "https://127.0.0.1:30001" ||
		e.MetricsPort != 10257 || e.MetricsHostPort != ports[len(actors)+1] ||
		e.MetricsURL != fmt.Sprintf("http://127.0.0.1:%d", ports[len(actors)+1]) || e.ReadyURL != e.MetricsURL+"/health" {
		t.Errorf("etcd-1: %+v", e)
	}
	a := byName["apiserver-0"]
	if !strings.HasPrefix(a.Endpoint, "https://127.0.0.1:") || a.Port != 6443 || !slices.Contains(a.Component.Args, "--authorization-mode=Node,RBAC") {
		t.Errorf("apiserver-0: %+v", a)
	}
	node := byName["node-0"]
	if node.Image != "node:1" || node.Volume == "" || node.Component.User != "system:node:node-0" ||
		!slices.ContainsFunc(node.Component.Args, func(s string) bool { return strings.HasPrefix(s, "--kubelet-arg=--cgroup-parent=/kstep-abc/") }) ||
		!slices.Contains(node.Component.Args, "--registry=registry:5000") {
		t.Errorf("node-0: %+v", node)
	}
	if got := serverURL(true, false)("apiserver-1"); got != "https://apiserver-1:6443" {
		t.Errorf("containers reach apiserver-1 at %s", got)
	}
}

// Each container is given only its own credentials: one read-only bind
// mount per file its flags name, never the pki/ or kubeconfigs/ directory;
// no etcd certificate outside the members and apiservers, and the etcd
// admin's and the CA's keys in none.
func TestContainersMountOnlyTheirOwnCredentials(t *testing.T) {
	spec := provider.Spec{Topology: provider.Topology{EtcdMembers: 3, APIServers: 2, ControllerManagers: 1, Schedulers: 1,
		RealNodes: 1, HollowNodes: 2}, StateDir: "/s"}
	spec.Defaults()
	ports := make([]int, planSize(spec))
	actors := plan(spec, "abc", map[string]string{"control-plane": "cp:1", "node": "node:1"}, ports)
	for _, a := range actors {
		var got []string
		for _, m := range credentialMounts(a.Component, spec.StateDir) {
			if m.Type != "bind" || !m.ReadOnly || m.Source != m.Target {
				t.Errorf("%s: mount %+v, want a read-only bind at the same path", a.Name, m)
			}
			got = append(got, m.Source)
		}
		if want := a.Component.Files(spec.StateDir); !slices.Equal(got, want) {
			t.Errorf("%s mounts %q, want %q", a.Name, got, want)
		}
		for _, f := range got {
			etcd := strings.HasPrefix(f, "/s/pki/etcd/")
			switch {
			case f == "/s/pki" || f == "/s/kubeconfigs" || f == "/s/pki/ca.key" || strings.HasPrefix(f, "/s/pki/etcd/admin."):
				t.Errorf("%s mounts %s", a.Name, f)
			case etcd && a.Role != provider.RoleEtcd && a.Role != provider.RoleAPIServer:
				t.Errorf("%s mounts etcd's %s", a.Name, f)
			case etcd && a.Role == provider.RoleEtcd && strings.HasSuffix(f, ".key") && !strings.HasPrefix(f, "/s/pki/etcd/"+a.Name):
				t.Errorf("%s mounts another member's %s", a.Name, f)
			case strings.HasPrefix(f, "/s/kubeconfigs/") && f != "/s/kubeconfigs/"+a.Name+".kubeconfig":
				t.Errorf("%s mounts another actor's %s", a.Name, f)
			}
		}
		if a.Role != provider.RoleRegistry && len(got) == 0 {
			t.Errorf("%s mounts no credentials", a.Name)
		}
	}
}
