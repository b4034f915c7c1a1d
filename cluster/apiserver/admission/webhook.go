package admission

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver/patch"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// Webhook timeouts: upstream's default and ceiling.
const (
	DefaultWebhookTimeout = 10 * time.Second
	MaxWebhookTimeout     = 30 * time.Second
	maxResponseBytes      = 3 << 20
)

// Attributes are one write as webhooks see it.
type Attributes struct {
	Operation   admissionv1.Operation
	Kind        schema.GroupVersionKind
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	Name        string
	// Namespaced: the resource lives in namespaces (namespaceSelector and
	// rule scope apply).
	Namespaced bool
	User       authenticationv1.UserInfo
	Object     runtime.Object
	OldObject  runtime.Object
	DryRun     bool
	// NamespaceLabels are the labels of the object's namespace, or of the
	// namespace being written.
	NamespaceLabels map[string]string
}

// hook is what mutating and validating webhooks have in common.
type hook struct {
	name              string
	clientConfig      admissionregistrationv1.WebhookClientConfig
	rules             []admissionregistrationv1.RuleWithOperations
	failurePolicy     *admissionregistrationv1.FailurePolicyType
	namespaceSelector *metav1.LabelSelector
	objectSelector    *metav1.LabelSelector
	sideEffects       *admissionregistrationv1.SideEffectClass
	timeoutSeconds    *int32
}

func (h *hook) timeout() time.Duration {
	if h.timeoutSeconds == nil || *h.timeoutSeconds <= 0 {
		return DefaultWebhookTimeout
	}
	return min(time.Duration(*h.timeoutSeconds)*time.Second, MaxWebhookTimeout)
}

func (h *hook) ignoreFailure() bool {
	return h.failurePolicy != nil && *h.failurePolicy == admissionregistrationv1.Ignore
}

// Client calls webhooks. Its zero value is ready; it keeps one transport
// per caBundle so connections are reused.
type Client struct {
	// MaxObjectBytes bounds the object a webhook's patch may produce (and
	// what its copy operations may copy); 0 is maxResponseBytes.
	MaxObjectBytes int64

	mu         sync.Mutex
	transports map[string]*http.Transport
}

func (c *Client) transport(caBundle []byte) (*http.Transport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.transports[string(caBundle)]; ok {
		return t, nil
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("caBundle holds no PEM certificate")
		}
		tlsCfg.RootCAs = pool
	}
	t := &http.Transport{TLSClientConfig: tlsCfg, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second, ForceAttemptHTTP2: true}
	if c.transports == nil {
		c.transports = map[string]*http.Transport{}
	}
	c.transports[string(caBundle)] = t
	return t, nil
}

// Mutate runs the matching mutating webhooks in order. Each may return a
// JSON patch, applied to the object; decode turns the patched JSON back
// into an object of the resource's type, which replaces a.Object.
func (c *Client) Mutate(ctx context.Context, cfgs []*admissionregistrationv1.MutatingWebhookConfiguration, a *Attributes, decode func([]byte) (runtime.Object, error)) error {
	for _, cfg := range cfgs {
		for i := range cfg.Webhooks {
			w := &cfg.Webhooks[i]
			h := &hook{w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.NamespaceSelector, w.ObjectSelector, w.SideEffects, w.TimeoutSeconds}
			resp, err := c.run(ctx, h, a)
			if err != nil {
				return err
			}
			if resp == nil || len(resp.Patch) == 0 {
				continue
			}
			if err := c.applyWebhookPatch(ctx, h, resp, a, decode); err != nil {
				if h.ignoreFailure() {
					continue
				}
				return err
			}
		}
	}
	return nil
}

// applyWebhookPatch applies a webhook's JSON patch with the bounds the
// apiserver puts on clients' patches (package patch).
func (c *Client) applyWebhookPatch(ctx context.Context, h *hook, resp *admissionv1.AdmissionResponse, a *Attributes, decode func([]byte) (runtime.Object, error)) error {
	if resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		return apierrors.NewInternalError(fmt.Errorf("webhook %q returned a patch of unsupported type (want JSONPatch)", h.name))
	}
	orig, err := json.Marshal(a.Object)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	limit := c.MaxObjectBytes
	if limit <= 0 {
		limit = maxResponseBytes
	}
	patched, err := patch.JSON(ctx, orig, resp.Patch, limit)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("webhook %q returned a patch that does not apply: %w", h.name, err))
	}
	obj, err := decode(patched)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("webhook %q patched the object into something invalid: %w", h.name, err))
	}
	a.Object = obj
	return nil
}

// Validate runs the matching validating webhooks in parallel, as upstream
// does; the first refusal in configuration order is the answer.
func (c *Client) Validate(ctx context.Context, cfgs []*admissionregistrationv1.ValidatingWebhookConfiguration, a *Attributes) error {
	var hooks []*hook
	for _, cfg := range cfgs {
		for i := range cfg.Webhooks {
			w := &cfg.Webhooks[i]
			hooks = append(hooks, &hook{w.Name, w.ClientConfig, w.Rules, w.FailurePolicy, w.NamespaceSelector, w.ObjectSelector, w.SideEffects, w.TimeoutSeconds})
		}
	}
	errs := make([]error, len(hooks))
	var wg sync.WaitGroup
	for i, h := range hooks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.run(ctx, h, a)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// run calls one webhook if it matches and turns its answer into an error:
// a refusal as the webhook said, a failure to call it as its failurePolicy
// says. The call never outlives the webhook's timeout.
func (c *Client) run(ctx context.Context, h *hook, a *Attributes) (*admissionv1.AdmissionResponse, error) {
	ok, err := matches(h, a)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("webhook %q: %w", h.name, err))
	}
	if !ok {
		return nil, nil
	}
	if a.DryRun && (h.sideEffects == nil || (*h.sideEffects != admissionregistrationv1.SideEffectClassNone && *h.sideEffects != admissionregistrationv1.SideEffectClassNoneOnDryRun)) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q has side effects and dryRun is set", h.name))
	}
	resp, err := c.call(ctx, h, a)
	if err != nil {
		if h.ignoreFailure() {
			return nil, nil
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, apierrors.NewTimeoutError(fmt.Sprintf("failed calling webhook %q: %v", h.name, err), 0)
		}
		return nil, apierrors.NewInternalError(fmt.Errorf("failed calling webhook %q: %w", h.name, err))
	}
	if !resp.Allowed {
		return nil, denied(h.name, resp.Result)
	}
	return resp, nil
}

// denied is upstream's refusal status: at least 400, never Success.
func denied(name string, result *metav1.Status) error {
	by := fmt.Sprintf("admission webhook %q denied the request", name)
	s := metav1.Status{Status: metav1.StatusFailure}
	if result != nil {
		s = *result
	}
	if s.Code < http.StatusBadRequest {
		s.Code = http.StatusBadRequest
	}
	s.Status = metav1.StatusFailure
	switch {
	case s.Message != "":
		s.Message = by + ": " + s.Message
	case s.Reason != "":
		s.Message = by + ": " + string(s.Reason)
	default:
		s.Message = by + " without explanation"
	}
	return &apierrors.StatusError{ErrStatus: s}
}

func (c *Client) call(ctx context.Context, h *hook, a *Attributes) (*admissionv1.AdmissionResponse, error) {
	if h.clientConfig.URL == nil || *h.clientConfig.URL == "" {
		return nil, errors.New("only url clientConfig is supported by kstep (service references are not)")
	}
	t, err := c.transport(h.clientConfig.CABundle)
	if err != nil {
		return nil, err
	}
	uid := types.UID(uuid.NewUUID())
	review := &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:                uid,
			Kind:               metav1.GroupVersionKind(a.Kind),
			Resource:           metav1.GroupVersionResource(a.Resource),
			SubResource:        a.Subresource,
			RequestKind:        (*metav1.GroupVersionKind)(&a.Kind),
			RequestResource:    (*metav1.GroupVersionResource)(&a.Resource),
			RequestSubResource: a.Subresource,
			Name:               a.Name,
			Namespace:          a.Namespace,
			Operation:          a.Operation,
			UserInfo:           a.User,
			DryRun:             &a.DryRun,
		},
	}
	if a.Object != nil && a.Operation != admissionv1.Delete {
		review.Request.Object = runtime.RawExtension{Object: a.Object}
	}
	if a.OldObject != nil {
		review.Request.OldObject = runtime.RawExtension{Object: a.OldObject}
	}
	body, err := json.Marshal(review)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, *h.clientConfig.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := (&http.Client{Transport: t}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("webhook answered HTTP %d: %.200s", resp.StatusCode, data)
	}
	out := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("the webhook's answer is not an AdmissionReview: %w", err)
	}
	if out.Response == nil {
		return nil, errors.New("the webhook's AdmissionReview has no response")
	}
	if out.Response.UID != uid {
		return nil, fmt.Errorf("the webhook answered uid %q for request %q", out.Response.UID, uid)
	}
	return out.Response, nil
}

// matches applies a webhook's rules, namespaceSelector and objectSelector.
func matches(h *hook, a *Attributes) (bool, error) {
	ruleOK := false
	for i := range h.rules {
		if ruleMatches(&h.rules[i], a) {
			ruleOK = true
			break
		}
	}
	if !ruleOK {
		return false, nil
	}
	if a.Namespaced || a.Resource.Resource == "namespaces" && a.Resource.Group == "" {
		ok, err := selectorMatches(h.namespaceSelector, a.NamespaceLabels)
		if err != nil || !ok {
			return false, err
		}
	}
	if h.objectSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(h.objectSelector)
		if err != nil {
			return false, fmt.Errorf("objectSelector: %w", err)
		}
		if !sel.Empty() && !objectMatches(sel, a.Object) && !objectMatches(sel, a.OldObject) {
			return false, nil
		}
	}
	return true, nil
}

// objectMatches: an absent object (the old one of a create) matches no
// selector, as upstream.
func objectMatches(sel labels.Selector, obj runtime.Object) bool {
	m, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok || obj == nil || reflect.ValueOf(obj).IsNil() {
		return false
	}
	return sel.Matches(labels.Set(m.GetObjectMeta().GetLabels()))
}

func selectorMatches(s *metav1.LabelSelector, l map[string]string) (bool, error) {
	if s == nil {
		return true, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return false, fmt.Errorf("namespaceSelector: %w", err)
	}
	return sel.Empty() || sel.Matches(labels.Set(l)), nil
}

func ruleMatches(r *admissionregistrationv1.RuleWithOperations, a *Attributes) bool {
	opOK := false
	for _, op := range r.Operations {
		if op == admissionregistrationv1.OperationAll || string(op) == string(a.Operation) {
			opOK = true
		}
	}
	if !opOK || !anyOf(r.APIGroups, a.Resource.Group) || !anyOf(r.APIVersions, a.Resource.Version) {
		return false
	}
	if r.Scope != nil {
		switch *r.Scope {
		case admissionregistrationv1.ClusterScope:
			if a.Namespaced {
				return false
			}
		case admissionregistrationv1.NamespacedScope:
			if !a.Namespaced {
				return false
			}
		}
	}
	for _, res := range r.Resources {
		name, sub, _ := strings.Cut(res, "/")
		if (name == "*" || name == a.Resource.Resource) && (sub == a.Subresource || sub == "*") {
			return true
		}
	}
	return false
}

func anyOf(list []string, s string) bool {
	for _, x := range list {
		if x == "*" || x == s {
			return true
		}
	}
	return false
}
