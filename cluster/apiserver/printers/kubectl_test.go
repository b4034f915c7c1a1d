package printers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestKubectl serves tables from Table to a real kubectl on loopback and
// checks what it prints, with and without -o wide. It is skipped when there
// is no kubectl in PATH.
func TestKubectl(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil || testing.Short() {
		t.Skip("no kubectl in PATH, or -short")
	}

	resources := map[string]struct {
		gr   schema.GroupResource
		objs []runtime.Object
	}{
		"/api/v1/namespaces/default/pods":     {podsGR, kubectlPods()},
		"/api/v1/nodes":                       {core("nodes"), kubectlNodes()},
		"/api/v1/namespaces/default/services": {core("services"), kubectlServices()},
		"/apis/apps/v1/namespaces/default/deployments": {apps("deployments"), []runtime.Object{
			&appsv1.Deployment{
				ObjectMeta: objMeta("web"),
				Spec:       appsv1.DeploymentSpec{Replicas: ptr(int32(3)), Selector: webSel, Template: template(web, sidecar)},
				Status:     appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2},
			},
		}},
		"/api/v1/namespaces/default/events": {core("events"), []runtime.Object{
			&corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: "web-1.17a", Namespace: "default"},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-1", FieldPath: "spec.containers{app}"},
				Reason:         "BackOff", Message: "Back-off restarting failed container", Type: corev1.EventTypeWarning,
				Source:         corev1.EventSource{Component: "kubelet", Host: "n1"},
				FirstTimestamp: ago(10 * time.Minute), LastTimestamp: ago(30 * time.Second), Count: 12,
			},
		}},
	}

	var mu sync.Mutex
	var accepts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if body, ok := kubectlDiscovery[r.URL.Path]; ok {
			w.Write([]byte(body))
			return
		}
		res, ok := resources[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
			return
		}
		mu.Lock()
		accepts = append(accepts, r.Header.Get("Accept"))
		mu.Unlock()
		table, err := Table(res.gr, res.objs, now, false)
		if err != nil {
			t.Errorf("Table: %v", err)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		// What the handler does: list metadata and partial object metadata.
		table.ResourceVersion = "7"
		for i, obj := range res.objs {
			m, _ := meta.Accessor(obj)
			partial := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), CreationTimestamp: m.GetCreationTimestamp()}}
			partial.APIVersion, partial.Kind = "meta.k8s.io/v1", "PartialObjectMetadata"
			table.Rows[i].Object = runtime.RawExtension{Object: partial}
		}
		if err := json.NewEncoder(w).Encode(table); err != nil {
			t.Errorf("encode: %v", err)
		}
	}))
	defer srv.Close()

	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(kubectl, append([]string{"--server", srv.URL, "--cache-dir", filepath.Join(dir, "cache"), "--request-timeout", "20s"}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+dir, "KUBECONFIG="+filepath.Join(dir, "kubeconfig"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	tests := []struct {
		args []string
		want string
	}{{
		args: []string{"get", "pods", "-n", "default"},
		want: `
NAME      READY   STATUS             RESTARTS     AGE
web-1     1/1     Running            0            60m
crash     0/1     CrashLoopBackOff   5 (5m ago)   60m
init      0/1     Init:1/2           0            60m
done      0/1     Completed          0            60m
leaving   1/1     Terminating        0            60m
`,
	}, {
		args: []string{"get", "pods", "-n", "default", "-o", "wide"},
		want: `
NAME      READY   STATUS             RESTARTS     AGE   IP           NODE     NOMINATED NODE   READINESS GATES
web-1     1/1     Running            0            60m   10.244.0.5   n1       <none>           1/1
crash     0/1     CrashLoopBackOff   5 (5m ago)   60m   10.244.0.6   n1       <none>           <none>
init      0/1     Init:1/2           0            60m   <none>       <none>   n2               <none>
done      0/1     Completed          0            60m   <none>       n1       <none>           <none>
leaving   1/1     Terminating        0            60m   10.244.0.9   n1       <none>           <none>
`,
	}, {
		args: []string{"get", "nodes"},
		want: `
NAME   STATUS                        ROLES           AGE   VERSION
cp     Ready                         control-plane   26h   v1.32.4
w1     NotReady,SchedulingDisabled   <none>          60m   v1.32.4
`,
	}, {
		args: []string{"get", "nodes", "-o", "wide"},
		want: `
NAME   STATUS                        ROLES           AGE   VERSION   INTERNAL-IP   EXTERNAL-IP   OS-IMAGE                         KERNEL-VERSION   CONTAINER-RUNTIME
cp     Ready                         control-plane   26h   v1.32.4   172.18.0.2    <none>        Debian GNU/Linux 12 (bookworm)   6.1.0-18-amd64   containerd://1.7.18
w1     NotReady,SchedulingDisabled   <none>          60m   v1.32.4   <none>        <none>        <unknown>                        <unknown>        <unknown>
`,
	}, {
		args: []string{"get", "services", "-n", "default", "-o", "wide"},
		want: `
NAME   TYPE           CLUSTER-IP   EXTERNAL-IP   PORT(S)        AGE   SELECTOR
api    ClusterIP      10.96.0.1    <none>        443/TCP        60m   <none>
web    NodePort       10.96.1.1    <none>        80:30080/TCP   60m   app=web
lb     LoadBalancer   10.96.2.2    <pending>     80:31000/TCP   60m   app=web
`,
	}, {
		args: []string{"get", "deployments", "-n", "default"},
		want: `
NAME   READY   UP-TO-DATE   AVAILABLE   AGE
web    2/3     3            2           60m
`,
	}, {
		args: []string{"get", "deployments", "-n", "default", "-o", "wide"},
		want: `
NAME   READY   UP-TO-DATE   AVAILABLE   AGE   CONTAINERS   IMAGES               SELECTOR
web    2/3     3            2           60m   web,log      nginx:1.27,busybox   app=web
`,
	}, {
		args: []string{"get", "events", "-n", "default"},
		want: `
LAST SEEN   TYPE      REASON    OBJECT      MESSAGE
30s         Warning   BackOff   pod/web-1   Back-off restarting failed container
`,
	}}
	for _, tt := range tests {
		got := run(tt.args...)
		if want := strings.TrimPrefix(tt.want, "\n"); got != want {
			t.Errorf("kubectl %s:\ngot:\n%s\nwant:\n%s", strings.Join(tt.args, " "), got, want)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	for _, a := range accepts {
		if !strings.Contains(a, "as=Table;v=v1;g=meta.k8s.io") {
			t.Errorf("kubectl did not ask for a v1 Table: Accept: %s", a)
		}
	}
}

func kubectlPods() []runtime.Object {
	named := func(name string, p *corev1.Pod) *corev1.Pod { p.Name = name; return p }
	ready := pod(corev1.PodRunning, "app")
	ready.Spec.NodeName = "n1"
	ready.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}}
	ready.Status.PodIP = "10.244.0.5"
	ready.Status.Conditions = []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue), cond("example.com/lb", corev1.ConditionTrue)}
	ready.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: true, State: running()}}

	crash := pod(corev1.PodRunning, "app")
	crash.Spec.NodeName = "n1"
	crash.Status.PodIP = "10.244.0.6"
	crash.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: waiting("CrashLoopBackOff"), RestartCount: 5, LastTerminationState: lastTerminated(5 * time.Minute)}}

	initializing := pod(corev1.PodPending, "app")
	initializing.Status.NominatedNodeName = "n2"
	initializing.Spec.InitContainers = []corev1.Container{{Name: "i1"}, {Name: "i2"}}
	initializing.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: "i1", State: terminated("Completed", 0, 0)},
		{Name: "i2", State: running()},
	}

	done := pod(corev1.PodSucceeded, "app")
	done.Spec.NodeName = "n1"
	done.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: terminated("Completed", 0, 0)}}

	leaving := pod(corev1.PodRunning, "app")
	leaving.Spec.NodeName = "n1"
	leaving.Status.PodIP = "10.244.0.9"
	leaving.DeletionTimestamp = agoPtr(5 * time.Second)
	leaving.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: true, State: running()}}

	return []runtime.Object{named("web-1", ready), named("crash", crash), named("init", initializing), named("done", done), named("leaving", leaving)}
}

func kubectlNodes() []runtime.Object {
	return []runtime.Object{
		&corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "cp", CreationTimestamp: ago(26 * time.Hour), Labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}},
			Status: corev1.NodeStatus{
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "172.18.0.2"}},
				NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.32.4", OSImage: "Debian GNU/Linux 12 (bookworm)",
					KernelVersion: "6.1.0-18-amd64", ContainerRuntimeVersion: "containerd://1.7.18"},
			},
		},
		&corev1.Node{
			ObjectMeta: objMeta("w1"),
			Spec:       corev1.NodeSpec{Unschedulable: true},
			Status: corev1.NodeStatus{
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}},
				NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.32.4"},
			},
		},
	}
}

func kubectlServices() []runtime.Object {
	return []runtime.Object{
		&corev1.Service{ObjectMeta: objMeta("api"), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIPs: []string{"10.96.0.1"}, Ports: []corev1.ServicePort{{Port: 443, Protocol: corev1.ProtocolTCP}},
		}},
		&corev1.Service{ObjectMeta: objMeta("web"), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, ClusterIPs: []string{"10.96.1.1"}, Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}},
		}},
		&corev1.Service{ObjectMeta: objMeta("lb"), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.96.2.2"}, Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80, NodePort: 31000, Protocol: corev1.ProtocolTCP}},
		}},
	}
}

// kubectlDiscovery is the legacy discovery kubectl needs to find the
// resources above.
var kubectlDiscovery = map[string]string{
	"/api": `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}`,
	"/apis": `{"kind":"APIGroupList","apiVersion":"v1","groups":[
		{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}]}`,
	"/api/v1": `{"kind":"APIResourceList","groupVersion":"v1","resources":[
		{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["get","list"],"shortNames":["po"]},
		{"name":"nodes","singularName":"node","namespaced":false,"kind":"Node","verbs":["get","list"],"shortNames":["no"]},
		{"name":"services","singularName":"service","namespaced":true,"kind":"Service","verbs":["get","list"],"shortNames":["svc"]},
		{"name":"events","singularName":"event","namespaced":true,"kind":"Event","verbs":["get","list"],"shortNames":["ev"]}]}`,
	"/apis/apps/v1": `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apps/v1","resources":[
		{"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment","verbs":["get","list"],"shortNames":["deploy"]}]}`,
	"/version": `{"major":"1","minor":"32","gitVersion":"v1.32.4"}`,
}
