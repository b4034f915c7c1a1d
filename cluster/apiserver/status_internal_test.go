package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/storage"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A read etcd left unanswered is a 504 with a Retry-After; a write is a
// 504 without one, never a 409: the client must not conclude that nothing
// was written, and client-go must not send it again on its own (a create
// that applied would then be told 409).
func TestUnavailableStorageIs504(t *testing.T) {
	for _, tc := range []struct {
		err        error
		retryAfter string
	}{
		{storage.ErrUnavailable, "1"},
		{storage.ErrOutcomeUnknown, ""},
	} {
		err := storageError(fmt.Errorf("op x: %w", tc.err), schema.GroupResource{Resource: "configmaps"}, "x")
		rec := httptest.NewRecorder()
		writeError(rec, err)
		if rec.Code != http.StatusGatewayTimeout {
			t.Fatalf("%v: code %d, want 504", tc.err, rec.Code)
		}
		if got := rec.Header().Get("Retry-After"); got != tc.retryAfter {
			t.Fatalf("%v: Retry-After %q, want %q", tc.err, got, tc.retryAfter)
		}
	}
}

// So is a Service create etcd did not answer, cluster IP and all: the IP
// is written in the Service's own transaction, so the create is one write
// whose outcome is unknown (504, no Retry-After), never a 500 that no
// client retries (the load generator sends its Services again on a 504
// and adopts the one that did land).
func TestUnansweredServiceCreateIs504(t *testing.T) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:1"}, DialTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	s := &Server{store: storage.NewStore(cli, nil)}
	s.store.SetRetry(storage.Retry{Attempt: 100 * time.Millisecond, Budget: 300 * time.Millisecond})
	for _, ip := range []string{"", "10.96.0.10"} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.ServiceSpec{ClusterIP: ip}}
		_, err := s.createService(context.Background(), "/registry/services/specs/default/web", svc, func() ([]byte, error) { return []byte("svc"), nil })
		rec := httptest.NewRecorder()
		writeError(rec, storageError(err, servicesGR, svc.Name))
		if rec.Code != http.StatusGatewayTimeout || rec.Header().Get("Retry-After") != "" {
			t.Fatalf("clusterIP %q: code %d, Retry-After %q (%v), want 504 and none", ip, rec.Code, rec.Header().Get("Retry-After"), err)
		}
	}
}
