package main

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// finding1: a server-side dry run deleted for real: kubectl's delete (the
// flag in the DeleteOptions body), an eviction with deleteOptions.dryRun,
// kubectl drain --dry-run=server.
func (e *env) finding1() {
	cm := e.host + "/api/v1/namespaces/" + e.ns + "/configmaps"
	cmThere := func() (string, bool) {
		ctx, cancel := e.ctx()
		defer cancel()
		c, err := e.adminCS.CoreV1().ConfigMaps(e.ns).Get(ctx, "victim", metav1.GetOptions{})
		if err != nil {
			return "ConfigMap victim: " + err.Error(), false
		}
		return fmt.Sprintf("ConfigMap victim still there (resourceVersion %s, no deletionTimestamp: %v)", c.ResourceVersion, c.DeletionTimestamp == nil), c.DeletionTimestamp == nil
	}
	var out, exit string
	e.step("1", "alice", "kubectl delete cm victim --dry-run=server", func() string {
		out, exit = e.kubectl(e.aliceKubeconfig, "delete", "cm", "victim", "--dry-run=server")
		return exit + ": " + firstLine(out)
	}, func() (string, bool) {
		s, ok := cmThere()
		return s, ok && exit == "exit 0" && strings.Contains(out, "deleted (server dry run)")
	})
	for _, tc := range []struct{ what, method, url, body string }{
		{"DELETE configmaps/victim, body DeleteOptions{dryRun:[All]}", "DELETE", cm + "/victim", `{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}`},
		{"DELETE configmaps (deletecollection), body DeleteOptions{dryRun:[All]}", "DELETE", cm, `{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}`},
		{"DELETE configmaps/victim?dryRun=Some (not All)", "DELETE", cm + "/victim?dryRun=Some", ``},
	} {
		var code int
		e.step("1", "alice", tc.what, func() string {
			var err error
			var b []byte
			code, b, err = do(e.aliceHTTP, tc.method, tc.url, "application/json", []byte(tc.body))
			return httpStatus(code, b, err)
		}, func() (string, bool) {
			s, ok := cmThere()
			want := 200
			if strings.Contains(tc.url, "Some") {
				want = 422
			}
			return s, ok && code == want
		})
	}

	pod0 := "victim-0"
	before := e.pdbStatus()
	podsThere := func(what string) (string, bool) {
		ctx, cancel := e.ctx()
		defer cancel()
		l, err := e.adminCS.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error(), false
		}
		alive := 0
		for _, p := range l.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				alive++
			}
		}
		after := e.pdbStatus()
		return fmt.Sprintf("%d of %d pods still there and running; PDB %s (before: %s)%s", alive, victims, after, before, what),
			alive == victims && len(l.Items) == victims && after == before
	}
	var code int
	e.step("1", "alice", "POST pods/"+pod0+"/eviction, deleteOptions.dryRun [All]", func() string {
		var err error
		var b []byte
		body := fmt.Sprintf(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":%q,"namespace":%q},"deleteOptions":{"dryRun":["All"]}}`, pod0, e.ns)
		code, b, err = do(e.aliceHTTP, "POST", e.host+"/api/v1/namespaces/"+e.ns+"/pods/"+pod0+"/eviction", "application/json", []byte(body))
		return httpStatus(code, b, err)
	}, func() (string, bool) {
		s, ok := podsThere("")
		return s, ok && code == 201
	})
	e.step("1", "alice", "kubectl delete pod victim-1 --dry-run=server", func() string {
		out, exit = e.kubectl(e.aliceKubeconfig, "delete", "pod", "victim-1", "--dry-run=server")
		return exit + ": " + firstLine(out)
	}, func() (string, bool) {
		s, ok := podsThere("")
		return s, ok && exit == "exit 0"
	})

	var nodePods int
	countNodePods := func() (int, int) {
		ctx, cancel := e.ctx()
		defer cancel()
		l, err := e.adminCS.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + e.node})
		if err != nil {
			return -1, -1
		}
		live := 0
		for _, p := range l.Items {
			if p.DeletionTimestamp == nil {
				live++
			}
		}
		return len(l.Items), live
	}
	nodePods, _ = countNodePods()
	e.step("1", "admin", "kubectl drain "+e.node+" --dry-run=server --force --ignore-daemonsets --delete-emptydir-data", func() string {
		out, exit = e.kubectl(e.kubeconfig, "drain", e.node, "--dry-run=server", "--force", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=60s")
		return fmt.Sprintf("%s: %d × \"evicting pod\", %q", exit, strings.Count(out, "evicting pod"), lastLine(out))
	}, func() (string, bool) {
		all, live := countNodePods()
		ctx, cancel := e.ctx()
		defer cancel()
		n, err := e.adminCS.CoreV1().Nodes().Get(ctx, e.node, metav1.GetOptions{})
		cordoned := err != nil || n.Spec.Unschedulable
		s, ok := podsThere("")
		return fmt.Sprintf("%d pods on %s before, %d after (%d not deleting); cordoned: %v; %s", nodePods, e.node, all, live, cordoned, s),
			ok && exit == "exit 0" && all == nodePods && live == nodePods && !cordoned
	})
}

// pdbStatus is the PDB's status as the dry runs must leave it.
func (e *env) pdbStatus() string {
	ctx, cancel := e.ctx()
	defer cancel()
	p, err := e.adminCS.PolicyV1().PodDisruptionBudgets(e.ns).Get(ctx, "victims", metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("disruptionsAllowed=%d, disruptedPods=%d", p.Status.DisruptionsAllowed, len(p.Status.DisruptedPods))
}

// httpStatus is "HTTP <code>" and the answer's message, or the error.
func httpStatus(code int, body []byte, err error) string {
	if err != nil {
		return "error: " + excerpt(err.Error(), 120)
	}
	s := fmt.Sprintf("%d", code)
	if msg := statusMessage(body); msg != "" {
		s += " " + excerpt(msg, 140)
	}
	return s
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
