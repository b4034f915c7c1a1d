package serviceaccount

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// syncWith runs one sync over caches holding exactly the given objects,
// against a fake apiserver, and returns the creates it sent.
func syncWith(t *testing.T, namespace string, react clienttesting.ReactionFunc, cached ...runtime.Object) ([]string, error) {
	t.Helper()
	cs := fake.NewClientset()
	if react != nil {
		cs.PrependReactor("create", "serviceaccounts", react)
	}
	f := informers.NewSharedInformerFactory(cs, 0)
	nsInf, saInf := f.Core().V1().Namespaces(), f.Core().V1().ServiceAccounts()
	for _, o := range cached {
		var idx cache.Indexer
		switch o.(type) {
		case *corev1.Namespace:
			idx = nsInf.Informer().GetIndexer()
		case *corev1.ServiceAccount:
			idx = saInf.Informer().GetIndexer()
		}
		if err := idx.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	sc := &Controller{client: cs, namespaces: nsInf.Lister(), accounts: saInf.Lister(),
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		log:   slog.New(slog.NewTextHandler(io.Discard, nil)), names: []string{DefaultName}}
	defer sc.queue.ShutDown()
	err := sc.sync(context.Background(), namespace)
	var creates []string
	for _, a := range cs.Actions() {
		if c, ok := a.(clienttesting.CreateActionImpl); ok {
			m := c.Object.(metav1.Object)
			creates = append(creates, m.GetNamespace()+"/"+m.GetName())
		}
	}
	return creates, err
}

func TestSync(t *testing.T) {
	now := metav1.Now()
	active := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	terminating := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", DeletionTimestamp: &now}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	existing := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultName, Namespace: "a"}}
	other := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DefaultName, Namespace: "b"}}
	exists := func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewAlreadyExists(corev1.Resource("serviceaccounts"), DefaultName)
	}
	forbidden := func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("serviceaccounts"), DefaultName, errors.New("namespace a is being terminated"))
	}
	broken := func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInternalError(errors.New("etcd down"))
	}
	for _, tc := range []struct {
		name    string
		cached  []runtime.Object
		react   clienttesting.ReactionFunc
		creates int
		fails   bool
	}{
		{name: "new namespace", cached: []runtime.Object{active, other}, creates: 1},
		{name: "already there", cached: []runtime.Object{active, existing}},
		{name: "terminating namespace", cached: []runtime.Object{terminating}},
		{name: "namespace gone", cached: nil},
		{name: "cache behind a create", cached: []runtime.Object{active}, react: exists, creates: 1},
		{name: "namespace began terminating", cached: []runtime.Object{active}, react: forbidden, creates: 1},
		{name: "apiserver error requeues", cached: []runtime.Object{active}, react: broken, creates: 1, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			creates, err := syncWith(t, "a", tc.react, tc.cached...)
			if len(creates) != tc.creates || (tc.creates > 0 && creates[0] != "a/"+DefaultName) {
				t.Errorf("creates = %v, want %d of a/%s", creates, tc.creates, DefaultName)
			}
			if (err != nil) != tc.fails {
				t.Errorf("err = %v, want failure %v", err, tc.fails)
			}
		})
	}
}

func TestDefaultServiceAccount(t *testing.T) {
	c := testenv.StartControllerCluster(t, "sa", New)
	sas := c.Client.CoreV1().ServiceAccounts
	has := func(ns string) func() (bool, error) {
		return func() (bool, error) {
			_, err := sas(ns).Get(c.Ctx, DefaultName, metav1.GetOptions{})
			return err == nil, err
		}
	}
	for _, ns := range []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease} {
		testenv.Eventually(t, 10*time.Second, "default service account in existing namespace "+ns, has(ns))
	}

	ns := c.Namespace(t)
	testenv.Eventually(t, 10*time.Second, "default service account in a new namespace", has(ns))
	first, err := sas(ns).Get(c.Ctx, DefaultName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if err := sas(ns).Delete(c.Ctx, DefaultName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "default service account back after deletion", func() (bool, error) {
		sa, err := sas(ns).Get(c.Ctx, DefaultName, metav1.GetOptions{})
		return err == nil && sa.UID != first.UID, err
	})

	// Other accounts are users': left alone.
	if _, err := sas(ns).Create(c.Ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := sas(ns).Delete(c.Ctx, "builder", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Consistently(t, 500*time.Millisecond, "a deleted non-default account stays deleted", func() (bool, error) {
		_, err := sas(ns).Get(c.Ctx, "builder", metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}

func TestNoServiceAccountInTerminatingNamespace(t *testing.T) {
	c := testenv.StartControllerCluster(t, "sa", New)
	ns := c.Namespace(t)
	testenv.Eventually(t, 10*time.Second, "default service account", func() (bool, error) {
		_, err := c.Client.CoreV1().ServiceAccounts(ns).Get(c.Ctx, DefaultName, metav1.GetOptions{})
		return err == nil, err
	})
	if err := c.Client.CoreV1().Namespaces().Delete(c.Ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// No namespace controller runs: the namespace stays Terminating (on an
	// apiserver that no longer empties namespaces itself).
	err := c.Client.CoreV1().ServiceAccounts(ns).Delete(c.Ctx, DefaultName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	testenv.Consistently(t, time.Second, "no service account in a terminating namespace", func() (bool, error) {
		_, err := c.Client.CoreV1().ServiceAccounts(ns).Get(c.Ctx, DefaultName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}
