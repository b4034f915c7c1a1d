package kubelet

import (
	"github.com/kstep-dev/kstep/cluster/kubelet/cri"
	"github.com/kstep-dev/kstep/cluster/kubelet/simruntime"
)

// NewHollow builds a kubelet for a hollow node: the same kubelet, driving
// sim through the CRI client interfaces in process (cri.InProcess), with
// sim answering its HTTP and TCP probes, and the node's IP and pod CIDR
// taken from sim unless cfg sets them, and container logs read from
// sim's simulated ones (Runtime.OpenLog) unless cfg sets a LogReader.
func NewHollow(cfg Config, sim *simruntime.Runtime) (*Kubelet, error) {
	cfg.Hollow = true
	cfg.Runtime = cri.New(cri.InProcess(sim, sim))
	cfg.Network = sim
	if cfg.LogReader == nil {
		cfg.LogReader = sim.OpenLog
	}
	if cfg.NodeIP == "" {
		cfg.NodeIP = sim.NodeIP().String()
	}
	if !cfg.PodCIDR.IsValid() {
		cfg.PodCIDR = sim.PodCIDR()
	}
	return New(cfg)
}
