// Package webhook serves Kubernetes admission webhooks (validating and
// mutating) and CRD conversion webhooks over HTTPS, with typed handlers and a
// certificate reloaded when its files change. It is controller-runtime's
// pkg/webhook/admission and conversion, and kube-rs's admission module, for
// kapi's types.
//
// # Validating
//
// A validating webhook is a function of a typed request:
//
//	validate := webhook.Validating(func(ctx context.Context, req webhook.Request[Widget]) webhook.Response {
//		if req.Object != nil && req.Object.Spec.Replicas > 10 {
//			return webhook.Denied("spec.replicas: at most 10")
//		}
//		return webhook.Allowed()
//	})
//
// Request embeds the AdmissionRequest kube-apiserver sent (UID, Operation,
// UserInfo, DryRun, …) and holds its objects decoded as the handler's type:
// Object on CREATE and UPDATE, OldObject on UPDATE and DELETE (on DELETE the
// object being deleted is the old one; Object is nil). A Response allows,
// or denies with a message and optionally an HTTP code, reason and causes
// (403 Forbidden by default), and carries warnings the API client prints.
// FromValidator does the same from a Validator, with a method per operation,
// whose errors deny (a client.APIStatus error keeps its Status).
//
// # Mutating
//
// A mutating webhook changes *req.Object in place and allows; Mutating (or
// FromDefaulter, from a Defaulter) answers with the RFC 6902 JSON patch of
// the change. The patch is computed against the object as received, from
// what the handler changed only (CreatePatch), so fields the Go type does not
// know are kept, and what the Go encoding adds by itself (a null
// creationTimestamp, an empty status) is not sent.
//
// # Conversion
//
// A CRD served in several versions converts between them through a hub
// version: each other version is a Spoke with two typed functions, to and
// from the hub, and NewConversion builds the webhook of the kind:
//
//	conv, err := webhook.NewConversion[v2.Widget](webhook.Spoke(v1ToV2, v2ToV1))
//
// Each object of a ConversionReview is converted (through the hub when
// neither end is it), its metadata kept; any failure answers a Failure
// Status for the whole review, as kube-apiserver expects.
//
// # Requests and errors
//
// Handlers answer a review of the apiVersion it was sent with
// (admission.k8s.io/v1 or v1beta1, apiextensions.k8s.io/v1 or v1beta1) and
// echo its uid. What is not a review gets an HTTP error with a plain message:
// 405 for a method other than POST, 415 for a content type other than
// application/json, 413 above MaxRequestBytes, 400 for a body that is not a
// review or has no request. A review whose objects do not decode as the
// handler's type, or are of another kind than the one the type is
// registered as in client.DefaultScheme, is denied with 400; a handler that
// panics denies with 500 InternalError, and the server goes on.
//
// # Serving
//
// A Server is configured by one ServerConfig (address or listener,
// certificate directory or files, minimum TLS version, handlers by path) and
// runs until its context is done; it is a manager.Runnable:
//
//	srv, err := webhook.NewServer(webhook.ServerConfig{
//		CertDir:  "/tmp/k8s-webhook-server/serving-certs",
//		Handlers: map[string]http.Handler{"/validate-widget": validate, "/convert": conv},
//	})
//	err = srv.Start(ctx)
//
// The certificate is looked up on each TLS handshake and read again when
// either file changed (another file, mtime or size, or modified in the last
// two seconds), so a rotation by cert-manager or a Secret volume's symlink
// swap is served from the next connection on, with no watcher goroutine.
// Until the new files hold a matching pair, the previous certificate is
// served.
//
// # Testing
//
// Handlers are tested without HTTP through their Review methods. End to
// end, SelfSigned makes a certificate for 127.0.0.1 that is its own CA, so
// a Server can serve it and a webhook configuration's caBundle trust it on
// the reference server (fake.New or apiserver.New); examples/webhook does
// this.
package webhook
