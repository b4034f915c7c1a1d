package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const priorityClassesManifest = `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
preemptionPolicy: Never
description: the e2e test's high class
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: everyone
value: 10
globalDefault: true
`

// podManifest is a pod with extra lines under spec.
func podManifest(name, spec string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  containers:
  - name: app
    image: registry.kstep.local/app:v1
%s`, name, spec)
}

// TestKubectlPriority is issue 58's first bullet with real kubectl on
// hollow nodes: PriorityClasses apply and list with upstream's columns
// (the built-ins among them), the Priority admission plugin resolves a
// pod's class and refuses (403, upstream's messages) an unknown class, a
// hand-set priority and a second global default, and a ReplicaSet's pods
// (no class) get the global default and still run.
func TestKubectlPriority(t *testing.T) {
	inLane(t, hollowProcs)
	path := kubectlPath(t)
	conf, _ := upCLI(t, "--hollow-nodes", "1")
	k := kubectl{t: t, path: path, conf: conf}

	if out := k.run("apply", "-f", writeTemp(t, "pc.yaml", priorityClassesManifest)); !strings.Contains(out, "priorityclass.scheduling.k8s.io/high created") ||
		!strings.Contains(out, "priorityclass.scheduling.k8s.io/everyone created") {
		t.Fatalf("apply priority classes:\n%s", out)
	}
	out := k.run("get", "pc")
	header := strings.Fields(strings.SplitN(out, "\n", 2)[0])
	if strings.Join(header, " ") != "NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY" {
		t.Errorf("get pc header %q", header)
	}
	for _, want := range []string{"system-node-critical", "2000001000", "system-cluster-critical", "2000000000", "high", "Never", "everyone"} {
		if !strings.Contains(out, want) {
			t.Errorf("get pc lacks %s:\n%s", want, out)
		}
	}

	out, err := k.try("apply", "-f", writeTemp(t, "unknown.yaml", podManifest("unknown", "  priorityClassName: nope\n")))
	if err == nil || !strings.Contains(out, `pods "unknown" is forbidden: no PriorityClass with name nope was found`) {
		t.Errorf("a pod naming an unknown class: %v\n%s", err, out)
	}
	out, err = k.try("apply", "-f", writeTemp(t, "handset.yaml", podManifest("handset", "  priority: 1000\n")))
	if err == nil || !strings.Contains(out, `pods "handset" is forbidden: the integer value of priority (1000) must not be provided in pod spec; priority admission controller computed`) {
		t.Errorf("a pod setting spec.priority: %v\n%s", err, out)
	}
	// The refusals are 403 Forbidden.
	out, err = k.try("create", "--raw", "/api/v1/namespaces/default/pods", "-f", writeTemp(t, "raw.json",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"raw"},"spec":{"priority":1000,"containers":[{"name":"app","image":"registry.kstep.local/app:v1"}]}}`))
	if err == nil || !strings.Contains(out, "Forbidden") {
		t.Errorf("a raw create setting spec.priority: %v\n%s, want Forbidden", err, out)
	}
	out, err = k.try("apply", "-f", writeTemp(t, "second.yaml", `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: second
value: 20
globalDefault: true
`))
	if err == nil || !strings.Contains(out, `priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass everyone is already marked as default. Only one default can exist`) {
		t.Errorf("a second global default: %v\n%s", err, out)
	}

	k.run("apply", "-f", writeTemp(t, "high.yaml", podManifest("high", "  priorityClassName: high\n")))
	if got := k.run("get", "pod", "high", "-o", "jsonpath={.spec.priority}/{.spec.preemptionPolicy}"); got != "1000/Never" {
		t.Errorf("pod naming high: priority/preemptionPolicy %s, want 1000/Never", got)
	}
	k.run("apply", "-f", writeTemp(t, "plain.yaml", podManifest("plain", "")))
	if got := k.run("get", "pod", "plain", "-o", "jsonpath={.spec.priorityClassName}/{.spec.priority}/{.spec.preemptionPolicy}"); got != "everyone/10/PreemptLowerPriority" {
		t.Errorf("pod without a class: %s, want everyone/10/PreemptLowerPriority", got)
	}

	// The controllers' pods: the global default, scheduled and running.
	k.run("create", "deployment", "web", "--image=registry.kstep.local/app:v1", "--replicas=2")
	k.run("rollout", "status", "deployment/web", "--timeout=60s")
	if got := k.run("get", "pods", "-l", "app=web", "-o", "jsonpath={range .items[*]}{.spec.priority} {end}"); strings.TrimSpace(got) != "10 10" {
		t.Errorf("the deployment's pods have priorities %q, want the global default's 10", got)
	}
}

// TestKubectlPreemption is issue 58's second bullet with real kubectl on a
// hollow node (4 cpu): a low-priority pod takes 3 cpu; a high-priority pod
// asking 2 fits only if it goes. The scheduler preempts it (the
// DisruptionTarget condition, graceful deletion, a Preempted Event),
// nominates the node and binds the high-priority pod once its victim is
// gone, within a generous functional deadline.
func TestKubectlPreemption(t *testing.T) {
	inLane(t, hollowProcs)
	path := kubectlPath(t)
	conf, _ := upCLI(t, "--hollow-nodes", "1")
	k := kubectl{t: t, path: path, conf: conf}
	k.run("apply", "-f", writeTemp(t, "pc.yaml", `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: low
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
`))
	resources := func(cpu string) string {
		return "    resources:\n      requests:\n        cpu: \"" + cpu + "\"\n"
	}
	k.run("apply", "-f", writeTemp(t, "low.yaml", podManifest("low", resources("3")+"  priorityClassName: low\n")))
	k.run("wait", "--for=condition=Ready", "pod/low", "--timeout=60s")

	start := time.Now()
	k.run("apply", "-f", writeTemp(t, "high.yaml", podManifest("high", resources("2")+"  priorityClassName: high\n")))
	var node string
	for deadline := time.Now().Add(60 * time.Second); ; {
		node = k.run("get", "pod", "high", "-o", "jsonpath={.spec.nodeName}")
		if node != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("high not bound within 60 s:\n%s\n%s", k.run("describe", "pod", "high"), k.run("get", "events"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(start)
	t.Logf("high-priority pod bound %v after its creation (its victim preempted and gone)", took)
	if out, err := k.try("get", "pod", "low", "-o", "name"); err == nil || !strings.Contains(out, "NotFound") {
		t.Errorf("the victim is still there after the preemptor was bound: %v\n%s", err, out)
	}
	if got := k.run("get", "pod", "high", "-o", "jsonpath={.status.nominatedNodeName}"); got != node {
		t.Errorf("nominatedNodeName %q, bound to %q", got, node)
	}
	uid := k.run("get", "pod", "high", "-o", "jsonpath={.metadata.uid}")
	var ev string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		// The Event is written asynchronously, as upstream's.
		ev = k.run("get", "events", "--field-selector", "involvedObject.name=low,reason=Preempted", "-o", "jsonpath={.items[*].message}")
		if ev != "" || time.Now().After(deadline) {
			break
		}
	}
	if ev != "Preempted by pod "+uid+" on node "+node {
		t.Errorf("the victim's Preempted event %q", ev)
	}
}
