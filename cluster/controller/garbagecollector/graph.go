package garbagecollector

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// graph is the ownership graph: nodes are the objects in the followed
// kinds' caches, edges their ownerReferences, and the reverse edges (owner
// UID → dependents) are each cache's ownerIndex. It holds no state of its
// own, so it can never disagree with the informers; it is only as fresh as
// they are, which is why an owner's absence is always verified live.
type graph struct {
	kinds []*kind
	byGK  map[schema.GroupKind]*kind
}

func newGraph(kinds []*kind) *graph {
	g := &graph{kinds: kinds, byGK: make(map[schema.GroupKind]*kind, len(kinds))}
	for _, k := range kinds {
		g.byGK[k.gk] = k
	}
	return g
}

// objectKey names one object of one kind: the workqueue's item. It names,
// not identifies: a sync acts on whatever object holds the name now.
type objectKey struct {
	gk        schema.GroupKind
	namespace string
	name      string
}

func (k objectKey) String() string {
	if k.namespace == "" {
		return k.gk.String() + " " + k.name
	}
	return k.gk.String() + " " + k.namespace + "/" + k.name
}

// dependent is one edge seen from the owner's side: the dependent object,
// its kind and its reference to the owner.
type dependent struct {
	kind *kind
	obj  metav1.Object
	ref  metav1.OwnerReference
}

func (d dependent) key() objectKey {
	return objectKey{gk: d.kind.gk, namespace: d.obj.GetNamespace(), name: d.obj.GetName()}
}

// blocking reports whether the dependent holds its owner's foreground
// deletion: its reference has blockOwnerDeletion, and it is not the owner
// itself. An object's reference to itself never blocks: it would wait for
// its own deletion, which that wait alone prevents.
func (d dependent) blocking() bool {
	return blocks(d.ref) && d.obj.GetUID() != d.ref.UID
}

// dependents returns every cached object that references owner. An error
// means a cache without its owner index: the answer would be "none", which
// must never be taken for true (an owner would lose its finalizer with its
// dependents still there).
func (g *graph) dependents(owner types.UID) ([]dependent, error) {
	var out []dependent
	for _, k := range g.kinds {
		objs, err := k.indexer.ByIndex(ownerIndex, string(owner))
		if err != nil {
			return nil, fmt.Errorf("%s cache: %w", k, err)
		}
		for _, o := range objs {
			m, err := meta.Accessor(o)
			if err != nil {
				continue
			}
			for _, r := range m.GetOwnerReferences() {
				if r.UID == owner {
					out = append(out, dependent{kind: k, obj: m, ref: r})
					break
				}
			}
		}
	}
	return out, nil
}

// dependentsState sums up the cached dependents of owner for judge:
// whether any blocks its deletion, and whether one of those is itself
// waiting for its dependents in the foreground.
func (g *graph) dependentsState(owner types.UID) (dependentsState, error) {
	deps, err := g.dependents(owner)
	if err != nil {
		return dependentsState{}, err
	}
	var s dependentsState
	for _, d := range deps {
		if d.blocking() {
			s.blocking = true
			s.waiting = s.waiting || stateOf(d.obj) == ownerWaiting
		}
	}
	return s, nil
}

// ownerKind resolves the kind a reference points at. ok is false for kinds
// the collector does not follow: such owners can never be verified gone.
func (g *graph) ownerKind(ref metav1.OwnerReference) (*kind, bool) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, false
	}
	k, ok := g.byGK[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	return k, ok
}

// ownerKey is the queue key of the owner a reference from an object in
// namespace ns points at.
func (g *graph) ownerKey(ns string, ref metav1.OwnerReference) (objectKey, bool) {
	k, ok := g.ownerKind(ref)
	if !ok {
		return objectKey{}, false
	}
	return objectKey{gk: k.gk, namespace: k.scope(ns), name: ref.Name}, true
}
