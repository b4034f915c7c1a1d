package validation

import (
	"fmt"
	"net/url"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The admission objects: ResourceQuota, LimitRange and the webhook
// configurations, validated as far as kstep's admission relies on them.

func validateResourceQuota(q *corev1.ResourceQuota) field.ErrorList {
	errs := validateObjectMeta(&q.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	for k, v := range q.Spec.Hard {
		if v.Sign() < 0 {
			errs = append(errs, field.Invalid(field.NewPath("spec", "hard").Key(string(k)), v.String(), "must be greater than or equal to 0"))
		}
	}
	return errs
}

func validateLimitRange(lr *corev1.LimitRange) field.ErrorList {
	errs := validateObjectMeta(&lr.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain)
	for i, it := range lr.Spec.Limits {
		p := field.NewPath("spec", "limits").Index(i)
		switch it.Type {
		case corev1.LimitTypeContainer, corev1.LimitTypePod, corev1.LimitTypePersistentVolumeClaim:
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), it.Type, []string{string(corev1.LimitTypeContainer), string(corev1.LimitTypePod), string(corev1.LimitTypePersistentVolumeClaim)}))
		}
		for k, max := range it.Max {
			if min, ok := it.Min[k]; ok && min.Cmp(max) > 0 {
				errs = append(errs, field.Invalid(p.Child("min").Key(string(k)), min.String(), fmt.Sprintf("min value %s is greater than max value %s", min.String(), max.String())))
			}
			if d, ok := it.Default[k]; ok && d.Cmp(max) > 0 {
				errs = append(errs, field.Invalid(p.Child("default").Key(string(k)), d.String(), fmt.Sprintf("default value %s is greater than max value %s", d.String(), max.String())))
			}
		}
		for k, d := range it.DefaultRequest {
			if l, ok := it.Default[k]; ok && d.Cmp(l) > 0 {
				errs = append(errs, field.Invalid(p.Child("defaultRequest").Key(string(k)), d.String(), fmt.Sprintf("default request value %s is greater than default limit value %s", d.String(), l.String())))
			}
		}
	}
	return errs
}

// webhookFields are what the two webhook kinds share.
type webhookFields struct {
	name          string
	clientConfig  admissionregistrationv1.WebhookClientConfig
	rules         []admissionregistrationv1.RuleWithOperations
	failurePolicy *admissionregistrationv1.FailurePolicyType
	sideEffects   *admissionregistrationv1.SideEffectClass
	timeout       *int32
	nsSel, objSel *metav1.LabelSelector
	versions      []string
}

func validateWebhooks(meta field.ErrorList, hooks []webhookFields) field.ErrorList {
	errs := meta
	names := sets.New[string]()
	for i, h := range hooks {
		p := field.NewPath("webhooks").Index(i)
		if h.name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else if names.Has(h.name) {
			errs = append(errs, field.Duplicate(p.Child("name"), h.name))
		}
		names.Insert(h.name)
		cc := p.Child("clientConfig")
		switch {
		case h.clientConfig.URL == nil && h.clientConfig.Service == nil:
			errs = append(errs, field.Required(cc, "exactly one of url or service is required"))
		case h.clientConfig.URL != nil && h.clientConfig.Service != nil:
			errs = append(errs, field.Required(cc, "exactly one of url or service is required"))
		case h.clientConfig.URL != nil:
			u, err := url.Parse(*h.clientConfig.URL)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				errs = append(errs, field.Invalid(cc.Child("url"), *h.clientConfig.URL, "must be an absolute https URL"))
			}
		}
		if h.timeout != nil && (*h.timeout < 1 || *h.timeout > 30) {
			errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), *h.timeout, "the timeout value must be between 1 and 30 seconds"))
		}
		if h.failurePolicy != nil && *h.failurePolicy != admissionregistrationv1.Fail && *h.failurePolicy != admissionregistrationv1.Ignore {
			errs = append(errs, field.NotSupported(p.Child("failurePolicy"), *h.failurePolicy, []string{"Fail", "Ignore"}))
		}
		if h.sideEffects == nil {
			errs = append(errs, field.Required(p.Child("sideEffects"), "must specify one of None, NoneOnDryRun"))
		} else if *h.sideEffects != admissionregistrationv1.SideEffectClassNone && *h.sideEffects != admissionregistrationv1.SideEffectClassNoneOnDryRun {
			errs = append(errs, field.NotSupported(p.Child("sideEffects"), *h.sideEffects, []string{"None", "NoneOnDryRun"}))
		}
		if !sets.New(h.versions...).Has("v1") {
			errs = append(errs, field.Invalid(p.Child("admissionReviewVersions"), h.versions, "must include at least one of v1"))
		}
		for _, s := range []struct {
			sel  *metav1.LabelSelector
			name string
		}{{h.nsSel, "namespaceSelector"}, {h.objSel, "objectSelector"}} {
			if s.sel != nil {
				errs = append(errs, metav1validation.ValidateLabelSelector(s.sel, metav1validation.LabelSelectorValidationOptions{}, p.Child(s.name))...)
			}
		}
		for j, r := range h.rules {
			rp := p.Child("rules").Index(j)
			if len(r.Operations) == 0 {
				errs = append(errs, field.Required(rp.Child("operations"), ""))
			}
			if len(r.Resources) == 0 {
				errs = append(errs, field.Required(rp.Child("resources"), ""))
			}
			if len(r.APIVersions) == 0 {
				errs = append(errs, field.Required(rp.Child("apiVersions"), ""))
			}
		}
	}
	return errs
}

func validateMutatingWebhookConfiguration(c *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
	hooks := make([]webhookFields, len(c.Webhooks))
	for i, w := range c.Webhooks {
		hooks[i] = webhookFields{w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.SideEffects, w.TimeoutSeconds, w.NamespaceSelector, w.ObjectSelector, w.AdmissionReviewVersions}
	}
	return validateWebhooks(validateObjectMeta(&c.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain), hooks)
}

func validateValidatingWebhookConfiguration(c *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
	hooks := make([]webhookFields, len(c.Webhooks))
	for i, w := range c.Webhooks {
		hooks[i] = webhookFields{w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.SideEffects, w.TimeoutSeconds, w.NamespaceSelector, w.ObjectSelector, w.AdmissionReviewVersions}
	}
	return validateWebhooks(validateObjectMeta(&c.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain), hooks)
}
