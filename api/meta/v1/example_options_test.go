package v1_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// A client pages through a collection: the first request carries a limit, the
// next ones the continue token of the previous page, and no resourceVersion.
func ExampleListOptions_Query() {
	opts := metav1.ListOptions{LabelSelector: "app=web", Limit: 500}
	fmt.Println(opts.Query().Encode())

	opts.Continue = "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"
	fmt.Println(opts.Query().Encode())
	// Output:
	// labelSelector=app%3Dweb&limit=500
	// continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ&labelSelector=app%3Dweb&limit=500
}

// A streaming list: a watch that starts with the current state and marks its
// end with a bookmark annotated k8s.io/initial-events-end.
func ExampleListOptions_Query_streamingList() {
	opts := metav1.ListOptions{
		Watch:                true,
		AllowWatchBookmarks:  true,
		SendInitialEvents:    new(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	}
	fmt.Println(opts.Query().Encode())
	fmt.Println(len(metav1.ValidateListOptions(opts)), "errors")
	// Output:
	// allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true
	// 0 errors
}

// A server reads the options of a list the way kube-apiserver does, and
// answers invalid ones with the same 422 Status.
func ExampleDecodeListOptions() {
	q, _ := url.ParseQuery("resourceVersionMatch=NotOlderThan&watch=0")
	opts, err := metav1.DecodeListOptions(q)
	if err != nil {
		fmt.Println(metav1.NewBadRequest(err.Error()).Message)
		return
	}
	if errs := metav1.ValidateListOptions(opts); len(errs) > 0 {
		status := metav1.NewInvalidOptions("ListOptions", errs)
		fmt.Println(status.Code, status.Reason)
		fmt.Println(status.Message)
		fmt.Println(status.Details.Causes[0].Field, "-", status.Details.Causes[0].Message)
	}
	// Output:
	// 422 Invalid
	// ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided
	// resourceVersionMatch - Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided
}

// Values that cannot be decoded are reported with the parameter and the value.
func ExampleQueryParamError() {
	_, err := metav1.DecodeListOptions(url.Values{"limit": {"ten"}})
	var qe *metav1.QueryParamError
	if errors.As(err, &qe) {
		fmt.Println(qe.Param, qe.Value)
	}
	fmt.Println(metav1.NewBadRequest(err.Error()).Message)
	// Output:
	// limit ten
	// invalid value "ten" for query parameter "limit": not an integer
}

// A continue token pins the resourceVersion of the first page, so a list may
// not carry both.
func ExampleCheckListContinue() {
	opts := metav1.ListOptions{Limit: 2, Continue: "eyJ2Ijoi", ResourceVersion: "5"}
	if s := metav1.CheckListContinue(opts); s != nil {
		fmt.Println(s.Code, s.Message)
	}
	// Output:
	// 400 specifying resource version is not allowed when using continue
}

// Delete options travel as a body, or as query parameters.
func ExampleDeleteOptions() {
	policy := metav1.DeletePropagationForeground
	opts := metav1.DeleteOptions{
		TypeMeta:           metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"},
		GracePeriodSeconds: new(int64(0)),
		PropagationPolicy:  &policy,
		Preconditions:      &metav1.Preconditions{ResourceVersion: new("217")},
	}
	body, _ := json.Marshal(opts)
	fmt.Println(string(body))
	fmt.Println(opts.Query().Encode())
	// Output:
	// {"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"preconditions":{"resourceVersion":"217"},"propagationPolicy":"Foreground"}
	// gracePeriodSeconds=0&propagationPolicy=Foreground&resourceVersion=217
}

// A server checks the preconditions of a delete against the stored object.
func ExamplePreconditions_Check() {
	stored := &metav1.ObjectMeta{Name: "cm1", ResourceVersion: "217"}
	pre := &metav1.Preconditions{ResourceVersion: new("1")}
	if s := pre.Check(metav1.GroupKind{Kind: "ConfigMap"}, stored); s != nil {
		fmt.Println(s.Code, s.Reason)
		fmt.Println(s.Message)
	}
	// Output:
	// 409 Conflict
	// Operation cannot be fulfilled on ConfigMap "cm1": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (217). The object might have been modified
}

// Server-side apply sends PatchOptions that always say whether to force.
func ExampleApplyOptions_Query() {
	opts := metav1.ApplyOptions{FieldManager: "my-controller"}
	fmt.Println(opts.Query().Encode())
	// Output:
	// fieldManager=my-controller&force=false
}

// Create, update and patch accept dryRun=All and nothing else.
func ExampleValidateCreateOptions() {
	opts, _ := metav1.DecodeCreateOptions(url.Values{"dryRun": {"Some"}})
	errs := metav1.ValidateCreateOptions(opts)
	fmt.Println(metav1.NewInvalidOptions("CreateOptions", errs).Message)
	// Output:
	// CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"
}

// Status constructors produce the bodies kube-apiserver sends.
func ExampleNewNotFound() {
	s := metav1.NewNotFound(metav1.GroupResource{Group: "apps", Resource: "deployments"}, "web")
	body, _ := json.Marshal(s)
	fmt.Println(string(body))
	// Output:
	// {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps \"web\" not found","reason":"NotFound","details":{"name":"web","group":"apps","kind":"deployments"},"code":404}
}

// Several field errors are listed in brackets; each one is also a cause.
func ExampleNewInvalid() {
	s := metav1.NewInvalid(metav1.GroupKind{Group: "example.com", Kind: "Widget"}, "w2", metav1.FieldErrors{
		metav1.FieldNotSupported("spec.color", "green", []string{"red", "blue"}),
		metav1.FieldInvalid("spec.size", int64(0), "spec.size in body should be greater than or equal to 1"),
	})
	fmt.Println(s.Message)
	for _, c := range s.Details.Causes {
		fmt.Printf("%s %s: %s\n", c.Type, c.Field, c.Message)
	}
	// Output:
	// Widget.example.com "w2" is invalid: [spec.color: Unsupported value: "green": supported values: "red", "blue", spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1]
	// FieldValueNotSupported spec.color: Unsupported value: "green": supported values: "red", "blue"
	// FieldValueInvalid spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1
}
