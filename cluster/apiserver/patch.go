package apiserver

import (
	"encoding/json"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	jsonPatchType      = "application/json-patch+json"
	mergePatchType     = "application/merge-patch+json"
	strategicPatchType = "application/strategic-merge-patch+json"
	applyPatchType     = "application/apply-patch+yaml"
)

// applyPatch applies a patch document of type pt to the JSON of an object;
// dataStruct is the Go type strategic merge reads its patch strategies from.
func applyPatch(pt string, original, patch []byte, dataStruct runtime.Object) ([]byte, error) {
	var out []byte
	var err error
	switch pt {
	case jsonPatchType:
		p, derr := jsonpatch.DecodePatch(patch)
		if derr != nil {
			return nil, badRequest("the JSON patch is malformed: %v", derr)
		}
		out, err = p.Apply(original)
	case mergePatchType:
		if !json.Valid(patch) {
			return nil, badRequest("the merge patch is not valid JSON")
		}
		out, err = jsonpatch.MergePatch(original, patch)
	case strategicPatchType:
		if !json.Valid(patch) {
			return nil, badRequest("the strategic merge patch is not valid JSON")
		}
		out, err = strategicpatch.StrategicMergePatch(original, patch, dataStruct)
	}
	if err != nil {
		return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), string(patch), err.Error())})
	}
	return out, nil
}

func (q *request) patch() error {
	data, pt, err := q.body(jsonPatchType, mergePatchType, strategicPatchType, applyPatchType)
	if err != nil {
		return err
	}
	if pt == applyPatchType {
		return apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", q.gr(), q.ri.Name,
			"server-side apply is not supported by kstep; use client-side kubectl apply", 0, false)
	}
	if q.ri.Subresource == "scale" {
		return q.writeScale(func(cur *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
			orig, err := json.Marshal(cur)
			if err != nil {
				return nil, err
			}
			patched, err := applyPatch(pt, orig, data, &autoscalingv1.Scale{})
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
		patched, err := applyPatch(pt, orig, data, q.res.newObj())
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
