package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/moby/moby/client"
)

// The labels on every Docker resource kstep creates.
const (
	labelManaged  = "dev.kstep.managed"   // "true"
	labelCluster  = "dev.kstep.cluster"   // the cluster ID
	labelActor    = "dev.kstep.actor"     // the actor, on containers and volumes
	labelStateDir = "dev.kstep.state-dir" // the cluster's state directory
	labelOwner    = "dev.kstep.owner"     // PID of the process that ran Up
	labelDetached = "dev.kstep.detached"  // "true": outlives its owner
	labelImage    = "dev.kstep.image"     // on images: control-plane or node
)

// stale reports whether a resource with these labels belongs to a cluster
// nobody will remove: the cluster being replaced (id), one whose state
// directory is gone, or a foreground one whose owner has died (killed, or
// a test binary that crashed).
func stale(labels map[string]string, id string) bool {
	if labels[labelCluster] == id {
		return true
	}
	if _, err := os.Stat(labels[labelStateDir]); err != nil {
		return true
	}
	if labels[labelDetached] == "true" {
		return false
	}
	owner, err := strconv.Atoi(labels[labelOwner])
	return err != nil || !pidAlive(owner)
}

// sweep removes kstep's stale containers, networks and volumes (see
// stale), saying which clusters it removed.
func sweep(ctx context.Context, cli client.APIClient, id string, logf func(string, ...any)) error {
	found, err := resources(ctx, cli, make(client.Filters).Add("label", labelManaged+"=true"))
	if err != nil {
		return err
	}
	clusters := map[string]bool{}
	for _, r := range found {
		if stale(r.labels, id) {
			clusters[r.labels[labelCluster]] = true
		}
	}
	var errs []error
	for c := range clusters {
		if c != id {
			logf("removing the Docker resources of stale cluster %s", c)
		}
		errs = append(errs, removeCluster(ctx, cli, c))
	}
	return errors.Join(errs...)
}

// resource is a container, network or volume of kstep's.
type resource struct {
	kind   string // "container", "network" or "volume"
	id     string
	labels map[string]string
}

// resources lists the containers (running or not), networks and volumes
// that match f; containers first, so they can be removed before what they
// use.
func resources(ctx context.Context, cli client.APIClient, f client.Filters) ([]resource, error) {
	var out []resource
	cl, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, err
	}
	for _, c := range cl.Items {
		out = append(out, resource{"container", c.ID, c.Labels})
	}
	nl, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return nil, err
	}
	for _, n := range nl.Items {
		out = append(out, resource{"network", n.ID, n.Labels})
	}
	vl, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		return nil, err
	}
	for _, v := range vl.Items {
		out = append(out, resource{"volume", v.Name, v.Labels})
	}
	return out, nil
}

// removeCluster force-removes every container, network and volume labelled
// with cluster id.
func removeCluster(ctx context.Context, cli client.APIClient, id string) error {
	found, err := resources(ctx, cli, make(client.Filters).Add("label", labelCluster+"="+id))
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range found {
		switch r.kind {
		case "container":
			_, err = cli.ContainerRemove(ctx, r.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		case "network":
			_, err = cli.NetworkRemove(ctx, r.id, client.NetworkRemoveOptions{})
		case "volume":
			_, err = cli.VolumeRemove(ctx, r.id, client.VolumeRemoveOptions{Force: true})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove %s %s: %w", r.kind, r.id, err))
		}
	}
	removeCgroups(id)
	return errors.Join(errs...)
}
