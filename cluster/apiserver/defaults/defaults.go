package defaults

import (
	"maps"
	"math"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Apply fills in the defaults upstream's v1 defaulters
// (k8s.io/kubernetes/pkg/apis/{core,apps,scheduling}/v1, SetDefaults_* and the
// generated SetObjectDefaults_*) set on obj, in place. Only unset fields are
// touched, so Apply is idempotent: Apply(Apply(x)) == Apply(x). Kinds
// without defaults (ConfigMap, ServiceAccount, Events, Lease, Scale,
// Binding) and unknown kinds are left alone.
func Apply(obj runtime.Object) {
	switch o := obj.(type) {
	case *corev1.Pod:
		setPod(o)
	case *corev1.Service:
		setService(o)
	case *corev1.Namespace:
		setNamespace(o)
	case *corev1.Secret:
		setSecret(o)
	case *corev1.Endpoints:
		setEndpoints(o)
	case *discoveryv1.EndpointSlice:
		setEndpointSlice(o)
	case *corev1.Node:
		setNode(o)
	case *corev1.ReplicationController:
		setReplicationController(o)
	case *appsv1.ReplicaSet:
		setReplicaSet(o)
	case *appsv1.Deployment:
		setDeployment(o)
	case *appsv1.DaemonSet:
		setDaemonSet(o)
	case *appsv1.StatefulSet:
		setStatefulSet(o)
	case *batchv1.Job:
		setJob(o)
	case *batchv1.CronJob:
		setCronJob(o)
	case *corev1.PodTemplate:
		setPodSpec(&o.Template.Spec)
	case *corev1.LimitRange:
		setLimitRange(o)
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		setMutatingWebhookConfiguration(o)
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		setValidatingWebhookConfiguration(o)
	case *schedulingv1.PriorityClass:
		setPriorityClass(o)
	}
}

// setPriorityClass is upstream's SetDefaults_PriorityClass
// (pkg/apis/scheduling/v1): preemptionPolicy PreemptLowerPriority.
func setPriorityClass(pc *schedulingv1.PriorityClass) {
	if pc.PreemptionPolicy == nil {
		pc.PreemptionPolicy = ptrTo(corev1.PreemptLowerPriority)
	}
}

func ptrTo[T any](v T) *T { return &v }

// ---------------------------------------------------------------------------
// core/v1

// setNamespace: the kubernetes.io/metadata.name label always mirrors the
// name (it cannot be set to anything else), and a new namespace is Active.
func setNamespace(ns *corev1.Namespace) {
	if ns.Name != "" {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	}
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}

// setSecret defaults the type to Opaque and folds stringData into data, as
// upstream's conversion to the internal type does (stringData is write-only
// and wins over data for the same key).
func setSecret(s *corev1.Secret) {
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	if len(s.StringData) > 0 {
		if s.Data == nil {
			s.Data = make(map[string][]byte, len(s.StringData))
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
	}
	s.StringData = nil
}

func setEndpoints(ep *corev1.Endpoints) {
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Ports {
			if p := &ep.Subsets[i].Ports[j]; p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
		}
	}
}

// setEndpointSlice is upstream's discovery/v1 SetDefaults_EndpointPort: a
// port's name defaults to "" and its protocol to TCP.
func setEndpointSlice(s *discoveryv1.EndpointSlice) {
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Name == nil {
			p.Name = new(string)
		}
		if p.Protocol == nil {
			tcp := corev1.ProtocolTCP
			p.Protocol = &tcp
		}
	}
}

// setNode: allocatable defaults to capacity; quantities are rounded up to
// milli precision.
func setNode(n *corev1.Node) {
	if n.Status.Allocatable == nil && n.Status.Capacity != nil {
		n.Status.Allocatable = make(corev1.ResourceList, len(n.Status.Capacity))
		for k, v := range n.Status.Capacity {
			n.Status.Allocatable[k] = v.DeepCopy()
		}
	}
	setResourceList(n.Status.Capacity)
	setResourceList(n.Status.Allocatable)
}

// setService: type ClusterIP, sessionAffinity None (with its config only
// for ClientIP), port protocol TCP and targetPort = port, traffic
// policies, allocateLoadBalancerNodePorts, and ipFamilyPolicy (which
// upstream sets while allocating). clusterIP and clusterIPs are kept in
// step, as upstream's strategy does before validation.
func setService(svc *corev1.Service) {
	spec := &svc.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if spec.SessionAffinity == corev1.ServiceAffinityNone {
		spec.SessionAffinityConfig = nil
	}
	if spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		c := spec.SessionAffinityConfig
		if c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{
				ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptrTo(corev1.DefaultClientIPServiceAffinitySeconds)},
			}
		}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		sp := &spec.Ports[i]
		if sp.Protocol == "" {
			sp.Protocol = corev1.ProtocolTCP
		}
		if sp.TargetPort == intstr.FromInt32(0) || sp.TargetPort == intstr.FromString("") {
			sp.TargetPort = intstr.FromInt32(sp.Port)
		}
	}
	externallyAccessible := spec.Type == corev1.ServiceTypeLoadBalancer || spec.Type == corev1.ServiceTypeNodePort ||
		(spec.Type == corev1.ServiceTypeClusterIP && len(spec.ExternalIPs) > 0)
	if externallyAccessible && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil &&
		(spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer || spec.Type == corev1.ServiceTypeClusterIP) {
		spec.InternalTrafficPolicy = ptrTo(corev1.ServiceInternalTrafficPolicyCluster)
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer {
		if spec.AllocateLoadBalancerNodePorts == nil {
			spec.AllocateLoadBalancerNodePorts = ptrTo(true)
		}
		for i := range svc.Status.LoadBalancer.Ingress {
			if ing := &svc.Status.LoadBalancer.Ingress[i]; ing.IP != "" && ing.IPMode == nil {
				ing.IPMode = ptrTo(corev1.LoadBalancerIPModeVIP)
			}
		}
	}

	if spec.Type != corev1.ServiceTypeExternalName {
		switch {
		case spec.ClusterIP != "" && len(spec.ClusterIPs) == 0:
			spec.ClusterIPs = []string{spec.ClusterIP}
		case spec.ClusterIP == "" && len(spec.ClusterIPs) > 0:
			spec.ClusterIP = spec.ClusterIPs[0]
		}
		if spec.IPFamilyPolicy == nil {
			// Headless services without a selector get endpoints of every
			// family a controller writes; everything else is single-stack.
			headless := len(spec.ClusterIPs) == 1 && spec.ClusterIPs[0] == corev1.ClusterIPNone
			if headless && len(spec.Selector) == 0 {
				spec.IPFamilyPolicy = ptrTo(corev1.IPFamilyPolicyRequireDualStack)
			} else {
				spec.IPFamilyPolicy = ptrTo(corev1.IPFamilyPolicySingleStack)
			}
		}
	}
}

// setPod applies the pod-only defaults, then the pod spec's.
func setPod(p *corev1.Pod) {
	// Requests default to limits when unset. Upstream does this for Pods
	// only, not for pod templates.
	for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range cs {
			r := &cs[i].Resources
			if r.Limits == nil {
				continue
			}
			if r.Requests == nil {
				r.Requests = make(corev1.ResourceList)
			}
			for k, v := range r.Limits {
				if _, ok := r.Requests[k]; !ok {
					r.Requests[k] = v.DeepCopy()
				}
			}
		}
	}
	if p.Spec.EnableServiceLinks == nil {
		p.Spec.EnableServiceLinks = ptrTo(corev1.DefaultEnableServiceLinks)
	}
	if p.Spec.HostNetwork {
		defaultHostNetworkPorts(p.Spec.Containers)
		defaultHostNetworkPorts(p.Spec.InitContainers)
	}
	setPodSpec(&p.Spec)
}

// defaultHostNetworkPorts: on the host network a container port is a host
// port.
func defaultHostNetworkPorts(cs []corev1.Container) {
	for i := range cs {
		for j := range cs[i].Ports {
			if p := &cs[i].Ports[j]; p.HostPort == 0 {
				p.HostPort = p.ContainerPort
			}
		}
	}
}

// setPodSpec holds the defaults of every pod spec, in a Pod or a template.
func setPodSpec(spec *corev1.PodSpec) {
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptrTo(int64(corev1.DefaultTerminationGracePeriodSeconds))
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	// serviceAccount is the deprecated alias of serviceAccountName; upstream's
	// conversions keep the two equal.
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName

	for i := range spec.Volumes {
		setVolume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		setContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		setContainer(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		c := corev1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
		setContainer(&c)
		spec.EphemeralContainers[i].EphemeralContainerCommon = corev1.EphemeralContainerCommon(c)
	}
	setResourceList(spec.Overhead)
}

func setContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		if imageTag(c.Image) == "latest" {
			c.ImagePullPolicy = corev1.PullAlways
		} else {
			c.ImagePullPolicy = corev1.PullIfNotPresent
		}
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FieldRef != nil {
			setObjectFieldSelector(vf.FieldRef)
		}
	}
	setResourceList(c.Resources.Limits)
	setResourceList(c.Resources.Requests)
	setProbe(c.LivenessProbe)
	setProbe(c.ReadinessProbe)
	setProbe(c.StartupProbe)
	if lc := c.Lifecycle; lc != nil {
		for _, h := range []*corev1.LifecycleHandler{lc.PostStart, lc.PreStop} {
			if h != nil {
				setHTTPGetAction(h.HTTPGet)
			}
		}
	}
}

// imageTag returns the tag the image pulls, as upstream's ParseImageName
// sees it: "latest" when neither a tag nor a digest is given, "" for a
// digest alone or an image that is not a valid reference.
func imageTag(image string) string {
	if image == "" || strings.ContainsAny(image, " \t\r\n") {
		return ""
	}
	name, digest, hasDigest := strings.Cut(image, "@")
	if hasDigest && digest == "" {
		return ""
	}
	// The tag follows the last ':' of the last path component; a ':' before
	// the last '/' is a registry port.
	tag := ""
	repo := name
	slash := strings.LastIndex(name, "/")
	if i := strings.LastIndex(name, ":"); i > slash {
		repo, tag = name[:i], name[i+1:]
	}
	// The first component is a registry host when it looks like one; the
	// repository path after it must be lower case.
	if i := strings.Index(repo, "/"); i >= 0 {
		if host := repo[:i]; strings.ContainsAny(host, ".:") || host == "localhost" || strings.ToLower(host) != host {
			repo = repo[i+1:]
		}
	}
	if repo == "" || strings.ToLower(repo) != repo {
		return ""
	}
	if tag == "" && !hasDigest {
		return "latest"
	}
	return tag
}

// setProbe: timeoutSeconds 1, periodSeconds 10, successThreshold 1,
// failureThreshold 3, httpGet path "/" and scheme HTTP, grpc service "".
func setProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	setHTTPGetAction(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = ptrTo("")
	}
}

func setHTTPGetAction(a *corev1.HTTPGetAction) {
	if a == nil {
		return
	}
	if a.Path == "" {
		a.Path = "/"
	}
	if a.Scheme == "" {
		a.Scheme = corev1.URISchemeHTTP
	}
}

func setObjectFieldSelector(s *corev1.ObjectFieldSelector) {
	if s.APIVersion == "" {
		s.APIVersion = "v1"
	}
}

// setResourceList rounds quantities up to milli precision, as upstream does
// for API compatibility.
func setResourceList(list corev1.ResourceList) {
	for k, v := range list {
		v.RoundUp(-3)
		list[k] = v
	}
}

func setVolume(v *corev1.Volume) {
	src := &v.VolumeSource
	if *src == (corev1.VolumeSource{}) {
		src.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	mode := ptrTo(corev1.SecretVolumeSourceDefaultMode)
	switch {
	case src.Secret != nil:
		if src.Secret.DefaultMode == nil {
			src.Secret.DefaultMode = mode
		}
	case src.ConfigMap != nil:
		if src.ConfigMap.DefaultMode == nil {
			src.ConfigMap.DefaultMode = ptrTo(corev1.ConfigMapVolumeSourceDefaultMode)
		}
	case src.DownwardAPI != nil:
		if src.DownwardAPI.DefaultMode == nil {
			src.DownwardAPI.DefaultMode = ptrTo(corev1.DownwardAPIVolumeSourceDefaultMode)
		}
		for i := range src.DownwardAPI.Items {
			if f := src.DownwardAPI.Items[i].FieldRef; f != nil {
				setObjectFieldSelector(f)
			}
		}
	case src.Projected != nil:
		if src.Projected.DefaultMode == nil {
			src.Projected.DefaultMode = ptrTo(corev1.ProjectedVolumeSourceDefaultMode)
		}
		for i := range src.Projected.Sources {
			ps := &src.Projected.Sources[i]
			if ps.DownwardAPI != nil {
				for j := range ps.DownwardAPI.Items {
					if f := ps.DownwardAPI.Items[j].FieldRef; f != nil {
						setObjectFieldSelector(f)
					}
				}
			}
			if t := ps.ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
				t.ExpirationSeconds = ptrTo(int64(3600))
			}
		}
	case src.HostPath != nil:
		if src.HostPath.Type == nil {
			src.HostPath.Type = ptrTo(corev1.HostPathUnset)
		}
	case src.ISCSI != nil:
		if src.ISCSI.ISCSIInterface == "" {
			src.ISCSI.ISCSIInterface = "default"
		}
	case src.RBD != nil:
		if src.RBD.RBDPool == "" {
			src.RBD.RBDPool = "rbd"
		}
		if src.RBD.RadosUser == "" {
			src.RBD.RadosUser = "admin"
		}
		if src.RBD.Keyring == "" {
			src.RBD.Keyring = "/etc/ceph/keyring"
		}
	case src.AzureDisk != nil:
		if src.AzureDisk.CachingMode == nil {
			src.AzureDisk.CachingMode = ptrTo(corev1.AzureDataDiskCachingReadWrite)
		}
		if src.AzureDisk.Kind == nil {
			src.AzureDisk.Kind = ptrTo(corev1.AzureSharedBlobDisk)
		}
		if src.AzureDisk.FSType == nil {
			src.AzureDisk.FSType = ptrTo("ext4")
		}
		if src.AzureDisk.ReadOnly == nil {
			src.AzureDisk.ReadOnly = ptrTo(false)
		}
	case src.ScaleIO != nil:
		if src.ScaleIO.StorageMode == "" {
			src.ScaleIO.StorageMode = "ThinProvisioned"
		}
		if src.ScaleIO.FSType == "" {
			src.ScaleIO.FSType = "xfs"
		}
	case src.Ephemeral != nil:
		if t := src.Ephemeral.VolumeClaimTemplate; t != nil && t.Spec.VolumeMode == nil {
			t.Spec.VolumeMode = ptrTo(corev1.PersistentVolumeFilesystem)
		}
	}
}

// setReplicationController is upstream's SetDefaults_ReplicationController:
// an empty selector and empty object labels default to the template's
// labels, replicas to 1; the template's pod spec is defaulted as in a
// ReplicaSet's template.
func setReplicationController(rc *corev1.ReplicationController) {
	if t := rc.Spec.Template; t != nil {
		if len(t.Labels) > 0 {
			if len(rc.Spec.Selector) == 0 {
				rc.Spec.Selector = maps.Clone(t.Labels)
			}
			if len(rc.Labels) == 0 {
				rc.Labels = maps.Clone(t.Labels)
			}
		}
		setPodSpec(&t.Spec)
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = ptrTo(int32(1))
	}
}

// ---------------------------------------------------------------------------
// apps/v1

func setReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = ptrTo(int32(1))
	}
	setPodSpec(&rs.Spec.Template.Spec)
}

// setDeployment: 1 replica, RollingUpdate with 25% surge and 25%
// unavailable, 10 old ReplicaSets kept, 600s progress deadline.
func setDeployment(d *appsv1.Deployment) {
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = ptrTo(int32(1))
	}
	strategy := &d.Spec.Strategy
	if strategy.Type == "" {
		strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if strategy.RollingUpdate == nil {
			strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if strategy.RollingUpdate.MaxUnavailable == nil {
			strategy.RollingUpdate.MaxUnavailable = ptrTo(intstr.FromString("25%"))
		}
		if strategy.RollingUpdate.MaxSurge == nil {
			strategy.RollingUpdate.MaxSurge = ptrTo(intstr.FromString("25%"))
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptrTo(int32(10))
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = ptrTo(int32(600))
	}
	setPodSpec(&d.Spec.Template.Spec)
}

// setDaemonSet is upstream's SetDefaults_DaemonSet: RollingUpdate with
// maxUnavailable 1 and maxSurge 0, 10 old revisions kept.
func setDaemonSet(ds *appsv1.DaemonSet) {
	u := &ds.Spec.UpdateStrategy
	if u.Type == "" {
		u.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if u.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if u.RollingUpdate == nil {
			u.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if u.RollingUpdate.MaxUnavailable == nil {
			u.RollingUpdate.MaxUnavailable = ptrTo(intstr.FromInt32(1))
		}
		if u.RollingUpdate.MaxSurge == nil {
			u.RollingUpdate.MaxSurge = ptrTo(intstr.FromInt32(0))
		}
	}
	if ds.Spec.RevisionHistoryLimit == nil {
		ds.Spec.RevisionHistoryLimit = ptrTo(int32(10))
	}
	setPodSpec(&ds.Spec.Template.Spec)
}

// setStatefulSet is upstream's SetDefaults_StatefulSet: OrderedReady pod
// management, RollingUpdate with partition 0, 1 replica, 10 old revisions
// kept, PVCs retained on delete and scale-down.
func setStatefulSet(ss *appsv1.StatefulSet) {
	if ss.Spec.PodManagementPolicy == "" {
		ss.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	u := &ss.Spec.UpdateStrategy
	if u.Type == "" {
		u.Type = appsv1.RollingUpdateStatefulSetStrategyType
	}
	if u.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		if u.RollingUpdate == nil {
			u.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
		if u.RollingUpdate.Partition == nil {
			u.RollingUpdate.Partition = ptrTo(int32(0))
		}
	}
	if ss.Spec.PersistentVolumeClaimRetentionPolicy == nil {
		ss.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if p := ss.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenDeleted == "" {
		p.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if p := ss.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenScaled == "" {
		p.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if ss.Spec.Replicas == nil {
		ss.Spec.Replicas = ptrTo(int32(1))
	}
	if ss.Spec.RevisionHistoryLimit == nil {
		ss.Spec.RevisionHistoryLimit = ptrTo(int32(10))
	}
	for i := range ss.Spec.VolumeClaimTemplates {
		if t := &ss.Spec.VolumeClaimTemplates[i]; t.Spec.VolumeMode == nil {
			t.Spec.VolumeMode = ptrTo(corev1.PersistentVolumeFilesystem)
		}
	}
	setPodSpec(&ss.Spec.Template.Spec)
}

// ---------------------------------------------------------------------------
// batch/v1

// setJob is upstream's SetDefaults_Job: completions and parallelism 1 when
// neither is set (parallelism 1 when only it is unset), backoffLimit 6
// (MaxInt32 with a per-index limit), NonIndexed completions, not
// suspended, failed pods replaced once terminating (once failed with a pod
// failure policy), the Job labelled as its template when it has no labels,
// and a pod failure policy's onPodConditions status True.
func setJob(j *batchv1.Job) {
	if j.Spec.Completions == nil && j.Spec.Parallelism == nil {
		j.Spec.Completions = ptrTo(int32(1))
		j.Spec.Parallelism = ptrTo(int32(1))
	}
	if j.Spec.Parallelism == nil {
		j.Spec.Parallelism = ptrTo(int32(1))
	}
	if j.Spec.BackoffLimit == nil {
		if j.Spec.BackoffLimitPerIndex != nil {
			j.Spec.BackoffLimit = ptrTo(int32(math.MaxInt32))
		} else {
			j.Spec.BackoffLimit = ptrTo(int32(6))
		}
	}
	if len(j.Labels) == 0 && len(j.Spec.Template.Labels) > 0 {
		j.Labels = maps.Clone(j.Spec.Template.Labels)
	}
	if j.Spec.CompletionMode == nil {
		j.Spec.CompletionMode = ptrTo(batchv1.NonIndexedCompletion)
	}
	if j.Spec.Suspend == nil {
		j.Spec.Suspend = ptrTo(false)
	}
	if j.Spec.PodReplacementPolicy == nil {
		if j.Spec.PodFailurePolicy != nil {
			j.Spec.PodReplacementPolicy = ptrTo(batchv1.Failed)
		} else {
			j.Spec.PodReplacementPolicy = ptrTo(batchv1.TerminatingOrFailed)
		}
	}
	if p := j.Spec.PodFailurePolicy; p != nil {
		for i := range p.Rules {
			for k := range p.Rules[i].OnPodConditions {
				if c := &p.Rules[i].OnPodConditions[k]; c.Status == "" {
					c.Status = corev1.ConditionTrue
				}
			}
		}
	}
	setPodSpec(&j.Spec.Template.Spec)
}

// setCronJob is upstream's SetDefaults_CronJob: Allow concurrency, not
// suspended, 3 successful and 1 failed Job kept. The Job template's pod
// spec is defaulted; the Job's own defaults come when it is created.
func setCronJob(cj *batchv1.CronJob) {
	if cj.Spec.ConcurrencyPolicy == "" {
		cj.Spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if cj.Spec.Suspend == nil {
		cj.Spec.Suspend = ptrTo(false)
	}
	if cj.Spec.SuccessfulJobsHistoryLimit == nil {
		cj.Spec.SuccessfulJobsHistoryLimit = ptrTo(int32(3))
	}
	if cj.Spec.FailedJobsHistoryLimit == nil {
		cj.Spec.FailedJobsHistoryLimit = ptrTo(int32(1))
	}
	setPodSpec(&cj.Spec.JobTemplate.Spec.Template.Spec)
}
