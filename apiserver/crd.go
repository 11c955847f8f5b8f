package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/internal/cel"
)

// CustomResourceDefinitions
//
// The server serves customresourcedefinitions.apiextensions.k8s.io/v1 and,
// like kube-apiserver's apiextensions server, serves the resource each one
// defines:
//
//   - A CRD written to storage (created or updated) is reconciled before the
//     write returns: its names are checked against the other CRDs of its
//     group, each served version is registered (registry.CustomResource) and
//     its status gets acceptedNames and the NamesAccepted and Established
//     conditions. The create response is the object as stored, before that
//     status (as kube-apiserver answers, golden 84); by the time a client
//     has it, the resource is served and the CRD reads back Established.
//   - Deleting a CRD marks it Terminating (deletionTimestamp, the
//     customresourcecleanup.apiextensions.k8s.io finalizer, the Terminating
//     condition); creates of its objects are then refused. A goroutine owned
//     by the server deletes every object of the resource (waiting for their
//     finalizers), stops serving it and removes the CRD.
//   - A goroutine owned by the server also watches the CRD keys of the store,
//     so that CRDs written by another server sharing the store, or present
//     at start, are served too.
//
// The hooks sit on the store (crdStore wraps it): every path that writes a
// CRD, whatever handler, goes through them.

const (
	crdGroup            = "apiextensions.k8s.io"
	crdResourceName     = "customresourcedefinitions"
	crdPrefix           = "/" + crdGroup + "/" + crdResourceName + "/"
	crdCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"
)

// crdResource describes customresourcedefinitions.
func crdResource() *registry.Resource {
	return registry.Typed[apiextensionsv1.CustomResourceDefinition](&registry.Resource{
		Group: crdGroup, Version: "v1", Resource: crdResourceName, Kind: "CustomResourceDefinition",
		ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"},
		StatusSubresource: true, Generation: true,
		// kube-apiserver v1.37 still stores definitions as v1beta1, and
		// discovery's storageVersionHash says so.
		StorageVersion: "v1beta1",
		Default:        func(o registry.Object) { defaultCRD(o.(*apiextensionsv1.CustomResourceDefinition)) },
		PrepareForCreate: func(o registry.Object) {
			crd := o.(*apiextensionsv1.CustomResourceDefinition)
			defaultCRD(crd)
			crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
			if v := storageVersion(crd); v != "" {
				crd.Status.StoredVersions = []string{v}
			}
		},
		PrepareForUpdate: func(o, _ registry.Object) {
			crd := o.(*apiextensionsv1.CustomResourceDefinition)
			defaultCRD(crd)
			if v := storageVersion(crd); v != "" && !slices.Contains(crd.Status.StoredVersions, v) {
				// A copy: the status may share memory with the stored object.
				crd.Status.StoredVersions = append(slices.Clone(crd.Status.StoredVersions), v)
			}
		},
		Validate: func(o, old registry.Object) metav1.FieldErrors {
			var prev *apiextensionsv1.CustomResourceDefinition
			if old != nil {
				prev = old.(*apiextensionsv1.CustomResourceDefinition)
			}
			return validateCRD(o.(*apiextensionsv1.CustomResourceDefinition), prev)
		},
	})
}

// defaultCRD applies kube-apiserver's defaults: conversion strategy None,
// singular and listKind from kind; and stores the schemas' JSON values in
// kube-apiserver's form (crdjson.go).
func defaultCRD(crd *apiextensionsv1.CustomResourceDefinition) {
	normalizeCRDJSON(crd)
	if crd.Spec.Conversion == nil {
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	}
	if crd.Spec.Names.Singular == "" && crd.Spec.Names.Kind != "" {
		crd.Spec.Names.Singular = strings.ToLower(crd.Spec.Names.Kind)
	}
	if crd.Spec.Names.ListKind == "" && crd.Spec.Names.Kind != "" {
		crd.Spec.Names.ListKind = crd.Spec.Names.Kind + "List"
	}
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// validateCRD checks what kube-apiserver checks first in a CRD: its name,
// group, names, scope and versions (one storage version, schemas present).
func validateCRD(crd, old *apiextensionsv1.CustomResourceDefinition) metav1.FieldErrors {
	var errs metav1.FieldErrors
	spec := &crd.Spec
	if spec.Group == "" {
		errs = append(errs, metav1.FieldRequired("spec.group", ""))
	} else if !strings.Contains(spec.Group, ".") {
		errs = append(errs, metav1.FieldInvalid("spec.group", spec.Group, "should be a domain with at least one dot"))
	} else {
		for _, msg := range registry.ValidateDNS1123Subdomain(spec.Group) {
			errs = append(errs, metav1.FieldInvalid("spec.group", spec.Group, msg))
		}
	}
	if want := spec.Names.Plural + "." + spec.Group; crd.Name != want {
		errs = append(errs, metav1.FieldInvalid("metadata.name", crd.Name, `must be spec.names.plural+"."+spec.group`))
	}
	names := []struct {
		field, value string
		required     bool
	}{
		{"spec.names.plural", spec.Names.Plural, true}, {"spec.names.singular", spec.Names.Singular, false},
	}
	for _, n := range names {
		if n.value == "" {
			if n.required {
				errs = append(errs, metav1.FieldRequired(n.field, ""))
			}
			continue
		}
		for _, msg := range registry.ValidateDNS1035Label(n.value) {
			errs = append(errs, metav1.FieldInvalid(n.field, n.value, msg))
		}
	}
	for i, sn := range spec.Names.ShortNames {
		for _, msg := range registry.ValidateDNS1035Label(sn) {
			errs = append(errs, metav1.FieldInvalid(fmt.Sprintf("spec.names.shortNames[%d]", i), sn, msg))
		}
	}
	if spec.Names.Kind == "" {
		errs = append(errs, metav1.FieldRequired("spec.names.kind", ""))
	}
	if spec.Names.Kind != "" && spec.Names.Kind == spec.Names.ListKind {
		errs = append(errs, metav1.FieldInvalid("spec.names.listKind", spec.Names.ListKind, "kind and listKind may not be the same"))
	}
	switch spec.Scope {
	case apiextensionsv1.NamespaceScoped, apiextensionsv1.ClusterScoped:
	case "":
		errs = append(errs, metav1.FieldRequired("spec.scope", ""))
	default:
		errs = append(errs, metav1.FieldNotSupported("spec.scope", string(spec.Scope), []string{"Cluster", "Namespaced"}))
	}
	storages := 0
	seen := map[string]bool{}
	for i, v := range spec.Versions {
		p := fmt.Sprintf("spec.versions[%d]", i)
		if v.Storage {
			storages++
		}
		switch {
		case v.Name == "":
			errs = append(errs, metav1.FieldRequired(p+".name", ""))
		case seen[v.Name]:
			errs = append(errs, metav1.FieldDuplicate(p+".name", v.Name))
		default:
			for _, msg := range registry.ValidateDNS1035Label(v.Name) {
				errs = append(errs, metav1.FieldInvalid(p+".name", v.Name, msg))
			}
		}
		seen[v.Name] = true
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			errs = append(errs, metav1.FieldRequired(p+".schema.openAPIV3Schema", "schemas are required"))
		} else if t := v.Schema.OpenAPIV3Schema.Type; t != "object" {
			errs = append(errs, metav1.FieldInvalid(p+".schema.openAPIV3Schema.type", t, "must be object at the root"))
		}
	}
	errs = append(errs, validateCRDSchemas(spec.Versions)...)
	if len(spec.Versions) == 0 {
		errs = append(errs, metav1.FieldRequired("spec.versions", "must have exactly one version marked as storage version"))
	} else if storages != 1 {
		errs = append(errs, metav1.FieldInvalid("spec.versions", fmt.Sprintf("%d", storages), "must have exactly one version marked as storage version"))
	}
	if c := spec.Conversion; c != nil {
		switch c.Strategy {
		case apiextensionsv1.NoneConverter, apiextensionsv1.WebhookConverter:
		default:
			errs = append(errs, metav1.FieldNotSupported("spec.conversion.strategy", string(c.Strategy), []string{"None", "Webhook"}))
		}
		errs = append(errs, validateCRDConversion(c)...) // crd_conversion.go
	}
	if old != nil {
		if spec.Group != old.Spec.Group {
			errs = append(errs, metav1.FieldInvalid("spec.group", spec.Group, "field is immutable"))
		}
		if spec.Scope != old.Spec.Scope {
			errs = append(errs, metav1.FieldInvalid("spec.scope", string(spec.Scope), "field is immutable"))
		}
	}
	return errs
}

// validateCRDSchemas checks what kube-apiserver checks of the versions'
// schemas beyond their root type: the keys of x-kubernetes-list-type map
// lists, and the x-kubernetes-validations rules (they compile, their
// estimated costs are within budget: internal/cel). When every version has
// the same schema kube-apiserver reports it once, under
// spec.validation.openAPIV3Schema.
func validateCRDSchemas(versions []apiextensionsv1.CustomResourceDefinitionVersion) metav1.FieldErrors {
	same := len(versions) > 0
	for _, v := range versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return nil
		}
		same = same && reflect.DeepEqual(v.Schema.OpenAPIV3Schema, versions[0].Schema.OpenAPIV3Schema)
	}
	check := func(s *apiextensionsv1.JSONSchemaProps, path string) metav1.FieldErrors {
		errs := validateListMapKeys(s, path, 0)
		if len(errs) > 0 {
			return errs
		}
		_, errs = cel.Compile(s, path)
		return errs
	}
	if same {
		return check(versions[0].Schema.OpenAPIV3Schema, "spec.validation.openAPIV3Schema")
	}
	var errs metav1.FieldErrors
	for i, v := range versions {
		errs = append(errs, check(v.Schema.OpenAPIV3Schema, fmt.Sprintf("spec.versions[%d].schema.openAPIV3Schema", i))...)
	}
	return errs
}

// validateListMapKeys checks that the keys of every list of type map are
// properties of its items that are required or have a default.
func validateListMapKeys(s *apiextensionsv1.JSONSchemaProps, path string, depth int) metav1.FieldErrors {
	if s == nil || depth > 64 {
		return nil
	}
	var errs metav1.FieldErrors
	if s.XListType != nil && *s.XListType == "map" && s.Items != nil && s.Items.Schema != nil {
		items := s.Items.Schema
		for _, k := range s.XListMapKeys {
			ps, ok := items.Properties[k]
			if !ok {
				continue
			}
			if ps.Default == nil && !slices.Contains(items.Required, k) {
				errs = append(errs, metav1.FieldRequired(path+".items.properties["+k+"].default",
					"this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"))
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		ps := s.Properties[k]
		errs = append(errs, validateListMapKeys(&ps, path+".properties["+k+"]", depth+1)...)
	}
	if s.Items != nil && s.Items.Schema != nil {
		errs = append(errs, validateListMapKeys(s.Items.Schema, path+".items", depth+1)...)
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
		errs = append(errs, validateListMapKeys(ap.Schema, path+".additionalProperties", depth+1)...)
	}
	return errs
}

// crdController serves the resources of the stored CRDs.
type crdController struct {
	s     *Server
	inner storage.Interface // the store without the CRD hooks
	mu    sync.Mutex
	crds  map[string]*servedCRD // by CRD name
}

// servedCRD is what one CRD has registered.
type servedCRD struct {
	uid         metav1.UID
	group       string
	names       apiextensionsv1.CustomResourceDefinitionNames // accepted names
	resources   []*registry.Resource
	terminating *atomic.Bool // shared with the resources' Admit
	cleaning    bool
	conv        *crdConverter // the conversion webhook's, crd_conversion.go
}

// startCRDs registers customresourcedefinitions (unless the registry has
// them), puts the CRD hooks on the store, serves the CRDs already stored and
// starts the watch that keeps following them.
func (s *Server) startCRDs() error {
	if s.reg.Get(crdGroup, "v1", crdResourceName) == nil {
		if err := s.reg.Add(crdResource()); err != nil {
			return err
		}
	}
	c := &crdController{s: s, inner: s.store, crds: map[string]*servedCRD{}}
	s.crds = c
	s.store = &crdStore{Interface: s.store, c: c}
	list, err := c.inner.List(s.ctx, crdPrefix, storage.ListOptions{})
	if err != nil {
		return fmt.Errorf("apiserver: listing CustomResourceDefinitions: %w", err)
	}
	for _, o := range list.Items {
		c.sync(s.ctx, o.GetName())
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		c.follow(s.ctx, list.Revision)
	}()
	return nil
}

// follow reconciles every CRD change written to the store after rev, until
// ctx ends.
func (c *crdController) follow(ctx context.Context, rev uint64) {
	for ctx.Err() == nil {
		w, err := c.inner.Watch(ctx, crdPrefix, storage.WatchOptions{ResourceVersion: rev})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// Too old (or another failure): start again from the current state.
			list, lerr := c.inner.List(ctx, crdPrefix, storage.ListOptions{})
			if lerr != nil {
				if ctx.Err() == nil {
					c.s.cfg.Logger.Error("apiserver: CRD watch", "err", err, "list", lerr)
				}
				return
			}
			for _, o := range list.Items {
				c.sync(ctx, o.GetName())
			}
			rev = list.Revision
			continue
		}
		rev = drainWatch(ctx, w, rev, func(ctx context.Context, ev storage.Event) {
			if ev.Object != nil && ev.Type != storage.Bookmark {
				c.sync(ctx, ev.Object.GetName())
			}
		})
		w.Stop()
	}
}

// sync brings what the server serves for the named CRD, and the CRD's status,
// in line with the stored CRD.
func (c *crdController) sync(ctx context.Context, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, err := c.inner.Get(ctx, crdPrefix+name, storage.ReadOptions{})
	if errors.Is(err, storage.ErrNotFound) {
		c.unregisterLocked(name)
		return
	}
	if err != nil {
		if ctx.Err() == nil {
			c.s.cfg.Logger.Error("apiserver: reading CRD", "name", name, "err", err)
		}
		return
	}
	crd := o.(*apiextensionsv1.CustomResourceDefinition)
	if sc := c.crds[name]; sc != nil && sc.uid != crd.UID {
		c.unregisterLocked(name) // a new CRD of the same name
	}
	next := crd.DeepCopy()
	now := metav1.NewTime(c.s.cfg.Now().UTC().Truncate(time.Second))
	names := crd.Spec.Names
	defaultNames(&names)
	if conflict := c.conflictLocked(name, crd.Spec.Group, names); conflict != "" {
		setCRDCondition(next, apiextensionsv1.NamesAccepted, apiextensionsv1.ConditionFalse, "NotAccepted", conflict, now)
		if next.Status.AcceptedNames.Plural == "" {
			setCRDCondition(next, apiextensionsv1.Established, apiextensionsv1.ConditionFalse, "NotAccepted", "not all names are accepted", now)
		}
	} else {
		next.Status.AcceptedNames = names
		setCRDCondition(next, apiextensionsv1.NamesAccepted, apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found", now)
		setCRDCondition(next, apiextensionsv1.Established, apiextensionsv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted", now)
	}
	terminating := crd.DeletionTimestamp != nil
	if terminating {
		// Not marked yet (a DELETE marks both): once the cleanup has
		// dropped its finalizer, it is not added again.
		if crdCondition(next, apiextensionsv1.Terminating) == nil {
			setCRDCondition(next, apiextensionsv1.Terminating, apiextensionsv1.ConditionTrue, crdDeletionPending, crdDeletionPendingMessage, now)
			if !slices.Contains(next.Finalizers, crdCleanupFinalizer) {
				next.Finalizers = append(next.Finalizers, crdCleanupFinalizer)
			}
		}
	}
	if next.Status.AcceptedNames.Plural != "" {
		if err := c.registerLocked(next); err != nil {
			c.s.cfg.Logger.Error("apiserver: serving CRD", "name", name, "err", err)
			return
		}
		c.crds[name].terminating.Store(terminating)
	}
	if !reflect.DeepEqual(next.Status, crd.Status) || !slices.Equal(next.Finalizers, crd.Finalizers) {
		uid := crd.UID
		_, err := c.inner.GuaranteedUpdate(ctx, crdPrefix+name, false, &storage.Preconditions{UID: &uid},
			func(cur storage.Object) (storage.Object, error) {
				cc := cur.(*apiextensionsv1.CustomResourceDefinition)
				out := cc.DeepCopy()
				out.Status = *next.Status.DeepCopy()
				out.ManagedFields = withStatusManager(out.ManagedFields, &out.Status, now)
				if terminating && !slices.Contains(out.Finalizers, crdCleanupFinalizer) {
					out.Finalizers = append(out.Finalizers, crdCleanupFinalizer)
				}
				return out, nil
			})
		if err != nil && !errors.Is(err, storage.ErrNotFound) && ctx.Err() == nil {
			c.s.cfg.Logger.Error("apiserver: updating CRD status", "name", name, "err", err)
		}
	}
	if terminating {
		c.startCleanupLocked(name)
	}
}

func defaultNames(n *apiextensionsv1.CustomResourceDefinitionNames) {
	if n.Singular == "" {
		n.Singular = strings.ToLower(n.Kind)
	}
	if n.ListKind == "" && n.Kind != "" {
		n.ListKind = n.Kind + "List"
	}
}

// conflictLocked returns why names cannot be accepted for the named CRD in
// group ("" when they can): another CRD of the group, or a built-in resource,
// has one of them.
func (c *crdController) conflictLocked(name, group string, names apiextensionsv1.CustomResourceDefinitionNames) string {
	for other, sc := range c.crds {
		if other == name || sc.group != group {
			continue
		}
		on := sc.names
		taken := map[string]bool{on.Plural: true, on.Singular: true}
		for _, s := range on.ShortNames {
			taken[s] = true
		}
		for _, n := range append([]string{names.Plural, names.Singular}, names.ShortNames...) {
			if n != "" && taken[n] {
				return fmt.Sprintf("%q is already in use", n)
			}
		}
		if names.Kind == on.Kind || names.Kind == on.ListKind {
			return fmt.Sprintf("%q is already in use", names.Kind)
		}
		if names.ListKind == on.Kind || names.ListKind == on.ListKind {
			return fmt.Sprintf("%q is already in use", names.ListKind)
		}
	}
	for _, r := range c.s.reg.ByGroupResource(group, names.Plural) {
		if !r.Custom {
			return fmt.Sprintf("%q is already in use", names.Plural)
		}
	}
	return ""
}

// registerLocked serves every served version of crd (its status holding the
// accepted names), replacing what it served before.
func (c *crdController) registerLocked(crd *apiextensionsv1.CustomResourceDefinition) error {
	sc := c.crds[crd.Name]
	if sc == nil {
		sc = &servedCRD{terminating: new(atomic.Bool)}
		c.crds[crd.Name] = sc
	}
	var next []*registry.Resource
	conv := sc.converterFor(c.s, crd) // crd_conversion.go
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		r, err := registry.CustomResource(crd, v.Name)
		if err != nil {
			return err
		}
		if conv != nil {
			r.Convert = conv.convert
		}
		term, gr := sc.terminating, metav1.GroupResource{Group: r.Group, Resource: r.Resource}
		r.Admit = func(obj, old registry.Object) *metav1.Status {
			if old == nil && term.Load() {
				// 403, as kube-apiserver's custom resource handler refuses it.
				return metav1.NewForbidden(gr, obj.GetName(), errors.New("create not allowed while custom resource definition is terminating"))
			}
			return nil
		}
		next = append(next, r)
	}
	if !sameResources(sc.resources, next) {
		keep := map[string]bool{}
		for _, r := range next {
			keep[r.Group+"/"+r.Version+"/"+r.Resource] = true
			if err := c.s.reg.Put(r); err != nil {
				return err
			}
		}
		for _, r := range sc.resources {
			if !keep[r.Group+"/"+r.Version+"/"+r.Resource] {
				c.s.reg.Remove(r.Group, r.Version, r.Resource)
			}
		}
		sc.resources = next
		c.s.localAPIServicesChanged() // apiservices.go
	}
	sc.uid, sc.group, sc.names = crd.UID, crd.Spec.Group, crd.Status.AcceptedNames
	return nil
}

// sameResources reports whether two registrations describe the same thing
// (the functions aside), so that an unchanged CRD keeps its Resources.
func sameResources(a, b []*registry.Resource) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := *a[i], *b[i]
		if x.Group != y.Group || x.Version != y.Version || x.Resource != y.Resource || x.Singular != y.Singular ||
			x.Kind != y.Kind || x.ListKind != y.ListKind || x.Namespaced != y.Namespaced ||
			x.StatusSubresource != y.StatusSubresource || x.StorageVersion != y.StorageVersion ||
			!slices.Equal(x.ShortNames, y.ShortNames) || !slices.Equal(x.Categories, y.Categories) ||
			!reflect.DeepEqual(x.Schema, y.Schema) || !reflect.DeepEqual(x.PrinterColumns, y.PrinterColumns) ||
			!reflect.DeepEqual(x.Scale, y.Scale) ||
			// Selectable fields and converters live in closures: always
			// rebuilt.
			x.SelectableFields != nil || y.SelectableFields != nil || x.Convert != nil || y.Convert != nil {
			return false
		}
	}
	return true
}

// unregisterLocked stops serving the named CRD's resource.
func (c *crdController) unregisterLocked(name string) {
	sc := c.crds[name]
	if sc == nil {
		return
	}
	for _, r := range sc.resources {
		c.s.reg.Remove(r.Group, r.Version, r.Resource)
	}
	sc.conv.closeIdle()
	delete(c.crds, name)
	c.s.localAPIServicesChanged() // apiservices.go
}

// The Terminating condition of a CRD being deleted goes, as kube-apiserver
// writes it, from pending (marked at the DELETE) to in progress (the
// cleanup started) to completed (status False, written with the removal of
// the cleanup finalizer when other finalizers keep the CRD).
const (
	crdDeletionPending           = "InstanceDeletionPending"
	crdDeletionPendingMessage    = "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
	crdDeletionInProgress        = "InstanceDeletionInProgress"
	crdDeletionInProgressMessage = "CustomResource deletion is in progress"
	crdDeletionCompleted         = "InstanceDeletionCompleted"
	crdDeletionCompletedMessage  = "removed all instances"
)

// crdCondition is the CRD's condition of type typ, or nil.
func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, typ apiextensionsv1.CustomResourceDefinitionConditionType) *apiextensionsv1.CustomResourceDefinitionCondition {
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == typ {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}

func setCRDCondition(crd *apiextensionsv1.CustomResourceDefinition, typ apiextensionsv1.CustomResourceDefinitionConditionType,
	status apiextensionsv1.ConditionStatus, reason, message string, now metav1.Time) {
	for i := range crd.Status.Conditions {
		c := &crd.Status.Conditions[i]
		if c.Type != typ {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message = status, reason, message
		return
	}
	crd.Status.Conditions = append(crd.Status.Conditions, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: typ, Status: status, LastTransitionTime: now, Reason: reason, Message: message})
}

// startCleanupLocked starts the goroutine that deletes a terminating CRD's
// objects and then the CRD, unless it runs already.
func (c *crdController) startCleanupLocked(name string) {
	sc := c.crds[name]
	if sc == nil {
		// Nothing served (names never accepted): no objects can exist.
		sc = &servedCRD{terminating: new(atomic.Bool)}
		c.crds[name] = sc
	}
	if sc.cleaning {
		return
	}
	sc.cleaning = true
	s := c.s
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx := s.ctx
		for ctx.Err() == nil {
			rev := c.inner.Revision()
			done, prefix, err := c.cleanup(ctx, name)
			if err != nil && ctx.Err() == nil {
				s.cfg.Logger.Error("apiserver: CRD cleanup", "name", name, "err", err)
			}
			if done || err != nil {
				c.mu.Lock()
				if sc := c.crds[name]; sc != nil {
					sc.cleaning = false
				}
				c.mu.Unlock()
				return
			}
			// Wait for a write under the resource (a finalizer removed), then
			// look again.
			w, err := c.inner.Watch(ctx, prefix, storage.WatchOptions{ResourceVersion: rev})
			if err != nil {
				// Try again a little later rather than spin.
				t := time.NewTimer(100 * time.Millisecond)
				select {
				case <-ctx.Done():
				case <-t.C:
				}
				t.Stop()
				continue
			}
			select {
			case <-ctx.Done():
			case <-w.ResultChan():
			}
			w.Stop()
		}
	}()
}

// cleanup deletes what is left of a terminating CRD's objects and reports
// whether the CRD is gone; prefix is the storage prefix of its objects.
func (c *crdController) cleanup(ctx context.Context, name string) (done bool, prefix string, err error) {
	o, err := c.inner.Get(ctx, crdPrefix+name, storage.ReadOptions{})
	if errors.Is(err, storage.ErrNotFound) {
		c.mu.Lock()
		c.unregisterLocked(name)
		c.mu.Unlock()
		return true, "", nil
	}
	if err != nil {
		return false, "", err
	}
	crd := o.(*apiextensionsv1.CustomResourceDefinition)
	if cond := crdCondition(crd, apiextensionsv1.Terminating); cond != nil && cond.Reason == crdDeletionPending {
		// The cleanup starts: the condition says so before any object goes.
		o, err = c.inner.GuaranteedUpdate(ctx, crdPrefix+name, false, &storage.Preconditions{UID: &crd.UID},
			func(cur storage.Object) (storage.Object, error) {
				next := cur.(*apiextensionsv1.CustomResourceDefinition).DeepCopy()
				if cond := crdCondition(next, apiextensionsv1.Terminating); cond == nil || cond.Reason != crdDeletionPending {
					return cur, nil
				}
				setCRDCondition(next, apiextensionsv1.Terminating, apiextensionsv1.ConditionTrue, crdDeletionInProgress,
					crdDeletionInProgressMessage, metav1.NewTime(c.s.cfg.Now().UTC().Truncate(time.Second)))
				return next, nil
			})
		if errors.Is(err, storage.ErrNotFound) {
			return true, "", nil
		}
		if err != nil {
			return false, "", err
		}
		crd = o.(*apiextensionsv1.CustomResourceDefinition)
	}
	plural := crd.Status.AcceptedNames.Plural
	if plural == "" {
		plural = crd.Spec.Names.Plural
	}
	prefix = keyOf(crd.Spec.Group, plural, "", "")
	c.mu.Lock()
	var res *registry.Resource
	if sc := c.crds[name]; sc != nil && len(sc.resources) > 0 {
		res = sc.resources[0]
	}
	c.mu.Unlock()
	remaining := 0
	if res != nil {
		list, err := c.inner.List(ctx, prefix, storage.ListOptions{})
		if err != nil {
			return false, prefix, err
		}
		for _, it := range list.Items {
			remaining++
			if it.GetDeletionTimestamp() != nil {
				continue
			}
			if _, deleted, err := c.s.storeOf(res).Delete(ctx, it.GetNamespace(), it.GetName(), &deleteAll); err != nil && !errors.Is(err, storage.ErrNotFound) {
				return false, prefix, err
			} else if deleted || errors.Is(err, storage.ErrNotFound) {
				remaining--
			}
		}
	}
	if remaining > 0 {
		return false, prefix, nil
	}
	c.mu.Lock()
	c.unregisterLocked(name)
	c.mu.Unlock()
	return true, prefix, c.finishCleanup(ctx, name, crd.UID)
}

// errOnlyCleanupFinalizer and errOtherFinalizers steer finishCleanup
// between its two writes when the CRD's finalizers change under it.
var (
	errOnlyCleanupFinalizer = errors.New("only the cleanup finalizer is left")
	errOtherFinalizers      = errors.New("other finalizers hold the CRD")
)

// finishCleanup ends a CRD's cleanup as kube-apiserver does: with other
// finalizers left, one write removes the cleanup finalizer and sets the
// Terminating condition completed (False, "removed all instances");
// without, the CRD is deleted as it is stored, so that a watcher sees
// DELETED with the in-progress condition and no intermediate MODIFIED.
func (c *crdController) finishCleanup(ctx context.Context, name string, uid metav1.UID) error {
	key := crdPrefix + name
	for range 10 {
		_, err := c.inner.Delete(ctx, key, &storage.Preconditions{UID: &uid}, func(cur storage.Object) error {
			if slices.ContainsFunc(cur.GetFinalizers(), func(f string) bool { return f != crdCleanupFinalizer }) {
				return errOtherFinalizers
			}
			return nil
		})
		if err == nil || errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if !errors.Is(err, errOtherFinalizers) {
			return err
		}
		_, err = c.inner.GuaranteedUpdate(ctx, key, false, &storage.Preconditions{UID: &uid},
			func(cur storage.Object) (storage.Object, error) {
				if !slices.Contains(cur.GetFinalizers(), crdCleanupFinalizer) {
					return cur, nil
				}
				if !slices.ContainsFunc(cur.GetFinalizers(), func(f string) bool { return f != crdCleanupFinalizer }) {
					return nil, errOnlyCleanupFinalizer
				}
				next := cur.(*apiextensionsv1.CustomResourceDefinition).DeepCopy()
				next.Finalizers = slices.DeleteFunc(next.Finalizers, func(f string) bool { return f == crdCleanupFinalizer })
				setCRDCondition(next, apiextensionsv1.Terminating, apiextensionsv1.ConditionFalse, crdDeletionCompleted,
					crdDeletionCompletedMessage, metav1.NewTime(c.s.cfg.Now().UTC().Truncate(time.Second)))
				return next, nil
			})
		if err == nil || errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if !errors.Is(err, errOnlyCleanupFinalizer) {
			return err
		}
	}
	return fmt.Errorf("apiserver: finishing the cleanup of CRD %s: its finalizers keep changing", name)
}

// crdStore is the server's store with the CRD hooks: a CRD written is
// reconciled before the write returns, and deleting a CRD makes it
// Terminating first.
type crdStore struct {
	storage.Interface
	c *crdController
}

func isCRDKey(key string) bool { return strings.HasPrefix(key, crdPrefix) }

func (w *crdStore) Create(ctx context.Context, key string, obj storage.Object) (storage.Object, error) {
	out, err := w.Interface.Create(ctx, key, obj)
	if err == nil && isCRDKey(key) {
		w.c.sync(ctx, out.GetName())
	}
	return out, err
}

func (w *crdStore) GuaranteedUpdate(ctx context.Context, key string, allowCreate bool, pre *storage.Preconditions,
	tryUpdate func(storage.Object) (storage.Object, error)) (storage.Object, error) {
	out, err := w.Interface.GuaranteedUpdate(ctx, key, allowCreate, pre, tryUpdate)
	if err == nil && isCRDKey(key) {
		w.c.sync(ctx, out.GetName())
	}
	return out, err
}

// Delete of a CRD marks it Terminating (deletionTimestamp, the cleanup
// finalizer, the Terminating condition) and cleans up its objects: when none
// is left the CRD is deleted at once, otherwise a goroutine finishes the job
// as their finalizers go. Either way Delete returns the marked CRD without
// error, and the handler answers it (200 with the terminating CRD, as
// kube-apiserver does); clients wait for the CRD to be gone.
func (w *crdStore) Delete(ctx context.Context, key string, pre *storage.Preconditions, validate func(storage.Object) error) (storage.Object, error) {
	if !isCRDKey(key) {
		return w.Interface.Delete(ctx, key, pre, validate)
	}
	c := w.c
	now := metav1.NewTime(c.s.cfg.Now().UTC().Truncate(time.Second))
	marked, err := c.inner.GuaranteedUpdate(ctx, key, false, pre, func(cur storage.Object) (storage.Object, error) {
		if validate != nil {
			if err := validate(cur); err != nil {
				return nil, err
			}
		}
		next := cur.(*apiextensionsv1.CustomResourceDefinition).DeepCopy()
		if next.DeletionTimestamp != nil {
			return next, nil // marked already: the cleanup owns the condition
		}
		// kube-apiserver sets no deletionGracePeriodSeconds on a CRD.
		next.DeletionTimestamp = &now
		if !slices.Contains(next.Finalizers, crdCleanupFinalizer) {
			next.Finalizers = append(next.Finalizers, crdCleanupFinalizer)
		}
		setCRDCondition(next, apiextensionsv1.Terminating, apiextensionsv1.ConditionTrue, crdDeletionPending, crdDeletionPendingMessage, now)
		return next, nil
	})
	if err != nil {
		return nil, err
	}
	name := marked.GetName()
	c.mu.Lock()
	sc := c.crds[name]
	cleaning := sc != nil && sc.cleaning
	if sc != nil {
		sc.terminating.Store(true)
		sc.cleaning = true // held while this call cleans up
	}
	c.mu.Unlock()
	if cleaning {
		return marked, nil
	}
	done, _, err := c.cleanup(ctx, name)
	c.mu.Lock()
	if sc := c.crds[name]; sc != nil {
		sc.cleaning = false
	}
	c.mu.Unlock()
	if err != nil || !done {
		c.sync(ctx, name) // starts the cleanup goroutine
	}
	return marked, nil
}

// served lists the names of the CRDs the server serves, sorted (for tests).
func (c *crdController) served() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.crds))
	for n, sc := range c.crds {
		if len(sc.resources) > 0 {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// withStatusManager records, as kube-apiserver does, that it owns the status
// fields it writes (acceptedNames and conditions), in a managedFields entry
// of manager "kube-apiserver" for the status subresource, first in the list
// (golden 85).
func withStatusManager(entries []metav1.ManagedFieldsEntry, st *apiextensionsv1.CustomResourceDefinitionStatus, now metav1.Time) []metav1.ManagedFieldsEntry {
	names := map[string]any{}
	an := st.AcceptedNames
	for k, set := range map[string]bool{"f:kind": an.Kind != "", "f:listKind": an.ListKind != "", "f:plural": an.Plural != "",
		"f:shortNames": len(an.ShortNames) > 0, "f:singular": an.Singular != "", "f:categories": len(an.Categories) > 0} {
		if set {
			names[k] = map[string]any{}
		}
	}
	conds := map[string]any{}
	for _, c := range st.Conditions {
		f := map[string]any{".": map[string]any{}, "f:status": map[string]any{}, "f:type": map[string]any{}}
		if !c.LastTransitionTime.IsZero() {
			f["f:lastTransitionTime"] = map[string]any{}
		}
		if c.Reason != "" {
			f["f:reason"] = map[string]any{}
		}
		if c.Message != "" {
			f["f:message"] = map[string]any{}
		}
		conds[`k:{"type":"`+string(c.Type)+`"}`] = f
	}
	status := map[string]any{}
	if len(names) > 0 {
		status["f:acceptedNames"] = names
	}
	if len(conds) > 0 {
		status["f:conditions"] = conds
	}
	raw, err := json.Marshal(map[string]any{"f:status": status})
	if err != nil {
		return entries
	}
	out := []metav1.ManagedFieldsEntry{{Manager: "kube-apiserver", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: crdGroup + "/v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}, Subresource: "status"}}
	for _, e := range entries {
		if e.Manager == "kube-apiserver" && e.Subresource == "status" {
			continue
		}
		out = append(out, e)
	}
	// In the field manager's order (operation, second, manager, apiVersion,
	// subresource), as kube-apiserver keeps them.
	sort.SliceStable(out, func(i, j int) bool {
		p, q := out[i], out[j]
		if p.Operation != q.Operation {
			return p.Operation < q.Operation
		}
		var ps, qs int64
		if p.Time != nil {
			ps = p.Time.Unix()
		}
		if q.Time != nil {
			qs = q.Time.Unix()
		}
		if ps != qs {
			return ps < qs
		}
		if p.Manager != q.Manager {
			return p.Manager < q.Manager
		}
		if p.APIVersion != q.APIVersion {
			return p.APIVersion < q.APIVersion
		}
		return p.Subresource < q.Subresource
	})
	return out
}
