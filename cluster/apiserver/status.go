package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/kstep-dev/kstep/cluster/storage"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
	boundStatus(s)
	s.Kind, s.APIVersion = "Status", "v1"
	if s.Status == "" {
		s.Status = metav1.StatusFailure
	}
	w.Header().Set("Content-Type", "application/json")
	if (s.Code == http.StatusTooManyRequests || s.Code >= 500) && s.Details != nil && s.Details.RetryAfterSeconds > 0 {
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
	case errors.Is(err, storage.ErrOutcomeUnknown):
		// No Retry-After: client-go would send the write again on its own,
		// and one that applied would then be told 409 (upstream's timed-out
		// write has none either). The client decides, having read.
		return apierrors.NewTimeoutError(fmt.Sprintf("etcd did not answer in time (%v); the write may have been applied: read before writing again", err), 0)
	case errors.Is(err, storage.ErrUnavailable):
		// Never a conflict: after an unanswered attempt nobody knows
		// whether the write applied, and 409 would say it did not.
		return apierrors.NewTimeoutError(fmt.Sprintf("etcd did not answer in time (%v); try again", err), 1)
	case errors.Is(err, storage.ErrNoSpace):
		// 507, as WebDAV's Insufficient Storage; upstream answers 500 with
		// the same etcd message.
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInsufficientStorage,
			Reason: metav1.StatusReasonInternalError, Details: &metav1.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name},
			Message: storage.ErrNoSpace.Error() + ": etcd's space quota is full; writes fail until etcd is compacted, defragmented and its NOSPACE alarm disarmed"}}
	case errors.Is(err, storage.ErrTooLarge):
		return apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %v", err), 1)
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return err
	}
	if grpcstatus.Code(err) == codes.ResourceExhausted {
		// etcd's client refused to send a value larger than its
		// request limit (an object the request's limit let in, grown
		// past etcd's by its managed fields): the client's 413, not
		// the server's 500. Nothing was written.
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("the object as stored is larger than etcd accepts: %v", err))
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

// An error quotes what a client sent (a name, a label value, a selector, a
// patch) only as an excerpt: a run of more than maxQuotedRun bytes without a
// space keeps its first half and says how much it left out, a message keeps
// its first maxMessageBytes, a Status carries at most maxCauses causes and a
// response at most maxCauses warnings. A 1 MiB label value costs its sender
// a 1 MiB request and the server an answer of a few KiB. Names (at most 253
// bytes) and label keys (317) are quoted whole.
const (
	maxQuotedRun    = 512
	maxMessageBytes = 4096
	maxCauses       = 64
)

// newInvalid is apierrors.NewInvalid on at most maxCauses errors (the last
// saying how many more there were), their
// string values cut to excerpts first: NewInvalid joins its errors into
// one message with string concatenation, quadratic in their number (10,000
// invalid label keys, a 119 KB body, took 7.6 s), and quotes every value.
func newInvalid(gk schema.GroupKind, name string, errs field.ErrorList) error {
	if n, keep := len(errs), maxCauses-1; n > maxCauses {
		more := &field.Error{Type: field.ErrorTypeTooMany, Field: errs[keep].Field, BadValue: field.OmitValueType{},
			Detail: fmt.Sprintf("and %d more errors, not listed", n-keep)}
		errs = append(errs[:keep:keep], more)
	}
	for _, e := range errs {
		if v, ok := e.BadValue.(string); ok && len(v) > maxQuotedRun {
			e.BadValue = excerpt(v, maxQuotedRun)
		}
	}
	return apierrors.NewInvalid(gk, name, errs)
}

// boundStatus cuts what s quotes of the request down to excerpts.
func boundStatus(s *metav1.Status) {
	s.Message = boundMessage(s.Message)
	if d := s.Details; d != nil {
		d.Name = excerpt(d.Name, maxQuotedRun)
		if n := len(d.Causes); n > maxCauses {
			d.Causes = append(d.Causes[:maxCauses:maxCauses], metav1.StatusCause{Message: fmt.Sprintf("and %d more causes", n-maxCauses)})
		}
		for i := range d.Causes {
			d.Causes[i].Message = boundMessage(d.Causes[i].Message)
			d.Causes[i].Field = excerpt(d.Causes[i].Field, maxQuotedRun)
		}
	}
}

// boundMessage shortens every long run of m, and m past maxMessageBytes.
func boundMessage(m string) string {
	if len(m) <= maxQuotedRun {
		return m
	}
	var b strings.Builder
	for rest := m; rest != ""; {
		if b.Len() >= maxMessageBytes {
			fmt.Fprintf(&b, "…[%d more bytes]", len(rest))
			break
		}
		i := strings.IndexAny(rest, " \n\t") + 1 // a run keeps its separator
		if i == 0 {
			i = len(rest)
		}
		b.WriteString(excerpt(rest[:i], maxQuotedRun))
		rest = rest[i:]
	}
	return b.String()
}

// excerpt returns s when it has at most max bytes, else its first max/2
// bytes (whole runes) and how many it left out.
func excerpt(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max / 2
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…[%d more bytes]", s[:cut], len(s)-cut)
}
