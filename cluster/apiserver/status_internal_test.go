package apiserver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kstep-dev/kstep/cluster/storage"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A write etcd left unanswered is a 504 with a Retry-After, never a 409:
// the client must not conclude that nothing was written.
func TestUnavailableStorageIs504WithRetryAfter(t *testing.T) {
	err := storageError(fmt.Errorf("create x: %w", storage.ErrUnavailable), schema.GroupResource{Resource: "configmaps"}, "x")
	rec := httptest.NewRecorder()
	writeError(rec, err)
	if rec.Code != http.StatusGatewayTimeout {
		t.Fatalf("code %d, want 504", rec.Code)
	}
	if got := rec.Header().Get("Retry-After"); got != "1" {
		t.Fatalf("Retry-After %q", got)
	}
}
