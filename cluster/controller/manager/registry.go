package manager

import (
	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/controller/daemonset"
	"github.com/kstep-dev/kstep/cluster/controller/deployment"
	"github.com/kstep-dev/kstep/cluster/controller/disruption"
	"github.com/kstep-dev/kstep/cluster/controller/endpoints"
	"github.com/kstep-dev/kstep/cluster/controller/endpointslice"
	"github.com/kstep-dev/kstep/cluster/controller/garbagecollector"
	"github.com/kstep-dev/kstep/cluster/controller/job"
	"github.com/kstep-dev/kstep/cluster/controller/namespace"
	"github.com/kstep-dev/kstep/cluster/controller/nodelifecycle"
	"github.com/kstep-dev/kstep/cluster/controller/replicaset"
	"github.com/kstep-dev/kstep/cluster/controller/replicationcontroller"
	"github.com/kstep-dev/kstep/cluster/controller/resourcequota"
	"github.com/kstep-dev/kstep/cluster/controller/rootcacertpublisher"
	"github.com/kstep-dev/kstep/cluster/controller/serviceaccount"
	"github.com/kstep-dev/kstep/cluster/controller/statefulset"
)

// registry is every controller the manager can run, by name.
var registry = map[string]func(*controller.Context) controller.Controller{
	"daemonset":              daemonset.New,
	"deployment":             deployment.New,
	"disruption":             disruption.New,
	"endpoints":              endpoints.New,
	"endpointslice":          endpointslice.New,
	"endpointslicemirroring": endpointslice.NewMirroring,
	"garbagecollector":       garbagecollector.New,
	"job":                    job.New,
	"namespace":              namespace.New,
	"serviceaccount":         serviceaccount.New,
	"statefulset":            statefulset.New,
	"replicaset":             replicaset.New,
	"replicationcontroller":  replicationcontroller.New,
	"nodelifecycle":          nodelifecycle.New,
	"resourcequota":          resourcequota.New,
	"rootcacertpublisher":    rootcacertpublisher.New,
}
