package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kstep-dev/kstep/cluster/apiclient"
	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/loadgen"
	"github.com/kstep-dev/kstep/preflight"
)

// Needs is every access a scenario's run makes on a cluster kstep does not
// run, for the preflight (kstep chaos asks before anything starts and
// exits 2 naming what the credentials may not do): the load's (preflight.Needs,
// its cleanup's included), the probe's, the linearizability workload's and
// the beat's ConfigMaps in their namespace, the observers' cluster-wide
// lists and watches, and each fault's own requests.
func Needs(sc *Scenario) []preflight.Access {
	out := preflight.Needs(&sc.Load)
	for _, v := range []string{"create", "get", "list", "watch", "update"} {
		out = append(out, preflight.Access{Verb: v, Resource: "configmaps", Namespace: probeNamespace})
	}
	for _, r := range []preflight.Access{{Resource: "pods"}, {Resource: "nodes"}, {Group: "apps", Resource: "replicasets"}} {
		for _, v := range []string{"list", "watch"} {
			r.Verb = v
			out = append(out, r)
		}
	}
	out = append(out, preflight.Access{Verb: "list", Resource: "events"},
		preflight.Access{Verb: "get", Group: "coordination.k8s.io", Resource: "leases", Namespace: metav1.NamespaceSystem})
	kind := "replicasets"
	if sc.Load.Object.Kind == loadgen.KindDeployment {
		kind = "deployments"
	}
	seen := map[Action]bool{}
	for _, f := range sc.Faults {
		if seen[f.Action] {
			continue
		}
		seen[f.Action] = true
		switch f.Action {
		case ActionScale:
			for _, ns := range sc.Load.Namespaces {
				out = append(out, preflight.Access{Verb: "patch", Group: "apps", Resource: kind, Subresource: "scale", Namespace: ns})
			}
		case ActionDrain:
			out = append(out, preflight.Access{Verb: "patch", Resource: "nodes"},
				preflight.Access{Verb: "create", Resource: "pods", Subresource: "eviction"})
		case ActionDeleteNode:
			out = append(out, preflight.Access{Verb: "delete", Resource: "nodes"})
		case ActionDeletePod:
			out = append(out, preflight.Access{Verb: "delete", Resource: "pods"})
		}
	}
	return out
}

// ErrNeedsPermission wraps a preflight's *preflight.PermissionError: the
// credentials may not do what the scenario does (kstep chaos exits 2).
var ErrNeedsPermission = errors.New("the credentials may not do what the scenario needs")

// checkPermissions asks, before the run creates anything on an external cluster,
// whether the credentials may do all of Needs(sc).
func checkPermissions(ctx context.Context, p provider.Provider, opts Options, sc *Scenario, logf func(string, ...any)) error {
	cfg, err := apiclient.Config(ctx, p.Kubeconfig(), nil)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	kctx := opts.Context
	if kctx == "" {
		if raw, err := clientcmd.LoadFromFile(opts.Kubeconfig); err == nil {
			kctx = raw.CurrentContext
		}
	}
	needs := Needs(sc)
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = preflight.Check(pctx, cs, opts.Kubeconfig+" (context "+kctx+")", needs)
	var perm *preflight.PermissionError
	if errors.As(err, &perm) {
		return fmt.Errorf("%w: %w", ErrNeedsPermission, err)
	}
	if err != nil {
		return err
	}
	logf("preflight: the credentials may do all the scenario needs (%d SelfSubjectAccessReviews)", len(needs))
	return nil
}
