package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/kstep-dev/kstep/cluster/apiserver/patch"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

const (
	jsonPatchType      = "application/json-patch+json"
	mergePatchType     = "application/merge-patch+json"
	strategicPatchType = "application/strategic-merge-patch+json"
	applyPatchType     = "application/apply-patch+yaml"
)

// applyPatch applies a patch document of type pt to the JSON of an object;
// dataStruct is the Go type strategic merge reads its patch strategies from.
// Its work is bounded by the patch and the object (package patch): the
// document never grows past maxBytes, the request body limit, a patch nests
// at most patch.MaxDepth levels, and a JSON patch stops between operations
// when ctx ends.
func applyPatch(ctx context.Context, pt string, original, patchDoc []byte, dataStruct runtime.Object, maxBytes int64) ([]byte, error) {
	var out []byte
	var err error
	switch pt {
	case jsonPatchType:
		return patch.JSON(ctx, original, patchDoc, maxBytes)
	case mergePatchType:
		out, err = patch.Merge(original, patchDoc)
	case strategicPatchType:
		if err := patch.CheckDepth(patchDoc); err != nil {
			return nil, err
		}
		if !json.Valid(patchDoc) {
			return nil, badRequest("the strategic merge patch is not valid JSON")
		}
		if out, err = strategicpatch.StrategicMergePatch(original, patchDoc, dataStruct); err != nil {
			return nil, patch.Invalid(err.Error())
		}
	default:
		return nil, unsupportedMediaType(pt)
	}
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > maxBytes {
		return nil, patch.Invalid(fmt.Sprintf("the patched object is %d bytes, over the %d-byte request size limit", len(out), maxBytes))
	}
	return out, nil
}

func (q *request) patch() error {
	data, pt, err := q.body(jsonPatchType, mergePatchType, strategicPatchType, applyPatchType)
	if err != nil {
		return err
	}
	if pt == applyPatchType {
		if err := q.checkFieldManagerParams(writeApply); err != nil {
			return err
		}
		return q.apply(data)
	}
	if err := q.checkFieldManagerParams(writePatch); err != nil {
		return err
	}
	if q.ri.Subresource == "scale" {
		return q.writeScale(func(cur *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
			orig, err := json.Marshal(cur)
			if err != nil {
				return nil, err
			}
			patched, err := applyPatch(q.ctx(), pt, orig, data, &autoscalingv1.Scale{}, q.s.opts.MaxRequestBytes)
			if err != nil {
				return nil, err
			}
			out := &autoscalingv1.Scale{}
			if err := q.decodeInto(patched, out, scaleGVK); err != nil {
				return nil, err
			}
			return out, nil
		})
	}
	obj, err := q.mutate(q.ri.Name, q.ri.Subresource, func(cur runtime.Object) (runtime.Object, error) {
		orig, err := json.Marshal(cur)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		patched, err := applyPatch(q.ctx(), pt, orig, data, q.res.newObj(), q.s.opts.MaxRequestBytes)
		if err != nil {
			return nil, err
		}
		obj := q.res.newObj()
		if err := q.decodeInto(patched, obj, q.res.gvk()); err != nil {
			return nil, err
		}
		if err := q.checkNames(objectMeta(obj)); err != nil {
			return nil, err
		}
		if err := q.checkRV(objectMeta(obj).ResourceVersion, cur, q.ri.Name); err != nil {
			return nil, err
		}
		return obj, nil // prepareForUpdate keeps what this subresource may not change
	})
	if err != nil {
		return err
	}
	q.s.writeObject(q.w, q.r, http.StatusOK, q.res, obj)
	return nil
}

// apply is a server-side apply (application/apply-patch+yaml): the patch
// merged into the live object by field ownership (managedfields.go), or,
// when the object does not exist, the object it creates. An apply that
// loses the race to create it (another writer created it after this one
// found it absent) applies to what the winner stored, as upstream's
// GuaranteedUpdate does: not a 409 AlreadyExists.
func (q *request) apply(data []byte) error {
	if q.ri.Subresource == "scale" {
		return apierrors.NewMethodNotSupported(q.gr(), "apply to scale")
	}
	q.applying = true
	for attempt := 0; ; attempt++ {
		obj, err := q.mutate(q.ri.Name, q.ri.Subresource, func(cur runtime.Object) (runtime.Object, error) {
			out, err := q.serverSideApply(q.res, cur, data)
			if err != nil {
				return nil, err
			}
			if err := q.checkNames(objectMeta(out)); err != nil {
				return nil, err
			}
			return out, nil
		})
		if apierrors.IsNotFound(err) && q.ri.Subresource == "" {
			created, aerr := q.serverSideApply(q.res, nil, data)
			if aerr != nil {
				return aerr
			}
			if err := q.checkNames(objectMeta(created)); err != nil {
				return err
			}
			err = q.createObject(created, false)
			if apierrors.IsAlreadyExists(err) && attempt < maxApplyCreateRaces {
				continue // created meanwhile: apply to it
			}
			return err
		}
		if err != nil {
			return err
		}
		q.s.writeObject(q.w, q.r, http.StatusOK, q.res, obj)
		return nil
	}
}

// maxApplyCreateRaces bounds how often one apply finds its object absent
// and then loses the race to create it (it was deleted again meanwhile
// each time).
const maxApplyCreateRaces = 5
