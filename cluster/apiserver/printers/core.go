package printers

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// labelNodeRolePrefix is the prefix of node-role.kubernetes.io/<role> labels.
	labelNodeRolePrefix = "node-role.kubernetes.io/"
	// nodeLabelRole is the legacy kubernetes.io/role=<role> label.
	nodeLabelRole = "kubernetes.io/role"
)

func init() {
	register(schema.GroupKind{Kind: "Node"}, typed(nodeColumns, nodeCells), "nodes")
	register(schema.GroupKind{Kind: "Service"}, typed(serviceColumns, serviceCells), "services")
	register(schema.GroupKind{Kind: "Endpoints"}, typed(endpointsColumns, endpointsCells), "endpoints")
	register(schema.GroupKind{Kind: "Namespace"}, typed(namespaceColumns, namespaceCells), "namespaces")
	register(schema.GroupKind{Kind: "Event"}, typed(eventColumns, eventCells), "events")
	// Upstream serves events.k8s.io events from the core event storage, so
	// they print like core events.
	register(schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}, typed(eventColumns, eventsV1Cells), "events")
	register(schema.GroupKind{Kind: "ConfigMap"}, typed(configMapColumns, configMapCells), "configmaps")
	register(schema.GroupKind{Kind: "Secret"}, typed(secretColumns, secretCells), "secrets")
	register(schema.GroupKind{Kind: "ServiceAccount"}, typed(serviceAccountColumns, serviceAccountCells), "serviceaccounts")
	register(schema.GroupKind{Kind: "ReplicationController"}, typed(replicationControllerColumns, replicationControllerCells), "replicationcontrollers")
	register(schema.GroupKind{Kind: "PodTemplate"}, typed(podTemplateColumns, podTemplateCells), "podtemplates")
}

// Node

var nodeColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Status", Type: "string", Description: "The status of the node"},
	{Name: "Roles", Type: "string", Description: "The roles of the node"},
	ageColumn,
	{Name: "Version", Type: "string", Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]},
	{Name: "Internal-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
	{Name: "External-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
	{Name: "OS-Image", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]},
	{Name: "Kernel-Version", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]},
	{Name: "Container-Runtime", Type: "string", Priority: 1, Description: corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]},
}

func nodeCells(node *corev1.Node, now time.Time) []interface{} {
	// Only the Ready condition makes the status; the last one of its type wins.
	var ready *corev1.NodeCondition
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			ready = &node.Status.Conditions[i]
		}
	}
	var status []string
	switch {
	case ready == nil:
		status = append(status, "Unknown")
	case ready.Status == corev1.ConditionTrue:
		status = append(status, string(corev1.NodeReady))
	default:
		status = append(status, "Not"+string(corev1.NodeReady))
	}
	if node.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}

	roles := strings.Join(nodeRoles(node), ",")
	if roles == "" {
		roles = "<none>"
	}

	info := node.Status.NodeInfo
	return []interface{}{
		node.Name,
		strings.Join(status, ","),
		roles,
		since(now, node.CreationTimestamp),
		info.KubeletVersion,
		nodeAddress(node, corev1.NodeInternalIP),
		nodeAddress(node, corev1.NodeExternalIP),
		orUnknown(info.OSImage),
		orUnknown(info.KernelVersion),
		orUnknown(info.ContainerRuntimeVersion),
	}
}

// nodeRoles returns the sorted roles named by node-role.kubernetes.io/<role>
// and kubernetes.io/role=<role> labels.
func nodeRoles(node *corev1.Node) []string {
	set := map[string]bool{}
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, labelNodeRolePrefix):
			if role := strings.TrimPrefix(k, labelNodeRolePrefix); role != "" {
				set[role] = true
			}
		case k == nodeLabelRole && v != "":
			set[v] = true
		}
	}
	return sortedKeys(set)
}

// nodeAddress is the node's first address of type t, or "<none>".
func nodeAddress(node *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range node.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

// orUnknown is s, or "<unknown>" when s is empty.
func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

// Service

var serviceColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Type", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["type"]},
	{Name: "Cluster-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]},
	{Name: "External-IP", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]},
	{Name: "Port(s)", Type: "string", Description: corev1.ServiceSpec{}.SwaggerDoc()["ports"]},
	ageColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ServiceSpec{}.SwaggerDoc()["selector"]},
}

func serviceCells(svc *corev1.Service, now time.Time) []interface{} {
	svcType := svc.Spec.Type
	if svcType == "" {
		svcType = corev1.ServiceTypeClusterIP // v1 default
	}
	clusterIP := "<none>"
	switch {
	case len(svc.Spec.ClusterIPs) > 0:
		clusterIP = svc.Spec.ClusterIPs[0]
	case svc.Spec.ClusterIP != "":
		clusterIP = svc.Spec.ClusterIP
	}
	ports := servicePorts(svc.Spec.Ports)
	if ports == "" {
		ports = "<none>"
	}
	return []interface{}{
		svc.Name,
		string(svcType),
		clusterIP,
		serviceExternalIP(svc, svcType),
		ports,
		since(now, svc.CreationTimestamp),
		labels.FormatLabels(svc.Spec.Selector),
	}
}

// serviceExternalIP is the EXTERNAL-IP cell. Upstream renders tables wide,
// so load balancer addresses are never clipped.
func serviceExternalIP(svc *corev1.Service, svcType corev1.ServiceType) string {
	switch svcType {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		lb := map[string]bool{}
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			if ing.IP != "" {
				lb[ing.IP] = true
			} else if ing.Hostname != "" {
				lb[ing.Hostname] = true
			}
		}
		ips := sortedKeys(lb)
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(append(ips, svc.Spec.ExternalIPs...), ",")
		}
		if len(ips) > 0 {
			return strings.Join(ips, ",")
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

// servicePorts formats ports as "80/TCP" or, with a node port, "80:30080/TCP".
func servicePorts(ports []corev1.ServicePort) string {
	pieces := make([]string, len(ports))
	for i, p := range ports {
		protocol := p.Protocol
		if protocol == "" {
			protocol = corev1.ProtocolTCP // v1 default
		}
		if p.NodePort > 0 {
			pieces[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, protocol)
		} else {
			pieces[i] = fmt.Sprintf("%d/%s", p.Port, protocol)
		}
	}
	return strings.Join(pieces, ",")
}

// Endpoints

var endpointsColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
	ageColumn,
}

func endpointsCells(ep *corev1.Endpoints, now time.Time) []interface{} {
	return []interface{}{ep.Name, formatEndpoints(ep), since(now, ep.CreationTimestamp)}
}

// formatEndpoints lists the first three ready "ip:port" pairs (bare IPs for
// subsets without ports) and how many more there are.
func formatEndpoints(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return "<none>"
	}
	const max = 3
	var list []string
	more := false
	count := 0
	for _, ss := range ep.Subsets {
		if len(ss.Ports) == 0 {
			// Headless services may have no ports.
			count += len(ss.Addresses)
			for _, addr := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, addr.IP)
			}
			continue
		}
		for _, port := range ss.Ports {
			count += len(ss.Addresses)
			for _, addr := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, net.JoinHostPort(addr.IP, strconv.Itoa(int(port.Port))))
			}
		}
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	return ret
}

// Namespace

var namespaceColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Status", Type: "string", Description: "The status of the namespace"},
	ageColumn,
}

func namespaceCells(ns *corev1.Namespace, now time.Time) []interface{} {
	return []interface{}{ns.Name, string(ns.Status.Phase), since(now, ns.CreationTimestamp)}
}

// Event

var eventColumns = []metav1.TableColumnDefinition{
	{Name: "Last Seen", Type: "string", Description: corev1.Event{}.SwaggerDoc()["lastTimestamp"]},
	{Name: "Type", Type: "string", Description: corev1.Event{}.SwaggerDoc()["type"]},
	{Name: "Reason", Type: "string", Description: corev1.Event{}.SwaggerDoc()["reason"]},
	{Name: "Object", Type: "string", Description: corev1.Event{}.SwaggerDoc()["involvedObject"]},
	{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]},
	{Name: "Source", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["source"]},
	{Name: "Message", Type: "string", Description: corev1.Event{}.SwaggerDoc()["message"]},
	{Name: "First Seen", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["firstTimestamp"]},
	{Name: "Count", Type: "string", Priority: 1, Description: corev1.Event{}.SwaggerDoc()["count"]},
	{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: objectMetaDoc["name"]},
}

func eventCells(ev *corev1.Event, now time.Time) []interface{} {
	firstTimestamp := since(now, ev.FirstTimestamp)
	if ev.FirstTimestamp.IsZero() {
		firstTimestamp = sinceMicro(now, ev.EventTime)
	}
	lastTimestamp := since(now, ev.LastTimestamp)
	if ev.LastTimestamp.IsZero() {
		lastTimestamp = firstTimestamp
	}
	count := ev.Count
	if ev.Series != nil {
		lastTimestamp = sinceMicro(now, ev.Series.LastObservedTime)
		count = ev.Series.Count
	} else if count == 0 {
		// Singleton events of the events.k8s.io API have no count.
		count = 1
	}

	target := strings.ToLower(ev.InvolvedObject.Kind)
	if ev.InvolvedObject.Name != "" {
		target += "/" + ev.InvolvedObject.Name
	}
	return []interface{}{
		lastTimestamp,
		ev.Type,
		ev.Reason,
		target,
		ev.InvolvedObject.FieldPath,
		formatEventSource(ev.Source, ev.ReportingController, ev.ReportingInstance),
		strings.TrimSpace(ev.Message),
		firstTimestamp,
		int64(count),
		ev.Name,
	}
}

// formatEventSource is "component, host", falling back to the reporting
// controller and instance, without the host part when there is none.
func formatEventSource(es corev1.EventSource, reportingController, reportingInstance string) string {
	component, instance := es.Component, es.Host
	if component == "" {
		component = reportingController
	}
	if instance == "" {
		instance = reportingInstance
	}
	if instance == "" {
		return component
	}
	return component + ", " + instance
}

// eventsV1Cells prints an events.k8s.io/v1 Event as the core Event it is
// stored as.
func eventsV1Cells(ev *eventsv1.Event, now time.Time) []interface{} {
	core := &corev1.Event{
		ObjectMeta:          ev.ObjectMeta,
		InvolvedObject:      ev.Regarding,
		Reason:              ev.Reason,
		Message:             ev.Note,
		Source:              ev.DeprecatedSource,
		FirstTimestamp:      ev.DeprecatedFirstTimestamp,
		LastTimestamp:       ev.DeprecatedLastTimestamp,
		Count:               ev.DeprecatedCount,
		Type:                ev.Type,
		EventTime:           ev.EventTime,
		Action:              ev.Action,
		Related:             ev.Related,
		ReportingController: ev.ReportingController,
		ReportingInstance:   ev.ReportingInstance,
	}
	if ev.Series != nil {
		core.Series = &corev1.EventSeries{Count: ev.Series.Count, LastObservedTime: ev.Series.LastObservedTime}
	}
	return eventCells(core, now)
}

// ConfigMap, Secret, ServiceAccount

var configMapColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
	ageColumn,
}

func configMapCells(cm *corev1.ConfigMap, now time.Time) []interface{} {
	return []interface{}{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), since(now, cm.CreationTimestamp)}
}

var secretColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Type", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["type"]},
	{Name: "Data", Type: "string", Description: corev1.Secret{}.SwaggerDoc()["data"]},
	ageColumn,
}

func secretCells(s *corev1.Secret, now time.Time) []interface{} {
	// Upstream merges stringData into data when it decodes a v1 Secret.
	n := len(s.Data)
	for k := range s.StringData {
		if _, ok := s.Data[k]; !ok {
			n++
		}
	}
	secretType := s.Type
	if secretType == "" {
		secretType = corev1.SecretTypeOpaque // v1 default
	}
	return []interface{}{s.Name, string(secretType), int64(n), since(now, s.CreationTimestamp)}
}

// serviceAccountColumns has the SECRETS column that upstream printed up to
// Kubernetes 1.34 (kubernetes/kubernetes#117160 dropped it in 1.35).
var serviceAccountColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Secrets", Type: "string", Description: corev1.ServiceAccount{}.SwaggerDoc()["secrets"]},
	ageColumn,
}

func serviceAccountCells(sa *corev1.ServiceAccount, now time.Time) []interface{} {
	return []interface{}{sa.Name, int64(len(sa.Secrets)), since(now, sa.CreationTimestamp)}
}

// ReplicationController

var replicationControllerColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Desired", Type: "integer", Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]},
	{Name: "Current", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["replicas"]},
	{Name: "Ready", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["readyReplicas"]},
	ageColumn,
	containersColumn,
	imagesColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["selector"]},
}

func replicationControllerCells(rc *corev1.ReplicationController, now time.Time) []interface{} {
	var containers []corev1.Container
	if rc.Spec.Template != nil {
		containers = rc.Spec.Template.Spec.Containers
	}
	names, images := containerCells(containers)
	return []interface{}{
		rc.Name,
		int64(replicas(rc.Spec.Replicas)),
		int64(rc.Status.Replicas),
		int64(rc.Status.ReadyReplicas),
		since(now, rc.CreationTimestamp),
		names,
		images,
		labels.FormatLabels(rc.Spec.Selector),
	}
}

// Shared helpers

var (
	containersColumn = metav1.TableColumnDefinition{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."}
	imagesColumn     = metav1.TableColumnDefinition{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."}
)

// containerCells joins the containers' names and images with commas.
func containerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	im := make([]string, len(containers))
	for i, c := range containers {
		n[i], im[i] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

// replicas is a v1 replica count, defaulted to 1 when unset as v1
// defaulting does.
func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// sortedKeys returns the keys of set in order.
func sortedKeys(set map[string]bool) []string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// PodTemplate (upstream shows containers and images at priority 0 here).

var podTemplateColumns = []metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Containers", Type: "string", Description: containersColumn.Description},
	{Name: "Images", Type: "string", Description: imagesColumn.Description},
	{Name: "Pod Labels", Type: "string", Description: "The labels for the pod template."},
}

func podTemplateCells(pt *corev1.PodTemplate, _ time.Time) []interface{} {
	names, images := containerCells(pt.Template.Spec.Containers)
	return []interface{}{pt.Name, names, images, labels.FormatLabels(pt.Template.Labels)}
}
