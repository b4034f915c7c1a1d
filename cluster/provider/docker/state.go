package docker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// stateVersion is bumped when docker.json changes incompatibly.
const stateVersion = 2

// StateFile is the file in a state directory that records a docker
// cluster; its presence is how kstep down tells a docker cluster from a
// process one.
const StateFile = "docker.json"

// clusterState is docker.json: what another kstep process needs to find
// the cluster's containers and network and reach its actors.
type clusterState struct {
	Version int `json:"version"`
	// ID names the cluster's Docker resources (kstep-<ID>-<actor>) and is
	// their dev.kstep.cluster label.
	ID string `json:"id"`
	// Network is the cluster's bridge network, by name.
	Network string `json:"network"`
	// Detached clusters outlive their owner; the sweep spares them.
	Detached bool `json:"detached"`
	// Owner is the PID of the process that ran Up.
	Owner     int       `json:"owner"`
	CreatedAt time.Time `json:"createdAt"`
	// Kubeconfig is "" until every apiserver is ready.
	Kubeconfig string       `json:"kubeconfig,omitempty"`
	Actors     []actorState `json:"actors"`
}

type actorState struct {
	// Actor's Endpoint is the host's URL (a port published on 127.0.0.1);
	// PID is not recorded, Actors reads it from Docker.
	provider.Actor
	// Component is the plan's (its Args the argv after the kstep binary).
	Component provider.Component `json:"component"`
	// Container is the container's name; Alias its name on the network.
	Container string `json:"container"`
	Alias     string `json:"alias"`
	Image     string `json:"image"`
	// Port is the container port published as HostPort on 127.0.0.1.
	Port     int `json:"port"`
	HostPort int `json:"hostPort"`
	// MetricsPort, when set, is published as MetricsHostPort too: an etcd
	// member's plain metrics URL, the host's probe of its readiness.
	MetricsPort     int `json:"metricsPort,omitempty"`
	MetricsHostPort int `json:"metricsHostPort,omitempty"`
	// ReadyURL answers 200 (from the host) when the actor is ready.
	ReadyURL string `json:"readyURL"`
	// Volume, when set, is mounted at VolumeDir: etcd's data, a node's
	// containerd root and state.
	Volume    string `json:"volume,omitempty"`
	VolumeDir string `json:"volumeDir,omitempty"`
}

func (s *clusterState) actor(name string) (*actorState, error) {
	i := slices.IndexFunc(s.Actors, func(a actorState) bool { return a.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("actor %q: %w", name, provider.ErrUnknownActor)
	}
	return &s.Actors[i], nil
}

// components are the cluster's actors as the plan's Components, in order.
func (s *clusterState) components() []provider.Component {
	out := make([]provider.Component, len(s.Actors))
	for i, a := range s.Actors {
		out[i] = a.Component
	}
	return out
}

// HasCluster reports whether stateDir records a docker cluster.
func HasCluster(stateDir string) bool {
	_, err := os.Stat(filepath.Join(stateDir, StateFile))
	return err == nil
}

// loadState reads docker.json; (nil, nil) when there is none.
func loadState(dir string) (*clusterState, error) {
	path := filepath.Join(dir, StateFile)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read cluster state: %w", err)
	}
	var s clusterState
	if err := json.Unmarshal(b, &s); err != nil || s.Version != stateVersion {
		return nil, fmt.Errorf("cluster state %s: want version %d of docker.json (%v)", path, stateVersion, err)
	}
	return &s, nil
}

// saveState replaces docker.json atomically (a rename), so readers in
// other processes see the old file or the new one.
func saveState(dir string, s *clusterState) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode cluster state: %w", err)
	}
	path := filepath.Join(dir, StateFile)
	if err := os.WriteFile(path+".tmp", append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write cluster state: %w", err)
	}
	return os.Rename(path+".tmp", path)
}

// removeState forgets the cluster.
func removeState(dir string) error {
	err := os.Remove(filepath.Join(dir, StateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
