package apiserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/internal/golden"
)

// TestKindsGolden replays testdata/golden-1.37/kinds, resource by resource,
// against a fresh server each: the creates (minimal, full, variants), the
// invalid object, the immutable-field updates and the Table GET, in capture
// order, comparing status codes, the kept headers (Content-Type, Warning)
// and the bodies as JSON with exactly what varies between runs normalised
// (kindsNormalize, from the captures' README). A resource the server does
// not serve is skipped, naming it; every resource it serves must pass.
func TestKindsGolden(t *testing.T) {
	order, err := golden.KindsOrder()
	if err != nil {
		t.Fatal(err)
	}
	type resource struct{ group, resource string }
	var resources []resource
	cases := map[resource][]string{}
	for _, name := range order {
		c, ok := parseKindsName(name)
		if !ok || !kindsReplayed(c) {
			continue
		}
		r := resource{c.group, c.resource}
		if _, seen := cases[r]; !seen {
			resources = append(resources, r)
		}
		cases[r] = append(cases[r], name)
	}
	for _, r := range resources {
		t.Run(r.group+"-"+r.resource, func(t *testing.T) {
			// The capture's controller manager had no root-ca publisher; its
			// server advertised a non-loopback address (Endpoints refuse
			// loopback ones).
			// Its clients were the static-token user admin (a CSR's
			// requester), AdminUser. Its aggregated ClusterRole was read
			// back before the controller manager aggregated it (a race
			// there, and here without DisableClusterRoleAggregation).
			reg, err := registry.BuiltinWith(registry.Options{})
			if err != nil {
				t.Fatal(err)
			}
			srv, err := New(Config{DisableRootCAPublisher: true, DisableClusterRoleAggregation: true, AdvertiseAddress: netip.MustParseAddr("192.0.2.1"), Registry: reg})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			group := r.group
			if group == "core" {
				group = ""
			}
			if len(srv.Registry().ByGroupResource(group, r.resource)) == 0 {
				t.Fatalf("%s.%s is not served", r.resource, r.group)
			}
			var xs []*golden.Exchange
			for _, name := range cases[r] {
				x, err := golden.LoadKind(name)
				if err != nil {
					t.Fatal(err)
				}
				xs = append(xs, x)
			}
			kindsNamespaces(t, srv, xs)
			uids := kindsUIDs{}
			for _, x := range xs {
				diffs := replayKind(srv, r.resource, x, uids)
				why, pending := kindsPending[x.Name]
				switch {
				case !pending:
					for _, d := range diffs {
						t.Error(d)
					}
				case len(diffs) == 0:
					// Still replayed (later cases see its effect), and it
					// leaves the list once it passes.
					t.Errorf("%s passes now: remove it from kindsPending", x.Name)
				default:
					t.Logf("%s: pending (%s)", x.Name, why)
				}
			}
		})
	}
}

// kindsPending are the cases of served resources that kapi does not answer
// as kube-apiserver v1.37.2 yet, with why. The registry has what they need
// (apiserver/registry/kinds_validation.go, pods.go, each checked against
// these captures in the registry's tests) but the resources' entries in
// registry/builtin.go, being restructured, do not call it yet: the Table
// cases then list the object the invalid create or update should have
// refused. The list only shrinks: a case that passes fails the test until
// it is removed.
var kindsPending = map[string]string{
	"table-apiregistration.k8s.io-apiservices": "kapi runs no APIService availability controller: a service-backed APIService stays " +
		"without conditions (Unknown) where kube-apiserver's marks it False (ServiceNotFound)",
	"invalid-resource.k8s.io-deviceclasses": "CEL selectors are not compiled (cel-go is not a dependency yet; the admission policies issue brings it): " +
		"the syntax error cause is missing",
}

// kindsCase is a capture's file name taken apart: create-core-secrets-
// dockerconfigjson is what "create", group "core", resource "secrets",
// variant "dockerconfigjson".
type kindsCase struct{ what, group, resource, variant string }

func parseKindsName(name string) (kindsCase, bool) {
	for _, what := range []string{"update-immutable", "subresource", "create", "full", "invalid", "table", "review"} {
		rest, ok := strings.CutPrefix(name, what+"-")
		if !ok {
			continue
		}
		parts := strings.SplitN(rest, "-", 3)
		if len(parts) < 2 {
			return kindsCase{}, false
		}
		c := kindsCase{what: what, group: parts[0], resource: parts[1]}
		if len(parts) == 3 {
			c.variant = parts[2]
		}
		return c, true
	}
	return kindsCase{}, false
}

// kindsReplayed reports whether this harness replays the case: everything
// but the reviews and subresources (virtual resources, tested where they are
// served), except the scale subresource of deployments.
func kindsReplayed(c kindsCase) bool {
	switch c.what {
	case "review":
		return false
	case "subresource":
		scalable := c.group == "apps" && c.resource == "deployments" || c.group == "core" && c.resource == "replicationcontrollers"
		return scalable && strings.HasPrefix(c.variant, "scale")
	}
	return true
}

var kindsNamespaceInPath = regexp.MustCompile(`/namespaces/([^/]+)/`)

// kindsNamespaces creates the namespaces the captures use, and waits for
// their "default" ServiceAccount as the capture's controller manager had made
// it (pods are created with it; the ServiceAccount Tables list it).
func kindsNamespaces(t *testing.T, srv *Server, xs []*golden.Exchange) {
	t.Helper()
	var nss []string
	for _, x := range xs {
		if m := kindsNamespaceInPath.FindStringSubmatch(x.Path); m != nil && !slices.Contains(nss, m[1]) {
			nss = append(nss, m[1])
		}
	}
	for _, ns := range nss {
		if code, body := serve(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"`+ns+`"}}`); code != http.StatusCreated {
			t.Fatalf("namespace %s: %d %v", ns, code, body)
		}
		waitFor(t, 10*time.Second, "the default ServiceAccount of "+ns, func() bool {
			code, _ := serve(t, srv, "GET", "/api/v1/namespaces/"+ns+"/serviceaccounts/default", "")
			return code == http.StatusOK
		}, srv)
	}
}

// replayKind sends x's request and returns how the answer differs from
// x's (nothing when it is the same).
func replayKind(srv *Server, resource string, x *golden.Exchange, uids kindsUIDs) []string {
	diffs, _ := replayKindGot(srv, resource, x, uids)
	return diffs
}

// replayKindGot is replayKind that also returns kapi's answer, decoded
// (nil when it has no body, as the capture's then).
func replayKindGot(srv *Server, resource string, x *golden.Exchange, uids kindsUIDs) ([]string, any) {
	req := httptest.NewRequest(x.Method, x.Path, bytes.NewReader(x.RequestBody))
	for k, v := range x.RequestHeader {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != x.Status {
		return []string{fmt.Sprintf("%s: %s %s: status %d, want %d\n got  %s\n want %s", x.Name, x.Method, x.Path, rec.Code, x.Status, rec.Body, x.ResponseBody)}, nil
	}
	var diffs []string
	for _, h := range []string{"Content-Type", "Warning"} {
		if got, want := strings.Join(rec.Header().Values(h), ", "), x.ResponseHeader[h]; got != want {
			diffs = append(diffs, fmt.Sprintf("%s: %s %q, want %q", x.Name, h, got, want))
		}
	}
	if len(bytes.TrimSpace(x.ResponseBody)) == 0 { // 204 No Content
		if rec.Body.Len() != 0 {
			diffs = append(diffs, fmt.Sprintf("%s: body %q, want none", x.Name, rec.Body))
		}
		return diffs, nil
	}
	var got, want any
	if err := json.Unmarshal(x.ResponseBody, &want); err != nil {
		return append(diffs, fmt.Sprintf("%s: capture body: %v", x.Name, err)), nil
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		return append(diffs, fmt.Sprintf("%s: response is not JSON: %v\n%s", x.Name, err, rec.Body)), nil
	}
	raw := got
	uids.learn(want, got, "")
	want, got = expandJWTs(want), expandJWTs(got)
	got, want = kindsNormalize(resource, got, false), kindsNormalize(resource, uids.rewrite(want), true)
	if !reflect.DeepEqual(got, want) {
		path, w, g := jsonDiff(want, got, "")
		wj, _ := json.Marshal(w)
		gj, _ := json.Marshal(g)
		diffs = append(diffs, fmt.Sprintf("%s: %s %s: body differs at %s\n got  %s\n want %s", x.Name, x.Method, x.Path, path, gj, wj))
	}
	return diffs, raw
}

// jsonDiff returns the first path where got differs from want, and the
// values there.
func jsonDiff(want, got any, path string) (string, any, any) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, want, got
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			if wv, gv := w[k], g[k]; !reflect.DeepEqual(wv, gv) {
				_, wok := w[k]
				_, gok := g[k]
				if !wok || !gok {
					return path + "." + k, wv, gv
				}
				return jsonDiff(wv, gv, path+"."+k)
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path, want, got
		}
		for i := range w {
			if !reflect.DeepEqual(w[i], g[i]) {
				return jsonDiff(w[i], g[i], fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	return path, want, got
}

// What varies between two runs of the capture (its README), replaced by
// these placeholders on both sides; nothing else is left out.
const (
	variesMeta      = "<varies: uid, creationTimestamp, resourceVersion, managedFields time>"
	variesGenerated = "<generated>"
	variesAllocated = "<allocated: cluster IP or node port>"
	variesAge       = "<age>"
	variesCreated   = "<the object's creationTimestamp>"
	variesStatus    = "<written by a controller kapi does not run>"
	variesTokenTime = "<varies: a service account token's times>"
	variesTokenID   = "<varies: a service account token's key id and jti>"
)

var (
	// kube-api-access-xxxxx, the pod's token volume.
	kindsGeneratedName = regexp.MustCompile(`\bkube-api-access-[a-z0-9]{5}\b`)
	kindsNodePort      = regexp.MustCompile(`:[0-9]+/`)
)

// kindsAgeColumns are the Table columns computed from the time of the
// request (ages, durations, and times of the run itself).
// (TimeAdded: a DeviceTaintRule's spec.taint.timeAdded, which the server
// sets at create).
var kindsAgeColumns = []string{"Age", "Duration", "Last Seen", "First Seen", "Last Schedule", "Created At", "TimeAdded"}

// controllerWrites is what kube-controller-manager wrote into the objects of
// a resource in the 3 s between the creates and the captured Table GET
// (README: deployments, replicasets, statefulsets, jobs, PDBs,
// resourcequotas, whose status kapi computes as the resourcequota
// controller does, so they are compared in full; the tokens controller fills service-account-token
// Secrets; the service-cidr controller a ServiceCIDR's finalizer and Ready
// condition), or kube-apiserver's own APF configuration controller (a
// FlowSchema's Dangling condition). kapi runs none of these controllers:
// the Table rows are compared but for the cells computed from what they
// wrote, their annotations, finalizers and managedFields entries (manager
// kube-controller-manager, or manager).
type controllerWrites struct {
	cells       []string
	annotations []string
	finalizers  []string
	// manager is the field manager of the controller's writes when it is
	// not kube-controller-manager.
	manager string
	// row, when set, says which rows the controller wrote to (by the cells
	// of the row, keyed by column name).
	row func(cells map[string]any) bool
}

var kindsControllerWrites = map[string]controllerWrites{
	"deployments":            {cells: []string{"Ready", "Up-to-date", "Available"}, annotations: []string{"deployment.kubernetes.io/revision"}},
	"replicasets":            {cells: []string{"Current", "Ready"}},
	"replicationcontrollers": {cells: []string{"Current", "Ready"}},
	"statefulsets":           {cells: []string{"Ready"}},
	"daemonsets":             {cells: []string{"Desired", "Current", "Ready", "Up-to-date", "Available"}},
	"jobs":                   {cells: []string{"Status", "Completions"}},
	"poddisruptionbudgets":   {cells: []string{"Allowed Disruptions"}},
	"secrets": {cells: []string{"Data"}, annotations: []string{"kubernetes.io/service-account.uid"},
		row: func(cells map[string]any) bool { return cells["Type"] == "kubernetes.io/service-account-token" }},
	// The validatingadmissionpolicy-status controller type-checks each
	// policy into its status.
	"validatingadmissionpolicies": {manager: "validatingadmissionpolicy-status"},
	"servicecidrs":                {finalizers: []string{"networking.k8s.io/service-cidr-finalizer"}, manager: "service-cidr-controller"},
	"flowschemas":                 {cells: []string{"MissingPL"}, manager: "api-priority-and-fairness-config-consumer-v1"},
}

// kindsNormalize replaces in v (a decoded response of resource) what varies
// between runs by placeholders. capture is true for the captured side: the
// writes of controllers kapi does not run are removed from it only.
func kindsNormalize(resource string, v any, capture bool) any {
	if o, ok := v.(map[string]any); ok {
		// Times the server stamps at the create (a gated pod's condition)
		// are the creation's: they compare as such.
		meta, _ := o["metadata"].(map[string]any)
		if created, ok := meta["creationTimestamp"].(string); ok {
			v = replaceString(o, created, variesCreated, "")
		}
	}
	v = normalizeVarying(v, "")
	o, ok := v.(map[string]any)
	if !ok {
		return v
	}
	switch o["kind"] {
	case "Status":
		if kindsMapOrderCauses[resource] {
			sortCauses(o)
		}
	case "Table":
		normalizeTable(resource, o, capture)
	case "Service":
		normalizeService(o)
	case "CertificateSigningRequest":
		// An approval stamps its conditions with the time of the write
		// (the capture's CSRs, README: vary).
		status, _ := o["status"].(map[string]any)
		conds, _ := status["conditions"].([]any)
		for _, c := range conds {
			if c, ok := c.(map[string]any); ok {
				for _, k := range []string{"lastUpdateTime", "lastTransitionTime"} {
					if c[k] != nil {
						c[k] = variesTokenTime
					}
				}
			}
		}
	case "TokenRequest":
		// The expiry is the request's time plus the token's duration.
		if status, ok := o["status"].(map[string]any); ok && status["expirationTimestamp"] != nil {
			status["expirationTimestamp"] = variesTokenTime
		}
	case "Scale":
		// A Scale's status.replicas is the Deployment's (ReplicaSet's ...)
		// status, written by its controller.
		if status, ok := o["status"].(map[string]any); ok && status["replicas"] != nil {
			if _, managed := kindsControllerWrites[resource]; managed {
				status["replicas"] = variesStatus
			}
		}
	}
	return o
}

// kindsMapOrderCauses are the resources whose validation kube-apiserver
// runs over a map (a quota's hard limits), so that the order of the causes
// it finds there, in details.causes and in the message, changes from run
// to run (invalid-core-resourcequotas has cpu before "bogus/x y"; kapi
// sorts). Their 422s are compared with the causes sorted.
var kindsMapOrderCauses = map[string]bool{"resourcequotas": true, "limitranges": true}

// sortCauses sorts a Status's causes and writes its message again from
// them, as "<prefix>is invalid: [field: message, ...]".
func sortCauses(o map[string]any) {
	details, _ := o["details"].(map[string]any)
	causes, _ := details["causes"].([]any)
	if len(causes) < 2 {
		return
	}
	slices.SortFunc(causes, func(a, b any) int {
		x, _ := json.Marshal(a)
		y, _ := json.Marshal(b)
		return strings.Compare(string(x), string(y))
	})
	msg, _ := o["message"].(string)
	prefix, _, ok := strings.Cut(msg, "is invalid: ")
	if !ok {
		return
	}
	parts := make([]string, len(causes))
	for i, c := range causes {
		c, _ := c.(map[string]any)
		parts[i] = fmt.Sprint(c["field"]) + ": " + fmt.Sprint(c["message"])
	}
	o["message"] = prefix + "is invalid: [" + strings.Join(parts, ", ") + "]"
}

// replaceString returns v with every string equal to old (but
// metadata.creationTimestamp itself, under key) replaced by repl.
func replaceString(v any, old, repl, key string) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if k == "creationTimestamp" {
				out[k] = x
				continue
			}
			out[k] = replaceString(x, old, repl, k)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = replaceString(x, old, repl, key)
		}
		return out
	case string:
		if v == old {
			return repl
		}
	}
	return v
}

// normalizeVarying walks v: metadata's uid, creationTimestamp and
// resourceVersion, managedFields times, generated names.
func normalizeVarying(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[normalizeString(k)] = normalizeVarying(x, k)
		}
		if key == "metadata" {
			for _, f := range []string{"uid", "creationTimestamp", "resourceVersion"} {
				if _, ok := out[f]; ok {
					out[f] = variesMeta
				}
			}
			if mf, ok := out["managedFields"].([]any); ok {
				for _, e := range mf {
					if e, ok := e.(map[string]any); ok && e["time"] != nil {
						e["time"] = variesMeta
					}
				}
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalizeVarying(x, key)
		}
		return out
	case string:
		return normalizeString(v)
	}
	return v
}

func normalizeString(s string) string {
	return kindsGeneratedName.ReplaceAllString(s, "kube-api-access-"+variesGenerated)
}

// kindsUIDs maps the uids of the capture's objects to those kapi gave the
// same objects, learnt from metadata.uid in both answers, so that the other
// places a uid shows (a Job's controller-uid label and selector, a token
// Secret's service-account.uid annotation) compare as the same object's.
type kindsUIDs map[string]string

// learn records the uids at the same places of want and got.
func (u kindsUIDs) learn(want, got any, key string) {
	switch w := want.(type) {
	case map[string]any:
		g, _ := got.(map[string]any)
		if key == "metadata" {
			wu, _ := w["uid"].(string)
			gu, _ := g["uid"].(string)
			if wu != "" && gu != "" {
				u[wu] = gu
			}
		}
		for k, x := range w {
			u.learn(x, g[k], k)
		}
	case []any:
		g, _ := got.([]any)
		for i := range min(len(w), len(g)) {
			u.learn(w[i], g[i], key)
		}
	}
}

// rewrite replaces, in the captured value v, the uids learnt by kapi's.
func (u kindsUIDs) rewrite(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[u.rewriteString(k)] = u.rewrite(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = u.rewrite(x)
		}
		return out
	case string:
		return u.rewriteString(v)
	}
	return v
}

func (u kindsUIDs) rewriteString(s string) string {
	for w, g := range u {
		s = strings.ReplaceAll(s, w, g)
	}
	return s
}

// normalizeService replaces the allocated cluster IPs and node ports.
func normalizeService(o map[string]any) {
	spec, _ := o["spec"].(map[string]any)
	if spec == nil {
		return
	}
	if ip, ok := spec["clusterIP"].(string); ok && ip != "None" && ip != "" {
		spec["clusterIP"] = variesAllocated
	}
	if ips, ok := spec["clusterIPs"].([]any); ok {
		for i, ip := range ips {
			if ip != "None" {
				ips[i] = variesAllocated
			}
		}
	}
	if _, ok := spec["healthCheckNodePort"]; ok {
		spec["healthCheckNodePort"] = variesAllocated
	}
	ports, _ := spec["ports"].([]any)
	for _, p := range ports {
		if p, ok := p.(map[string]any); ok && p["nodePort"] != nil {
			p["nodePort"] = variesAllocated
		}
	}
}

// normalizeTable replaces the age-like cells, a Service's allocated cells,
// and on the captured side what controllers kapi does not run wrote.
func normalizeTable(resource string, o map[string]any, capture bool) {
	cols, _ := o["columnDefinitions"].([]any)
	names := make([]string, len(cols))
	for i, c := range cols {
		c, _ := c.(map[string]any)
		names[i], _ = c["name"].(string)
	}
	ctl, hasCtl := kindsControllerWrites[resource]
	rows, _ := o["rows"].([]any)
	for _, row := range rows {
		row, _ := row.(map[string]any)
		cells, _ := row["cells"].([]any)
		byName := map[string]any{}
		for i, c := range cells {
			if i < len(names) {
				byName[names[i]] = c
			}
		}
		written := hasCtl && (ctl.row == nil || ctl.row(byName))
		for i, c := range cells {
			if i >= len(names) {
				// IPAddress rows carry the age as a third cell that no
				// column defines (kube-apiserver v1.37.2's printer).
				if resource == "ipaddresses" && i == len(names) {
					cells[i] = variesAge
				}
				continue
			}
			switch name := names[i]; {
			case slices.Contains(kindsAgeColumns, name):
				cells[i] = variesAge
			case written && slices.Contains(ctl.cells, name):
				cells[i] = variesStatus
			case resource == "services" && name == "Cluster-IP" && c != "None" && c != "<none>":
				cells[i] = variesAllocated
			case resource == "services" && name == "Port(s)":
				if s, ok := c.(string); ok {
					cells[i] = kindsNodePort.ReplaceAllString(s, ":"+variesAllocated+"/")
				}
			}
		}
		if !written || !capture {
			continue
		}
		obj, _ := row["object"].(map[string]any)
		meta, _ := obj["metadata"].(map[string]any)
		if meta == nil {
			continue
		}
		if mf, ok := meta["managedFields"].([]any); ok {
			mf = slices.DeleteFunc(mf, func(e any) bool {
				m, _ := e.(map[string]any)
				return m["manager"] == "kube-controller-manager" || ctl.manager != "" && m["manager"] == ctl.manager
			})
			meta["managedFields"] = mf
		}
		if fin, ok := meta["finalizers"].([]any); ok {
			fin = slices.DeleteFunc(fin, func(f any) bool { s, _ := f.(string); return slices.Contains(ctl.finalizers, s) })
			if meta["finalizers"] = fin; len(fin) == 0 {
				delete(meta, "finalizers")
			}
		}
		if ann, ok := meta["annotations"].(map[string]any); ok {
			for _, a := range ctl.annotations {
				delete(ann, a)
			}
			if len(ann) == 0 {
				delete(meta, "annotations")
			}
		}
	}
}

// kindsJWT is a compact JWS, as a service account token is written.
var kindsJWT = regexp.MustCompile(`^eyJ[A-Za-z0-9_-]*\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$`)

// kindsCredentialID is a TokenReview's credential-id extra: the token's jti.
var kindsCredentialID = regexp.MustCompile(`^JTI=[0-9a-f-]{36}$`)

// expandJWTs replaces every service account token in v by its decoded
// header and claims, with what varies between runs (README: the JWTs) as
// placeholders: the key id, the times (iat, nbf, exp) and the jti. What a
// token says (issuer, subject, audiences, the kubernetes.io claims with
// their uids) is then compared.
func expandJWTs(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = expandJWTs(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = expandJWTs(x)
		}
		return out
	case string:
		if kindsCredentialID.MatchString(v) {
			return "JTI=" + variesTokenID
		}
		if !kindsJWT.MatchString(v) {
			return v
		}
		parts := strings.Split(v, ".")
		var header, claims map[string]any
		for i, dst := range []*map[string]any{&header, &claims} {
			raw, err := base64.RawURLEncoding.DecodeString(parts[i])
			if err != nil || json.Unmarshal(raw, dst) != nil {
				return v
			}
		}
		header["kid"] = variesTokenID
		claims["jti"] = variesTokenID
		for _, k := range []string{"iat", "nbf", "exp"} {
			if _, ok := claims[k]; ok {
				claims[k] = variesTokenTime
			}
		}
		return map[string]any{"<jwt header>": header, "<jwt claims>": claims}
	}
	return v
}

// TestKindsGoldenVirtual replays the review- and subresource- captures
// (but the scale ones, replayed with their resources by TestKindsGolden)
// in capture order against one server, as the capture ran them: the
// objects they act on, which the capture script made without recording,
// are made first (kindsVirtualFixtures), and the uids of those objects
// and the service account tokens kapi issues stand for the captured ones
// in later requests and answers. Bodies compare with TestKindsGolden's
// normalisation plus expandJWTs.
func TestKindsGoldenVirtual(t *testing.T) {
	order, err := golden.KindsOrder()
	if err != nil {
		t.Fatal(err)
	}
	// The capture ran within one second: kapi's clock stands still at
	// it, so that the times it stamps compare as the capture's.
	captured := time.Date(2026, 11, 24, 16, 2, 1, 0, time.UTC)
	srv, err := New(Config{DisableRootCAPublisher: true, DisableClusterRoleAggregation: true, AdvertiseAddress: netip.MustParseAddr("192.0.2.1"),
		Now: func() time.Time { return captured }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	uids := kindsUIDs{}
	kindsVirtualFixtures(t, srv, uids)
	for _, name := range order {
		c, ok := parseKindsName(name)
		if !ok || (c.what != "review" && c.what != "subresource") || strings.HasPrefix(c.variant, "scale") {
			continue
		}
		group := c.group
		if group == "core" {
			group = ""
		}
		if len(srv.Registry().ByGroupResource(group, c.resource)) == 0 {
			t.Fatalf("%s: %s.%s is not served", name, c.resource, c.group)
		}
		x, err := golden.LoadKind(name)
		if err != nil {
			t.Fatal(err)
		}
		// The request as kapi's objects and tokens are: their uids, the
		// tokens kapi issued for the captured ones, the object's current
		// resourceVersion (an update of the captured one).
		rx := *x
		rx.RequestBody = []byte(uids.rewriteString(string(x.RequestBody)))
		rx.RequestBody = kindsCurrentRV(t, srv, rx.Method, rx.Path, rx.RequestBody)
		diffs, got := replayKindGot(srv, c.resource, &rx, uids)
		learnTokens(x, got, uids)
		why, pending := kindsVirtualPending[name]
		switch {
		case !pending:
			for _, d := range diffs {
				t.Error(d)
			}
		case len(diffs) == 0:
			t.Errorf("%s passes now: remove it from kindsVirtualPending", name)
		default:
			t.Logf("%s: pending (%s)", name, why)
		}
	}
}

// kindsVirtualPending are the review and subresource captures kapi does
// not answer as kube-apiserver v1.37.2 yet, with why. It only shrinks.
var kindsVirtualPending = map[string]string{
	"review-authorization.k8s.io-subjectaccessreviews-denied":         "kapi's authorizer allows everything until it has RBAC (issue 17); the capture's RBAC denies jane",
	"review-authorization.k8s.io-subjectaccessreviews-serviceaccount": "kapi's authorizer allows everything until it has RBAC (issue 17)",
	"review-authorization.k8s.io-localsubjectaccessreviews":           "kapi's authorizer allows everything until it has RBAC (issue 17)",
	"review-authorization.k8s.io-subjectaccessreviews-allowed":        "allowed, but without RBAC's reason (issue 17)",
	"review-authorization.k8s.io-selfsubjectrulesreviews":             "kapi's authorizer lists * rules until it has RBAC (issue 17)",
	"review-authentication.k8s.io-tokenreviews":                       "kapi authenticates no static tokens (the admin's); issue 17",
	"subresource-certificates.k8s.io-certificatesigningrequests-signed": "kapi runs no CSR signer (kube-controller-manager's csrsigning " +
		"controller): the approved request has no certificate",
	"subresource-certificates.k8s.io-certificatesigningrequests-table-after-approval": "the Condition of the approved request is " +
		"Approved,Issued once signed: kapi runs no signer",
}

// kindsVirtualFixtures makes what the captures act on, as the capture
// script made it (README: pod subresources in kinds-virtual, the nodes
// kinds-full (no addresses) and kinds-min, the namespace kinds-finalize),
// and maps the captured uids of those objects to kapi's.
func kindsVirtualFixtures(t *testing.T, srv *Server, uids kindsUIDs) {
	t.Helper()
	mk := func(path, body, captureUID string) map[string]any {
		t.Helper()
		code, obj := serve(t, srv, "POST", path, body)
		if code != http.StatusCreated {
			t.Fatalf("POST %s: %d %v", path, code, obj)
		}
		if captureUID != "" {
			meta, _ := obj["metadata"].(map[string]any)
			uids[captureUID], _ = meta["uid"].(string)
		}
		return obj
	}
	mk("/api/v1/namespaces", `{"metadata":{"name":"kinds-virtual"}}`, "")
	mk("/api/v1/namespaces", `{"metadata":{"name":"kinds-finalize","labels":{"golden":"kinds-ns"}}}`, "d0d96952-7ca4-41f6-8810-5f426711e2ca")
	mk("/api/v1/nodes", `{"metadata":{"name":"kinds-full"}}`, "77a6caf0-8529-492b-ae94-9c6636a9688a")
	mk("/api/v1/nodes", `{"metadata":{"name":"kinds-min"}}`, "")
	pod := func(name, labels string) string {
		return `{"metadata":{"name":"` + name + `","labels":{` + labels + `}},"spec":{"containers":[{"name":"app","image":"registry.k8s.io/pause:3.10"}]}}`
	}
	mk("/api/v1/namespaces/kinds-virtual/pods", pod("bind-me", ""), "44d89061-164c-4d1e-9ef3-8c0a1340f2ca")
	mk("/api/v1/namespaces/kinds-virtual/pods", pod("nonode", ""), "")
	mk("/api/v1/namespaces/kinds-virtual/pods", `{"metadata":{"name":"debug","labels":{"app":"debug"}},"spec":{"containers":[{"name":"app","image":"nginx:1.27",`+
		`"resources":{"limits":{"cpu":"200m","memory":"128Mi"},"requests":{"cpu":"100m","memory":"64Mi"}}}]}}`, "8118052d-27e5-4648-9b05-4564f29275ce")
	for _, p := range []struct{ name, labels string }{{"evict-ok", `"evict":"ok"`}, {"evict-blocked", `"evict":"blocked"`}, {"evict-pending", `"evict":"blocked"`}} {
		mk("/api/v1/namespaces/kinds-virtual/pods", pod(p.name, p.labels), "")
		if p.name == "evict-pending" {
			continue
		}
		// Running and Ready, as a kubelet would have made it; on a node.
		body := `{"metadata":{"name":"` + p.name + `"},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`
		req := httptest.NewRequest("PATCH", "/api/v1/namespaces/kinds-virtual/pods/"+p.name+"/status", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/merge-patch+json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("pod %s status: %d %s", p.name, rec.Code, rec.Body)
		}
	}
	mk("/apis/policy/v1/namespaces/kinds-virtual/poddisruptionbudgets", `{"metadata":{"name":"allow"},"spec":{"minAvailable":0,"selector":{"matchLabels":{"evict":"ok"}}}}`, "")
	mk("/apis/policy/v1/namespaces/kinds-virtual/poddisruptionbudgets", `{"metadata":{"name":"block"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"evict":"blocked"}}}}`, "")
	// The requests the approval captures act on: the creates of their
	// captures.
	for _, name := range []string{"create-certificates.k8s.io-certificatesigningrequests", "full-certificates.k8s.io-certificatesigningrequests"} {
		x, err := golden.LoadKind(name)
		if err != nil {
			t.Fatal(err)
		}
		// TestKindsGolden compares the answer; here it is a fixture.
		rec := send(t, srv, x.Method, x.Path, string(x.RequestBody), "application/json")
		if rec.Code != http.StatusCreated {
			t.Fatalf("fixture %s: %d %s", name, rec.Code, rec.Body)
		}
		var want, got any
		if json.Unmarshal(x.ResponseBody, &want) != nil || json.Unmarshal(rec.Body.Bytes(), &got) != nil {
			t.Fatalf("fixture %s: not JSON", name)
		}
		uids.learn(want, got, "")
	}
	waitFor(t, 10*time.Second, "the default ServiceAccount of kinds-virtual", func() bool {
		code, _ := serve(t, srv, "GET", "/api/v1/namespaces/kinds-virtual/serviceaccounts/default", "")
		return code == http.StatusOK
	}, srv)
}

// kindsCurrentRV replaces the metadata.resourceVersion of an update's body
// (the captured object's) by the object's current one in kapi (README:
// resourceVersions vary).
func kindsCurrentRV(t *testing.T, srv *Server, method, path string, body []byte) []byte {
	t.Helper()
	if method != "PUT" {
		return body
	}
	var obj map[string]any
	if json.Unmarshal(body, &obj) != nil {
		return body
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta["resourceVersion"] == nil {
		return body
	}
	objPath := path
	if i := strings.LastIndex(path, "/"); i > 0 && strings.Count(path, "/") > 4 {
		objPath = path[:i] // the object of a subresource
	}
	code, cur := serve(t, srv, "GET", objPath, "")
	if code != http.StatusOK {
		return body
	}
	curMeta, _ := cur["metadata"].(map[string]any)
	meta["resourceVersion"] = curMeta["resourceVersion"]
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// learnTokens maps the token of a captured TokenRequest answer to the one
// kapi issued, so that the TokenReviews of the captured token review
// kapi's.
func learnTokens(x *golden.Exchange, got any, uids kindsUIDs) {
	var want any
	if json.Unmarshal(x.ResponseBody, &want) != nil {
		return
	}
	token := func(v any) string {
		o, _ := v.(map[string]any)
		if o["kind"] != "TokenRequest" {
			return ""
		}
		st, _ := o["status"].(map[string]any)
		s, _ := st["token"].(string)
		return s
	}
	if w, g := token(want), token(got); w != "" && g != "" {
		uids[w] = g
	}
}
