package validation

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// EndpointSlices: upstream's pkg/apis/discovery/validation. The lists are
// bounded before their items are looked at (as upstream does for endpoints
// and ports, and here for addresses too), so an oversized slice costs one
// TooMany error, not one per item.

var supportedAddressTypes = sets.New(discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN)

const (
	maxSliceEndpoints = 1000
	maxSlicePorts     = 100
	maxSliceAddresses = 100
	maxTopologyLabels = 16
	maxHintsForZones  = 8
	maxHintsForNodes  = 8
)

func validateEndpointSlice(s *discoveryv1.EndpointSlice) field.ErrorList {
	allErrs := validateObjectMeta(&s.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	atPath := field.NewPath("addressType")
	switch {
	case s.AddressType == "":
		allErrs = append(allErrs, field.Required(atPath, ""))
	case !supportedAddressTypes.Has(s.AddressType):
		allErrs = append(allErrs, field.NotSupported(atPath, s.AddressType, sets.List(supportedAddressTypes)))
	}
	allErrs = append(allErrs, validateSliceEndpoints(s.Endpoints, s.AddressType, field.NewPath("endpoints"))...)
	allErrs = append(allErrs, validateSlicePorts(s.Ports, field.NewPath("ports"))...)
	return allErrs
}

func validateEndpointSliceUpdate(s, old *discoveryv1.EndpointSlice) field.ErrorList {
	allErrs := append(validateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta), validateEndpointSlice(s)...)
	return append(allErrs, validateImmutableField(s.AddressType, old.AddressType, field.NewPath("addressType"))...)
}

func validateSliceEndpoints(eps []discoveryv1.Endpoint, at discoveryv1.AddressType, fldPath *field.Path) field.ErrorList {
	if len(eps) > maxSliceEndpoints {
		return field.ErrorList{field.TooMany(fldPath, len(eps), maxSliceEndpoints)}
	}
	var allErrs field.ErrorList
	for i := range eps {
		ep := &eps[i]
		idxPath := fldPath.Index(i)
		addrPath := idxPath.Child("addresses")
		switch n := len(ep.Addresses); {
		case n == 0:
			allErrs = append(allErrs, field.Required(addrPath, "must contain at least 1 address"))
		case n > maxSliceAddresses:
			allErrs = append(allErrs, field.TooMany(addrPath, n, maxSliceAddresses))
		default:
			for j, a := range ep.Addresses {
				allErrs = append(allErrs, validateSliceAddress(a, at, addrPath.Index(j))...)
			}
		}
		if ep.NodeName != nil {
			allErrs = append(allErrs, validateNameWith(apimachineryvalidation.NameIsDNSSubdomain, *ep.NodeName, idxPath.Child("nodeName"))...)
		}
		if ep.Hostname != nil {
			allErrs = append(allErrs, validateDNS1123Label(*ep.Hostname, idxPath.Child("hostname"))...)
		}
		topoPath := idxPath.Child("deprecatedTopology")
		if len(ep.DeprecatedTopology) > maxTopologyLabels {
			allErrs = append(allErrs, field.TooMany(topoPath, len(ep.DeprecatedTopology), maxTopologyLabels))
		} else {
			allErrs = append(allErrs, metav1validation.ValidateLabels(ep.DeprecatedTopology, topoPath)...)
		}
		if ep.Zone != nil {
			allErrs = append(allErrs, metav1validation.ValidateLabels(map[string]string{corev1.LabelTopologyZone: *ep.Zone}, idxPath.Child("zone"))...)
		}
		if ep.Hints != nil {
			allErrs = append(allErrs, validateHints(ep.Hints, idxPath.Child("hints"))...)
		}
	}
	return allErrs
}

// validateSliceAddress checks an address against the slice's type; an
// unknown type (already reported) leaves its addresses unchecked.
func validateSliceAddress(a string, at discoveryv1.AddressType, fldPath *field.Path) field.ErrorList {
	switch at {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		if errs := validation.IsValidIP(fldPath, a); len(errs) > 0 {
			return errs
		}
		if v6 := netutils.IsIPv6String(a); v6 != (at == discoveryv1.AddressTypeIPv6) {
			return field.ErrorList{field.Invalid(fldPath, a, "must be an "+string(at)+" address")}
		}
		return validateNonSpecialIP(a, fldPath)
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(fldPath, a)
	}
	return nil
}

func validateHints(h *discoveryv1.EndpointHints, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	zPath := fldPath.Child("forZones")
	if len(h.ForZones) > maxHintsForZones {
		return append(allErrs, field.TooMany(zPath, len(h.ForZones), maxHintsForZones))
	}
	seen := sets.New[string]()
	for i, z := range h.ForZones {
		p := zPath.Index(i).Child("name")
		if seen.Has(z.Name) {
			allErrs = append(allErrs, field.Duplicate(p, z.Name))
		}
		seen.Insert(z.Name)
		allErrs = append(allErrs, metav1validation.ValidateLabels(map[string]string{corev1.LabelTopologyZone: z.Name}, p)...)
	}
	nPath := fldPath.Child("forNodes")
	if len(h.ForNodes) > maxHintsForNodes {
		return append(allErrs, field.TooMany(nPath, len(h.ForNodes), maxHintsForNodes))
	}
	for i, n := range h.ForNodes {
		allErrs = append(allErrs, validateNameWith(apimachineryvalidation.NameIsDNSSubdomain, n.Name, nPath.Index(i).Child("name"))...)
	}
	return allErrs
}

func validateSlicePorts(ports []discoveryv1.EndpointPort, fldPath *field.Path) field.ErrorList {
	if len(ports) > maxSlicePorts {
		return field.ErrorList{field.TooMany(fldPath, len(ports), maxSlicePorts)}
	}
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i := range ports {
		p := &ports[i]
		idxPath := fldPath.Index(i)
		var name string
		if p.Name != nil {
			name = *p.Name
		}
		if name != "" {
			allErrs = append(allErrs, validateDNS1123Label(name, idxPath.Child("name"))...)
		}
		if names.Has(name) {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("name"), name))
		}
		names.Insert(name)
		if p.Port != nil {
			for _, msg := range validation.IsValidPortNum(int(*p.Port)) {
				allErrs = append(allErrs, field.Invalid(idxPath.Child("port"), *p.Port, msg))
			}
		}
		switch {
		case p.Protocol == nil:
			allErrs = append(allErrs, field.Required(idxPath.Child("protocol"), ""))
		case !supportedPortProtocols.Has(*p.Protocol):
			allErrs = append(allErrs, field.NotSupported(idxPath.Child("protocol"), *p.Protocol, sets.List(supportedPortProtocols)))
		}
		if p.AppProtocol != nil {
			allErrs = append(allErrs, validateQualifiedName(strings.TrimSpace(*p.AppProtocol), idxPath.Child("appProtocol"))...)
		}
	}
	return allErrs
}
