package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	appImage    = "registry.kstep.local/app:v1"
	victims     = 3
	proxyGetCR  = "h56-nodes-proxy-get"
	victimLabel = "h56-victim"
)

// setup makes alice's namespace, her Role (the issue's: pods and their
// subresources, ConfigMaps, PDBs), her pods on one node (a real one when
// the cluster has one), a PDB over them and a ConfigMap to delete.
func (e *env) setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*e.timeout)
	defer cancel()
	if _, err := e.adminCS.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "alice"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "pods/log", "pods/exec", "pods/attach", "pods/portforward", "pods/eviction", "configmaps"}, Verbs: all},
		{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: all},
	}}
	if _, err := e.adminCS.RbacV1().Roles(e.ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "alice"},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "alice"}}}
	if _, err := e.adminCS.RbacV1().RoleBindings(e.ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := waitFor(ctx, "alice may list pods", func() error {
		_, err := e.aliceCS.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
		return err
	}); err != nil {
		return err
	}

	nodes, err := e.adminCS.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, n := range nodes.Items {
		if e.node == "" {
			e.node = n.Name
		}
		if !strings.HasPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, "kstep-sim") {
			e.node, e.realNode = n.Name, true
			break
		}
	}
	if e.node == "" {
		return fmt.Errorf("the cluster has no node")
	}
	for i := range victims {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("victim-%d", i), Labels: map[string]string{"app": victimLabel}},
			Spec: corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/hostname": e.node},
				TerminationGracePeriodSeconds: new(int64),
				Containers:                    []corev1.Container{{Name: "app", Image: appImage}}}}
		if _, err := e.aliceCS.CoreV1().Pods(e.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	two := intstr.FromInt32(victims - 1)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "victims"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": victimLabel}}}}
	if _, err := e.aliceCS.PolicyV1().PodDisruptionBudgets(e.ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := e.aliceCS.CoreV1().ConfigMaps(e.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "victim"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := waitFor(ctx, "alice's pods running", func() error {
		l, err := e.aliceCS.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		running := 0
		for _, p := range l.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if running != victims {
			return fmt.Errorf("%d of %d running", running, victims)
		}
		return nil
	}); err != nil {
		return err
	}
	return waitFor(ctx, "the PDB's status", func() error {
		p, err := e.aliceCS.PolicyV1().PodDisruptionBudgets(e.ns).Get(ctx, "victims", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.ObservedGeneration != p.Generation || p.Status.DisruptionsAllowed != 1 {
			return fmt.Errorf("observed generation %d of %d, %d disruptions allowed", p.Status.ObservedGeneration, p.Generation, p.Status.DisruptionsAllowed)
		}
		return nil
	})
}

// waitFor retries fn every 200 ms until it succeeds or ctx ends.
func waitFor(ctx context.Context, what string, fn func() error) error {
	for {
		err := fn()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// deleteOwn deletes alice's namespace and the cluster-scoped RBAC this
// made (the namespace's objects go with it, in the background).
func (e *env) deleteOwn() {
	ctx, cancel := e.ctx()
	defer cancel()
	for _, err := range []error{
		e.adminCS.RbacV1().ClusterRoleBindings().Delete(ctx, proxyGetCR, metav1.DeleteOptions{}),
		e.adminCS.RbacV1().ClusterRoles().Delete(ctx, proxyGetCR, metav1.DeleteOptions{}),
		e.adminCS.CoreV1().Namespaces().Delete(ctx, e.ns, metav1.DeleteOptions{PropagationPolicy: &propagation}),
	} {
		if err != nil && !apierrors.IsNotFound(err) {
			fmt.Fprintln(os.Stderr, "hostile56: cleaning up:", err)
		}
	}
}

// purge runs `kstep down --purge` (finding 6: it left nodes/node-0). The
// apiserver is gone after it: no CPU or memory to read.
func (e *env) purge(kstep string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*e.timeout)
	defer cancel()
	r := row{finding: "6", who: "operator", request: kstep + " down --purge --state-dir " + e.stateDir}
	fmt.Fprintf(os.Stderr, "hostile56: %s\n", r.request)
	start := time.Now()
	out, err := exec.CommandContext(ctx, kstep, "down", "--purge", "--state-dir", e.stateDir).CombinedOutput()
	r.wall = time.Since(start)
	r.status = "exit 0"
	if err != nil {
		r.status = "error: " + excerpt(err.Error(), 100)
	}
	left, rerr := os.ReadDir(e.stateDir)
	var names []string
	nodes := false
	for _, d := range left {
		names = append(names, d.Name())
		nodes = nodes || d.Name() == "nodes"
	}
	r.check = fmt.Sprintf("the state directory holds %q afterwards (nodes/: %v)", names, nodes)
	if os.IsNotExist(rerr) {
		r.check = "the state directory is gone (nothing under nodes/)"
	}
	r.check += fmt.Sprintf("; kstep said %q", excerpt(lastLine(string(out)), 100))
	r.held = err == nil && !nodes
	if !r.held {
		e.failed = true
	}
	e.rows = append(e.rows, r)
}
