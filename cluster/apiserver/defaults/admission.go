package defaults

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// setLimitRange fills a Container item's implied defaults as upstream's
// SetDefaults_LimitRangeItem: the default limit is the max, the default
// request the default limit, else the min.
func setLimitRange(lr *corev1.LimitRange) {
	for i := range lr.Spec.Limits {
		it := &lr.Spec.Limits[i]
		if it.Type != corev1.LimitTypeContainer {
			continue
		}
		if it.Default == nil {
			it.Default = corev1.ResourceList{}
		}
		if it.DefaultRequest == nil {
			it.DefaultRequest = corev1.ResourceList{}
		}
		for k, v := range it.Max {
			if _, ok := it.Default[k]; !ok {
				it.Default[k] = v.DeepCopy()
			}
		}
		for k, v := range it.Default {
			if _, ok := it.DefaultRequest[k]; !ok {
				it.DefaultRequest[k] = v.DeepCopy()
			}
		}
		for k, v := range it.Min {
			if _, ok := it.DefaultRequest[k]; !ok {
				it.DefaultRequest[k] = v.DeepCopy()
			}
		}
	}
}

// webhookDefaults are admissionregistration/v1's: failurePolicy Fail,
// matchPolicy Equivalent, empty selectors (match all), timeoutSeconds 10,
// rule scope "*".
func webhookDefaults(fp **admissionregistrationv1.FailurePolicyType, mp **admissionregistrationv1.MatchPolicyType,
	ns, obj **metav1.LabelSelector, timeout **int32, rules []admissionregistrationv1.RuleWithOperations) {
	if *fp == nil {
		*fp = ptrTo(admissionregistrationv1.Fail)
	}
	if *mp == nil {
		*mp = ptrTo(admissionregistrationv1.Equivalent)
	}
	if *ns == nil {
		*ns = &metav1.LabelSelector{}
	}
	if *obj == nil {
		*obj = &metav1.LabelSelector{}
	}
	if *timeout == nil {
		*timeout = ptrTo[int32](10)
	}
	for i := range rules {
		if rules[i].Scope == nil {
			rules[i].Scope = ptrTo(admissionregistrationv1.AllScopes)
		}
	}
}

func setMutatingWebhookConfiguration(c *admissionregistrationv1.MutatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		webhookDefaults(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules)
		if w.ReinvocationPolicy == nil {
			w.ReinvocationPolicy = ptrTo(admissionregistrationv1.NeverReinvocationPolicy)
		}
	}
}

func setValidatingWebhookConfiguration(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		webhookDefaults(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules)
	}
}
