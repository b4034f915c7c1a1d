package replicationcontroller

import (
	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/controller/replicaset"
)

// Name is the controller's name in the controller-manager's registry.
const Name = "replicationcontroller"

// New builds the controller on the context's informers: the ReplicaSet
// controller over ReplicationControllers.
func New(c *controller.Context) controller.Controller {
	return replicaset.NewFor(c, Name, owners{inf: c.Informers.Core().V1().ReplicationControllers().Informer(), client: c.Client})
}
