package v1

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// This file holds the request option types of meta.k8s.io/v1 and their URL
// query encoding.
//
// Every option type has a Query method, used by clients, and a DecodeXOptions
// function, used by servers. They agree with each other and with Kubernetes:
//
//   - Query emits the parameter names kube-apiserver reads (the JSON names of
//     the fields) and leaves out zero values, as client-go does: an empty
//     string, false, 0 and a nil pointer or slice are omitted, while a pointer
//     to a zero value (timeoutSeconds=0, sendInitialEvents=false,
//     gracePeriodSeconds=0) is sent, because it means something.
//   - DecodeXOptions accepts what kube-apiserver accepts. Only the first value
//     of a repeated parameter counts, except for dryRun, which keeps them all.
//     A boolean is false when its value is "0" or "false" (in any letter
//     case) and true otherwise: "true", "1", but also "yes" or an empty
//     value, so "?watch" alone starts a watch. An integer must parse as a base-10 int64; anything else
//     is reported as a *QueryParamError. Unknown parameters are ignored.
//     Enumerated values (resourceVersionMatch, propagationPolicy,
//     fieldValidation, includeObject, dryRun) are not checked here: like
//     kube-apiserver, servers check them with the Validate functions and
//     answer 422 Invalid, not 400.
//
// DecodeXOptions(o.Query()) returns o again, with three exceptions that the
// query cannot express: an empty but non-nil slice comes back nil, the
// TypeMeta of DeleteOptions is not sent, and Preconditions only come back
// for a non-empty uid or resourceVersion. url.Values.Encode sorts by
// parameter name, so o.Query().Encode() is deterministic.

// Query parameter names, as kube-apiserver reads them.
const (
	paramLabelSelector        = "labelSelector"
	paramFieldSelector        = "fieldSelector"
	paramWatch                = "watch"
	paramAllowWatchBookmarks  = "allowWatchBookmarks"
	paramResourceVersion      = "resourceVersion"
	paramResourceVersionMatch = "resourceVersionMatch"
	paramTimeoutSeconds       = "timeoutSeconds"
	paramLimit                = "limit"
	paramContinue             = "continue"
	paramSendInitialEvents    = "sendInitialEvents"
	paramDryRun               = "dryRun"
	paramFieldManager         = "fieldManager"
	paramFieldValidation      = "fieldValidation"
	paramForce                = "force"
	paramGracePeriodSeconds   = "gracePeriodSeconds"
	paramOrphanDependents     = "orphanDependents"
	paramPropagationPolicy    = "propagationPolicy"
	paramIgnoreStoreReadError = "ignoreStoreReadErrorWithClusterBreakingPotential"
	paramUID                  = "uid"
	paramIncludeObject        = "includeObject"
)

// DryRunAll is the only value kube-apiserver accepts in dryRun: run every
// stage of the request except persisting it.
const DryRunAll = "All"

// Values of the fieldValidation parameter of create, update and patch. It
// tells the server what to do with unknown or duplicate fields in the body.
// An empty value lets the server choose (kube-apiserver uses Warn for
// clients that do not say).
const (
	// FieldValidationIgnore drops unknown and duplicate fields silently.
	FieldValidationIgnore = "Ignore"
	// FieldValidationWarn accepts the request but returns a Warning header
	// for each unknown or duplicate field.
	FieldValidationWarn = "Warn"
	// FieldValidationStrict fails the request with 400 Bad Request on the
	// first unknown or duplicate field.
	FieldValidationStrict = "Strict"
)

// Annotations a server puts on the BOOKMARK event that ends the initial events
// of a watch with sendInitialEvents=true.
const (
	// InitialEventsAnnotationKey, set to "true" on a BOOKMARK event, marks
	// the end of the synthetic ADDED events of a streaming list: the client
	// now holds the state as of the bookmark's resourceVersion. The server
	// sends this bookmark only when the watch asked for bookmarks
	// (allowWatchBookmarks=true).
	InitialEventsAnnotationKey = "k8s.io/initial-events-end"
	// InitialEventsListBlueprintAnnotationKey holds, on that same bookmark, a
	// base64-encoded empty list of the watched kind, which a client may use
	// to build the list. kube-apiserver v1.32 sets it (golden 96); it is no
	// longer defined by apimachinery v0.37, so clients must not rely on it.
	InitialEventsListBlueprintAnnotationKey = "kubernetes.io/initial-events-list-blueprint"
)

// ResourceVersionMatch says how the resourceVersion of a list, or of a watch
// with sendInitialEvents, is to be understood. See ListOptions.
type ResourceVersionMatch string

const (
	// ResourceVersionMatchNotOlderThan asks for data at least as new as the
	// given resourceVersion; with resourceVersion "0" any data will do.
	ResourceVersionMatchNotOlderThan ResourceVersionMatch = "NotOlderThan"
	// ResourceVersionMatchExact asks for data at exactly the given
	// resourceVersion, which must not be "0". The server answers 410 Gone
	// (reason Expired) when that version has been compacted away.
	ResourceVersionMatchExact ResourceVersionMatch = "Exact"
)

// ListOptions are the query parameters of a list or a watch request on a
// collection. Servers validate them with ValidateListOptions.
//
// resourceVersion, resourceVersionMatch, limit and continue combine as the
// Kubernetes API concepts describe: an unset resourceVersion reads the most
// recent data (a quorum read), "0" reads any data (usually a cache), and any
// other value reads data not older than it, or exactly at it when
// resourceVersionMatch is Exact or, for historical reasons, when limit is set
// and resourceVersionMatch is not.
type ListOptions struct {
	// LabelSelector restricts the result to objects whose labels match, in
	// the selector syntax ("app=web,tier!=db").
	LabelSelector string `json:"labelSelector,omitempty" protobuf:"bytes,1,opt,name=labelSelector"`
	// FieldSelector restricts the result to objects whose fields match
	// ("metadata.name=x"); which fields can be selected depends on the
	// resource.
	FieldSelector string `json:"fieldSelector,omitempty" protobuf:"bytes,2,opt,name=fieldSelector"`
	// Watch turns the request into a watch: a stream of ADDED, MODIFIED,
	// DELETED, BOOKMARK and ERROR events instead of a list.
	Watch bool `json:"watch,omitempty" protobuf:"varint,3,opt,name=watch"`
	// AllowWatchBookmarks lets the server send BOOKMARK events on a watch.
	// Servers may send them at any interval, or never.
	AllowWatchBookmarks bool `json:"allowWatchBookmarks,omitempty" protobuf:"varint,9,opt,name=allowWatchBookmarks"`
	// ResourceVersion sets how fresh the data must be (list) or where the
	// watch starts (watch); see the type documentation. Clients must treat
	// it as opaque.
	ResourceVersion string `json:"resourceVersion,omitempty" protobuf:"bytes,4,opt,name=resourceVersion"`
	// ResourceVersionMatch says how ResourceVersion is compared. It requires
	// ResourceVersion on a list, and SendInitialEvents on a watch.
	ResourceVersionMatch ResourceVersionMatch `json:"resourceVersionMatch,omitempty" protobuf:"bytes,10,opt,name=resourceVersionMatch,casttype=ResourceVersionMatch"`
	// TimeoutSeconds ends a list or watch after that many seconds. A watch
	// that times out simply ends its stream.
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty" protobuf:"varint,5,opt,name=timeoutSeconds"`
	// Limit asks for at most that many items; the server then sets
	// metadata.continue on the list when more remain. Zero means no limit.
	Limit int64 `json:"limit,omitempty" protobuf:"varint,7,opt,name=limit"`
	// Continue is the opaque token from a previous page's metadata.continue.
	// The next page is served at the same resourceVersion as the first one,
	// so ResourceVersion must be unset (or "0") alongside it; see
	// CheckListContinue. A token expires, and the server then answers 410
	// Gone.
	Continue string `json:"continue,omitempty" protobuf:"bytes,8,opt,name=continue"`
	// SendInitialEvents, on a watch, asks for a streaming list: the watch
	// starts with ADDED events for every object, followed by a BOOKMARK
	// annotated with InitialEventsAnnotationKey. It requires Watch and
	// ResourceVersionMatch NotOlderThan. kube-apiserver accepts it without
	// AllowWatchBookmarks (golden 97) but then never sends the closing
	// bookmark, so clients should set AllowWatchBookmarks too.
	SendInitialEvents *bool `json:"sendInitialEvents,omitempty" protobuf:"varint,11,opt,name=sendInitialEvents"`
}

// GetOptions are the query parameters of a get request.
type GetOptions struct {
	// ResourceVersion "" reads the most recent object, "0" any cached one,
	// and any other value an object not older than that version.
	ResourceVersion string `json:"resourceVersion,omitempty" protobuf:"bytes,1,opt,name=resourceVersion"`
}

// CreateOptions are the query parameters of a create (POST) request.
type CreateOptions struct {
	// DryRun, when it holds DryRunAll, runs the request without persisting
	// anything. No other value is accepted.
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,1,rep,name=dryRun"`
	// FieldManager names the actor making the change, for managedFields. At
	// most 128 printable characters.
	FieldManager string `json:"fieldManager,omitempty" protobuf:"bytes,3,name=fieldManager"`
	// FieldValidation is one of FieldValidationIgnore, FieldValidationWarn
	// and FieldValidationStrict, or empty.
	FieldValidation string `json:"fieldValidation,omitempty" protobuf:"bytes,4,name=fieldValidation"`
}

// UpdateOptions are the query parameters of an update (PUT) request. Its
// fields mean what they mean in CreateOptions.
type UpdateOptions struct {
	// DryRun, when it holds DryRunAll, runs the request without persisting
	// anything.
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,1,rep,name=dryRun"`
	// FieldManager names the actor making the change.
	FieldManager string `json:"fieldManager,omitempty" protobuf:"bytes,2,name=fieldManager"`
	// FieldValidation is one of the FieldValidation values, or empty.
	FieldValidation string `json:"fieldValidation,omitempty" protobuf:"bytes,3,name=fieldValidation"`
}

// PatchOptions are the query parameters of a patch request, including
// server-side apply (Content-Type application/apply-patch+yaml).
type PatchOptions struct {
	// DryRun, when it holds DryRunAll, runs the request without persisting
	// anything.
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,1,rep,name=dryRun"`
	// Force, for apply patches only, takes ownership of fields other
	// managers own instead of failing with a conflict. It must be nil for
	// other patch types.
	Force *bool `json:"force,omitempty" protobuf:"varint,2,opt,name=force"`
	// FieldManager names the actor making the change. Apply patches require
	// it.
	FieldManager string `json:"fieldManager,omitempty" protobuf:"bytes,3,name=fieldManager"`
	// FieldValidation is one of the FieldValidation values, or empty.
	FieldValidation string `json:"fieldValidation,omitempty" protobuf:"bytes,4,name=fieldValidation"`
}

// ApplyOptions are the options of a server-side apply. They travel as the
// query parameters of the equivalent PatchOptions (see ToPatchOptions), and,
// unlike PatchOptions, always carry force.
type ApplyOptions struct {
	// DryRun, when it holds DryRunAll, runs the request without persisting
	// anything.
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,1,rep,name=dryRun"`
	// Force takes ownership of conflicting fields instead of failing.
	Force bool `json:"force" protobuf:"varint,2,opt,name=force"`
	// FieldManager names the actor applying; the server requires it.
	FieldManager string `json:"fieldManager" protobuf:"bytes,3,name=fieldManager"`
}

// DeletionPropagation says what happens to the dependents of a deleted object.
type DeletionPropagation string

const (
	// DeletePropagationOrphan leaves the dependents alone, removing their
	// owner reference to the deleted object.
	DeletePropagationOrphan DeletionPropagation = "Orphan"
	// DeletePropagationBackground deletes the object at once and lets the
	// garbage collector delete the dependents afterwards.
	DeletePropagationBackground DeletionPropagation = "Background"
	// DeletePropagationForeground keeps the object, with a foregroundDeletion
	// finalizer, until the garbage collector has deleted the dependents that
	// block its deletion.
	DeletePropagationForeground DeletionPropagation = "Foreground"
)

// DeleteOptions are the options of a delete or deletecollection request. They
// are sent either as a JSON body (kind DeleteOptions) or as query parameters;
// in the query, Preconditions travel as "uid" and "resourceVersion".
type DeleteOptions struct {
	// TypeMeta is kind "DeleteOptions", apiVersion "v1" (or
	// "meta.k8s.io/v1") in a body; it is not sent in a query.
	TypeMeta `json:",inline"`
	// GracePeriodSeconds is how long the object may take to terminate; nil
	// uses the resource's default, and 0 deletes at once.
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty" protobuf:"varint,1,opt,name=gracePeriodSeconds"`
	// Preconditions must hold for the deletion to go ahead; when one fails,
	// the server answers 409 Conflict (see Preconditions.Check).
	Preconditions *Preconditions `json:"preconditions,omitempty" protobuf:"bytes,2,opt,name=preconditions"`
	// OrphanDependents is the deprecated form of PropagationPolicy Orphan;
	// it may not be set together with PropagationPolicy.
	OrphanDependents *bool `json:"orphanDependents,omitempty" protobuf:"varint,3,opt,name=orphanDependents"`
	// PropagationPolicy says what happens to dependents; nil uses the
	// resource's default.
	PropagationPolicy *DeletionPropagation `json:"propagationPolicy,omitempty" protobuf:"bytes,4,opt,name=propagationPolicy,casttype=DeletionPropagation"`
	// DryRun, when it holds DryRunAll, runs the request without deleting
	// anything.
	DryRun []string `json:"dryRun,omitempty" listType:"atomic" protobuf:"bytes,5,rep,name=dryRun"`
	// IgnoreStoreReadErrorWithClusterBreakingPotential deletes an object
	// that can no longer be read from storage (it fails to decode or
	// decrypt), skipping finalizers and admission. It is a last resort and
	// may not be combined with the other options.
	IgnoreStoreReadErrorWithClusterBreakingPotential *bool `json:"ignoreStoreReadErrorWithClusterBreakingPotential,omitempty" protobuf:"varint,6,opt,name=ignoreStoreReadErrorWithClusterBreakingPotential"`
}

// Preconditions must be fulfilled before an operation (delete) is carried out.
type Preconditions struct {
	// UID is the object's expected UID.
	UID *UID `json:"uid,omitempty" protobuf:"bytes,1,opt,name=uid,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// ResourceVersion is the object's expected resourceVersion.
	ResourceVersion *string `json:"resourceVersion,omitempty" protobuf:"bytes,2,opt,name=resourceVersion"`
}

// TableOptions are the query parameters of a request for a Table
// (Accept: application/json;as=Table;g=meta.k8s.io;v=v1).
type TableOptions struct {
	// IncludeObject says what each row's object holds: IncludeNone,
	// IncludeMetadata (the default, a PartialObjectMetadata) or
	// IncludeObject (the whole object).
	IncludeObject IncludeObjectPolicy `json:"includeObject,omitempty" protobuf:"bytes,1,opt,name=includeObject,casttype=IncludeObjectPolicy"`
}

// QueryParamError reports a query parameter whose value cannot be decoded.
// A server answers it with 400 Bad Request: NewBadRequest(err.Error()).
type QueryParamError struct {
	// Param is the parameter's name, such as "limit".
	Param string
	// Value is the offending value, as received.
	Value string
	// Err is the cause, such as strconv.ErrSyntax or strconv.ErrRange.
	Err error
}

// Error describes the parameter, its value and what is wrong with it, such as
//
//	invalid value "ten" for query parameter "limit": not an integer
func (e *QueryParamError) Error() string {
	why := "invalid"
	switch {
	case errors.Is(e.Err, strconv.ErrSyntax):
		why = "not an integer"
	case errors.Is(e.Err, strconv.ErrRange):
		why = "integer out of range"
	case e.Err != nil:
		why = e.Err.Error()
	}
	return fmt.Sprintf("invalid value %q for query parameter %q: %s", e.Value, e.Param, why)
}

// Unwrap returns Err.
func (e *QueryParamError) Unwrap() error { return e.Err }

// Query returns o as query parameters. A nil o gives empty parameters.
func (o *ListOptions) Query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	setString(q, paramLabelSelector, o.LabelSelector)
	setString(q, paramFieldSelector, o.FieldSelector)
	setBool(q, paramWatch, o.Watch)
	setBool(q, paramAllowWatchBookmarks, o.AllowWatchBookmarks)
	setString(q, paramResourceVersion, o.ResourceVersion)
	setString(q, paramResourceVersionMatch, string(o.ResourceVersionMatch))
	setInt64Ptr(q, paramTimeoutSeconds, o.TimeoutSeconds)
	if o.Limit != 0 {
		q.Set(paramLimit, strconv.FormatInt(o.Limit, 10))
	}
	setString(q, paramContinue, o.Continue)
	setBoolPtr(q, paramSendInitialEvents, o.SendInitialEvents)
	return q
}

// DecodeListOptions reads ListOptions from query parameters the way
// kube-apiserver does. It fails only on a timeoutSeconds or limit that is not
// an integer; call ValidateListOptions on the result.
func DecodeListOptions(q url.Values) (ListOptions, error) {
	var o ListOptions
	var err error
	o.LabelSelector = first(q, paramLabelSelector)
	o.FieldSelector = first(q, paramFieldSelector)
	o.Watch = decodeBool(q, paramWatch)
	o.AllowWatchBookmarks = decodeBool(q, paramAllowWatchBookmarks)
	o.ResourceVersion = first(q, paramResourceVersion)
	o.ResourceVersionMatch = ResourceVersionMatch(first(q, paramResourceVersionMatch))
	if o.TimeoutSeconds, err = decodeInt64Ptr(q, paramTimeoutSeconds); err != nil {
		return ListOptions{}, err
	}
	if limit, err := decodeInt64Ptr(q, paramLimit); err != nil {
		return ListOptions{}, err
	} else if limit != nil {
		o.Limit = *limit
	}
	o.Continue = first(q, paramContinue)
	o.SendInitialEvents = decodeBoolPtr(q, paramSendInitialEvents)
	return o, nil
}

// Query returns o as query parameters. A nil o gives empty parameters.
func (o *GetOptions) Query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	setString(q, paramResourceVersion, o.ResourceVersion)
	return q
}

// DecodeGetOptions reads GetOptions from query parameters. It never fails;
// the error is there for symmetry with the other decoders.
func DecodeGetOptions(q url.Values) (GetOptions, error) {
	return GetOptions{ResourceVersion: first(q, paramResourceVersion)}, nil
}

// Query returns o as query parameters. A nil o gives empty parameters.
func (o *CreateOptions) Query() url.Values {
	q := url.Values{}
	if o != nil {
		setWriteParams(q, o.DryRun, o.FieldManager, o.FieldValidation)
	}
	return q
}

// DecodeCreateOptions reads CreateOptions from query parameters. It never
// fails; call ValidateCreateOptions on the result.
func DecodeCreateOptions(q url.Values) (CreateOptions, error) {
	dryRun, fieldManager, fieldValidation := writeParams(q)
	return CreateOptions{DryRun: dryRun, FieldManager: fieldManager, FieldValidation: fieldValidation}, nil
}

// Query returns o as query parameters. A nil o gives empty parameters.
func (o *UpdateOptions) Query() url.Values {
	q := url.Values{}
	if o != nil {
		setWriteParams(q, o.DryRun, o.FieldManager, o.FieldValidation)
	}
	return q
}

// DecodeUpdateOptions reads UpdateOptions from query parameters. It never
// fails; call ValidateUpdateOptions on the result.
func DecodeUpdateOptions(q url.Values) (UpdateOptions, error) {
	dryRun, fieldManager, fieldValidation := writeParams(q)
	return UpdateOptions{DryRun: dryRun, FieldManager: fieldManager, FieldValidation: fieldValidation}, nil
}

// Query returns o as query parameters. A nil o gives empty parameters.
func (o *PatchOptions) Query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	setWriteParams(q, o.DryRun, o.FieldManager, o.FieldValidation)
	setBoolPtr(q, paramForce, o.Force)
	return q
}

// DecodePatchOptions reads PatchOptions from query parameters. It never
// fails; call ValidatePatchOptions on the result.
func DecodePatchOptions(q url.Values) (PatchOptions, error) {
	dryRun, fieldManager, fieldValidation := writeParams(q)
	return PatchOptions{DryRun: dryRun, Force: decodeBoolPtr(q, paramForce),
		FieldManager: fieldManager, FieldValidation: fieldValidation}, nil
}

// setWriteParams sets the parameters every write (create, update, patch)
// shares.
func setWriteParams(q url.Values, dryRun []string, fieldManager, fieldValidation string) {
	setStrings(q, paramDryRun, dryRun)
	setString(q, paramFieldManager, fieldManager)
	setString(q, paramFieldValidation, fieldValidation)
}

// writeParams reads the parameters every write shares.
func writeParams(q url.Values) (dryRun []string, fieldManager, fieldValidation string) {
	return all(q, paramDryRun), first(q, paramFieldManager), first(q, paramFieldValidation)
}

// ToPatchOptions returns the PatchOptions an apply request is sent with. Force
// is always set, so the request says force=false explicitly, as client-go's
// does.
func (o *ApplyOptions) ToPatchOptions() PatchOptions {
	if o == nil {
		return PatchOptions{Force: new(false)}
	}
	return PatchOptions{DryRun: o.DryRun, Force: new(o.Force), FieldManager: o.FieldManager}
}

// Query returns o as query parameters: those of o.ToPatchOptions(). A nil o
// gives force=false alone.
func (o *ApplyOptions) Query() url.Values {
	p := o.ToPatchOptions()
	return p.Query()
}

// DecodeApplyOptions reads ApplyOptions from the query parameters of an apply
// patch. A missing force means false. fieldValidation is not part of
// ApplyOptions; read it with DecodePatchOptions.
func DecodeApplyOptions(q url.Values) (ApplyOptions, error) {
	p, err := DecodePatchOptions(q)
	if err != nil {
		return ApplyOptions{}, err
	}
	return ApplyOptions{DryRun: p.DryRun, Force: p.Force != nil && *p.Force, FieldManager: p.FieldManager}, nil
}

// Query returns o as query parameters, Preconditions as "uid" and
// "resourceVersion". A nil o gives empty parameters. TypeMeta is not sent.
func (o *DeleteOptions) Query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	setInt64Ptr(q, paramGracePeriodSeconds, o.GracePeriodSeconds)
	if p := o.Preconditions; p != nil {
		if p.UID != nil {
			q.Set(paramUID, string(*p.UID))
		}
		if p.ResourceVersion != nil {
			q.Set(paramResourceVersion, *p.ResourceVersion)
		}
	}
	setBoolPtr(q, paramOrphanDependents, o.OrphanDependents)
	if o.PropagationPolicy != nil {
		q.Set(paramPropagationPolicy, string(*o.PropagationPolicy))
	}
	setStrings(q, paramDryRun, o.DryRun)
	setBoolPtr(q, paramIgnoreStoreReadError, o.IgnoreStoreReadErrorWithClusterBreakingPotential)
	return q
}

// DecodeDeleteOptions reads DeleteOptions from query parameters the way
// kube-apiserver does: non-empty "uid" and "resourceVersion" parameters become
// Preconditions. It fails only on a gracePeriodSeconds that is not an integer;
// call ValidateDeleteOptions on the result.
func DecodeDeleteOptions(q url.Values) (DeleteOptions, error) {
	var o DeleteOptions
	var err error
	if o.GracePeriodSeconds, err = decodeInt64Ptr(q, paramGracePeriodSeconds); err != nil {
		return DeleteOptions{}, err
	}
	uid, rv := first(q, paramUID), first(q, paramResourceVersion)
	if uid != "" || rv != "" {
		o.Preconditions = &Preconditions{}
		if uid != "" {
			o.Preconditions.UID = new(UID(uid))
		}
		if rv != "" {
			o.Preconditions.ResourceVersion = new(rv)
		}
	}
	o.OrphanDependents = decodeBoolPtr(q, paramOrphanDependents)
	if v, ok := q[paramPropagationPolicy]; ok && len(v) > 0 {
		o.PropagationPolicy = new(DeletionPropagation(v[0]))
	}
	o.DryRun = all(q, paramDryRun)
	o.IgnoreStoreReadErrorWithClusterBreakingPotential = decodeBoolPtr(q, paramIgnoreStoreReadError)
	return o, nil
}

// Query returns o as query parameters. A nil o gives empty parameters.
func (o *TableOptions) Query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	setString(q, paramIncludeObject, string(o.IncludeObject))
	return q
}

// DecodeTableOptions reads TableOptions from query parameters. It never
// fails; call ValidateTableOptions on the result.
func DecodeTableOptions(q url.Values) (TableOptions, error) {
	return TableOptions{IncludeObject: IncludeObjectPolicy(first(q, paramIncludeObject))}, nil
}

// Check reports whether obj, of the given kind, satisfies p, the way
// kube-apiserver checks the preconditions of a delete: it returns nil when
// they hold (or p is nil), and otherwise the 409 Conflict Status naming the
// first one that fails, UID before resourceVersion. The Status names the
// object by kind, not resource (golden 80):
//
//	Operation cannot be fulfilled on ConfigMap "cm1": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (217). The object might have been modified
func (p *Preconditions) Check(kind GroupKind, obj Object) *Status {
	if p == nil {
		return nil
	}
	gr := GroupResource{Group: kind.Group, Resource: kind.Kind}
	if p.UID != nil && *p.UID != obj.GetUID() {
		return NewConflict(gr, obj.GetName(), fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated",
			*p.UID, obj.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != obj.GetResourceVersion() {
		return NewConflict(gr, obj.GetName(), fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified",
			*p.ResourceVersion, obj.GetResourceVersion()))
	}
	return nil
}

func setString(q url.Values, name, v string) {
	if v != "" {
		q.Set(name, v)
	}
}

func setStrings(q url.Values, name string, v []string) {
	if len(v) > 0 {
		q[name] = append([]string(nil), v...)
	}
}

func setBool(q url.Values, name string, v bool) {
	if v {
		q.Set(name, "true")
	}
}

func setBoolPtr(q url.Values, name string, v *bool) {
	if v != nil {
		q.Set(name, strconv.FormatBool(*v))
	}
}

func setInt64Ptr(q url.Values, name string, v *int64) {
	if v != nil {
		q.Set(name, strconv.FormatInt(*v, 10))
	}
}

// first returns the first value of the parameter, or "".
func first(q url.Values, name string) string {
	if v := q[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// all returns a copy of every value of the parameter, or nil.
func all(q url.Values, name string) []string {
	if v := q[name]; len(v) > 0 {
		return append([]string(nil), v...)
	}
	return nil
}

// parseQueryBool reads a boolean as kube-apiserver does: "0" and any casing of
// "false" are false, everything else (including "") is true.
func parseQueryBool(s string) bool {
	return s != "0" && !strings.EqualFold(s, "false")
}

func decodeBool(q url.Values, name string) bool {
	v, ok := q[name]
	return ok && len(v) > 0 && parseQueryBool(v[0])
}

func decodeBoolPtr(q url.Values, name string) *bool {
	if v, ok := q[name]; ok && len(v) > 0 {
		return new(parseQueryBool(v[0]))
	}
	return nil
}

func decodeInt64Ptr(q url.Values, name string) (*int64, error) {
	v, ok := q[name]
	if !ok || len(v) == 0 {
		return nil, nil
	}
	i, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) {
			err = ne.Err
		}
		return nil, &QueryParamError{Param: name, Value: v[0], Err: err}
	}
	return &i, nil
}

// Validation of options. These functions mirror kube-apiserver v1.32, the
// server the golden exchanges were captured from: the same checks, in the
// same order, with the same field paths and messages. A server answers a
// non-empty result with NewInvalidOptions, a 422 Invalid Status; a client may
// call them to fail early.

// maxFieldManagerLength is the longest fieldManager kube-apiserver accepts, in
// bytes.
const maxFieldManagerLength = 128

// ValidateListOptions checks the options of a list or watch request
// (golden 37, 38, 39). For a list:
//
//   - resourceVersionMatch requires resourceVersion, is forbidden with
//     continue, must be Exact or NotOlderThan, and Exact is forbidden with
//     resourceVersion "0";
//   - sendInitialEvents is forbidden.
//
// For a watch (Watch true):
//
//   - sendInitialEvents requires resourceVersionMatch NotOlderThan;
//   - resourceVersionMatch requires sendInitialEvents, must be NotOlderThan,
//     and is forbidden with continue.
//
// Streaming lists (sendInitialEvents) are taken to be enabled, as they are on
// kube-apiserver v1.32 (golden 96). kube-apiserver does not require
// allowWatchBookmarks with sendInitialEvents (golden 97), so neither does this.
//
// A continue token with a resourceVersion is not a validation error but a
// 400 Bad Request from storage; see CheckListContinue.
func ValidateListOptions(o ListOptions) FieldErrors {
	var errs FieldErrors
	match := o.ResourceVersionMatch
	if o.Watch {
		if o.SendInitialEvents != nil && match != ResourceVersionMatchNotOlderThan {
			errs = append(errs, FieldForbidden(paramResourceVersionMatch,
				"sendInitialEvents requires setting resourceVersionMatch to "+string(ResourceVersionMatchNotOlderThan)))
		}
		if match != "" {
			if o.SendInitialEvents == nil {
				errs = append(errs, FieldForbidden(paramResourceVersionMatch,
					"resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
			}
			if match != ResourceVersionMatchNotOlderThan {
				errs = append(errs, FieldNotSupported(paramResourceVersionMatch, string(match),
					[]string{string(ResourceVersionMatchNotOlderThan)}))
			}
			if o.Continue != "" {
				errs = append(errs, FieldForbidden(paramResourceVersionMatch,
					"resourceVersionMatch is forbidden when continue is provided"))
			}
		}
		return errs
	}
	if match != "" {
		if o.ResourceVersion == "" {
			errs = append(errs, FieldForbidden(paramResourceVersionMatch,
				"resourceVersionMatch is forbidden unless resourceVersion is provided"))
		}
		if o.Continue != "" {
			errs = append(errs, FieldForbidden(paramResourceVersionMatch,
				"resourceVersionMatch is forbidden when continue is provided"))
		}
		if match != ResourceVersionMatchExact && match != ResourceVersionMatchNotOlderThan {
			errs = append(errs, FieldNotSupported(paramResourceVersionMatch, string(match),
				[]string{string(ResourceVersionMatchExact), string(ResourceVersionMatchNotOlderThan), ""}))
		}
		if match == ResourceVersionMatchExact && o.ResourceVersion == "0" {
			errs = append(errs, FieldForbidden(paramResourceVersionMatch,
				`resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))
		}
	}
	if o.SendInitialEvents != nil {
		errs = append(errs, FieldForbidden(paramSendInitialEvents, "sendInitialEvents is forbidden for list"))
	}
	return errs
}

// CheckListContinue returns the 400 Bad Request kube-apiserver answers when a
// list carries a continue token together with a resourceVersion other than ""
// and "0" (golden 36), or nil. A continue token already pins the
// resourceVersion of the first page; "0" is tolerated and ignored.
//
// kube-apiserver makes this check in storage, after ValidateListOptions and
// after decoding the token: an undecodable token is reported first, as
// NewBadRequest("invalid continue token: ...") (golden 35). It does not apply
// to watches, which ignore continue.
func CheckListContinue(o ListOptions) *Status {
	if o.Watch || o.Continue == "" || o.ResourceVersion == "" || o.ResourceVersion == "0" {
		return nil
	}
	return NewBadRequest("specifying resource version is not allowed when using continue")
}

// ValidateDryRun checks a dryRun parameter: every value must be DryRunAll
// (golden 62). An empty slice is valid; [""] (a bare "?dryRun") is not.
func ValidateDryRun(field string, dryRun []string) FieldErrors {
	for _, v := range dryRun {
		if v != DryRunAll {
			return FieldErrors{FieldNotSupported(field, dryRun, []string{DryRunAll})}
		}
	}
	return nil
}

// ValidateFieldValidation checks a fieldValidation parameter: empty or one of
// the FieldValidation values.
func ValidateFieldValidation(field, fieldValidation string) FieldErrors {
	switch fieldValidation {
	case "", FieldValidationIgnore, FieldValidationWarn, FieldValidationStrict:
		return nil
	}
	return FieldErrors{FieldNotSupported(field, fieldValidation,
		[]string{"", FieldValidationIgnore, FieldValidationStrict, FieldValidationWarn})}
}

// ValidateFieldManager checks a fieldManager parameter: at most 128 bytes, all
// printable characters (each non-printable one is reported). Whether it is
// required depends on the request; see ValidatePatchOptions.
func ValidateFieldManager(field, fieldManager string) FieldErrors {
	var errs FieldErrors
	if len(fieldManager) > maxFieldManagerLength {
		errs = append(errs, FieldTooLong(field, maxFieldManagerLength))
	}
	for i, r := range fieldManager {
		if !unicode.IsPrint(r) {
			errs = append(errs, FieldInvalid(field, fieldManager,
				fmt.Sprintf("invalid character %#U (at position %d)", r, i)))
		}
	}
	return errs
}

// ValidateCreateOptions checks the options of a create request: fieldManager,
// dryRun and fieldValidation.
func ValidateCreateOptions(o CreateOptions) FieldErrors {
	var errs FieldErrors
	errs = append(errs, ValidateFieldManager(paramFieldManager, o.FieldManager)...)
	errs = append(errs, ValidateDryRun(paramDryRun, o.DryRun)...)
	errs = append(errs, ValidateFieldValidation(paramFieldValidation, o.FieldValidation)...)
	return errs
}

// ValidateUpdateOptions checks the options of an update request, as
// ValidateCreateOptions does.
func ValidateUpdateOptions(o UpdateOptions) FieldErrors {
	var errs FieldErrors
	errs = append(errs, ValidateFieldManager(paramFieldManager, o.FieldManager)...)
	errs = append(errs, ValidateDryRun(paramDryRun, o.DryRun)...)
	errs = append(errs, ValidateFieldValidation(paramFieldValidation, o.FieldValidation)...)
	return errs
}

// ValidatePatchOptions checks the options of a patch request. apply says
// whether the patch is a server-side apply: it then requires fieldManager
// (golden 77); any other patch forbids force.
func ValidatePatchOptions(o PatchOptions, apply bool) FieldErrors {
	var errs FieldErrors
	if apply {
		if o.FieldManager == "" {
			errs = append(errs, FieldRequired(paramFieldManager, "is required for apply patch"))
		}
	} else if o.Force != nil {
		errs = append(errs, FieldForbidden(paramForce, "may not be specified for non-apply patch"))
	}
	errs = append(errs, ValidateFieldManager(paramFieldManager, o.FieldManager)...)
	errs = append(errs, ValidateDryRun(paramDryRun, o.DryRun)...)
	errs = append(errs, ValidateFieldValidation(paramFieldValidation, o.FieldValidation)...)
	return errs
}

// ValidateDeleteOptions checks the options of a delete or deletecollection
// request: orphanDependents and propagationPolicy are exclusive,
// propagationPolicy must be a DeletionPropagation value, dryRun must be valid,
// and ignoreStoreReadErrorWithClusterBreakingPotential=true excludes every
// other option.
func ValidateDeleteOptions(o DeleteOptions) FieldErrors {
	var errs FieldErrors
	if o.OrphanDependents != nil && o.PropagationPolicy != nil {
		errs = append(errs, FieldInvalid(paramPropagationPolicy, o.PropagationPolicy,
			"orphanDependents and deletionPropagation cannot be both set"))
	}
	if p := o.PropagationPolicy; p != nil {
		switch *p {
		case DeletePropagationForeground, DeletePropagationBackground, DeletePropagationOrphan:
		default:
			errs = append(errs, FieldNotSupported(paramPropagationPolicy, p, []string{
				string(DeletePropagationForeground), string(DeletePropagationBackground),
				string(DeletePropagationOrphan), "nil"}))
		}
	}
	errs = append(errs, ValidateDryRun(paramDryRun, o.DryRun)...)
	if o.IgnoreStoreReadErrorWithClusterBreakingPotential != nil && *o.IgnoreStoreReadErrorWithClusterBreakingPotential {
		conflicts := []struct {
			set  bool
			name string
		}{
			{len(o.DryRun) > 0, "dryRun"},
			{o.PropagationPolicy != nil, "propagationPolicy"},
			{o.OrphanDependents != nil, "orphanDependents"},
			{o.GracePeriodSeconds != nil, "gracePeriodSeconds"},
			{o.Preconditions != nil, "preconditions"},
		}
		for _, c := range conflicts {
			if c.set {
				errs = append(errs, FieldInvalid(paramIgnoreStoreReadError, true, "cannot be set together with ."+c.name))
			}
		}
	}
	return errs
}

// ValidateTableOptions checks the options of a Table request: includeObject
// must be empty or an IncludeObjectPolicy value.
func ValidateTableOptions(o TableOptions) FieldErrors {
	switch o.IncludeObject {
	case "", IncludeNone, IncludeMetadata, IncludeObject:
		return nil
	}
	return FieldErrors{FieldInvalid(paramIncludeObject, o.IncludeObject, "must be 'Metadata', 'Object', 'None', or empty")}
}

// NewInvalidOptions returns the 422 Invalid Status kube-apiserver answers
// when options fail validation: kind is the options type, such as
// "ListOptions" or "CreateOptions", in group meta.k8s.io, and the name is
// empty (golden 37, 62, 77):
//
//	ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: ...
func NewInvalidOptions(kind string, errs FieldErrors) *Status {
	return NewInvalid(GroupKind{Group: "meta.k8s.io", Kind: kind}, "", errs)
}
