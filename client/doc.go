// Package client talks to a Kubernetes API server (a real cluster or kapi's
// reference server): configuration, a REST layer with retries and rate
// limits, a generic typed client, a dynamic client, a metadata client,
// discovery and errors.
//
// # Configuration
//
// A [Config] says where the server is and how to authenticate: [Load] finds
// one the way kubectl does (kubeconfig, then the pod's service account),
// [InClusterConfig] and [LoadKubeconfig] do one each, and a Config can be
// filled by hand. [New] turns it into a [Client], the one object that holds
// the transport (TLS, proxy, credentials, user agent), the rate limiter, the
// retry policy, the [Scheme] of Go types, discovery and the default
// namespace. Build one per server and share it; it is safe for concurrent
// use.
//
//	cfg, err := client.Load(client.LoadOptions{})
//	c, err := client.New(cfg)
//
// # Resources
//
// A [Resource] makes requests about the objects of one resource. [For]
// returns the Resource of a Go type: the built-in kinds of kapi's api
// packages, or any struct that embeds metav1.TypeMeta and metav1.ObjectMeta
// and is registered. Its methods take and return *T and use metav1's option
// types:
//
//	pods := client.For[corev1.Pod](c).Namespace("web")
//	pod, err := pods.Get(ctx, "frontend-0", metav1.GetOptions{})
//	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
//	pod, err = pods.Create(ctx, pod, metav1.CreateOptions{})
//
// Code that keeps one writes its type with one parameter:
//
//	type Reconciler struct{ secrets client.Resource[corev1.Secret] }
//
// The verbs are Get, List (a [List] of T; ListEach streams items to a
// callback without keeping them), Watch, Create, Update, UpdateStatus, Patch
// (JSON, merge and strategic merge patches), Apply and ApplyStatus
// (server-side apply of a whole object), ApplyConfig and ApplyConfigStatus
// (typed server-side apply of an apply.Config, which claims only the fields
// set: see package apply), Delete, DeleteCollection, and GetSubresource,
// UpdateSubresource and CreateSubresource for subresources such as "scale",
// "eviction" or "token". Returned objects always carry their kind and
// apiVersion. The interface is composed of smaller ones ([Reader],
// [Writer], [Patcher], [Deleter], [SubresourceClient]) for code that needs
// only some verbs; a Reader is a reflector.ListerWatcher.
//
// Namespace and WithDecodeOptions return scoped copies: a Resource is
// immutable. WithDecodeOptions tunes how lists and watches decode objects
// for callers that keep many of them (skip managedFields unread, share the
// bytes of equal ones); the informer factory uses it.
//
// # Registering types
//
// The client finds a Go type's resource, kind and scope in a [Scheme]
// without asking the server. [DefaultScheme] holds a type for every resource
// a default kube-apiserver v1.37 serves (batchv1.Job, rbacv1.Role,
// autoscalingv2.HorizontalPodAutoscaler ...; see [NewBuiltinScheme]) with
// its kind, scope, short names and categories; a custom resource type is
// registered once, usually in an init function:
//
//	client.Register[Widget](client.Kind{Group: "example.com", Version: "v1",
//		Resource: "widgets", Kind: "Widget", Namespaced: true})
//
// [Add] registers into a Scheme of one's own, which [Client.WithScheme]
// uses.
//
// Structs from k8s.io/api cannot be used as T directly: their ObjectMeta is
// apimachinery's, whose accessors return apimachinery types (types.UID,
// apimachinery's metav1.Time), so they do not implement kapi's metav1.Object.
// kapi's api packages carry the same fields under the same JSON names and
// protobuf numbers, so such an object converts losslessly through JSON
// (codec.MarshalJSON then codec.UnmarshalJSON), or the dynamic client
// serves it as unstructured.
//
// # Protobuf
//
// With Config.ContentType set to application/vnd.kubernetes.protobuf, a type
// is sent and received as protobuf when its Kind declares that the server
// speaks protobuf for it (built-in kinds do; custom resources never do) and
// the type encodes itself with methods of its own. A custom resource struct
// embedding metav1.ObjectMeta inherits ObjectMeta's protobuf methods; the
// client detects that those are not the struct's own and uses JSON (see
// [Add]). Responses are decoded in whatever the server answered with: the
// Accept header offers protobuf, then JSON. Request and response bodies of
// lists and watches are never held whole: lists are decoded item by item,
// watches frame by frame.
//
// # Dynamic client
//
// [Dynamic] gives the Resource of any resource named by a
// [GroupVersionResource], its objects held as unstructured.Unstructured,
// always in JSON. It is the same implementation as For's with another
// codec, so it has the same verbs, options and errors:
//
//	cms := client.Dynamic(c).Resource(client.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("web")
//	cm, err := cms.Get(ctx, "settings", metav1.GetOptions{})
//
// # Metadata client
//
// [Metadata] gives a [MetadataResource], which reads and writes only the
// metadata of objects of any resource, as meta.k8s.io/v1
// PartialObjectMetadata (the server sends names, labels, annotations, owner
// references, finalizers and resourceVersions, never the rest), in protobuf
// when the Config prefers it, for custom resources too. It has the verbs
// of a Resource that make sense on metadata (Get, List, ListEach, Watch,
// Patch, Delete, DeleteCollection), with the same signatures and the same
// implementation. It is a reflector.ListerWatcher, so an informer can cache
// the metadata of, say, every Secret without holding their data:
//
//	secrets := client.Metadata(c).Resource(client.GroupVersionResource{Version: "v1", Resource: "secrets"})
//	inf := informer.New[metav1.PartialObjectMetadata](secrets, informer.Config[metav1.PartialObjectMetadata]{})
//
// Deletes send their DeleteOptions in the client's encoding (protobuf
// included, as client-go does), on every client.
//
// # Watches
//
// Watch returns a [Watcher] whose channel (or Events iterator) delivers
// [Event] values: ADDED, MODIFIED and DELETED with the object, BOOKMARK with a
// resourceVersion, and ERROR with a *[StatusError] (an expired
// resourceVersion reads IsResourceExpired). The watch ends, and its
// connection is closed at once, when its context is done or Stop is called;
// it also ends when the server ends it. Its goroutine never outlives it.
//
// # Errors
//
// A request the server refuses returns a *[StatusError] holding the
// server's metav1.Status; its Error is the Status message. Bodies that are
// not a Status (a proxy's page, a plain "404 page not found") get a Status
// made up from the HTTP code, with the start of the body in the message.
// Predicates classify errors, through wrapping, as client-go's do:
// [IsNotFound], [IsAlreadyExists], [IsConflict], [IsInvalid], [IsGone],
// [IsResourceExpired], [IsTooLargeResourceVersion], [IsTooManyRequests],
// [IsTimeout], [IsServerTimeout], [IsForbidden], [IsUnauthorized],
// [IsNotAcceptable], [IsUnsupportedMediaType], [IsBadRequest],
// [IsMethodNotSupported], [IsInternalError], [IsServiceUnavailable],
// [IsRequestEntityTooLarge]; [ReasonForError] and [RetryAfterSeconds] read
// the Status.
//
// # Retries and rate limits
//
// Every request waits for a token from the client's rate limiter (QPS and
// Burst; waiting ends with the context). A request that is safe to repeat is
// retried, up to Config.MaxRetries times, on 429, 503 and 504 answers and on
// connections refused or reset, after the Retry-After delay the server asked
// for or else a jittered exponential backoff. Safe to repeat are GET and HEAD
// (get, list, watch, discovery), a PUT whose object carries a
// resourceVersion (a duplicate then fails with a Conflict instead of
// overwriting), and a DELETE with a uid or resourceVersion precondition;
// never a POST or a PATCH (create, patch, apply) or a delete of a
// collection. Retries are logged at debug level on Config.Logger.
//
// # Metrics and tracing
//
// Config.Metrics ([RequestMetrics]) is told each attempt's method, status
// code and latency and each wait for the rate limiter; the metrics package
// exports them to Prometheus. Config.WrapTransport wraps the network
// transport inside kapi's credentials, for OpenTelemetry's otelhttp or any
// other instrumentation, without replacing kapi's TLS and auth transport.
//
// # Discovery and RESTMapper
//
// [Client.Discovery] reads the server's version, API groups and the
// resources of each group version. It asks /api and /apis for aggregated
// discovery (apidiscovery.k8s.io/v2), which describes every group and
// resource in two requests, and falls back to one request per group version
// on servers that do not serve it. [Client.RESTMapper] maps kinds to
// resources (and resources, by plural, singular or short name, to kinds) from
// discovery, cached (everything at once with aggregated discovery, one group
// at a time without) and refreshed when a lookup misses, so that resources
// installed later are found; concurrent loads share one request, and
// refreshes on misses are rate-limited ([RESTMapperOptions]).
//
// # REST layer
//
// [Client.NewRequest] builds any request the typed and dynamic clients do not
// cover; it goes through the same rate limiter, retry policy and error
// mapping, and its [Response] body is streamed.
package client
