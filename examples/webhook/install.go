package main

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	admissionregistrationv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"sigs.k8s.io/yaml"
)

//go:embed manifests.yaml
var manifests []byte

const (
	namespace = "kapi-webhook-example"
	crdName   = "widgets.sdk.i16.kapi.dev"
	policy    = "widgets-need-team.sdk.i16.kapi.dev"
	webhooks  = "widgets.sdk.i16.kapi.dev"
)

// install creates the namespace, the CRD, the policy and the webhook
// configurations that call the webhooks at baseURL, trusting caBundle, and
// waits until the server enforces all of them. The returned function deletes
// them again.
func install(ctx context.Context, c *client.Client, baseURL string, caBundle []byte) (uninstall func(), err error) {
	var crd apiextensionsv1.CustomResourceDefinition
	var vap admissionregistrationv1.ValidatingAdmissionPolicy
	var binding admissionregistrationv1.ValidatingAdmissionPolicyBinding
	docs := bytes.Split(manifests, []byte("\n---\n"))
	for i, into := range []any{&crd, &vap, &binding} {
		j, err := yaml.YAMLToJSON(docs[i])
		if err != nil {
			return nil, err
		}
		if err := codec.UnmarshalJSON(j, into); err != nil {
			return nil, err
		}
	}
	binding.Spec.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: nsSelector()}
	convertURL := baseURL + "/convert"
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &convertURL, CABundle: caBundle},
			ConversionReviewVersions: []string{"v1"},
		},
	}

	var in installer
	uninstall = in.uninstall
	defer func() {
		if err != nil {
			uninstall()
		}
	}()
	mutating, validating := webhookConfigurations(baseURL, caBundle)
	if err := errors.Join(
		create(ctx, c, &in, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}),
		create(ctx, c, &in, &crd),
		create(ctx, c, &in, &vap),
		create(ctx, c, &in, &binding),
		create(ctx, c, &in, mutating),
		create(ctx, c, &in, validating),
	); err != nil {
		return nil, err
	}
	return uninstall, waitEnforced(ctx, c)
}

// installer remembers how to delete what install created.
type installer struct{ undo []func(context.Context) error }

// create creates obj (a cluster-scoped object) and remembers to delete it.
func create[T any, PT client.ObjectPtr[T]](ctx context.Context, c *client.Client, in *installer, obj *T) error {
	r := client.For[T, PT](c)
	name := PT(obj).GetName()
	if _, err := r.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating %T %s: %w", obj, name, err)
	}
	in.undo = append(in.undo, func(ctx context.Context) error { return r.Delete(ctx, name, metav1.DeleteOptions{}) })
	return nil
}

// uninstall deletes what was created, webhooks first, so that they cannot
// refuse the rest.
func (in *installer) uninstall() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := len(in.undo) - 1; i >= 0; i-- {
		if err := in.undo[i](ctx); err != nil && !client.IsNotFound(err) {
			fmt.Println("cleanup:", err)
		}
	}
}

func nsSelector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": namespace}}
}

// webhookConfigurations returns the configurations that send the widgets of
// the example's namespace to the mutating and the validating webhook.
func webhookConfigurations(baseURL string, caBundle []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	none, fail := admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.Fail
	rule := func(ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: ops,
			Rule: admissionregistrationv1.Rule{APIGroups: []string{"sdk.i16.kapi.dev"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}}}
	}
	clientConfig := func(path string) admissionregistrationv1.WebhookClientConfig {
		url := baseURL + path
		return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle}
	}
	timeout := int32(5)
	return &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: webhooks},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{
				Name: "default." + webhooks, ClientConfig: clientConfig("/default-widget"),
				Rules:       rule(admissionregistrationv1.Create, admissionregistrationv1.Update),
				SideEffects: &none, FailurePolicy: &fail, TimeoutSeconds: &timeout, NamespaceSelector: nsSelector(),
				AdmissionReviewVersions: []string{"v1"},
			}},
		}, &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: webhooks},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name: "validate." + webhooks, ClientConfig: clientConfig("/validate-widget"),
				Rules:       rule(admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete),
				SideEffects: &none, FailurePolicy: &fail, TimeoutSeconds: &timeout, NamespaceSelector: nsSelector(),
				AdmissionReviewVersions: []string{"v1"},
			}},
		}
}

// waitEnforced waits until the widgets resource is served and the policy and
// both webhooks act on it (a real server picks up new configurations within
// a second or so), probing with dry-run creates.
func waitEnforced(ctx context.Context, c *client.Client) error {
	widgets := client.For[Widget](c).Namespace(namespace)
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	probes := []struct {
		what string
		ok   func() bool
	}{
		{"the widgets resource to be served", func() bool {
			_, err := widgets.List(ctx, metav1.ListOptions{})
			return err == nil
		}},
		{"the conversion webhook", func() bool {
			_, err := client.For[WidgetV1alpha1](c).Namespace(namespace).List(ctx, metav1.ListOptions{})
			return err == nil
		}},
		{"the mutating webhook", func() bool {
			w, err := widgets.Create(ctx, newWidget("probe", 1, ""), dryRun)
			return err == nil && w.Spec.Size == "medium"
		}},
		{"the validating webhook", func() bool {
			_, err := widgets.Create(ctx, newWidget("probe", 3, "small"), dryRun)
			return err != nil && client.IsForbidden(err)
		}},
		{"the policy", func() bool {
			w := newWidget("probe", 1, "")
			w.Labels = nil
			_, err := widgets.Create(ctx, w, dryRun)
			return err != nil && client.IsForbidden(err)
		}},
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for _, p := range probes {
		for !p.ok() {
			select {
			case <-tick.C:
			case <-deadline:
				return fmt.Errorf("waiting for %s: %w", p.what, context.DeadlineExceeded)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

func newWidget(name string, replicas int32, size string) *Widget {
	return &Widget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "blue"}},
		Spec:       WidgetSpec{Replicas: replicas, Size: size},
	}
}

// describe words the outcome of a request: the Status of a refusal.
func describe(err error) string {
	if s, ok := errors.AsType[client.APIStatus](err); ok {
		st := s.Status()
		return fmt.Sprintf("refused, %d %s: %s", st.Code, st.Reason, st.Message)
	}
	return "error: " + err.Error()
}
