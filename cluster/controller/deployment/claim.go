package deployment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// Ownership. A Deployment controls the ReplicaSets that carry its
// controller reference and match its selector; it adopts orphans that
// match and releases ReplicaSets of its own that no longer do. Both are
// strategic-merge patches of metadata.ownerReferences that also carry the
// ReplicaSet's UID, so a ReplicaSet deleted and recreated under the same
// name in between is not touched (upstream's ControllerRefManager).

// claimReplicaSets returns the ReplicaSets d controls after adopting and
// releasing. rsList is every ReplicaSet of d's namespace.
func (dc *Controller) claimReplicaSets(ctx context.Context, d *appsv1.Deployment, sel labels.Selector, rsList []*appsv1.ReplicaSet) ([]*appsv1.ReplicaSet, error) {
	var claimed []*appsv1.ReplicaSet
	var errs []error
	checked := false
	for _, rs := range rsList {
		matches := sel.Matches(labels.Set(rs.Labels))
		ref := metav1.GetControllerOf(rs)
		switch {
		case ref != nil && ref.UID == d.UID:
			if matches {
				claimed = append(claimed, rs)
				continue
			}
			if d.DeletionTimestamp != nil {
				continue // going away: leave its children to the collector
			}
			if err := dc.release(ctx, d, rs); err != nil {
				errs = append(errs, err)
			}
		case ref == nil && matches && d.DeletionTimestamp == nil && rs.DeletionTimestamp == nil:
			// Adopt only for the Deployment we think we are: a live read,
			// once per sync, catches one deleted (or recreated) since the
			// cache saw it.
			if !checked {
				fresh, err := dc.client.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
				if err != nil {
					return claimed, errorf(err, "recheck deployment before adoption")
				}
				if fresh.UID != d.UID || fresh.DeletionTimestamp != nil {
					return claimed, fmt.Errorf("deployment %s/%s changed or is being deleted: not adopting", d.Namespace, d.Name)
				}
				checked = true
			}
			adopted, err := dc.adopt(ctx, d, rs)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				errs = append(errs, err)
			default:
				claimed = append(claimed, adopted)
			}
		}
	}
	return claimed, errors.Join(errs...)
}

type ownerPatch struct {
	Metadata struct {
		OwnerReferences []any     `json:"ownerReferences"`
		UID             types.UID `json:"uid"`
	} `json:"metadata"`
}

func (dc *Controller) adopt(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	var p ownerPatch
	p.Metadata.OwnerReferences = []any{metav1.NewControllerRef(d, deploymentKind)}
	p.Metadata.UID = rs.UID
	body, _ := json.Marshal(p)
	out, err := dc.client.AppsV1().ReplicaSets(rs.Namespace).Patch(ctx, rs.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{})
	if err != nil {
		return nil, errorf(err, "adopt replicaset %s", rs.Name)
	}
	dc.log.Info("adopted replicaset", "deployment", d.Namespace+"/"+d.Name, "replicaset", rs.Name)
	return out, nil
}

func (dc *Controller) release(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet) error {
	var p ownerPatch
	p.Metadata.OwnerReferences = []any{map[string]any{"$patch": "delete", "uid": d.UID}}
	p.Metadata.UID = rs.UID
	body, _ := json.Marshal(p)
	_, err := dc.client.AppsV1().ReplicaSets(rs.Namespace).Patch(ctx, rs.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil // gone, or no longer ours
	}
	if err != nil {
		return errorf(err, "release replicaset %s", rs.Name)
	}
	dc.log.Info("released replicaset", "deployment", d.Namespace+"/"+d.Name, "replicaset", rs.Name)
	return nil
}

// podsByReplicaSet groups the pods d's selector matches by the ReplicaSet
// (of rsList) that controls them; terminating and finished pods included,
// since Recreate must see them.
func (dc *Controller) podsByReplicaSet(d *appsv1.Deployment, sel labels.Selector, rsList []*appsv1.ReplicaSet) (map[types.UID][]*corev1.Pod, error) {
	pods, err := dc.podLister.Pods(d.Namespace).List(sel)
	if err != nil {
		return nil, err
	}
	out := make(map[types.UID][]*corev1.Pod, len(rsList))
	for _, rs := range rsList {
		out[rs.UID] = nil
	}
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			continue
		}
		if list, ok := out[ref.UID]; ok {
			out[ref.UID] = append(list, p)
		}
	}
	return out, nil
}
