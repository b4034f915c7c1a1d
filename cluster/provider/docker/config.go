package docker

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider/process"
)

// Config configures a docker-provider cluster. Its cluster-shape fields are
// process.Config's, with the same meaning. Start from DefaultConfig.
type Config struct {
	// StateDir holds docker.json, the kubeconfigs and the actors' logs.
	StateDir string
	// BinDir holds kstep and, for real nodes, containerd,
	// containerd-shim-runc-v2, runc and the CNI plugins (make build's
	// bin/); "" is the directory of the running kstep.
	BinDir string

	EtcdMembers        int
	APIServers         int
	ControllerManagers int
	Schedulers         int
	// Nodes is how many real nodes run, each a container of its own.
	Nodes       int
	HollowNodes int
	// TraceDir, when set, gets each actor's step events as <actor>.jsonl
	// (bind-mounted into the containers at the same path).
	TraceDir string

	NodeArgs              []string
	HollowArgs            []string
	ControllerManagerArgs []string
	SchedulerArgs         []string
	APIServerArgs         []string
	Etcd                  process.EtcdTuning

	// Detach marks the cluster as outliving the process that started it:
	// the next Up's sweep leaves it alone while its state directory exists.
	// Otherwise a cluster whose owner has died is swept.
	Detach bool
	// ReadyTimeout bounds the wait for one actor to become ready; 0 means
	// one minute.
	ReadyTimeout time.Duration
	// StopGrace is how long Down waits after SIGTERM before SIGKILL; 0
	// means ten seconds.
	StopGrace time.Duration
	// Log gets one line per thing worth knowing (an image built, the node
	// fallback); nil discards them.
	Log io.Writer
}

// DefaultConfig is process.DefaultConfig's shape: 3 etcd members, 2
// apiservers, 2 controller-managers, 2 schedulers. StateDir must be set.
func DefaultConfig() Config {
	p := process.DefaultConfig()
	return Config{
		EtcdMembers:        p.EtcdMembers,
		APIServers:         p.APIServers,
		ControllerManagers: p.ControllerManagers,
		Schedulers:         p.Schedulers,
		ReadyTimeout:       p.ReadyTimeout,
		StopGrace:          p.StopGrace,
	}
}

// shape is c as a process.Config: the actors' argv and the topology rules
// are the process provider's.
func (c Config) shape() process.Config {
	return process.Config{
		StateDir:              c.StateDir,
		EtcdMembers:           c.EtcdMembers,
		APIServers:            c.APIServers,
		ControllerManagers:    c.ControllerManagers,
		Schedulers:            c.Schedulers,
		Nodes:                 c.Nodes,
		NodeArgs:              c.NodeArgs,
		HollowNodes:           c.HollowNodes,
		HollowArgs:            c.HollowArgs,
		TraceDir:              c.TraceDir,
		ControllerManagerArgs: c.ControllerManagerArgs,
		SchedulerArgs:         c.SchedulerArgs,
		APIServerArgs:         c.APIServerArgs,
		Etcd:                  c.Etcd,
	}
}

// Validate reports whether c describes a cluster Up can start.
func (c Config) Validate() error {
	if c.StateDir == "" {
		return errors.New("state dir is empty")
	}
	return c.shape().ValidateTopology()
}

// ConfigFrom is the docker Config of the cluster c describes (same shape,
// state and trace directories, extra flags, timeouts); the actors run the
// images built from the directory of c.Binary ("" for the running kstep).
func ConfigFrom(c process.Config) Config {
	d := Config{
		StateDir:              c.StateDir,
		EtcdMembers:           c.EtcdMembers,
		APIServers:            c.APIServers,
		ControllerManagers:    c.ControllerManagers,
		Schedulers:            c.Schedulers,
		Nodes:                 c.Nodes,
		HollowNodes:           c.HollowNodes,
		TraceDir:              c.TraceDir,
		NodeArgs:              c.NodeArgs,
		HollowArgs:            c.HollowArgs,
		ControllerManagerArgs: c.ControllerManagerArgs,
		SchedulerArgs:         c.SchedulerArgs,
		APIServerArgs:         c.APIServerArgs,
		Etcd:                  c.Etcd,
		Detach:                c.Detach,
		ReadyTimeout:          c.ReadyTimeout,
		StopGrace:             c.StopGrace,
	}
	if c.Binary != "" {
		d.BinDir = filepath.Dir(c.Binary)
	}
	return d
}

// CanRunRealNodes reports why real node containers cannot run with the
// programs in binDir, or nil when they can: the node image needs them
// (make build).
func CanRunRealNodes(binDir string) error {
	for _, b := range nodeImage.programs {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			return fmt.Errorf("real node containers need %s in %s (run make build): %w", b, binDir, err)
		}
	}
	return nil
}
