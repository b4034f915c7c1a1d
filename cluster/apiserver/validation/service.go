package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// maxClientIPServiceAffinitySeconds is upstream's
// core.MaxClientIPServiceAffinitySeconds (one day).
const maxClientIPServiceAffinitySeconds = 24 * 60 * 60

var (
	supportedSessionAffinityType = sets.New(corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone)
	supportedServiceType         = sets.New(corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort,
		corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName)
	supportedServiceInternalTrafficPolicy = sets.New(corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal)
	supportedServiceExternalTrafficPolicy = sets.New(corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal)
	supportedServiceIPFamily              = sets.New(corev1.IPv4Protocol, corev1.IPv6Protocol)
	supportedServiceIPFamilyPolicy        = sets.New(corev1.IPFamilyPolicySingleStack,
		corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack)
	supportedTrafficDistribution = sets.New(corev1.ServiceTrafficDistributionPreferClose,
		corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode)
)

func isHeadlessService(svc *corev1.Service) bool {
	return len(svc.Spec.ClusterIPs) == 1 && svc.Spec.ClusterIPs[0] == corev1.ClusterIPNone
}

// externallyAccessible: reachable from outside the cluster network.
func externallyAccessible(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer ||
		svc.Spec.Type == corev1.ServiceTypeNodePort ||
		(svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
}

func needsHealthCheck(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// validateService validates a Service as a whole. Fields the registry
// allocates (clusterIP(s), ipFamilies, nodePorts, healthCheckNodePort) are
// checked when present but not required.
func validateService(svc *corev1.Service) field.ErrorList {
	allErrs := validateObjectMeta(&svc.ObjectMeta, true, apimachineryvalidation.NameIsDNSLabel)
	specPath := field.NewPath("spec")
	spec := &svc.Spec
	headless := isHeadlessService(svc)

	if len(spec.Ports) == 0 && !headless && spec.Type != corev1.ServiceTypeExternalName {
		allErrs = append(allErrs, field.Required(specPath.Child("ports"), ""))
	}
	switch spec.Type {
	case corev1.ServiceTypeLoadBalancer:
		if headless {
			allErrs = append(allErrs, field.Invalid(specPath.Child("clusterIPs").Index(0), spec.ClusterIPs[0], "may not be set to 'None' for LoadBalancer services"))
		}
	case corev1.ServiceTypeNodePort:
		if headless {
			allErrs = append(allErrs, field.Invalid(specPath.Child("clusterIPs").Index(0), spec.ClusterIPs[0], "may not be set to 'None' for NodePort services"))
		}
	case corev1.ServiceTypeExternalName:
		if len(spec.ClusterIPs) > 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(spec.IPFamilies) > 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if spec.IPFamilyPolicy != nil {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		// The CNAME may carry a trailing dot.
		if cname := strings.TrimSuffix(spec.ExternalName, "."); cname != "" {
			allErrs = append(allErrs, validateDNS1123Subdomain(cname, specPath.Child("externalName"))...)
		} else {
			allErrs = append(allErrs, field.Required(specPath.Child("externalName"), ""))
		}
	}

	portsPath := specPath.Child("ports")
	allPortNames := sets.New[string]()
	for i := range spec.Ports {
		allErrs = append(allErrs, validateServicePort(&spec.Ports[i], len(spec.Ports) > 1, allPortNames, portsPath.Index(i))...)
	}

	if spec.Selector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabels(spec.Selector, specPath.Child("selector"))...)
	}

	if spec.SessionAffinity == "" {
		allErrs = append(allErrs, field.Required(specPath.Child("sessionAffinity"), ""))
	} else if !supportedSessionAffinityType.Has(spec.SessionAffinity) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("sessionAffinity"), spec.SessionAffinity, sets.List(supportedSessionAffinityType)))
	}
	switch spec.SessionAffinity {
	case corev1.ServiceAffinityClientIP:
		allErrs = append(allErrs, validateClientIPAffinityConfig(spec.SessionAffinityConfig, specPath.Child("sessionAffinityConfig"))...)
	case corev1.ServiceAffinityNone:
		if spec.SessionAffinityConfig != nil {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("sessionAffinityConfig"), fmt.Sprintf("must not be set when session affinity is %s", corev1.ServiceAffinityNone)))
		}
	}

	allErrs = append(allErrs, validateServiceClusterIPsRelatedFields(svc)...)

	ipPath := specPath.Child("externalIPs")
	for i, ip := range spec.ExternalIPs {
		if errs := validation.IsValidIP(ipPath.Index(i), ip); len(errs) != 0 {
			allErrs = append(allErrs, errs...)
		} else {
			allErrs = append(allErrs, validateNonSpecialIP(ip, ipPath.Index(i))...)
		}
	}

	if spec.Type == "" {
		allErrs = append(allErrs, field.Required(specPath.Child("type"), ""))
	} else if !supportedServiceType.Has(spec.Type) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("type"), spec.Type, sets.List(supportedServiceType)))
	}

	if spec.Type == corev1.ServiceTypeClusterIP {
		for i := range spec.Ports {
			if spec.Ports[i].NodePort != 0 {
				allErrs = append(allErrs, field.Forbidden(portsPath.Index(i).Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}

	// (protocol, nodePort) and (protocol, port) must be unique.
	nodePorts := map[corev1.ServicePort]bool{}
	ports := map[corev1.ServicePort]bool{}
	for i, port := range spec.Ports {
		if port.NodePort != 0 {
			key := corev1.ServicePort{Protocol: port.Protocol, NodePort: port.NodePort}
			if nodePorts[key] {
				allErrs = append(allErrs, field.Duplicate(portsPath.Index(i).Child("nodePort"), port.NodePort))
			}
			nodePorts[key] = true
		}
		key := corev1.ServicePort{Protocol: port.Protocol, Port: port.Port}
		if ports[key] {
			allErrs = append(allErrs, field.Duplicate(portsPath.Index(i), key))
		}
		ports[key] = true
	}

	if len(spec.LoadBalancerSourceRanges) > 0 {
		p := specPath.Child("loadBalancerSourceRanges")
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			allErrs = append(allErrs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		for i, value := range spec.LoadBalancerSourceRanges {
			// Historically these may be space-padded.
			allErrs = append(allErrs, validation.IsValidCIDR(p.Index(i), strings.TrimSpace(value))...)
		}
	} else if val, ok := svc.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey]; ok {
		p := metadataPath.Child("annotations").Key(corev1.AnnotationLoadBalancerSourceRangesKey)
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			allErrs = append(allErrs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		if val = strings.TrimSpace(val); val != "" {
			for _, value := range strings.Split(val, ",") {
				allErrs = append(allErrs, validation.IsValidCIDR(p, strings.TrimSpace(value))...)
			}
		}
	}

	if spec.AllocateLoadBalancerNodePorts != nil && spec.Type != corev1.ServiceTypeLoadBalancer {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer && spec.AllocateLoadBalancerNodePorts == nil {
		allErrs = append(allErrs, field.Required(specPath.Child("allocateLoadBalancerNodePorts"), ""))
	}

	allErrs = append(allErrs, validateLoadBalancerClass(nil, svc)...)

	// External traffic policy.
	if !externallyAccessible(svc) {
		if spec.ExternalTrafficPolicy != "" {
			allErrs = append(allErrs, field.Invalid(specPath.Child("externalTrafficPolicy"), spec.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
		}
	} else if spec.ExternalTrafficPolicy == "" {
		allErrs = append(allErrs, field.Required(specPath.Child("externalTrafficPolicy"), ""))
	} else if !supportedServiceExternalTrafficPolicy.Has(spec.ExternalTrafficPolicy) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("externalTrafficPolicy"), spec.ExternalTrafficPolicy, sets.List(supportedServiceExternalTrafficPolicy)))
	}
	if !needsHealthCheck(svc) {
		if spec.HealthCheckNodePort != 0 {
			allErrs = append(allErrs, field.Invalid(specPath.Child("healthCheckNodePort"), spec.HealthCheckNodePort,
				"may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		}
	} else if spec.HealthCheckNodePort != 0 {
		for _, msg := range validation.IsValidPortNum(int(spec.HealthCheckNodePort)) {
			allErrs = append(allErrs, field.Invalid(specPath.Child("healthCheckNodePort"), spec.HealthCheckNodePort, msg))
		}
	}

	// Internal traffic policy: required for the types it applies to.
	if spec.InternalTrafficPolicy == nil {
		if spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer || spec.Type == corev1.ServiceTypeClusterIP {
			allErrs = append(allErrs, field.Required(specPath.Child("internalTrafficPolicy"), ""))
		}
	} else if !supportedServiceInternalTrafficPolicy.Has(*spec.InternalTrafficPolicy) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("internalTrafficPolicy"), *spec.InternalTrafficPolicy, sets.List(supportedServiceInternalTrafficPolicy)))
	}

	if spec.TrafficDistribution != nil && !supportedTrafficDistribution.Has(*spec.TrafficDistribution) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("trafficDistribution"), *spec.TrafficDistribution, sets.List(supportedTrafficDistribution)))
	}
	return allErrs
}

func validateServicePort(sp *corev1.ServicePort, requireName bool, allNames sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if requireName && sp.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else if sp.Name != "" {
		allErrs = append(allErrs, validateDNS1123Label(sp.Name, fldPath.Child("name"))...)
		if allNames.Has(sp.Name) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Child("name"), sp.Name))
		} else {
			allNames.Insert(sp.Name)
		}
	}
	for _, msg := range validation.IsValidPortNum(int(sp.Port)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("port"), sp.Port, msg))
	}
	if sp.Protocol == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("protocol"), ""))
	} else if !supportedPortProtocols.Has(sp.Protocol) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("protocol"), sp.Protocol, sets.List(supportedPortProtocols)))
	}
	allErrs = append(allErrs, validatePortNumOrName(sp.TargetPort, fldPath.Child("targetPort"))...)
	if sp.NodePort != 0 {
		for _, msg := range validation.IsValidPortNum(int(sp.NodePort)) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nodePort"), sp.NodePort, msg))
		}
	}
	if sp.AppProtocol != nil {
		allErrs = append(allErrs, validateQualifiedName(*sp.AppProtocol, fldPath.Child("appProtocol"))...)
	}
	return allErrs
}

func validateClientIPAffinityConfig(config *corev1.SessionAffinityConfig, fldPath *field.Path) field.ErrorList {
	msg := fmt.Sprintf("when session affinity type is %s", corev1.ServiceAffinityClientIP)
	switch {
	case config == nil:
		return field.ErrorList{field.Required(fldPath, msg)}
	case config.ClientIP == nil:
		return field.ErrorList{field.Required(fldPath.Child("clientIP"), msg)}
	case config.ClientIP.TimeoutSeconds == nil:
		return field.ErrorList{field.Required(fldPath.Child("clientIP", "timeoutSeconds"), msg)}
	}
	if t := *config.ClientIP.TimeoutSeconds; t <= 0 || t > maxClientIPServiceAffinitySeconds {
		return field.ErrorList{field.Invalid(fldPath.Child("clientIP", "timeoutSeconds"), t,
			fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPServiceAffinitySeconds))}
	}
	return nil
}

// validateServiceClusterIPsRelatedFields checks clusterIP/clusterIPs
// agreement, the IP family fields and dual-stack shape.
func validateServiceClusterIPsRelatedFields(svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var allErrs field.ErrorList
	spec := &svc.Spec
	specPath := field.NewPath("spec")
	clusterIPsPath := specPath.Child("clusterIPs")
	ipFamiliesPath := specPath.Child("ipFamilies")

	if spec.ClusterIP != "" {
		if len(spec.ClusterIPs) == 0 {
			allErrs = append(allErrs, field.Required(clusterIPsPath, ""))
		} else if spec.ClusterIPs[0] != spec.ClusterIP {
			allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(spec.ClusterIPs) != 0 {
		allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}

	seen := sets.New[corev1.IPFamily]()
	for i, f := range spec.IPFamilies {
		if !supportedServiceIPFamily.Has(f) {
			allErrs = append(allErrs, field.NotSupported(ipFamiliesPath.Index(i), f, sets.List(supportedServiceIPFamily)))
		}
		if seen.Has(f) {
			allErrs = append(allErrs, field.Duplicate(ipFamiliesPath.Index(i), f))
		}
		seen.Insert(f)
	}
	if spec.IPFamilyPolicy != nil && !supportedServiceIPFamilyPolicy.Has(*spec.IPFamilyPolicy) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("ipFamilyPolicy"), *spec.IPFamilyPolicy, sets.List(supportedServiceIPFamilyPolicy)))
	}
	hasInvalidIPs := false
	for i, ip := range spec.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(spec.ClusterIPs) > 1 {
				hasInvalidIPs = true
				allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		errs := validation.IsValidIP(clusterIPsPath.Index(i), ip)
		hasInvalidIPs = hasInvalidIPs || len(errs) != 0
		allErrs = append(allErrs, errs...)
	}
	if len(spec.ClusterIPs) > 2 {
		allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "may only hold up to 2 values"))
	}
	if hasInvalidIPs {
		return allErrs
	}
	if len(spec.ClusterIPs) > 1 {
		if dual, err := netutils.IsDualStackIPStrings(spec.ClusterIPs); err != nil || !dual {
			allErrs = append(allErrs, field.Invalid(clusterIPsPath, spec.ClusterIPs, "may specify no more than one IP for each IP family"))
		}
	}
	if !isHeadlessService(svc) {
		for i, ip := range spec.ClusterIPs {
			if i >= len(spec.IPFamilies) {
				break
			}
			if spec.IPFamilies[i] == corev1.IPv4Protocol && netutils.IsIPv6String(ip) {
				allErrs = append(allErrs, field.Invalid(clusterIPsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			}
			if spec.IPFamilies[i] == corev1.IPv6Protocol && !netutils.IsIPv6String(ip) {
				allErrs = append(allErrs, field.Invalid(clusterIPsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return allErrs
}

// validateNonSpecialIP rejects unspecified, loopback and link-local
// addresses, which make no sense as service or endpoint addresses.
func validateNonSpecialIP(ipAddress string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	ip := netutils.ParseIPSloppy(ipAddress)
	if ip == nil {
		return field.ErrorList{field.Invalid(fldPath, ipAddress, "must be a valid IP address")}
	}
	if ip.IsUnspecified() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, fmt.Sprintf("may not be unspecified (%v)", ipAddress)))
	}
	if ip.IsLoopback() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		allErrs = append(allErrs, field.Invalid(fldPath, ipAddress, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return allErrs
}

// validateLoadBalancerClass: only for LoadBalancer services, qualified, and
// fixed once set (old == nil on create).
func validateLoadBalancerClass(oldSvc, svc *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	p := field.NewPath("spec", "loadBalancerClass")
	isLB := svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	if oldSvc != nil && isLB && oldSvc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		o, n := oldSvc.Spec.LoadBalancerClass, svc.Spec.LoadBalancerClass
		if (o == nil) != (n == nil) || (o != nil && *o != *n) {
			allErrs = append(allErrs, field.Invalid(p, n, "may not change once set"))
		}
	}
	if svc.Spec.LoadBalancerClass != nil {
		if isLB {
			allErrs = append(allErrs, validateQualifiedName(*svc.Spec.LoadBalancerClass, p)...)
		} else {
			allErrs = append(allErrs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
	}
	return allErrs
}

func validateServiceUpdate(svc, oldSvc *corev1.Service) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&svc.ObjectMeta, &oldSvc.ObjectMeta)
	allErrs = append(allErrs, validateUpgradeDowngradeClusterIPs(oldSvc, svc)...)
	allErrs = append(allErrs, validateUpgradeDowngradeIPFamilies(oldSvc, svc)...)
	allErrs = append(allErrs, validateLoadBalancerClass(oldSvc, svc)...)
	if needsHealthCheck(oldSvc) && needsHealthCheck(svc) && oldSvc.Spec.HealthCheckNodePort != 0 &&
		svc.Spec.HealthCheckNodePort != oldSvc.Spec.HealthCheckNodePort {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "healthCheckNodePort"), fieldImmutableErrorMsg))
	}
	return append(allErrs, validateService(svc)...)
}

// validateUpgradeDowngradeClusterIPs: the primary cluster IP may not change
// once set (a secondary may be added or released), except to or from
// ExternalName and between headless services.
func validateUpgradeDowngradeClusterIPs(oldSvc, svc *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	if svc.Spec.Type == corev1.ServiceTypeExternalName || oldSvc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadlessService(oldSvc) && isHeadlessService(svc) {
		return nil
	}
	oldIPs, newIPs := oldSvc.Spec.ClusterIPs, svc.Spec.ClusterIPs
	p := field.NewPath("spec", "clusterIPs")
	switch {
	case len(oldIPs) == len(newIPs):
		for i, ip := range oldIPs {
			if ip != newIPs[i] {
				allErrs = append(allErrs, field.Invalid(p.Index(i), newIPs, "may not change once set"))
			}
		}
	case len(oldIPs) > len(newIPs):
		if len(newIPs) == 0 {
			allErrs = append(allErrs, field.Invalid(p.Index(0), newIPs, "primary clusterIP can not be unset"))
		} else if newIPs[0] != oldIPs[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), newIPs, "may not change once set"))
		}
		if len(newIPs) == 1 && (svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary clusterIP"))
		}
	default:
		if len(oldIPs) > 0 && newIPs[0] != oldIPs[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), newIPs, "may not change once set"))
		}
	}
	return allErrs
}

func validateUpgradeDowngradeIPFamilies(oldSvc, svc *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	if svc.Spec.Type == corev1.ServiceTypeExternalName || oldSvc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadlessService(oldSvc) || isHeadlessService(svc) {
		return nil
	}
	oldF, newF := oldSvc.Spec.IPFamilies, svc.Spec.IPFamilies
	p := field.NewPath("spec", "ipFamilies")
	switch {
	case len(oldF) == len(newF):
		for i := range oldF {
			if oldF[i] != newF[i] {
				allErrs = append(allErrs, field.Invalid(p.Index(0), newF, "may not change once set"))
			}
		}
	case len(oldF) > len(newF):
		if len(newF) == 0 {
			allErrs = append(allErrs, field.Invalid(p.Index(0), newF, "primary ipFamily can not be unset"))
		} else if newF[0] != oldF[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), newF, "may not change once set"))
		}
		if len(newF) == 1 && (svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary ipFamily"))
		}
	default:
		if len(oldF) > 0 && newF[0] != oldF[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), newF, "may not change once set"))
		}
	}
	return allErrs
}

func validateServiceStatusUpdate(svc, oldSvc *corev1.Service) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&svc.ObjectMeta, &oldSvc.ObjectMeta)
	ingressPath := field.NewPath("status", "loadBalancer", "ingress")
	for i, ing := range svc.Status.LoadBalancer.Ingress {
		idxPath := ingressPath.Index(i)
		if ing.IP != "" {
			allErrs = append(allErrs, validation.IsValidIP(idxPath.Child("ip"), ing.IP)...)
		}
		if ing.IPMode != nil {
			switch {
			case ing.IP == "":
				allErrs = append(allErrs, field.Forbidden(idxPath.Child("ipMode"), "may not be set when `ip` is not set"))
			case *ing.IPMode != corev1.LoadBalancerIPModeVIP && *ing.IPMode != corev1.LoadBalancerIPModeProxy:
				allErrs = append(allErrs, field.NotSupported(idxPath.Child("ipMode"), *ing.IPMode, []corev1.LoadBalancerIPMode{corev1.LoadBalancerIPModeProxy, corev1.LoadBalancerIPModeVIP}))
			}
		}
		if ing.Hostname != "" {
			allErrs = append(allErrs, validateDNS1123Subdomain(ing.Hostname, idxPath.Child("hostname"))...)
			if netutils.ParseIPSloppy(ing.Hostname) != nil {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("hostname"), ing.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return allErrs
}

// ---------------------------------------------------------------------------
// Endpoints

func validateEndpoints(ep *corev1.Endpoints) field.ErrorList {
	allErrs := validateObjectMeta(&ep.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	subsetsPath := field.NewPath("subsets")
	for i := range ep.Subsets {
		ss := &ep.Subsets[i]
		idxPath := subsetsPath.Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			allErrs = append(allErrs, field.Required(idxPath, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			allErrs = append(allErrs, validateEndpointAddress(&ss.Addresses[j], idxPath.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			allErrs = append(allErrs, validateEndpointAddress(&ss.NotReadyAddresses[j], idxPath.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			allErrs = append(allErrs, validateEndpointPort(&ss.Ports[j], len(ss.Ports) > 1, idxPath.Child("ports").Index(j))...)
		}
	}
	return allErrs
}

func validateEndpointsUpdate(ep, old *corev1.Endpoints) field.ErrorList {
	return append(validateObjectMetaUpdate(&ep.ObjectMeta, &old.ObjectMeta), validateEndpoints(ep)...)
}

func validateEndpointAddress(addr *corev1.EndpointAddress, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	ipErrs := validation.IsValidIP(fldPath.Child("ip"), addr.IP)
	allErrs = append(allErrs, ipErrs...)
	if addr.Hostname != "" {
		allErrs = append(allErrs, validateDNS1123Label(addr.Hostname, fldPath.Child("hostname"))...)
	}
	if addr.NodeName != nil {
		allErrs = append(allErrs, validateNameWith(apimachineryvalidation.NameIsDNSSubdomain, *addr.NodeName, fldPath.Child("nodeName"))...)
	}
	if len(ipErrs) == 0 {
		allErrs = append(allErrs, validateNonSpecialIP(addr.IP, fldPath.Child("ip"))...)
	}
	return allErrs
}

func validateEndpointPort(port *corev1.EndpointPort, requireName bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if requireName && port.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else if port.Name != "" {
		allErrs = append(allErrs, validateDNS1123Label(port.Name, fldPath.Child("name"))...)
	}
	for _, msg := range validation.IsValidPortNum(int(port.Port)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("port"), port.Port, msg))
	}
	if port.Protocol == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("protocol"), ""))
	} else if !supportedPortProtocols.Has(port.Protocol) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("protocol"), port.Protocol, sets.List(supportedPortProtocols)))
	}
	if port.AppProtocol != nil {
		allErrs = append(allErrs, validateQualifiedName(*port.AppProtocol, fldPath.Child("appProtocol"))...)
	}
	return allErrs
}
