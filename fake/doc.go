// Package fake gives unit tests a Kubernetes client that needs no cluster:
// the real client (package client) wired in-process to kapi's reference API
// server (package apiserver), with reactors that can answer requests first
// and a record of every request.
//
// Unlike a fake that keeps objects in a map, this one cannot disagree with a
// server: storage, validation, defaulting, resourceVersions and conflicts,
// generateName, label and field selectors, pagination, watches (from a
// resourceVersion, with bookmarks), finalizers and namespace deletion are
// decided by the reference server's own code, at in-memory speed.
//
// # Use in a test
//
// [New] starts a [Fake] seeded with objects and closes it when the test
// ends; [Fake.Client] returns the same *client.Client that client.New
// returns, so typed, dynamic and discovery clients all work:
//
//	f := fake.New(t,
//		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "web"}},
//	)
//	cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
//	cm, err := cms.Get(ctx, "settings", metav1.GetOptions{})
//
// [NewClient] is the shortcut when only the client is needed;
// [NewWithOptions] takes [Options]. Outside of tests, [Start] returns a Fake
// (or an error) that the caller closes. [Fake.Config] builds more clients
// on the same Fake (another namespace, protobuf).
//
// # Seeding
//
// Seed objects (typed kapi objects or *unstructured.Unstructured) are
// created through the server, so they get uids, resourceVersions and
// defaults, and are validated: a seed the server refuses fails the test
// with a message naming the object. Namespaces the seeds name are created
// when missing; a status is written through /status; an object with a
// deletionTimestamp and finalizers is left marked for deletion. See
// [Fake.Seed], which also adds objects later.
//
// # Reactors
//
// A reactor sees a request before the server and may answer it:
//
//	f.PrependReactor("update", "configmaps", func(a fake.Action) (bool, any, error) {
//		return true, nil, client.NewStatusError(metav1.NewConflict(
//			metav1.GroupResource{Resource: "configmaps"}, a.Name, errors.New("try again")))
//	})
//
// An error is sent as the Status the server would send (the client then
// reads IsConflict), an object as the response body; a reactor that does
// not handle the request lets it through to the server. Verbs and
// resources match with "*" wildcards and "resource/subresource" patterns
// (see [Fake.PrependReactor] and [Fake.AddReactor]; [ReactionFunc] says
// what each answer becomes). Reactors run in the client's transport, so
// the client's encoding, retries and error handling all apply to their
// answers.
//
// # Recorded actions
//
// [Fake.Actions] returns every request the client sent (an [Action]: verb,
// resource, subresource, namespace, name, query and body), in order,
// including those reactors answered; [Fake.ClearActions] forgets them.
// [Action.String] reads like "update configmaps/status web/settings", for
// assertions and failure messages; [Action.Into] decodes the body.
//
// # Faults
//
// [Options.Faults] makes the Fake misbehave as real servers and networks
// do, so that a test can prove a controller converges anyway: 500s, 429s
// with Retry-After, 409 Conflicts on updates and patches, 410 Expired on
// continue tokens and watches, watches cut in the middle of an event or
// dropped early, and slow responses (timed on a workqueue.Clock, so a test
// can use clocktest.FakeClock). Each [Faults] rate is a probability per
// request, optionally limited to some verbs and resources; the zero value
// injects nothing. Each fault is the real kube-apiserver's answer, so the
// client reports it with its usual errors (client.IsConflict,
// client.IsResourceExpired, client.RetryAfterSeconds).
//
//	f := fake.NewWithOptions(t, fake.Options{MaxRetries: -1, Faults: fake.Faults{
//		Seed: seed, Conflict: 0.2, InternalError: 0.05, DropWatch: 0.3,
//	}}, objects...)
//	// run the controller, let it converge …
//	f.StopFaults()
//	// check the outcome; t.Log(f.FaultCounts())
//
// Faults are drawn from the seed and each request's identity (verb,
// resource, namespace, name and how many such requests came before), so the
// same seed and requests give the same faults on every run, even with
// requests about different objects running concurrently (see [Faults] for
// exactly what is deterministic). [Fake.FaultCounts] counts the faults by
// [FaultKind]; [Fake.StopFaults] ends them.
//
// # Authorization
//
// By default everything is allowed, as in envtest: the client acts as
// apiserver.AdminUser. Options.RBAC makes the server authorize with RBAC,
// with a cluster's bootstrap policy and ClusterRole aggregation, and
// Options.User is whom the client acts as: seed a controller's Role and
// RoleBinding, act as its service account, and what the Role does not
// grant fails with 403 Forbidden (client.IsForbidden), with
// kube-apiserver's message. Seeding is always the admin's, and a Role or
// binding seeded applies from the next request. See ExampleOptions_rbac.
//
// # Determinism
//
// By default UIDs count up (00000000-0000-0000-0000-000000000001, …) and
// generated names end in counting suffixes (bbbbb, bbbbc, …), per Fake, so
// a test sees the same values on every run; the objects every server
// creates at start (the four system namespaces, the kubernetes Service,
// Endpoints and EndpointSlice, the system PriorityClasses, and with
// Options.RBAC the bootstrap RBAC policy) take the first UIDs. Options.Now injects the
// clock behind creation and deletion timestamps (the wall clock by
// default); Options.NewUID and Options.NameSuffix replace the generators.
//
// # Streaming and cleanup
//
// The transport calls the server's ServeHTTP directly, with no socket.
// Lists, watches and anything else that may stream are served on a
// goroutine owned by the Fake: the response is handed over when the
// handler flushes, outgrows a 32 KiB buffer, or returns, as net/http's
// server would send it, and from then on its body streams what the handler
// writes (through a 256 KiB buffer, like a socket's), so watches deliver
// events as they happen and large lists are decoded while they are
// written. Requests for one object (get, create, update, patch, delete, and
// their /status) are served on the caller's goroutine and handed over
// whole, which is faster. Cancelling a request's context or closing its
// body ends the handler. [Fake.Close] (run by t.Cleanup for New) ends every
// request and watch and waits for every goroutine the Fake started.
//
// # What the fake does not do
//
// It serves what the reference server serves (patches, server-side apply,
// custom resources, garbage collection included); what the server refuses
// fails as it answers, and reactors can answer anything instead. Requests
// that are not about a resource (discovery, /version) are served but neither
// recorded nor given to reactors.
package fake
