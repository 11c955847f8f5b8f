package registry

import (
	"time"

	apiregistrationv1 "github.com/kapi-dev/kapi/api/apiregistration/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	storagemigrationv1 "github.com/kapi-dev/kapi/api/storagemigration/v1"
)

// apiregistration.k8s.io/v1 APIServices and storagemigration.k8s.io/v1
// StorageVersionMigrations, as kube-apiserver v1.37.2 serves them
// (testdata/golden-1.37/kinds/*-apiregistration.k8s.io-*,
// *-storagemigration.k8s.io-*). kapi aggregates no API servers: an
// APIService is stored, and only a local one (without a service) is
// Available.

func apiregistrationKinds(Options, services) []*Resource {
	return []*Resource{
		kind[apiregistrationv1.APIService]("apiregistration.k8s.io", "v1", "apiservices", Resource{
			// A name is version.group, "v1." for the legacy group: it only
			// has to fit in a path.
			Meta: builtinMeta(NameIsPathSegment), StatusMetadata: statusMetadata(false, false),
			Default: defaultAPIService,
			PrepareForCreate: func(o Object) {
				defaultAPIService(o)
				prepareAPIService(o.(*apiregistrationv1.APIService))
			},
			PrepareForUpdate: func(o, _ Object) { defaultAPIService(o) },
			Validate:         validateAPIService, Printer: apiServicePrinter}),
	}
}

func storagemigrationKinds(Options, services) []*Resource {
	return []*Resource{
		// kube-apiserver v1.37 stores them as v1beta1 (discovery's
		// storageVersionHash says so).
		kind[storagemigrationv1.StorageVersionMigration]("storagemigration.k8s.io", "v1", "storageversionmigrations", Resource{
			StorageVersion: "v1beta1",
			Meta:           builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			PrepareForCreate: ResetStatus, Validate: validateStorageVersionMigration, Printer: storageVersionMigrationPrinter}),
	}
}

func defaultAPIService(o Object) {
	if s := o.(*apiregistrationv1.APIService).Spec.Service; s != nil {
		setDefault(&s.Port, 443)
	}
}

// LocalAPIServiceCondition is the condition of an APIService that kube-apiserver
// serves itself (no spec.service): always Available.
func LocalAPIServiceCondition(now metav1.Time) apiregistrationv1.APIServiceCondition {
	return apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue,
		LastTransitionTime: now, Reason: "Local", Message: "Local APIServices are always available"}
}

// prepareAPIService clears a new APIService's status; a local one is
// Available at once: since its creation (the server's clock), as
// kube-apiserver's are.
func prepareAPIService(a *apiregistrationv1.APIService) {
	a.Status = apiregistrationv1.APIServiceStatus{}
	if a.Spec.Service == nil {
		since := a.CreationTimestamp
		if since.IsZero() {
			since = metav1.Now()
		}
		a.Status.Conditions = []apiregistrationv1.APIServiceCondition{LocalAPIServiceCondition(since)}
	}
}

func validateAPIService(o, _ Object) metav1.FieldErrors {
	a := o.(*apiregistrationv1.APIService)
	s := a.Spec
	var errs metav1.FieldErrors
	if want := s.Version + "." + s.Group; a.Name != want {
		errs = append(errs, metav1.FieldInvalid("metadata.name", a.Name, "must be `spec.version+\".\"+spec.group`: \""+want+"\""))
	}
	if s.Group == "" && s.Version != "v1" {
		errs = append(errs, metav1.FieldRequired("spec.group", "only v1 may have an empty group and it better be legacy kube"))
	}
	if s.Group != "" {
		for _, msg := range ValidateDNS1123Subdomain(s.Group) {
			errs = append(errs, metav1.FieldInvalid("spec.group", s.Group, msg))
		}
	}
	for _, msg := range ValidateDNS1035Label(s.Version) {
		errs = append(errs, metav1.FieldInvalid("spec.version", s.Version, msg))
	}
	if s.GroupPriorityMinimum <= 0 || s.GroupPriorityMinimum > 20000 {
		errs = append(errs, metav1.FieldInvalid("spec.groupPriorityMinimum", s.GroupPriorityMinimum, "must be positive and less than 20000"))
	}
	if s.VersionPriority <= 0 || s.VersionPriority > 1000 {
		errs = append(errs, metav1.FieldInvalid("spec.versionPriority", s.VersionPriority, "must be positive and less than 1000"))
	}
	if svc := s.Service; svc != nil {
		if svc.Namespace == "" {
			errs = append(errs, metav1.FieldRequired("spec.service.namespace", ""))
		}
		if svc.Name == "" {
			errs = append(errs, metav1.FieldRequired("spec.service.name", ""))
		}
		if p := svc.Port; p != nil && (*p < 1 || *p > 65535) {
			errs = append(errs, metav1.FieldInvalid("spec.service.port", *p, "must be a valid port number (1-65535, inclusive)"))
		}
		if s.InsecureSkipTLSVerify && len(s.CABundle) > 0 {
			errs = append(errs, metav1.FieldInvalid("spec.insecureSkipTLSVerify", s.InsecureSkipTLSVerify, "may not be true if caBundle is present"))
		}
	}
	return errs
}

func validateStorageVersionMigration(o, old Object) metav1.FieldErrors {
	m := o.(*storagemigrationv1.StorageVersionMigration)
	var errs metav1.FieldErrors
	if old != nil && !SpecEqual(o, old) {
		errs = append(errs, metav1.FieldInvalid("spec", goDump{m.Spec}, "field is immutable"))
	}
	r := m.Spec.Resource
	if r.Resource == "" {
		errs = append(errs, metav1.FieldRequired("spec.resource.resource", "resource is required to be set"))
	}
	if r.Group != "" {
		for _, msg := range ValidateDNS1123Subdomain(r.Group) {
			errs = append(errs, metav1.FieldInvalid("spec.resource.group", r.Group, msg))
		}
	}
	return errs
}

var apiServicePrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Service", Type: "string", Description: "The reference to the service that hosts this API endpoint."},
		{Name: "Available", Type: "string", Description: "Whether this service is available."},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		a := o.(*apiregistrationv1.APIService)
		service := "Local"
		if s := a.Spec.Service; s != nil {
			service = s.Namespace + "/" + s.Name
		}
		available := "Unknown"
		for _, c := range a.Status.Conditions {
			if c.Type == apiregistrationv1.Available {
				available = string(c.Status)
				if c.Status != apiregistrationv1.ConditionTrue {
					available += " (" + c.Reason + ")"
				}
			}
		}
		return []any{a.Name, service, available, Age(a.CreationTimestamp, now)}, nil
	},
}

var storageVersionMigrationPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Description: descName},
		{Name: "Resource", Type: "string", Description: "GroupResource to migrate"},
		{Name: "Status", Type: "string", Description: "Status of the migration"},
	},
	Row: func(o Object, _ time.Time) ([]any, []metav1.TableRowCondition) {
		m := o.(*storagemigrationv1.StorageVersionMigration)
		status := "Unknown"
		for _, c := range m.Status.Conditions {
			if c.Status == metav1.ConditionTrue {
				status = c.Type
			}
		}
		return []any{m.Name, m.Spec.Resource.String(), status}, nil
	},
}
