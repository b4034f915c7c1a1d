package apiserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// dryRunFixture is one served resource's object for the dry-run table: the
// object stored first (named fx, or name, in namespace dry when
// namespaced) and a status merge patch that changes its status.
type dryRunFixture struct {
	object string
	status string
	// name, when set, names the object: resources stored under one prefix
	// (core and events.k8s.io Events) need two.
	name string
}

// dryRunFixtures has a row per served resource ("resource.group"): a
// resource served without a row fails the test, so a new resource gets
// its row.
var dryRunFixtures = map[string]dryRunFixture{
	"namespaces":                             {object: `{}`, status: `{"status":{"conditions":[{"type":"NamespaceContentRemaining","status":"False"}]}}`},
	"pods":                                   {object: `{"metadata":{"labels":{"app":"fx"}},"spec":{"containers":[{"name":"app","image":"registry.kstep.local/app:v1"}]}}`, status: `{"status":{"message":"dry"}}`},
	"nodes":                                  {object: `{}`, status: `{"status":{"capacity":{"pods":"10"}}}`},
	"services":                               {object: `{"spec":{"ports":[{"port":80}]}}`, status: `{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.1"}]}}}`},
	"endpoints":                              {object: `{}`, status: ""},
	"endpointslices.discovery.k8s.io":        {object: `{"addressType":"IPv4","endpoints":[]}`, status: ""},
	"configmaps":                             {object: `{"data":{"a":"b"}}`, status: ""},
	"secrets":                                {object: `{"data":{"a":"Yg=="}}`, status: ""},
	"serviceaccounts":                        {object: `{}`, status: ""},
	"leases.coordination.k8s.io":             {object: `{"spec":{"holderIdentity":"fx"}}`, status: ""},
	"priorityclasses.scheduling.k8s.io":      {object: `{"value":1000,"description":"fx"}`, status: ""},
	"replicationcontrollers":                 {object: `{"spec":{"replicas":1,"selector":{"app":"fx"},"template":{"metadata":{"labels":{"app":"fx"}},"spec":{"containers":[{"name":"app","image":"registry.kstep.local/app:v1"}]}}}}`, status: `{"status":{"observedGeneration":1}}`},
	"replicasets.apps":                       {object: `{"spec":{"replicas":1,"selector":{"matchLabels":{"app":"fx"}},"template":{"metadata":{"labels":{"app":"fx"}},"spec":{"containers":[{"name":"app","image":"registry.kstep.local/app:v1"}]}}}}`, status: `{"status":{"observedGeneration":1}}`},
	"deployments.apps":                       {object: `{"spec":{"replicas":1,"selector":{"matchLabels":{"app":"fx"}},"template":{"metadata":{"labels":{"app":"fx"}},"spec":{"containers":[{"name":"app","image":"registry.kstep.local/app:v1"}]}}}}`, status: `{"status":{"observedGeneration":1}}`},
	"daemonsets.apps":                        {object: `{"spec":{"selector":{"matchLabels":{"app":"fx"}},"template":{"metadata":{"labels":{"app":"fx"}},"spec":{"containers":[{"name":"app","image":"registry.kstep.local/app:v1"}]}}}}`, status: `{"status":{"observedGeneration":1}}`},
	"statefulsets.apps":                      {object: `{"spec":{"replicas":1,"selector":{"matchLabels":{"app":"fx"}},"template":{"metadata":{"labels":{"app":"fx"}},"spec":{"containers":[{"name":"app","image":"registry.kstep.local/app:v1"}]}}}}`, status: `{"status":{"observedGeneration":1}}`},
	"controllerrevisions.apps":               {object: `{"data":{"spec":{}},"revision":1}`, status: ""},
	"jobs.batch":                             {object: `{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"app","image":"registry.kstep.local/app:v1"}]}}}}`, status: `{"status":{"active":1}}`},
	"cronjobs.batch":                         {object: `{"spec":{"schedule":"*/5 * * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"app","image":"registry.kstep.local/app:v1"}]}}}}}}`, status: `{"status":{"lastScheduleTime":"2026-01-01T00:00:00Z"}}`},
	"podtemplates":                           {object: `{"template":{"metadata":{"labels":{"app":"fx"}},"spec":{"containers":[{"name":"app","image":"registry.kstep.local/app:v1"}]}}}`, status: ""},
	"poddisruptionbudgets.policy":            {object: `{"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":"fx"}}}}`, status: `{"status":{"disruptionsAllowed":0}}`},
	"events":                                 {object: `{"involvedObject":{"kind":"Pod","namespace":"dry","name":"fx"},"reason":"Dry","message":"m"}`, status: ""},
	"events.events.k8s.io":                   {object: `{"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"kstep.dev/test","reportingInstance":"i","action":"Test","reason":"Dry","type":"Normal","regarding":{"kind":"Pod","namespace":"dry","name":"fx"}}`, status: "", name: "fx-ev"},
	"roles.rbac.authorization.k8s.io":        {object: `{"rules":[]}`, status: ""},
	"rolebindings.rbac.authorization.k8s.io": {object: `{"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"fx"},"subjects":[]}`, status: ""},
	"clusterroles.rbac.authorization.k8s.io": {object: `{"rules":[]}`, status: ""},
	"clusterrolebindings.rbac.authorization.k8s.io": {object: `{"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"fx"},"subjects":[]}`, status: ""},
	"resourcequotas": {object: `{"spec":{"hard":{"pods":"100","configmaps":"100"}}}`, status: `{"status":{"hard":{"pods":"100"}}}`},
	"limitranges":    {object: `{"spec":{"limits":[{"type":"Container","default":{"cpu":"100m"}}]}}`, status: ""},
	"mutatingwebhookconfigurations.admissionregistration.k8s.io":   {object: `{"webhooks":[]}`, status: ""},
	"validatingwebhookconfigurations.admissionregistration.k8s.io": {object: `{"webhooks":[]}`, status: ""},
}

// backgroundKeys are written by the apiserver on its own (its master
// lease, the kubernetes Service and its endpoints), whatever the requests.
func backgroundKey(k string) bool {
	if strings.HasPrefix(k, "/registry/masterleases/") {
		return true
	}
	switch k {
	case "/registry/services/default/kubernetes", "/registry/endpoints/default/kubernetes",
		"/registry/endpointslices/default/kubernetes", "/registry/serviceips/10.96.0.1":
		return true
	}
	return false
}

// writesDuring runs fn and returns every etcd write it made, read from
// etcd's history between the revisions before and after it: creates,
// updates and deletes alike, the apiserver's own background keys left
// out.
func (e *env) writesDuring(t *testing.T, fn func() error) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rev := func() int64 {
		resp, err := e.etcd.Get(ctx, "/registry/namespaces/default")
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	before := rev()
	ferr := fn()
	after := rev()
	var writes []string
	if after == before {
		return nil, ferr
	}
	for resp := range e.etcd.Watch(ctx, "/", clientv3.WithPrefix(), clientv3.WithRev(before+1)) {
		if err := resp.Err(); err != nil {
			t.Fatal(err)
		}
		for _, ev := range resp.Events {
			if k := string(ev.Kv.Key); !backgroundKey(k) {
				writes = append(writes, fmt.Sprintf("%s %s", ev.Type, k))
			}
		}
		if n := len(resp.Events); n > 0 && resp.Events[n-1].Kv.ModRevision >= after {
			return writes, ferr
		}
	}
	t.Fatal("the history watch ended early")
	return nil, nil
}

// TestDryRunWritesNothing: every dry-run write of every served resource
// (create, update, merge and apply patches, delete, deletecollection, and
// its status, scale, finalize, binding and eviction subresources) as
// client-go sends it, answered with success, leaves etcd's history as it
// was.
func TestDryRunWritesNothing(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(e.api.Config)
	if err != nil {
		t.Fatal(err)
	}
	e.namespace(t, "dry")
	_, lists, err := e.cs.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	type served struct {
		gvr        schema.GroupVersionResource
		kind       string
		namespaced bool
		subs       []string
	}
	var all []served
	byName := map[string]int{}
	for _, l := range lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		for _, r := range l.APIResources {
			if main, sub, ok := strings.Cut(r.Name, "/"); ok {
				if i, ok := byName[gv.WithResource(main).String()]; ok {
					all[i].subs = append(all[i].subs, sub)
				}
				continue
			}
			if !slices.Contains(r.Verbs, "create") || !slices.Contains(r.Verbs, "get") {
				continue // not created, or created and never stored (the reviews)
			}
			all = append(all, served{gvr: gv.WithResource(r.Name), kind: r.Kind, namespaced: r.Namespaced})
			byName[gv.WithResource(r.Name).String()] = len(all) - 1
		}
	}
	dry := []string{metav1.DryRunAll}
	obj := func(s served, name, body string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(body), &u.Object); err != nil {
			t.Fatalf("%s fixture: %v", s.gvr, err)
		}
		u.SetAPIVersion(s.gvr.GroupVersion().String())
		u.SetKind(s.kind)
		u.SetName(name)
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["fixture"] = "dry"
		u.SetLabels(labels)
		return u
	}
	name := func(s served) string {
		if n := dryRunFixtures[s.gvr.GroupResource().String()].name; n != "" {
			return n
		}
		return "fx"
	}
	client := func(s served) dynamic.ResourceInterface {
		if s.namespaced {
			return dyn.Resource(s.gvr).Namespace("dry")
		}
		return dyn.Resource(s.gvr)
	}
	// The fixtures, stored for real.
	for _, s := range all {
		fx, ok := dryRunFixtures[s.gvr.GroupResource().String()]
		if !ok {
			t.Fatalf("served resource %s has no row in dryRunFixtures", s.gvr.GroupResource())
		}
		if _, err := client(s).Create(ctx, obj(s, name(s), fx.object), metav1.CreateOptions{}); err != nil {
			t.Fatalf("fixture %s: %v", s.gvr.GroupResource(), err)
		}
	}
	// The pod counts toward its budget (Running and Ready) and the budget
	// allows one disruption: an eviction would take it.
	pods := e.cs.CoreV1().Pods("dry")
	pod, err := pods.Get(ctx, "fx", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pdbs := e.cs.PolicyV1().PodDisruptionBudgets("dry")
	pdb, err := pdbs.Get(ctx, "fx", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: 1, CurrentHealthy: 1, DesiredHealthy: 0, ExpectedPods: 1}
	if _, err := pdbs.UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	type verb struct {
		name string
		sub  string // the subresource the verb writes, "" for the resource
		do   func(s served) error
	}
	label := `{"metadata":{"labels":{"dry":"patched"}}}`
	verbs := []verb{
		{"create", "", func(s served) error {
			_, err := client(s).Create(ctx, obj(s, "fx-new", dryRunFixtures[s.gvr.GroupResource().String()].object), metav1.CreateOptions{DryRun: dry})
			return err
		}},
		{"update", "", func(s served) error {
			cur, err := client(s).Get(ctx, name(s), metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.SetLabels(map[string]string{"fixture": "dry", "dry": "run"})
			_, err = client(s).Update(ctx, cur, metav1.UpdateOptions{DryRun: dry})
			return err
		}},
		{"patch", "", func(s served) error {
			_, err := client(s).Patch(ctx, name(s), types.MergePatchType, []byte(label), metav1.PatchOptions{DryRun: dry})
			return err
		}},
		{"apply", "", func(s served) error {
			u := obj(s, name(s), `{"metadata":{"labels":{"applied":"dry"}}}`)
			_, err := client(s).Apply(ctx, name(s), u, metav1.ApplyOptions{FieldManager: "dry", DryRun: dry})
			return err
		}},
		{"apply-create", "", func(s served) error {
			u := obj(s, "fx-applied", dryRunFixtures[s.gvr.GroupResource().String()].object)
			_, err := client(s).Apply(ctx, "fx-applied", u, metav1.ApplyOptions{FieldManager: "dry", DryRun: dry})
			return err
		}},
		{"status", "status", func(s served) error {
			patch := dryRunFixtures[s.gvr.GroupResource().String()].status
			if patch == "" {
				t.Errorf("%s serves status but its fixture has no status patch", s.gvr.GroupResource())
				return errSkip
			}
			_, err := client(s).Patch(ctx, name(s), types.MergePatchType, []byte(patch), metav1.PatchOptions{DryRun: dry}, "status")
			return err
		}},
		{"scale", "scale", func(s served) error {
			_, err := client(s).Patch(ctx, name(s), types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{DryRun: dry}, "scale")
			return err
		}},
		{"finalize", "finalize", func(s served) error {
			ns, err := e.cs.CoreV1().Namespaces().Get(ctx, "fx", metav1.GetOptions{})
			if err != nil {
				return err
			}
			ns.Spec.Finalizers = nil
			_, err = e.cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{DryRun: dry})
			return err
		}},
		{"binding", "binding", func(s served) error {
			return pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "fx"}, Target: corev1.ObjectReference{Kind: "Node", Name: "fx"}},
				metav1.CreateOptions{DryRun: dry})
		}},
		{"eviction", "eviction", func(s served) error {
			return pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "fx", Namespace: "dry"},
				DeleteOptions: &metav1.DeleteOptions{DryRun: dry}})
		}},
		{"delete", "", func(s served) error {
			return client(s).Delete(ctx, name(s), metav1.DeleteOptions{DryRun: dry})
		}},
		{"deletecollection", "", func(s served) error {
			return client(s).DeleteCollection(ctx, metav1.DeleteOptions{DryRun: dry}, metav1.ListOptions{LabelSelector: "fixture=dry"})
		}},
	}
	cases := 0
	for _, s := range all {
		for _, v := range verbs {
			if v.sub != "" && !slices.Contains(s.subs, v.sub) {
				continue
			}
			t.Run(s.gvr.GroupResource().String()+"/"+v.name, func(t *testing.T) {
				writes, err := e.writesDuring(t, func() error { return v.do(s) })
				if err == errSkip {
					t.Skip("no status patch")
				}
				if err != nil {
					t.Fatalf("dry run refused: %v", err)
				}
				cases++
				if len(writes) > 0 {
					t.Fatalf("a dry run wrote to etcd: %v", writes)
				}
			})
		}
	}
	if cases < 150 {
		t.Fatalf("only %d dry runs made over %d resources", cases, len(all))
	}
}

// errSkip: the case cannot be made.
var errSkip = errors.New("not served")

// kubectl's --dry-run=server, as a user types it: delete sends dryRun in
// the DeleteOptions body, drain evicts with deleteOptions.dryRun. Nothing
// goes.
func TestKubectlServerDryRun(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	kubectl := e.kubectl(t)
	if _, err := e.cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := kubectl("", "delete", "cm", "x", "--dry-run=server")
	if err != nil || !strings.Contains(out, "deleted (server dry run)") {
		t.Fatalf("kubectl delete --dry-run=server: %v\n%s", err, out)
	}
	if _, err := e.cs.CoreV1().ConfigMaps("default").Get(ctx, "x", metav1.GetOptions{}); err != nil {
		t.Fatalf("after kubectl delete --dry-run=server: %v", err)
	}

	if _, err := e.cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := e.cs.CoreV1().Pods("default")
	for i := range 3 {
		p := testPod(fmt.Sprintf("p%d", i))
		p.Spec.NodeName = "node-1"
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	out, err = kubectl("", "drain", "node-1", "--dry-run=server", "--force", "--ignore-daemonsets")
	if err != nil || strings.Count(out, "evicting pod") != 3 || !strings.Contains(out, "drained (server dry run)") {
		t.Fatalf("kubectl drain --dry-run=server: %v\n%s", err, out)
	}
	left, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range left.Items {
		if p.DeletionTimestamp != nil {
			t.Errorf("pod %s marked for deletion by a dry-run drain", p.Name)
		}
	}
	if len(left.Items) != 3 {
		t.Fatalf("%d pods left after drain --dry-run=server, want 3", len(left.Items))
	}
	node, err := e.cs.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	if err != nil || node.Spec.Unschedulable {
		t.Fatalf("node after drain --dry-run=server: unschedulable=%v, %v", node.Spec.Unschedulable, err)
	}
}
