package e2e

import (
	"fmt"
	"strings"
	"testing"
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
