package kubelet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// This file turns a pod spec into CRI configs: what RunPodSandbox and
// CreateContainer are asked for.

// podLogDir is where the runtime writes a pod's container logs, upstream's
// layout: <logs>/<namespace>_<name>_<uid>.
func (k *Kubelet) podLogDir(pod *corev1.Pod) string {
	return filepath.Join(k.cfg.PodLogsDir, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID))
}

// sandboxConfig is a pod's RunPodSandbox config for an attempt.
func (k *Kubelet) sandboxConfig(pod *corev1.Pod, attempt uint32) *runtimeapi.PodSandboxConfig {
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	if pod.Spec.HostNetwork {
		hostname = k.cfg.NodeName
		if !k.cfg.Hollow {
			if h, err := os.Hostname(); err == nil {
				hostname = h
			}
		}
	}
	if len(hostname) > 63 {
		hostname = strings.TrimRight(hostname[:63], "-.")
	}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt},
		Hostname:     hostname,
		LogDirectory: k.podLogDir(pod),
		DnsConfig:    k.dnsConfig(pod),
		Labels:       k.podLabels(pod),
		Annotations:  pod.Annotations,
		Linux:        k.linuxSandbox(pod),
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			proto := runtimeapi.Protocol_TCP
			switch p.Protocol {
			case corev1.ProtocolUDP:
				proto = runtimeapi.Protocol_UDP
			case corev1.ProtocolSCTP:
				proto = runtimeapi.Protocol_SCTP
			}
			cfg.PortMappings = append(cfg.PortMappings, &runtimeapi.PortMapping{Protocol: proto,
				ContainerPort: p.ContainerPort, HostPort: p.HostPort, HostIp: p.HostIP})
		}
	}
	return cfg
}

// dnsConfig is the pod's resolv.conf: ClusterFirst uses the cluster's DNS
// when one is configured (otherwise, as upstream, the node's); Default
// leaves it to the runtime, which copies the host's; None takes only the
// pod's dnsConfig, which is appended in every case.
func (k *Kubelet) dnsConfig(pod *corev1.Pod) *runtimeapi.DNSConfig {
	var d *runtimeapi.DNSConfig
	policy := pod.Spec.DNSPolicy
	if pod.Spec.HostNetwork && policy != corev1.DNSClusterFirstWithHostNet && policy != corev1.DNSNone {
		policy = corev1.DNSDefault
	}
	switch policy {
	case corev1.DNSNone:
		d = &runtimeapi.DNSConfig{}
	case corev1.DNSDefault:
	default: // ClusterFirst, ClusterFirstWithHostNet
		if len(k.cfg.ClusterDNS) > 0 {
			dom := k.cfg.ClusterDomain
			d = &runtimeapi.DNSConfig{Servers: k.cfg.ClusterDNS,
				Searches: []string{pod.Namespace + ".svc." + dom, "svc." + dom, dom}, Options: []string{"ndots:5"}}
		}
	}
	if pc := pod.Spec.DNSConfig; pc != nil {
		if d == nil {
			d = &runtimeapi.DNSConfig{}
		}
		d.Servers = append(d.Servers, pc.Nameservers...)
		d.Searches = append(d.Searches, pc.Searches...)
		for _, o := range pc.Options {
			if o.Value != nil {
				d.Options = append(d.Options, o.Name+":"+*o.Value)
			} else {
				d.Options = append(d.Options, o.Name)
			}
		}
	}
	return d
}

func (k *Kubelet) namespaces(pod *corev1.Pod) *runtimeapi.NamespaceOption {
	ns := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
	if pod.Spec.HostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	}
	if pod.Spec.HostIPC {
		ns.Ipc = runtimeapi.NamespaceMode_NODE
	}
	switch {
	case pod.Spec.HostPID:
		ns.Pid = runtimeapi.NamespaceMode_NODE
	case pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace:
		ns.Pid = runtimeapi.NamespaceMode_POD
	}
	return ns
}

// seccomp turns a seccomp profile into CRI's; nil asks for nothing (the
// runtime's default, unconfined for containerd).
func seccomp(p *corev1.SeccompProfile) *runtimeapi.SecurityProfile {
	if p == nil {
		return nil
	}
	switch p.Type {
	case corev1.SeccompProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
	case corev1.SeccompProfileTypeLocalhost:
		lp := ""
		if p.LocalhostProfile != nil {
			lp = *p.LocalhostProfile
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: lp}
	}
	return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
}

func (k *Kubelet) linuxSandbox(pod *corev1.Pod) *runtimeapi.LinuxPodSandboxConfig {
	l := &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{NamespaceOptions: k.namespaces(pod)}}
	if k.cfg.CgroupParent != "" {
		l.CgroupParent = filepath.Join(k.cfg.CgroupParent, "pod"+string(pod.UID))
	}
	for _, c := range pod.Spec.Containers {
		if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
			l.SecurityContext.Privileged = true
		}
	}
	if sc := pod.Spec.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			l.SecurityContext.RunAsUser = &runtimeapi.Int64Value{Value: *sc.RunAsUser}
		}
		if sc.RunAsGroup != nil {
			l.SecurityContext.RunAsGroup = &runtimeapi.Int64Value{Value: *sc.RunAsGroup}
		}
		l.SecurityContext.SupplementalGroups = sc.SupplementalGroups
		if sc.FSGroup != nil {
			l.SecurityContext.SupplementalGroups = append(l.SecurityContext.SupplementalGroups, *sc.FSGroup)
		}
		l.SecurityContext.Seccomp = seccomp(sc.SeccompProfile)
		if len(sc.Sysctls) > 0 {
			l.Sysctls = map[string]string{}
			for _, s := range sc.Sysctls {
				l.Sysctls[s.Name] = s.Value
			}
		}
	}
	return l
}

// containerConfig is one container's CreateContainer config.
func (k *Kubelet) containerConfig(ctx context.Context, pod *corev1.Pod, c *corev1.Container, attempt uint32, podIP string) (*runtimeapi.ContainerConfig, error) {
	env, err := k.containerEnv(ctx, pod, c, podIP)
	if err != nil {
		return nil, err
	}
	vars := make(map[string]string, len(env))
	for _, e := range env {
		vars[e.Key] = string(e.Value)
	}
	mounts, err := k.mounts(pod, c)
	if err != nil {
		return nil, err
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata:   &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: attempt},
		Image:      &runtimeapi.ImageSpec{Image: c.Image, UserSpecifiedImage: c.Image},
		Command:    expandAll(c.Command, vars),
		Args:       expandAll(c.Args, vars),
		WorkingDir: c.WorkingDir,
		Envs:       env,
		Mounts:     mounts,
		Labels:     k.containerLabels(pod, c.Name),
		LogPath:    filepath.Join(c.Name, strconv.Itoa(int(attempt))+".log"),
		Stdin:      c.Stdin, StdinOnce: c.StdinOnce, Tty: c.TTY,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       k.linuxResources(pod, c),
			SecurityContext: k.containerSecurity(pod, c),
		},
	}
	return cfg, nil
}

// linuxResources maps requests and limits to cgroup settings, upstream's
// arithmetic: shares from the cpu request (min 2), a CFS quota from the
// cpu limit over a 100 ms period, the memory limit, and an OOM score by QoS.
func (k *Kubelet) linuxResources(pod *corev1.Pod, c *corev1.Container) *runtimeapi.LinuxContainerResources {
	r := &runtimeapi.LinuxContainerResources{CpuShares: 2}
	req, lim := c.Resources.Requests, c.Resources.Limits
	cpuReq, hasReq := req[corev1.ResourceCPU]
	cpuLim, hasLim := lim[corev1.ResourceCPU]
	if !hasReq && hasLim {
		cpuReq, hasReq = cpuLim, true
	}
	if hasReq {
		r.CpuShares = max(cpuReq.MilliValue()*1024/1000, 2)
	}
	if hasLim {
		r.CpuPeriod = 100000
		r.CpuQuota = max(cpuLim.MilliValue()*100000/1000, 1000)
	}
	if m, ok := lim[corev1.ResourceMemory]; ok {
		r.MemoryLimitInBytes = m.Value()
	}
	switch pod.Status.QOSClass {
	case corev1.PodQOSGuaranteed:
		r.OomScoreAdj = -997
	case corev1.PodQOSBestEffort:
		r.OomScoreAdj = 1000
	default:
		adj := int64(1000)
		mem := k.cfg.Capacity[corev1.ResourceMemory]
		if m, ok := req[corev1.ResourceMemory]; ok && mem.Value() > 0 {
			adj = 1000 - 1000*m.Value()/mem.Value()
		}
		r.OomScoreAdj = min(max(adj, 2), 999)
	}
	return r
}

func (k *Kubelet) containerSecurity(pod *corev1.Pod, c *corev1.Container) *runtimeapi.LinuxContainerSecurityContext {
	s := &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: k.namespaces(pod)}
	if psc := pod.Spec.SecurityContext; psc != nil {
		if psc.RunAsUser != nil {
			s.RunAsUser = &runtimeapi.Int64Value{Value: *psc.RunAsUser}
		}
		if psc.RunAsGroup != nil {
			s.RunAsGroup = &runtimeapi.Int64Value{Value: *psc.RunAsGroup}
		}
		s.SupplementalGroups = psc.SupplementalGroups
		if psc.FSGroup != nil {
			s.SupplementalGroups = append(s.SupplementalGroups, *psc.FSGroup)
		}
		s.Seccomp = seccomp(psc.SeccompProfile)
	}
	sc := c.SecurityContext
	if sc == nil {
		return s
	}
	if sc.RunAsUser != nil {
		s.RunAsUser = &runtimeapi.Int64Value{Value: *sc.RunAsUser}
	}
	if sc.RunAsGroup != nil {
		s.RunAsGroup = &runtimeapi.Int64Value{Value: *sc.RunAsGroup}
	}
	if sc.SeccompProfile != nil {
		s.Seccomp = seccomp(sc.SeccompProfile)
	}
	if sc.Privileged != nil {
		s.Privileged = *sc.Privileged
	}
	if sc.ReadOnlyRootFilesystem != nil {
		s.ReadonlyRootfs = *sc.ReadOnlyRootFilesystem
	}
	if sc.AllowPrivilegeEscalation != nil {
		s.NoNewPrivs = !*sc.AllowPrivilegeEscalation
	}
	if sc.Capabilities != nil {
		s.Capabilities = &runtimeapi.Capability{}
		for _, c := range sc.Capabilities.Add {
			s.Capabilities.AddCapabilities = append(s.Capabilities.AddCapabilities, string(c))
		}
		for _, c := range sc.Capabilities.Drop {
			s.Capabilities.DropCapabilities = append(s.Capabilities.DropCapabilities, string(c))
		}
	}
	return s
}

// mounts supports emptyDir (a directory under the kubelet's root) and
// hostPath volumes; other kinds are refused, so a pod that needs them shows
// CreateContainerConfigError instead of running without its files.
func (k *Kubelet) mounts(pod *corev1.Pod, c *corev1.Container) ([]*runtimeapi.Mount, error) {
	if len(c.VolumeMounts) == 0 {
		return nil, nil
	}
	vols := map[string]*corev1.Volume{}
	for i := range pod.Spec.Volumes {
		vols[pod.Spec.Volumes[i].Name] = &pod.Spec.Volumes[i]
	}
	var out []*runtimeapi.Mount
	for _, vm := range c.VolumeMounts {
		v := vols[vm.Name]
		if v == nil {
			return nil, fmt.Errorf("volume %q is not in the pod", vm.Name)
		}
		var host string
		switch {
		case v.EmptyDir != nil:
			host = filepath.Join(k.cfg.RootDir, "pods", string(pod.UID), "volumes", "empty-dir", v.Name)
			if !k.cfg.Hollow {
				if err := os.MkdirAll(host, 0o777); err != nil {
					return nil, fmt.Errorf("emptyDir %s: %w", v.Name, err)
				}
			}
		case v.HostPath != nil:
			host = v.HostPath.Path
		default:
			if k.cfg.Hollow {
				continue // nothing is mounted on a hollow node anyway
			}
			return nil, fmt.Errorf("volume %q: only emptyDir and hostPath volumes are supported", v.Name)
		}
		if vm.SubPath != "" {
			host = filepath.Join(host, vm.SubPath)
		}
		out = append(out, &runtimeapi.Mount{ContainerPath: vm.MountPath, HostPath: host, Readonly: vm.ReadOnly})
	}
	return out, nil
}

// containerEnv resolves a container's environment: envFrom, then env in
// order, with $(VAR) references to earlier variables expanded; values from
// the downward API (fieldRef, resourceFieldRef), ConfigMaps and Secrets.
func (k *Kubelet) containerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container, podIP string) ([]*runtimeapi.KeyValue, error) {
	vars := map[string]string{}
	var order []string
	set := func(key, v string) {
		if _, ok := vars[key]; !ok {
			order = append(order, key)
		}
		vars[key] = v
	}
	for _, ef := range c.EnvFrom {
		data, err := k.envSource(ctx, pod.Namespace, ef)
		if err != nil {
			return nil, err
		}
		for key, v := range data {
			set(ef.Prefix+key, v)
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, vars))
			continue
		}
		v, err := k.envValueFrom(ctx, pod, c, e.ValueFrom, podIP)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		set(e.Name, v)
	}
	out := make([]*runtimeapi.KeyValue, 0, len(order))
	for _, key := range order {
		out = append(out, &runtimeapi.KeyValue{Key: key, Value: []byte(vars[key])})
	}
	return out, nil
}

func (k *Kubelet) envSource(ctx context.Context, ns string, ef corev1.EnvFromSource) (map[string]string, error) {
	switch {
	case ef.ConfigMapRef != nil:
		cm, err := k.client.CoreV1().ConfigMaps(ns).Get(ctx, ef.ConfigMapRef.Name, metav1.GetOptions{})
		if err != nil {
			if ef.ConfigMapRef.Optional != nil && *ef.ConfigMapRef.Optional {
				return nil, nil
			}
			return nil, fmt.Errorf("configmap %s: %w", ef.ConfigMapRef.Name, err)
		}
		return cm.Data, nil
	case ef.SecretRef != nil:
		s, err := k.client.CoreV1().Secrets(ns).Get(ctx, ef.SecretRef.Name, metav1.GetOptions{})
		if err != nil {
			if ef.SecretRef.Optional != nil && *ef.SecretRef.Optional {
				return nil, nil
			}
			return nil, fmt.Errorf("secret %s: %w", ef.SecretRef.Name, err)
		}
		out := make(map[string]string, len(s.Data))
		for key, v := range s.Data {
			out[key] = string(v)
		}
		return out, nil
	}
	return nil, nil
}

func (k *Kubelet) envValueFrom(ctx context.Context, pod *corev1.Pod, c *corev1.Container, vf *corev1.EnvVarSource, podIP string) (string, error) {
	switch {
	case vf.FieldRef != nil:
		return k.fieldRef(pod, vf.FieldRef.FieldPath, podIP)
	case vf.ResourceFieldRef != nil:
		return resourceFieldRef(c, vf.ResourceFieldRef, k.cfg.Capacity)
	case vf.ConfigMapKeyRef != nil:
		r := vf.ConfigMapKeyRef
		cm, err := k.client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		if err == nil {
			if v, ok := cm.Data[r.Key]; ok {
				return v, nil
			}
			err = fmt.Errorf("configmap %s has no key %q", r.Name, r.Key)
		}
		if r.Optional != nil && *r.Optional {
			return "", nil
		}
		return "", err
	case vf.SecretKeyRef != nil:
		r := vf.SecretKeyRef
		s, err := k.client.CoreV1().Secrets(pod.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		if err == nil {
			if v, ok := s.Data[r.Key]; ok {
				return string(v), nil
			}
			err = fmt.Errorf("secret %s has no key %q", r.Name, r.Key)
		}
		if r.Optional != nil && *r.Optional {
			return "", nil
		}
		return "", err
	}
	return "", nil
}

func (k *Kubelet) fieldRef(pod *corev1.Pod, path, podIP string) (string, error) {
	if key, ok := strings.CutPrefix(path, "metadata.labels['"); ok {
		return pod.Labels[strings.TrimSuffix(key, "']")], nil
	}
	if key, ok := strings.CutPrefix(path, "metadata.annotations['"); ok {
		return pod.Annotations[strings.TrimSuffix(key, "']")], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs":
		return k.cfg.NodeIP, nil
	case "status.podIP", "status.podIPs":
		return podIP, nil
	}
	return "", fmt.Errorf("unsupported fieldPath %q", path)
}

func resourceFieldRef(c *corev1.Container, r *corev1.ResourceFieldSelector, node corev1.ResourceList) (string, error) {
	var q resource.Quantity
	var ok bool
	switch {
	case strings.HasPrefix(r.Resource, "limits."):
		q, ok = c.Resources.Limits[corev1.ResourceName(strings.TrimPrefix(r.Resource, "limits."))]
		if !ok {
			q, ok = node[corev1.ResourceName(strings.TrimPrefix(r.Resource, "limits."))]
		}
	case strings.HasPrefix(r.Resource, "requests."):
		q, ok = c.Resources.Requests[corev1.ResourceName(strings.TrimPrefix(r.Resource, "requests."))]
	default:
		return "", fmt.Errorf("unsupported resource %q", r.Resource)
	}
	if !ok {
		return "0", nil
	}
	div := r.Divisor
	if div.IsZero() {
		if strings.HasSuffix(r.Resource, "cpu") {
			// cores, rounded up, as upstream
			return strconv.FormatInt((q.MilliValue()+999)/1000, 10), nil
		}
		return strconv.FormatInt(q.Value(), 10), nil
	}
	return strconv.FormatInt((q.MilliValue()+div.MilliValue()-1)/div.MilliValue(), 10), nil
}

// expand replaces $(VAR) with earlier variables' values; $$ is a literal
// $, an unknown $(VAR) stays as written (upstream's rules).
func expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

func expandAll(ss []string, vars map[string]string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = expand(s, vars)
	}
	return out
}
