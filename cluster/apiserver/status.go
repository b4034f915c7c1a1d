package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/kstep-dev/kstep/cluster/storage"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Every failure reaches the client as a metav1.Status with the right code,
// reason and details. Handlers return errors; writeError turns them into
// Statuses. Anything that is not already an API status is a 500.

func statusOf(err error) *metav1.Status {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		s := se.Status()
		return &s
	}
	return &apierrors.NewInternalError(err).ErrStatus
}

func writeStatus(w http.ResponseWriter, s *metav1.Status) {
	s.Kind, s.APIVersion = "Status", "v1"
	if s.Status == "" {
		s.Status = metav1.StatusFailure
	}
	w.Header().Set("Content-Type", "application/json")
	if s.Code == http.StatusTooManyRequests && s.Details != nil && s.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(s.Details.RetryAfterSeconds))
	}
	w.WriteHeader(int(s.Code))
	_ = json.NewEncoder(w).Encode(s)
}

func writeError(w http.ResponseWriter, err error) { writeStatus(w, statusOf(err)) }

// storageError maps a storage error on one object to its API status.
func storageError(err error, gr schema.GroupResource, name string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrNotFound):
		return apierrors.NewNotFound(gr, name)
	case errors.Is(err, storage.ErrExists):
		return apierrors.NewAlreadyExists(gr, name)
	case errors.Is(err, storage.ErrConflict):
		return apierrors.NewConflict(gr, name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	case errors.Is(err, storage.ErrCompacted):
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %v", err))
	case errors.Is(err, storage.ErrTooLarge):
		return apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %v", err), 1)
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return err
	}
	return apierrors.NewInternalError(err)
}

func badRequest(format string, a ...any) error {
	return apierrors.NewBadRequest(fmt.Sprintf(format, a...))
}

func unsupportedMediaType(ct string) error {
	return apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "", schema.GroupResource{}, "", fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (got %q)", ct), 0, false)
}

func tooLarge(limit int64) error {
	return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
}
