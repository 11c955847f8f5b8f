package apiserver

import (
	"bytes"
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
			// requester).
			reg, err := registry.BuiltinWith(registry.Options{User: kindsCaptureUser})
			if err != nil {
				t.Fatal(err)
			}
			srv, err := New(Config{DisableRootCAPublisher: true, AdvertiseAddress: netip.MustParseAddr("192.0.2.1"), Registry: reg})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			group := r.group
			if group == "core" {
				group = ""
			}
			if len(srv.Registry().ByGroupResource(group, r.resource)) == 0 {
				t.Skipf("%s.%s is not served yet", r.resource, r.group)
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
	"create-certificates.k8s.io-certificatesigningrequests": "kube-apiserver's field manager resets a CSR's spec as well as its status (the spec is the requester's, filled by the server): " +
		"managed.go's reset fields are fixed (status, or spec and metadata for /status); a Resource field for them is needed",
	"full-certificates.k8s.io-certificatesigningrequests":  "as create-certificates.k8s.io-certificatesigningrequests",
	"table-certificates.k8s.io-certificatesigningrequests": "as create-certificates.k8s.io-certificatesigningrequests (the rows' managedFields)",
	"table-apiregistration.k8s.io-apiservices": "kapi runs no APIService availability controller: a service-backed APIService stays " +
		"without conditions (Unknown) where kube-apiserver's marks it False (ServiceNotFound)",
	"invalid-resource.k8s.io-deviceclasses": "CEL selectors are not compiled (cel-go is not a dependency yet; the admission policies issue brings it): " +
		"the syntax error cause is missing",

	"update-immutable-core-pods": "kube-apiserver's message goes on with a diff of " +
		"its internal PodSpec (Go field names) that kapi does not reproduce",
	"table-flowcontrol.apiserver.k8s.io-flowschemas": "kube-apiserver sorts FlowSchema rows by matchingPrecedence, then name; " +
		"a Printer cannot order a list's rows (it needs a hook that apiserver/table.go calls)",
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
	req := httptest.NewRequest(x.Method, x.Path, bytes.NewReader(x.RequestBody))
	for k, v := range x.RequestHeader {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != x.Status {
		return []string{fmt.Sprintf("%s: %s %s: status %d, want %d\n got  %s\n want %s", x.Name, x.Method, x.Path, rec.Code, x.Status, rec.Body, x.ResponseBody)}
	}
	var diffs []string
	for _, h := range []string{"Content-Type", "Warning"} {
		if got, want := strings.Join(rec.Header().Values(h), ", "), x.ResponseHeader[h]; got != want {
			diffs = append(diffs, fmt.Sprintf("%s: %s %q, want %q", x.Name, h, got, want))
		}
	}
	var got, want any
	if err := json.Unmarshal(x.ResponseBody, &want); err != nil {
		return append(diffs, fmt.Sprintf("%s: capture body: %v", x.Name, err))
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		return append(diffs, fmt.Sprintf("%s: response is not JSON: %v\n%s", x.Name, err, rec.Body))
	}
	uids.learn(want, got, "")
	got, want = kindsNormalize(resource, got, false), kindsNormalize(resource, uids.rewrite(want), true)
	if !reflect.DeepEqual(got, want) {
		path, w, g := jsonDiff(want, got, "")
		wj, _ := json.Marshal(w)
		gj, _ := json.Marshal(g)
		diffs = append(diffs, fmt.Sprintf("%s: %s %s: body differs at %s\n got  %s\n want %s", x.Name, x.Method, x.Path, path, gj, wj))
	}
	return diffs
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

// kindsCaptureUser is the user the captures were made as (realk8s' static
// token).
var kindsCaptureUser = registry.UserInfo{Username: "admin", UID: "admin-uid", Groups: []string{"system:masters", "system:authenticated"}}

// controllerWrites is what kube-controller-manager wrote into the objects of
// a resource in the 3 s between the creates and the captured Table GET
// (README: deployments, replicasets, statefulsets, jobs, PDBs,
// resourcequotas; the tokens controller fills service-account-token
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
	"resourcequotas":         {cells: []string{"Request", "Limit"}},
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
