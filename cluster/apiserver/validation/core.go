package validation

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// ---------------------------------------------------------------------------
// Namespace

func validateNamespace(ns *corev1.Namespace) field.ErrorList {
	allErrs := validateObjectMeta(&ns.ObjectMeta, false, apimachineryvalidation.ValidateNamespaceName)
	finPath := field.NewPath("spec", "finalizers")
	for i, f := range ns.Spec.Finalizers {
		allErrs = append(allErrs, validateFinalizerName(string(f), finPath.Index(i))...)
	}
	return allErrs
}

func validateFinalizerName(name string, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateFinalizerName(name, fldPath)
	return append(allErrs, validateKubeFinalizerName(name, fldPath)...)
}

func validateNamespaceUpdate(ns, old *corev1.Namespace) field.ErrorList {
	return append(validateObjectMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta), validateNamespace(ns)...)
}

func validateNamespaceStatusUpdate(ns, old *corev1.Namespace) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta)
	phasePath := field.NewPath("status", "phase")
	if ns.DeletionTimestamp.IsZero() {
		if ns.Status.Phase != corev1.NamespaceActive {
			allErrs = append(allErrs, field.Invalid(phasePath, ns.Status.Phase, "may only be 'Active' if `deletionTimestamp` is empty"))
		}
	} else if ns.Status.Phase != corev1.NamespaceTerminating {
		allErrs = append(allErrs, field.Invalid(phasePath, ns.Status.Phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"))
	}
	return allErrs
}

// ---------------------------------------------------------------------------
// Node

func validateNode(node *corev1.Node) field.ErrorList {
	allErrs := validateObjectMeta(&node.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain)
	allErrs = append(allErrs, validateNodeTaints(node.Spec.Taints, field.NewPath("spec", "taints"))...)
	allErrs = append(allErrs, validateNodeResources(node)...)

	if len(node.Spec.PodCIDRs) > 0 {
		p := field.NewPath("spec", "podCIDRs")
		invalid := false
		for i, cidr := range node.Spec.PodCIDRs {
			errs := validation.IsValidCIDR(p.Index(i), cidr)
			invalid = invalid || len(errs) > 0
			allErrs = append(allErrs, errs...)
		}
		if len(node.Spec.PodCIDRs) > 1 && !invalid {
			if dual, err := netutils.IsDualStackCIDRStrings(node.Spec.PodCIDRs); err != nil || !dual || len(node.Spec.PodCIDRs) > 2 {
				allErrs = append(allErrs, field.Invalid(p, node.Spec.PodCIDRs, "may specify no more than one CIDR for each IP family"))
			}
			seen := sets.New[string]()
			for i, cidr := range node.Spec.PodCIDRs {
				if seen.Has(cidr) {
					allErrs = append(allErrs, field.Duplicate(p.Index(i), cidr))
				}
				seen.Insert(cidr)
			}
		}
	}
	return allErrs
}

// validateNodeTaints: valid key/value/effect, unique by (key, effect).
func validateNodeTaints(taints []corev1.Taint, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	unique := map[corev1.TaintEffect]sets.Set[string]{}
	for i, t := range taints {
		idxPath := fldPath.Index(i)
		allErrs = append(allErrs, validateQualifiedName(t.Key, idxPath.Child("key"))...)
		if errs := validation.IsValidLabelValue(t.Value); len(errs) != 0 {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("value"), t.Value, strings.Join(errs, ";")))
		}
		allErrs = append(allErrs, validateTaintEffect(t.Effect, false, idxPath.Child("effect"))...)
		if unique[t.Effect].Has(t.Key) {
			dup := field.Duplicate(idxPath, t)
			dup.Detail = "taints must be unique by key and effect pair"
			allErrs = append(allErrs, dup)
			continue
		}
		if unique[t.Effect] == nil {
			unique[t.Effect] = sets.New[string]()
		}
		unique[t.Effect].Insert(t.Key)
	}
	return allErrs
}

func validateNodeResources(node *corev1.Node) field.ErrorList {
	var allErrs field.ErrorList
	for _, name := range sortedResourceNames(node.Status.Capacity) {
		allErrs = append(allErrs, validateResourceQuantityValue(name, node.Status.Capacity[name], field.NewPath("status", "capacity").Key(string(name)))...)
	}
	for _, name := range sortedResourceNames(node.Status.Allocatable) {
		allErrs = append(allErrs, validateResourceQuantityValue(name, node.Status.Allocatable[name], field.NewPath("status", "allocatable").Key(string(name)))...)
	}
	return allErrs
}

// validateNodeUpdate holds the update rules shared by the main resource and
// /status: podCIDRs and providerID may only go from unset to set.
func validateNodeUpdate(node, old *corev1.Node) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&node.ObjectMeta, &old.ObjectMeta)
	allErrs = append(allErrs, validateNodeResources(node)...)

	addresses := map[corev1.NodeAddress]bool{}
	for i, a := range node.Status.Addresses {
		if addresses[a] {
			allErrs = append(allErrs, field.Duplicate(field.NewPath("status", "addresses").Index(i), a))
		}
		addresses[a] = true
	}
	if len(old.Spec.PodCIDRs) > 0 && !reflect.DeepEqual(old.Spec.PodCIDRs, node.Spec.PodCIDRs) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "podCIDRs"), "node updates may not change podCIDR except from \"\" to valid"))
	}
	if old.Spec.ProviderID != "" && old.Spec.ProviderID != node.Spec.ProviderID {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "providerID"), "node updates may not change providerID except from \"\" to valid"))
	}
	allErrs = append(allErrs, validateNodeTaints(node.Spec.Taints, field.NewPath("spec", "taints"))...)
	if node.Spec.DoNotUseExternalID != old.Spec.DoNotUseExternalID {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "externalID"), "may not be updated"))
	}
	return allErrs
}

// ---------------------------------------------------------------------------
// ConfigMap, Secret, ServiceAccount

func validateConfigMap(cm *corev1.ConfigMap) field.ErrorList {
	allErrs := validateObjectMeta(&cm.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	dupOfBinary := func(key string) string {
		if _, dup := cm.BinaryData[key]; dup {
			return "duplicate of key present in binaryData"
		}
		return ""
	}
	bad, totalSize := keyProblems(cm.Data, dupOfBinary)
	allErrs = appendKeyProblems(allErrs, field.NewPath("data"), bad)
	bad, size := keyProblems(cm.BinaryData, nil)
	allErrs = appendKeyProblems(allErrs, field.NewPath("binaryData"), bad)
	if totalSize += size; totalSize > corev1.MaxSecretSize {
		// An empty path: the error is about the whole object.
		allErrs = append(allErrs, field.TooLong(field.NewPath(""), "", corev1.MaxSecretSize))
	}
	return allErrs
}

// keyProblem is what is wrong with one key of a ConfigMap's or a Secret's
// data.
type keyProblem struct {
	key  string
	msgs []string
}

// keyProblems checks every key of m (a ConfigMap's or a Secret's data) as
// validation.IsConfigMapKey does, and with also (nil: nothing more; a
// message, or "" for none), and adds up the values' sizes. It returns the
// keys refused, in key order, with their messages. The keys are walked
// once, in the map's order, and a key made only of the characters a key
// may hold is not matched against IsConfigMapKey's regexp: only what is
// refused is sorted. (Sorting every key and looking each value up again
// was a fifth of a write's CPU for a ConfigMap of 100,000 keys.)
func keyProblems[V string | []byte](m map[string]V, also func(key string) string) ([]keyProblem, int) {
	var bad []keyProblem
	size := 0
	for key, v := range m {
		size += len(v)
		var msgs []string
		if !plainConfigMapKey(key) {
			msgs = validation.IsConfigMapKey(key)
		}
		if also != nil {
			if msg := also(key); msg != "" {
				msgs = append(msgs, msg)
			}
		}
		if len(msgs) > 0 {
			bad = append(bad, keyProblem{key, msgs})
		}
	}
	slices.SortFunc(bad, func(a, b keyProblem) int { return strings.Compare(a.key, b.key) })
	return bad, size
}

// plainConfigMapKey reports whether validation.IsConfigMapKey accepts key
// for certain: 1 to 253 of [-._a-zA-Z0-9], not ".", "..", nor starting
// with "..". (false: ask IsConfigMapKey.)
func plainConfigMapKey(key string) bool {
	if len(key) == 0 || len(key) > validation.DNS1123SubdomainMaxLength || key == "." || strings.HasPrefix(key, "..") {
		return false
	}
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.', c == '_':
		default:
			return false
		}
	}
	return true
}

// appendKeyProblems adds each message of bad as an Invalid of its key
// under p.
func appendKeyProblems(allErrs field.ErrorList, p *field.Path, bad []keyProblem) field.ErrorList {
	for _, b := range bad {
		for _, msg := range b.msgs {
			allErrs = append(allErrs, field.Invalid(p.Key(b.key), b.key, msg))
		}
	}
	return allErrs
}

func validateConfigMapUpdate(cm, old *corev1.ConfigMap) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&cm.ObjectMeta, &old.ObjectMeta)
	if old.Immutable != nil && *old.Immutable {
		if cm.Immutable == nil || !*cm.Immutable {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !reflect.DeepEqual(cm.Data, old.Data) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
		if !reflect.DeepEqual(cm.BinaryData, old.BinaryData) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("binaryData"), "field is immutable when `immutable` is set"))
		}
	}
	return append(allErrs, validateConfigMap(cm)...)
}

// validateSecret checks keys, the 1 MiB limit and the per-type required
// keys. stringData is normally folded into data by defaults.Apply; if it is
// still present its keys and sizes count too.
func validateSecret(s *corev1.Secret) field.ErrorList {
	allErrs := validateObjectMeta(&s.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	dataPath := field.NewPath("data")
	bad, totalSize := keyProblems(s.Data, nil)
	allErrs = appendKeyProblems(allErrs, dataPath, bad)
	bad, _ = keyProblems(s.StringData, nil)
	allErrs = appendKeyProblems(allErrs, field.NewPath("stringData"), bad)
	for key, v := range s.StringData {
		if _, inData := s.Data[key]; !inData {
			totalSize += len(v)
		}
	}
	if totalSize > corev1.MaxSecretSize {
		allErrs = append(allErrs, field.TooLong(dataPath, "", corev1.MaxSecretSize))
	}

	has := func(key string) bool {
		if _, ok := s.Data[key]; ok {
			return true
		}
		_, ok := s.StringData[key]
		return ok
	}
	value := func(key string) []byte {
		if v, ok := s.StringData[key]; ok {
			return []byte(v)
		}
		return s.Data[key]
	}
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		// Other keys and annotations are filled later by a controller.
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			allErrs = append(allErrs, field.Required(metadataPath.Child("annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeOpaque, "":
	case corev1.SecretTypeDockercfg, corev1.SecretTypeDockerConfigJson:
		key := corev1.DockerConfigKey
		if s.Type == corev1.SecretTypeDockerConfigJson {
			key = corev1.DockerConfigJsonKey
		}
		if !has(key) {
			allErrs = append(allErrs, field.Required(dataPath.Key(key), ""))
			break
		}
		if err := json.Unmarshal(value(key), &map[string]any{}); err != nil {
			allErrs = append(allErrs, field.Invalid(dataPath.Key(key), "<secret contents redacted>", err.Error()))
		}
	case corev1.SecretTypeBasicAuth:
		if !has(corev1.BasicAuthUsernameKey) && !has(corev1.BasicAuthPasswordKey) {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.BasicAuthUsernameKey), ""))
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		if len(value(corev1.SSHAuthPrivateKey)) == 0 {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		if !has(corev1.TLSCertKey) {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.TLSCertKey), ""))
		}
		if !has(corev1.TLSPrivateKeyKey) {
			allErrs = append(allErrs, field.Required(dataPath.Key(corev1.TLSPrivateKeyKey), ""))
		}
	}
	return allErrs
}

func validateSecretUpdate(s, old *corev1.Secret) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta)
	allErrs = append(allErrs, validateImmutableField(s.Type, old.Type, field.NewPath("type"))...)
	if old.Immutable != nil && *old.Immutable {
		if s.Immutable == nil || !*s.Immutable {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !reflect.DeepEqual(s.Data, old.Data) || len(s.StringData) > 0 {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
	}
	return append(allErrs, validateSecret(s)...)
}

func validateServiceAccount(sa *corev1.ServiceAccount) field.ErrorList {
	return validateObjectMeta(&sa.ObjectMeta, true, apimachineryvalidation.ValidateServiceAccountName)
}

func validateServiceAccountUpdate(sa, old *corev1.ServiceAccount) field.ErrorList {
	return append(validateObjectMetaUpdate(&sa.ObjectMeta, &old.ObjectMeta), validateServiceAccount(sa)...)
}

// ---------------------------------------------------------------------------
// Binding, Scale, Lease

// validateBinding checks the body of pods/binding. Its metadata names the
// pod and comes from the URL, so, like upstream, only the target is checked.
func validateBinding(b *corev1.Binding) field.ErrorList {
	return validatePodBinding(b)
}

func validateScale(s *autoscalingv1.Scale) field.ErrorList {
	allErrs := validateObjectMeta(&s.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	if s.Spec.Replicas < 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "replicas"), s.Spec.Replicas, "must be greater than or equal to 0"))
	}
	return allErrs
}

var validLeaseStrategies = []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion}

func validateLease(l *coordinationv1.Lease) field.ErrorList {
	allErrs := validateObjectMeta(&l.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	specPath := field.NewPath("spec")
	if d := l.Spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		allErrs = append(allErrs, field.Invalid(specPath.Child("leaseDurationSeconds"), *d, "must be greater than 0"))
	}
	if t := l.Spec.LeaseTransitions; t != nil && *t < 0 {
		allErrs = append(allErrs, field.Invalid(specPath.Child("leaseTransitions"), *t, "must be greater than or equal to 0"))
	}
	if s := l.Spec.Strategy; s != nil {
		p := specPath.Child("strategy")
		if !strings.Contains(string(*s), "/") {
			if *s != coordinationv1.OldestEmulationVersion {
				allErrs = append(allErrs, field.NotSupported(p, *s, validLeaseStrategies))
			}
		} else {
			allErrs = append(allErrs, validateQualifiedName(string(*s), p)...)
		}
	}
	if ph := l.Spec.PreferredHolder; ph != nil && *ph != "" && (l.Spec.Strategy == nil || *l.Spec.Strategy == "") {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return allErrs
}

func validateLeaseUpdate(l, old *coordinationv1.Lease) field.ErrorList {
	return append(validateObjectMetaUpdate(&l.ObjectMeta, &old.ObjectMeta), validateLease(l)...)
}

// ---------------------------------------------------------------------------
// Events

const (
	reportingInstanceLengthLimit = 128
	actionLengthLimit            = 128
	reasonLengthLimit            = 128
	noteLengthLimit              = 1024
)

// event is the common shape of core/v1 and events.k8s.io/v1 Events; paths
// use the field names of the version being validated.
type event struct {
	namespace           string
	regardingNamespace  string
	regardingPath       *field.Path
	eventTime           metav1.MicroTime
	reportingController string
	reportingInstance   string
	action              string
	reason              string
	message             string
	messagePath         *field.Path
}

func coreEvent(e *corev1.Event) event {
	return event{
		namespace:           e.Namespace,
		regardingNamespace:  e.InvolvedObject.Namespace,
		regardingPath:       field.NewPath("involvedObject"),
		eventTime:           e.EventTime,
		reportingController: e.ReportingController,
		reportingInstance:   e.ReportingInstance,
		action:              e.Action,
		reason:              e.Reason,
		message:             e.Message,
		messagePath:         field.NewPath("message"),
	}
}

func eventsV1Event(e *eventsv1.Event) event {
	return event{
		namespace:           e.Namespace,
		regardingNamespace:  e.Regarding.Namespace,
		regardingPath:       field.NewPath("regarding"),
		eventTime:           e.EventTime,
		reportingController: e.ReportingController,
		reportingInstance:   e.ReportingInstance,
		action:              e.Action,
		reason:              e.Reason,
		message:             e.Note,
		messagePath:         field.NewPath("note"),
	}
}

// legacyValidateEvent: the checks every Event passes, whichever API wrote
// it. The regarding object's namespace must agree with the event's; events
// with an eventTime (new-style) must name their reporter and action.
func legacyValidateEvent(e event) field.ErrorList {
	var allErrs field.ErrorList
	nsPath := e.regardingPath.Child("namespace")
	const mismatch = "does not match event.namespace"
	if e.eventTime.IsZero() {
		if e.regardingNamespace == "" {
			if e.namespace != metav1.NamespaceNone && e.namespace != metav1.NamespaceDefault {
				allErrs = append(allErrs, field.Invalid(nsPath, e.regardingNamespace, mismatch))
			}
		} else if e.namespace != e.regardingNamespace {
			allErrs = append(allErrs, field.Invalid(nsPath, e.regardingNamespace, mismatch))
		}
		return allErrs
	}
	if e.regardingNamespace == "" && e.namespace != metav1.NamespaceDefault && e.namespace != metav1.NamespaceSystem {
		allErrs = append(allErrs, field.Invalid(nsPath, e.regardingNamespace, mismatch))
	}
	if e.reportingController == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("reportingController"), ""))
	}
	for _, msg := range validation.IsQualifiedName(e.reportingController) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("reportingController"), e.reportingController, msg))
	}
	if e.reportingInstance == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("reportingInstance"), ""))
	}
	if len(e.reportingInstance) > reportingInstanceLengthLimit {
		allErrs = append(allErrs, field.Invalid(field.NewPath("reportingInstance"), "", fmt.Sprintf("can have at most %v characters", reportingInstanceLengthLimit)))
	}
	if e.action == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("action"), ""))
	}
	if len(e.action) > actionLengthLimit {
		allErrs = append(allErrs, field.Invalid(field.NewPath("action"), "", fmt.Sprintf("can have at most %v characters", actionLengthLimit)))
	}
	if e.reason == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("reason"), ""))
	}
	if len(e.reason) > reasonLengthLimit {
		allErrs = append(allErrs, field.Invalid(field.NewPath("reason"), "", fmt.Sprintf("can have at most %v characters", reasonLengthLimit)))
	}
	if len(e.message) > noteLengthLimit {
		allErrs = append(allErrs, field.Invalid(e.messagePath, "", fmt.Sprintf("can have at most %v characters", noteLengthLimit)))
	}
	return allErrs
}

// validateCoreEvent: core/v1 Events get only the legacy checks (for
// compatibility with old clients), and names need only be valid path
// segments, as upstream's generic registry requires.
func validateCoreEvent(e *corev1.Event) field.ErrorList {
	allErrs := validateObjectMeta(&e.ObjectMeta, true, path.ValidatePathSegmentName)
	return append(allErrs, legacyValidateEvent(coreEvent(e))...)
}

func validateCoreEventUpdate(e, old *corev1.Event) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&e.ObjectMeta, &old.ObjectMeta)
	return append(allErrs, validateCoreEvent(e)...)
}

func validateEventSeries(s *eventsv1.EventSeries) field.ErrorList {
	var allErrs field.ErrorList
	if s == nil {
		return nil
	}
	if s.Count < 2 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("series", "count"), "", "should be at least 2"))
	}
	if s.LastObservedTime.IsZero() {
		allErrs = append(allErrs, field.Required(field.NewPath("series", "lastObservedTime"), ""))
	}
	return allErrs
}

// validateEventsV1Create: events.k8s.io/v1 applies the strict rules.
func validateEventsV1Create(e *eventsv1.Event) field.ErrorList {
	allErrs := validateObjectMeta(&e.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	allErrs = append(allErrs, legacyValidateEvent(eventsV1Event(e))...)
	allErrs = append(allErrs, validateEventSeries(e.Series)...)
	if e.EventTime.IsZero() {
		allErrs = append(allErrs, field.Required(field.NewPath("eventTime"), ""))
	}
	if e.Type != corev1.EventTypeNormal && e.Type != corev1.EventTypeWarning {
		allErrs = append(allErrs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", e.Type)))
	}
	if !e.DeprecatedFirstTimestamp.IsZero() {
		allErrs = append(allErrs, field.Invalid(field.NewPath("deprecatedFirstTimestamp"), "", "needs to be unset"))
	}
	if !e.DeprecatedLastTimestamp.IsZero() {
		allErrs = append(allErrs, field.Invalid(field.NewPath("deprecatedLastTimestamp"), "", "needs to be unset"))
	}
	if e.DeprecatedCount != 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("deprecatedCount"), "", "needs to be unset"))
	}
	if e.DeprecatedSource.Component != "" || e.DeprecatedSource.Host != "" {
		allErrs = append(allErrs, field.Invalid(field.NewPath("deprecatedSource"), "", "needs to be unset"))
	}
	return allErrs
}

// validateEventsV1Update: everything but the series (and metadata) is
// fixed once the event exists.
func validateEventsV1Update(e, old *eventsv1.Event) field.ErrorList {
	allErrs := validateObjectMetaUpdate(&e.ObjectMeta, &old.ObjectMeta)
	allErrs = append(allErrs, legacyValidateEvent(eventsV1Event(e))...)
	if !reflect.DeepEqual(e.Series, old.Series) {
		allErrs = append(allErrs, validateEventSeries(e.Series)...)
	}
	for _, f := range []struct {
		name     string
		new, old any
	}{
		{"regarding", e.Regarding, old.Regarding},
		{"reason", e.Reason, old.Reason},
		{"note", e.Note, old.Note},
		{"deprecatedSource", e.DeprecatedSource, old.DeprecatedSource},
		{"deprecatedFirstTimestamp", e.DeprecatedFirstTimestamp, old.DeprecatedFirstTimestamp},
		{"deprecatedLastTimestamp", e.DeprecatedLastTimestamp, old.DeprecatedLastTimestamp},
		{"deprecatedCount", e.DeprecatedCount, old.DeprecatedCount},
		{"type", e.Type, old.Type},
		{"eventTime", e.EventTime, old.EventTime},
		{"action", e.Action, old.Action},
		{"related", e.Related, old.Related},
		{"reportingController", e.ReportingController, old.ReportingController},
		{"reportingInstance", e.ReportingInstance, old.ReportingInstance},
	} {
		allErrs = append(allErrs, validateImmutableField(f.new, f.old, field.NewPath(f.name))...)
	}
	return allErrs
}
