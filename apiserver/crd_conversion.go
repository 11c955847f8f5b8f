package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"time"

	admissionregistrationv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// CRD conversion webhooks
//
// A CustomResourceDefinition with spec.conversion.strategy Webhook has its
// objects converted between versions by the webhook, as kube-apiserver
// v1.37 does:
//
//   - every served version's Resource gets Convert (crdConverter.convert);
//     its objects are kept in its own version between decoding and
//     storage, so defaulting, pruning and validation use its schema;
//   - the storage seen by the resource's store (Server.storageOf) converts
//     what it reads to the version served (get, list items, watch events,
//     the current object of an update or delete) and what it writes to the
//     storage version, one object per ConversionReview, as kube-apiserver
//     decodes each object it reads from etcd on its own; objects already in
//     the wanted version are not sent;
//   - a ConversionReview (apiextensions.k8s.io, the first of the CRD's
//     conversionReviewVersions that the server speaks) is POSTed over HTTPS
//     to the url, or to the service at the address Config.WebhookServiceMap
//     gives for it, with the caBundle as root CAs and a 30 s timeout;
//   - the answer must carry the request's uid, a Success result, as many
//     objects as sent, each of the desired apiVersion, kind, name and
//     namespace; only their labels and annotations are kept of their
//     metadata (the rest is the original's);
//   - a failed conversion of a stored object is answered as kube-apiserver
//     answers an object it cannot decode (500 InternalError, "StorageError:
//     corrupt object"), of an object written as its converter's error (500,
//     no reason): "conversion webhook for GROUP/VERSION, Kind=KIND failed:
//     ...". A watch ends with an ERROR event carrying that Status.

// conversionReviewVersions are the ConversionReview versions the server
// speaks, in its order of preference.
var conversionReviewVersions = []string{"v1", "v1beta1"}

// conversionTimeout is how long a conversion webhook may take.
const conversionTimeout = 30 * time.Second

// crdConverter converts the objects of one CRD through its webhook.
type crdConverter struct {
	s             *Server
	group, kind   string
	conversion    apiextensionsv1.CustomResourceConversion // what it was made from
	reviewVersion string                                   // the ConversionReview version sent
	ep            webhookEndpoint
	epErr         error // why the webhook cannot be called
}

// converterFor returns the converter of crd's webhook for sc, nil when crd
// does not convert through one: sc's own while the CRD's conversion and
// kind are unchanged (its connections kept), a new one otherwise (the old
// one's idle connections closed).
func (sc *servedCRD) converterFor(s *Server, crd *apiextensionsv1.CustomResourceDefinition) *crdConverter {
	conv := crd.Spec.Conversion
	kind := crd.Spec.Names.Kind
	if crd.Status.AcceptedNames.Kind != "" {
		kind = crd.Status.AcceptedNames.Kind
	}
	if old := sc.conv; old != nil {
		if conv != nil && old.kind == kind && old.group == crd.Spec.Group && reflect.DeepEqual(old.conversion, *conv) {
			return old
		}
		old.closeIdle()
		sc.conv = nil
	}
	if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
		return nil
	}
	c := &crdConverter{s: s, group: crd.Spec.Group, kind: kind, conversion: *conv.DeepCopy()}
	for _, v := range conv.Webhook.ConversionReviewVersions {
		if slices.Contains(conversionReviewVersions, v) {
			c.reviewVersion = v
			break
		}
	}
	c.ep, c.epErr = s.conversionClient(*conv.Webhook.ClientConfig)
	sc.conv = c
	return c
}

// closeIdle closes the idle connections to the webhook (c may be nil).
func (c *crdConverter) closeIdle() {
	if c != nil && c.ep.client != nil {
		c.ep.client.CloseIdleConnections()
	}
}

// closeConverters closes the idle connections of every CRD's webhook.
func (c *crdController) closeConverters() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sc := range c.crds {
		sc.conv.closeIdle()
	}
}

// webhookEndpoint is where a webhook is called, and the client calling it.
type webhookEndpoint struct {
	url    string
	client *http.Client
}

// conversionClient is the endpoint and HTTP client of a conversion
// webhook's clientConfig: the admission webhooks' (webhookClient), a
// service reached through Config.WebhookServiceMap.
func (s *Server) conversionClient(cc apiextensionsv1.WebhookClientConfig) (webhookEndpoint, error) {
	ac := admissionregistrationv1.WebhookClientConfig{URL: cc.URL, CABundle: cc.CABundle}
	if svc := cc.Service; svc != nil {
		ac.Service = &admissionregistrationv1.ServiceReference{Namespace: svc.Namespace, Name: svc.Name, Path: svc.Path, Port: svc.Port}
	}
	endpoint, client, err := s.webhookClient(ac)
	return webhookEndpoint{url: endpoint, client: client}, err
}

// conversionError is a conversion that failed, in kube-apiserver's words.
type conversionError struct{ msg string }

func (e *conversionError) Error() string { return e.msg }

// convert returns obj converted to version of the CRD's group; obj itself
// when it is in that version already.
func (c *crdConverter) convert(ctx context.Context, o registry.Object, version string) (registry.Object, error) {
	in, ok := o.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("conversion of a %T", o)
	}
	desired := unstructured.JoinAPIVersion(c.group, version)
	from := in.GetAPIVersion()
	if from == desired {
		return in, nil
	}
	prefix := fmt.Sprintf("conversion webhook for %s, Kind=%s", from, c.kind)
	fail := func(err error) error { return &conversionError{msg: prefix + " failed: " + err.Error()} }
	if c.reviewVersion == "" {
		return nil, fail(fmt.Errorf("webhook does not accept v1 or v1beta1 ConversionReview"))
	}
	if c.epErr != nil {
		return nil, fail(c.epErr)
	}
	ep := c.ep
	uid := string(c.s.cfg.NewUID())
	raw, err := json.Marshal(in.Object)
	if err != nil {
		return nil, fail(err)
	}
	review := apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/" + c.reviewVersion, Kind: "ConversionReview"},
		Request: &apiextensionsv1.ConversionRequest{UID: metav1.UID(uid), DesiredAPIVersion: desired,
			Objects: []metav1.RawExtension{{Raw: raw}}},
	}
	body, err := json.Marshal(&review)
	if err != nil {
		return nil, fail(err)
	}
	ctx, cancel := context.WithTimeout(ctx, conversionTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.url+timeoutQuery(ep.url), bytes.NewReader(body))
	if err != nil {
		return nil, fail(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	// A conversion can be sent again: on a kept connection the webhook
	// closed meanwhile, the client retries on a new one (the nil header
	// is not sent).
	req.Header["Idempotency-Key"] = nil
	resp, err := ep.client.Do(req)
	if err != nil {
		return nil, fail(err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 3<<20))
	if err != nil {
		return nil, fail(err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fail(fmt.Errorf("the server responded with the status code %d but did not return more information", resp.StatusCode))
	}
	out, err := parseConversionResponse(answer, uid, desired, []*unstructured.Unstructured{in})
	if err != nil {
		var ce *conversionError
		if errors.As(err, &ce) {
			return nil, &conversionError{msg: prefix + " " + ce.msg}
		}
		return nil, fail(err)
	}
	return out[0], nil
}

// timeoutQuery is the timeout parameter kube-apiserver adds to a webhook's
// URL ("?timeout=30s").
func timeoutQuery(endpoint string) string {
	sep := "?"
	if u, err := url.Parse(endpoint); err == nil && u.RawQuery != "" {
		sep = "&"
	}
	return sep + "timeout=" + conversionTimeout.String()
}

// parseConversionResponse checks a webhook's answer to the review uid of
// objects in and returns the converted objects. An error that is a
// *conversionError follows "conversion webhook for ... " in the message;
// any other follows "... failed: ".
func parseConversionResponse(body []byte, uid, desired string, in []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var review apiextensionsv1.ConversionReview
	if err := json.Unmarshal(body, &review); err != nil {
		return nil, err
	}
	r := review.Response
	if r == nil {
		return nil, errors.New("no response provided")
	}
	if string(r.UID) != uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, r.UID)
	}
	if r.Result.Status != metav1.StatusSuccess {
		return nil, errors.New(r.Result.Message)
	}
	if len(r.ConvertedObjects) != len(in) {
		return nil, &conversionError{msg: fmt.Sprintf("returned %d objects, expected %d", len(r.ConvertedObjects), len(in))}
	}
	out := make([]*unstructured.Unstructured, len(in))
	for i, raw := range r.ConvertedObjects {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw.Raw); err != nil {
			return nil, &conversionError{msg: fmt.Sprintf("returned invalid object at index %d: %v", i, err)}
		}
		if got := u.GetAPIVersion(); got != desired {
			return nil, &conversionError{msg: fmt.Sprintf("returned invalid object at index %d: invalid groupVersion (expected %s, received %s)", i, desired, got)}
		}
		if err := restoreMetadata(in[i], u); err != nil {
			return nil, &conversionError{msg: "returned invalid object: " + err.Error()}
		}
		out[i] = u
	}
	return out, nil
}

// restoreMetadata checks that the webhook kept the object's identity and
// gives out the original's metadata, with out's labels and annotations.
func restoreMetadata(in, out *unstructured.Unstructured) error {
	if a, b := in.GetKind(), out.GetKind(); a != b {
		return fmt.Errorf("must have the same kind: %s != %s", a, b)
	}
	if a, b := in.GetName(), out.GetName(); a != b {
		return fmt.Errorf("must have the same name: %s != %s", a, b)
	}
	if a, b := in.GetNamespace(), out.GetNamespace(); a != b {
		return fmt.Errorf("must have the same namespace: %s != %s", a, b)
	}
	labels, annotations := out.GetLabels(), out.GetAnnotations()
	md, _ := in.Object["metadata"].(map[string]any)
	out.Object["metadata"] = unstructured.DeepCopyJSONValue(md)
	out.SetLabels(labels)
	out.SetAnnotations(annotations)
	return nil
}

// validateCRDConversion checks a Webhook conversion as kube-apiserver
// does: a client config, and ConversionReview versions of which the
// server speaks one.
func validateCRDConversion(c *apiextensionsv1.CustomResourceConversion) metav1.FieldErrors {
	if c.Strategy != apiextensionsv1.WebhookConverter {
		return nil
	}
	var errs metav1.FieldErrors
	var versions []string
	if c.Webhook != nil {
		versions = c.Webhook.ConversionReviewVersions
	}
	if c.Webhook == nil || c.Webhook.ClientConfig == nil {
		errs = append(errs, metav1.FieldRequired("spec.conversion.webhookClientConfig", "required when strategy is set to Webhook"))
	}
	switch {
	case len(versions) == 0:
		errs = append(errs, metav1.FieldRequired("spec.conversion.conversionReviewVersions", ""))
	case !slices.ContainsFunc(versions, func(v string) bool { return slices.Contains(conversionReviewVersions, v) }):
		errs = append(errs, metav1.FieldInvalid("spec.conversion.conversionReviewVersions", versions,
			"must include at least one of v1, v1beta1"))
	}
	return errs
}
