package process

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// stateVersion is bumped when cluster.json changes incompatibly.
const stateVersion = 2

// clusterState is cluster.json: everything another kstep process needs to
// find, signal and restart the cluster's actors.
type clusterState struct {
	Version int `json:"version"`
	// Binary is the kstep binary the actors run; restarts use it too.
	Binary string `json:"binary"`
	// Detached clusters' actors run in their own sessions.
	Detached bool `json:"detached"`
	// Owner is the process that ran Up. A foreground cluster's actors die
	// with it, so Down from elsewhere asks it to stop first.
	Owner     procRef   `json:"owner"`
	CreatedAt time.Time `json:"createdAt"`
	// Supervisor is the `kstep supervise` process a detached, supervised
	// cluster leaves behind; Down stops it before the actors.
	Supervisor *procRef `json:"supervisor,omitempty"`
	// Kubeconfig is "" until every apiserver is ready, or without apiservers.
	Kubeconfig string       `json:"kubeconfig,omitempty"`
	Actors     []actorState `json:"actors"`
}

// procRef names a process by PID and argv, so a reused PID is not mistaken
// for it.
type procRef struct {
	PID int `json:"pid"`
	// Args is argv without argv[0].
	Args []string `json:"args"`
}

type actorState struct {
	provider.Actor
	// Args is the actor's argv after the binary; restarts reuse it verbatim,
	// so an actor comes back on the same ports with the same data.
	Args []string `json:"args"`
	// Ports by use (provider.PortClient, ...).
	Ports map[string]int `json:"ports"`
	// DataDir is an etcd member's data directory.
	DataDir string `json:"dataDir,omitempty"`
	// ReadyURL answers 200 when the actor is ready.
	ReadyURL string `json:"readyURL"`
	// Kubeconfig is the actor's own kubeconfig, for actors that are
	// apiserver clients; APIServer the apiserver it names, User and Groups
	// its certificate's identity, HollowNodes the nodes a hollow-nodes
	// actor runs (provider.Component's fields of the same names).
	Kubeconfig  string   `json:"kubeconfig,omitempty"`
	APIServer   string   `json:"apiserver,omitempty"`
	User        string   `json:"user,omitempty"`
	Groups      []string `json:"groups,omitempty"`
	HollowNodes []string `json:"hollowNodes,omitempty"`
	// CPUs are the CPUs the actor is pinned to (Topology.ActorCPUs);
	// restarts pin it alike. None: the kernel places it.
	CPUs []int `json:"cpus,omitempty"`
}

// component is the plan's Component the actor was made from.
func (a actorState) component() provider.Component {
	return provider.Component{Name: a.Name, Role: a.Role, Args: a.Args, Ports: a.Ports, DataDir: a.DataDir,
		Kubeconfig: a.Kubeconfig, APIServer: a.APIServer, User: a.User, Groups: a.Groups, HollowNodes: a.HollowNodes}
}

// components are the cluster's actors as the plan's Components, in order.
func (s *clusterState) components() []provider.Component {
	out := make([]provider.Component, len(s.Actors))
	for i, a := range s.Actors {
		out[i] = a.component()
	}
	return out
}

func (s *clusterState) actor(name string) (*actorState, error) {
	for i := range s.Actors {
		if s.Actors[i].Name == name {
			return &s.Actors[i], nil
		}
	}
	return nil, fmt.Errorf("actor %q: %w", name, provider.ErrUnknownActor)
}

func statePath(stateDir string) string { return filepath.Join(stateDir, "cluster.json") }

// loadState reads cluster.json; (nil, nil) when there is none.
func loadState(stateDir string) (*clusterState, error) {
	path := statePath(stateDir)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read cluster state: %w", err)
	}
	var s clusterState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("parse cluster state %s: %w", path, err)
	}
	if s.Version != stateVersion {
		return nil, fmt.Errorf("cluster state %s: version %d, this kstep reads version %d", path, s.Version, stateVersion)
	}
	return &s, nil
}

// saveState writes cluster.json atomically: readers in other processes see
// the old file or the new one, never half of one.
func saveState(stateDir string, s *clusterState) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode cluster state: %w", err)
	}
	path := statePath(stateDir)
	tmp, err := os.CreateTemp(stateDir, ".cluster.json-*")
	if err != nil {
		return fmt.Errorf("write cluster state: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write cluster state %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write cluster state %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write cluster state: %w", err)
	}
	return nil
}

func removeState(stateDir string) error {
	if err := os.Remove(statePath(stateDir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove cluster state: %w", err)
	}
	return nil
}
