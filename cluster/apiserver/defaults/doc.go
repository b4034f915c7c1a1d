// Package defaults says what unset fields mean: the defaulting step of the
// apiserver's write chain, run as mutating admission before validation
// (authn → authz → mutating admission (defaulting) → validation → storage).
//
// Apply(obj) fills in, in place, the defaults upstream's v1 defaulters set
// (k8s.io/kubernetes/pkg/apis/core/v1/defaults.go and
// pkg/apis/apps/v1/defaults.go with their generated SetObjectDefaults_*):
// pod restartPolicy Always, dnsPolicy ClusterFirst, 30s grace period,
// default-scheduler, container pull policy from the image tag, probe
// timings, port protocols TCP (EndpointSlice ports also name ""), requests from limits on Pods, Service type
// ClusterIP / sessionAffinity None / targetPort = port / traffic policies,
// ReplicaSet, Deployment and ReplicationController replicas 1, a
// ReplicationController's selector and labels from its template's labels,
// the Deployment's RollingUpdate 25%/25% strategy, revisionHistoryLimit 10
// and progressDeadlineSeconds 600, a PriorityClass's preemptionPolicy
// PreemptLowerPriority (pkg/apis/scheduling/v1), the DaemonSet's and
// StatefulSet's update strategies (pkg/apis/apps/v1), a Job's completions,
// parallelism, backoffLimit 6 and completion mode and a CronJob's
// concurrency policy and history limits (pkg/apis/batch/v1), and so on. Pod templates inside
// controllers get the pod spec defaults (not the Pod-only ones, as
// upstream).
//
// A few normalisations that upstream does outside its defaulters, in
// conversion or in the registry, live here too because kstep serves the v1
// types directly: a Secret's stringData is folded into data; a pod spec's
// serviceAccount mirrors serviceAccountName; a Service's clusterIP and
// clusterIPs are kept in step and its ipFamilyPolicy is set.
//
// Apply only ever sets fields that are unset (or derives them from the
// object itself), so it is idempotent and safe on create and update alike.
// Registry decisions (uid, timestamps, generated names, pod phase, namespace
// finalizers, cluster IP allocation) belong to the apiserver, not here.
//
// It must not touch storage, HTTP or time: defaulting is a pure function of
// the object, never reads other objects and never fails.
package defaults
