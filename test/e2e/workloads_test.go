package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// workloadNodes is how many hollow nodes the workloads test runs its
// DaemonSet on: 10, not the 50, to keep make test's budget (the
// DaemonSet controller's placement does not depend on the count).
const workloadNodes = 10

const daemonSetManifest = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      containers:
      - name: agent
        image: registry.kstep.local/app:v1
`

const statefulSetManifest = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 5
  serviceName: db
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
      - name: db
        image: registry.kstep.local/app:v1
`

// ordinalNames is db-0,...,db-(n-1).
func ordinalNames(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("db-%d", i)
	}
	return strings.Join(s, " ")
}

const podTemplateManifest = `apiVersion: v1
kind: PodTemplate
metadata:
  name: tmpl
template:
  metadata:
    labels:
      app: tmpl
  spec:
    containers:
    - name: app
      image: registry.kstep.local/app:v1
`

// TestKubectlWorkloads is issue 52's "must show" with real kubectl on
// hollow nodes, one cluster: `kubectl create job` runs to completion (its
// pod works the hollow runtime's job duration and exits 0), `kubectl
// create cronjob` is stored and printed, a DaemonSet puts one pod on every
// hollow node and rolls out, a StatefulSet of 5 scales to 10 and back with
// its ordinal names, and a PodTemplate is created, listed and deleted.
func TestKubectlWorkloads(t *testing.T) {
	inLane(t, hollowProcs)
	path := kubectlPath(t)
	conf, _ := upCLI(t, "--hollow-nodes", fmt.Sprint(workloadNodes))
	k := kubectl{t: t, path: path, conf: conf}

	out := k.run("api-resources")
	for _, want := range []string{"jobs", "cronjobs", "daemonsets", "statefulsets", "controllerrevisions", "podtemplates"} {
		if !strings.Contains(out, want) {
			t.Errorf("api-resources lacks %s:\n%s", want, out)
		}
	}

	// A Job: created as users do, complete on a hollow node.
	if out := k.run("create", "job", "pi", "--image=registry.kstep.local/app:v1"); !strings.Contains(out, "job.batch/pi created") {
		t.Fatalf("create job:\n%s", out)
	}
	k.run("wait", "--for=condition=complete", "job/pi", "--timeout=120s")
	out = k.run("get", "job", "pi")
	if header := strings.Join(strings.Fields(strings.SplitN(out, "\n", 2)[0]), " "); header != "NAME STATUS COMPLETIONS DURATION AGE" {
		t.Errorf("get job header %q", header)
	}
	if !strings.Contains(out, "Complete") || !strings.Contains(out, "1/1") {
		t.Errorf("get job:\n%s", out)
	}
	if out := k.run("get", "pods", "-l", "batch.kubernetes.io/job-name=pi", "-o", "jsonpath={.items[*].status.phase}"); out != "Succeeded" {
		t.Errorf("the Job's pods: %q, want one Succeeded", out)
	}

	// A CronJob: stored with upstream's defaults, printed, refused when
	// its schedule does not parse.
	if out := k.run("create", "cronjob", "tick", "--image=registry.kstep.local/app:v1", "--schedule=*/5 * * * *"); !strings.Contains(out, "cronjob.batch/tick created") {
		t.Fatalf("create cronjob:\n%s", out)
	}
	if out := k.run("get", "cronjob", "tick", "-o", "jsonpath={.spec.concurrencyPolicy} {.spec.successfulJobsHistoryLimit}"); out != "Allow 3" {
		t.Errorf("cronjob defaults: %q", out)
	}
	if out := k.run("get", "cj"); !strings.Contains(out, "*/5 * * * *") {
		t.Errorf("get cj:\n%s", out)
	}
	if out, err := k.try("create", "cronjob", "bad", "--image=registry.kstep.local/app:v1", "--schedule=61 * * * *"); err == nil || !strings.Contains(out, "spec.schedule") {
		t.Errorf("a bad schedule: %v\n%s", err, out)
	}

	// A DaemonSet: one pod on each hollow node, rolled out, then updated.
	k.run("apply", "-f", writeTemp(t, "ds.yaml", daemonSetManifest))
	k.run("rollout", "status", "ds/agent", "--timeout=180s")
	nodes := strings.Fields(k.run("get", "pods", "-l", "app=agent", "-o", "jsonpath={.items[*].spec.nodeName}"))
	seen := map[string]bool{}
	for _, n := range nodes {
		seen[n] = true
	}
	if len(nodes) != workloadNodes || len(seen) != workloadNodes {
		t.Fatalf("daemon pods on %v, want one on each of %d nodes", nodes, workloadNodes)
	}
	if out := k.run("get", "ds", "agent", "-o", "jsonpath={.status.desiredNumberScheduled} {.status.numberReady}"); out != fmt.Sprintf("%d %d", workloadNodes, workloadNodes) {
		t.Errorf("ds status %q", out)
	}
	k.run("set", "image", "ds/agent", "agent=registry.kstep.local/app:v2")
	k.run("rollout", "status", "ds/agent", "--timeout=180s")
	if out := k.run("get", "pods", "-l", "app=agent", "-o", "jsonpath={.items[*].spec.containers[0].image}"); strings.Count(out, "app:v2") != workloadNodes || strings.Contains(out, "app:v1") {
		t.Errorf("after the rollout: %s", out)
	}

	// A StatefulSet of 5, scaled to 10 and back, its names the ordinals.
	k.run("apply", "-f", writeTemp(t, "sts.yaml", statefulSetManifest))
	for _, n := range []int{5, 10, 5} {
		k.run("scale", "sts/db", fmt.Sprintf("--replicas=%d", n))
		k.run("rollout", "status", "sts/db", "--timeout=180s")
		var got string
		deadline := time.Now().Add(time.Minute)
		for {
			// Sorted by index; pods leaving (deletionTimestamp) left out.
			got = strings.TrimSpace(k.run("get", "pods", "-l", "app=db", "--sort-by=.metadata.labels.apps\\.kubernetes\\.io/pod-index",
				"-o", `go-template={{range .items}}{{if not .metadata.deletionTimestamp}}{{.metadata.name}} {{end}}{{end}}`))
			if got == ordinalNames(n) || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Second)
		}
		if got != ordinalNames(n) {
			t.Fatalf("statefulset at %d: pods %q, want %q", n, got, ordinalNames(n))
		}
	}

	// A PodTemplate.
	if out := k.run("apply", "-f", writeTemp(t, "tmpl.yaml", podTemplateManifest)); !strings.Contains(out, "podtemplate/tmpl created") {
		t.Fatalf("apply podtemplate:\n%s", out)
	}
	if out := k.run("get", "podtemplates"); !strings.Contains(out, "tmpl") || !strings.Contains(out, "app=tmpl") {
		t.Errorf("get podtemplates:\n%s", out)
	}
	k.run("delete", "podtemplate", "tmpl")
}
