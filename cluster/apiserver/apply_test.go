package apiserver_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kstep-dev/kstep/internal/testenv"
)

// Managed fields on every write, and server-side apply with its refusals:
// a create records an Update entry for the client's manager, an apply
// creates when absent (201) and names the other manager in a 409 conflict,
// force takes the field over, and the options upstream refuses are refused.
func TestServerSideApply(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cfg := rest.CopyConfig(api.Config)
	cfg.UserAgent = "creator/1.0 (test)"
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := ctxT(t)
	cms := cs.CoreV1().ConfigMaps("default")

	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mf := cm.ManagedFields; len(mf) != 1 || mf[0].Manager != "creator" || mf[0].Operation != metav1.ManagedFieldsOperationUpdate ||
		!strings.Contains(string(mf[0].FieldsV1.Raw), `"f:a"`) {
		t.Fatalf("managed fields after create: %+v", mf)
	}

	apply := func(name, body, manager string, force bool) (*corev1.ConfigMap, error) {
		return cms.Patch(ctx, name, types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: manager, Force: &force})
	}
	doc := func(name, kv string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{` + kv + `}}`
	}
	_, err = apply("c", doc("c", `"a":"2"`), "applier", false)
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `Apply failed with 1 conflict: conflict with "creator" using v1: .data.a`) {
		t.Fatalf("apply over another manager's field: %v, want 409 naming creator and .data.a", err)
	}
	got, err := apply("c", doc("c", `"a":"2","b":"x"`), "applier", true)
	if err != nil || got.Data["a"] != "2" || got.Data["b"] != "x" {
		t.Fatalf("forced apply: %v %v", err, got)
	}
	for _, m := range got.ManagedFields {
		if m.Manager == "creator" && strings.Contains(string(m.FieldsV1.Raw), `"f:a"`) {
			t.Errorf("creator still owns .data.a after the forced apply: %s", m.FieldsV1.Raw)
		}
	}

	// Absent: the apply creates it.
	res := cs.CoreV1().RESTClient().Patch(types.ApplyPatchType).Namespace("default").Resource("configmaps").Name("new").
		Param("fieldManager", "applier").Body([]byte(doc("new", `"k":"v"`))).Do(ctx)
	var code int
	res.StatusCode(&code)
	if res.Error() != nil || code != 201 {
		t.Errorf("apply of an absent object: %d %v, want 201", code, res.Error())
	}

	for _, tc := range []struct {
		name string
		req  *rest.Request
		want string
	}{
		{"apply without a manager", cs.CoreV1().RESTClient().Patch(types.ApplyPatchType).Namespace("default").Resource("configmaps").Name("c").
			Body([]byte(doc("c", `"a":"3"`))), "fieldManager: Required value: is required for apply patch"},
		{"force on a merge patch", cs.CoreV1().RESTClient().Patch(types.MergePatchType).Namespace("default").Resource("configmaps").Name("c").
			Param("force", "true").Body([]byte(`{"data":{"a":"3"}}`)), "force: Forbidden: may not be specified for non-apply patch"},
		{"another kind", cs.CoreV1().RESTClient().Patch(types.ApplyPatchType).Namespace("default").Resource("configmaps").Name("c").
			Param("fieldManager", "applier").Body([]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c"}}`)), "invalid object type"},
		{"a field the schema lacks", cs.CoreV1().RESTClient().Patch(types.ApplyPatchType).Namespace("default").Resource("configmaps").Name("c").
			Param("fieldManager", "applier").Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"bogus":1}`)), "bogus"},
	} {
		err := tc.req.Do(ctx).Error()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if c, _ := cms.Get(ctx, "c", metav1.GetOptions{}); c.Data["a"] != "2" {
		t.Errorf("a refused apply changed the object: %v", c.Data)
	}
}

// Appliers that race to create the same object all succeed, as upstream's
// (its GuaranteedUpdate finds the object the winner created and applies
// to it): one 201, the others 200, every applier's field in the object.
// The losers were a 409 AlreadyExists (#56's 2,993 field managers, four
// at a time).
func TestServerSideApplyCreateRace(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	ctx := ctxT(t)
	const appliers = 8
	for round := range 10 {
		name := fmt.Sprintf("race-%d", round)
		start := make(chan struct{})
		codes := make(chan int, appliers)
		errs := make(chan error, appliers)
		var wg sync.WaitGroup
		for i := range appliers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k%d":"v"}}`, name, i)
				res := cs.CoreV1().RESTClient().Patch(types.ApplyPatchType).Namespace("default").Resource("configmaps").Name(name).
					Param("fieldManager", fmt.Sprintf("m%d", i)).Body([]byte(body)).Do(ctx)
				var code int
				res.StatusCode(&code)
				codes <- code
				errs <- res.Error()
			}()
		}
		close(start)
		wg.Wait()
		close(codes)
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: an applier racing to create %s: %v", round, name, err)
			}
		}
		created := 0
		for c := range codes {
			if c == 201 {
				created++
			}
		}
		cm, err := cs.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if created != 1 || len(cm.Data) != appliers || len(cm.ManagedFields) != appliers {
			t.Fatalf("round %d: %d creates (want 1), %d keys and %d managers (want %d each)", round, created, len(cm.Data), len(cm.ManagedFields), appliers)
		}
	}
}
