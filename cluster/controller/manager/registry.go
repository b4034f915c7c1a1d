package manager

import (
	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/controller/deployment"
	"github.com/kstep-dev/kstep/cluster/controller/nodelifecycle"
	"github.com/kstep-dev/kstep/cluster/controller/replicaset"
)

// registry is every controller the manager can run, by name.
var registry = map[string]func(*controller.Context) controller.Controller{
	"deployment":    deployment.New,
	"replicaset":    replicaset.New,
	"nodelifecycle": nodelifecycle.New,
}
