package golden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// Use says how a case captured from v1.32.2 is replayed.
type Use int

const (
	// Normalized: Difference.Normalize turns the v1.32.2 capture into what
	// v1.37.2 answers, and tests compare with that.
	Normalized Use = iota
	// AsCaptured: both captures are right for both releases (they differ by
	// the circumstances of the capture, not by behaviour); each is compared as
	// it was captured.
	AsCaptured
	// ReleaseOwn: the answer describes the release itself (its version, the
	// resources it serves), so the v1.32.2 capture is not an expectation for
	// kapi; Release.Load reports ErrNotComparable for it.
	ReleaseOwn
	// OnlyV132: only v1.32.2 was captured; the behaviour is the same in
	// v1.37.2, so the capture is compared as it is.
	OnlyV132
)

// A Difference is what kube-apiserver v1.32.2 answered differently from
// v1.37.2 in one numbered case, found by comparing the two sets with uids,
// timestamps, resourceVersions, generated names, continue tokens and cluster
// IPs ignored (TestReleaseDifferences proves the table complete).
type Difference struct {
	V132      string                  // what v1.32.2 did differently
	Use       Use                     // how the v1.32.2 capture is replayed
	Normalize func(x *Exchange) error // for Use Normalized
}

// Differences lists, by case, every difference between the captures of
// v1.32.2 (testdata/golden) and v1.37.2 (testdata/golden-1.37). kapi follows
// v1.37.2; every case not listed answers the same in both releases.
var Differences = map[string]Difference{
	"02-discovery-api-v1": {
		V132: "lists 38 resources of the core group: pods/resize (v1.33) is missing",
		Use:  ReleaseOwn,
	},
	"03-discovery-apis": {
		V132: "lists 19 groups: resource.k8s.io/v1 and storagemigration.k8s.io/v1, which v1.37 serves by default, are missing",
		Use:  ReleaseOwn,
	},
	"05-version": {
		V132: "reports v1.32.2 (its own build), without emulationMajor, emulationMinor, minCompatibilityMajor, minCompatibilityMinor (v1.33)",
		Use:  ReleaseOwn,
	},
	"11-create-pod-rich": {
		V132:      podGenerationNote,
		Normalize: response(podGeneration("metadata")),
	},
	"12-update-pod-status": {
		V132:      podGenerationNote + "; the request, the pod read back, has none either",
		Normalize: both(podGeneration("metadata")),
	},
	"13-get-pod-json": {
		V132:      podGenerationNote,
		Normalize: response(podGeneration("metadata")),
	},
	"14-get-pod-protobuf": {
		V132:      podGenerationNote + "; " + podObservedGenerationNote,
		Normalize: podProtobuf(),
	},
	"25-create-deployment": {
		V132:      zeroTimeNote + " (spec.template.metadata.creationTimestamp)",
		Normalize: response(dropNullCreationTimestamp),
	},
	"33-list-pods-json": {
		V132:      podGenerationNote,
		Normalize: response(podGeneration("items", "*", "metadata")),
	},
	"34-list-pods-protobuf": {
		V132:      podGenerationNote + "; " + podObservedGenerationNote,
		Normalize: podProtobuf(2),
	},
	"44-list-pods-fieldselector": {
		V132:      podGenerationNote,
		Normalize: response(podGeneration("items", "*", "metadata")),
	},
	"62-dryrun-bad-value": {
		V132:      `an unsupported list value is printed in Go syntax ([]string{"Some"}) where v1.37 prints JSON (["Some"]), in the message and the cause`,
		Normalize: replace(`[]string{\"Some\"}`, `[\"Some\"]`),
	},
	"63-table-pods": {
		V132:      podGenerationNote + " (the row's object)",
		Normalize: response(podGeneration("rows", "*", "object", "metadata")),
	},
	"66-table-deployments": {
		V132: "three column descriptions are older wordings (Up-to-date, Available, Selector)",
		Normalize: replace(
			`Total number of non-terminated pods targeted by this deployment that have the desired template spec.`,
			`Total number of non-terminating pods targeted by this deployment that have the desired template spec.`,
			`Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.`,
			`Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.`,
			`Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment."`,
			`Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels."`,
		),
	},
	"67-table-nodes": {
		V132:      `the Kernel-Version cell is the kernel alone ("6.1.0"); v1.37 adds the node's architecture ("6.1.0 (amd64)")`,
		Normalize: replace(`"6.1.0","containerd://1.7"`, `"6.1.0 (amd64)","containerd://1.7"`),
	},
	"72-patch-strategic-containers": {
		V132:      zeroTimeNote + " (spec.template.metadata.creationTimestamp)",
		Normalize: response(dropNullCreationTimestamp),
	},
	"93-watch-json-from-rv": {
		V132:      zeroTimeNote + " (the BOOKMARK's metadata.creationTimestamp)",
		Normalize: response(dropNullCreationTimestamp),
	},
	"96-watch-sendinitialevents": {
		V132: zeroTimeNote + " (the BOOKMARK's metadata.creationTimestamp), and the end-of-initial-events BOOKMARK carries a " +
			"kubernetes.io/initial-events-list-blueprint annotation that v1.37 does not write",
		Normalize: response(func(doc *node) {
			dropNullCreationTimestamp(doc)
			for _, a := range doc.at("object", "metadata", "annotations") {
				a.del("kubernetes.io/initial-events-list-blueprint")
			}
		}),
	},
	"100-list-expired-continue": {
		V132: "410 Expired: the capture's continue token had been compacted away; v1.37.2 was captured before its compaction " +
			"(200 with the rest of the list). Both are right for both releases",
		Use: AsCaptured,
	},
	"103-list-exact-compacted-rv": {
		V132: "captured from v1.32.2 only; v1.37.2 answers the same 410 Expired Status (checked against the live server)",
		Use:  OnlyV132,
	},
	"104-watch-compacted-rv": {
		V132: "captured from v1.32.2 only, with the watch cache off; v1.37.2 (watch cache on) sends the same 410 Expired " +
			"ERROR event, worded by the cache: \"too old resource version: 5 (N)\" (checked against the live server)",
		Use: OnlyV132,
	},
}

// Nondeterministic lists the cases whose answer has a part the real server
// writes in an order that changes from request to request, in both releases,
// and how Release.Load puts it in one order (the one kapi writes) for every
// release. Compared in order otherwise, the captures would test luck.
var Nondeterministic = map[string]Canonical{
	"88-create-widget-invalid": {
		Why: "a CRD schema's causes come in a rotation of the sorted field names that starts anywhere " +
			"(Go map order: the same request to v1.37.2 answered spec.size, spec.color three times in six, " +
			"spec.color, spec.size the others; v1.32.2's capture has the latter, v1.37.2's the former). " +
			"Load sorts the causes by field, and the message's list with them",
		Canonicalize: response(sortCauses),
	},
}

// A Canonical says why part of a case's answer has no fixed order and puts it
// in one.
type Canonical struct {
	Why          string
	Canonicalize func(x *Exchange) error
}

const (
	podGenerationNote         = "pods have no metadata.generation (v1.37 sets 1 at creation and bumps it on spec changes)"
	podObservedGenerationNote = "v1.37's schema has status.observedGeneration and status.conditions[].observedGeneration, written as 0 in protobuf"
	zeroTimeNote              = "a zero time inside an object is written as null where v1.37 omits it"
)

// response applies edit to the response body's JSON documents.
func response(edit func(doc *node)) func(*Exchange) error {
	return func(x *Exchange) (err error) {
		x.ResponseBody, err = editJSON(x.ResponseBody, edit)
		return err
	}
}

// both applies edit to the request's and the response's JSON documents.
func both(edit func(doc *node)) func(*Exchange) error {
	return func(x *Exchange) (err error) {
		if x.RequestBody, err = editJSON(x.RequestBody, edit); err != nil {
			return err
		}
		x.ResponseBody, err = editJSON(x.ResponseBody, edit)
		return err
	}
}

func all(fs ...func(*Exchange) error) func(*Exchange) error {
	return func(x *Exchange) error {
		for _, f := range fs {
			if err := f(x); err != nil {
				return err
			}
		}
		return nil
	}
}

// replace rewrites the response body's text, old then new pairs; each old
// must occur.
func replace(pairs ...string) func(*Exchange) error {
	return func(x *Exchange) error {
		for i := 0; i+1 < len(pairs); i += 2 {
			if !bytes.Contains(x.ResponseBody, []byte(pairs[i])) {
				return fmt.Errorf("%q does not occur", pairs[i])
			}
			x.ResponseBody = bytes.ReplaceAll(x.ResponseBody, []byte(pairs[i]), []byte(pairs[i+1]))
		}
		return nil
	}
}

// sortCauses sorts a Status's details.causes by field and writes the
// message's bracketed list of them ("... is invalid: [a: x, b: y]") in the
// same order.
func sortCauses(doc *node) {
	causes := doc.get("details").get("causes")
	if causes == nil || causes.kind != '[' {
		return
	}
	text := func(n *node) string {
		var s string
		if n != nil {
			_ = json.Unmarshal(n.raw, &s)
		}
		return s
	}
	sort.SliceStable(causes.vals, func(i, j int) bool { return text(causes.vals[i].get("field")) < text(causes.vals[j].get("field")) })
	msg := doc.get("message")
	head, _, ok := strings.Cut(text(msg), " is invalid: [")
	if !ok {
		return
	}
	var list []string
	for _, c := range causes.vals {
		list = append(list, text(c.get("field"))+": "+text(c.get("message")))
	}
	raw, _ := json.Marshal(head + " is invalid: [" + strings.Join(list, ", ") + "]")
	msg.raw = raw
}

// podGeneration sets metadata.generation 1 in the object metadata found at
// path, after the members ObjectMeta writes before it.
func podGeneration(path ...string) func(doc *node) {
	return func(doc *node) {
		for _, m := range doc.at(path...) {
			if m.kind == '{' {
				m.insertAfter("generation", "1", "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion")
			}
		}
	}
}

// dropNullCreationTimestamp removes every "creationTimestamp": null.
func dropNullCreationTimestamp(doc *node) {
	doc.walk(func(obj *node) {
		if v := obj.get("creationTimestamp"); v != nil && v.kind == 0 && string(v.raw) == "null" {
			obj.del("creationTimestamp")
		}
	})
}

// podProtobuf sets a protobuf pod's metadata.generation (field 1.7) to 1 and
// writes status.observedGeneration (3.17) and every
// status.conditions[].observedGeneration (3.2.7) as 0, as v1.37.2 does; items
// is the path to the pods in the enveloped object (none: the object is a pod,
// 2: a PodList's items).
func podProtobuf(items ...protowire.Number) func(*Exchange) error {
	pod := func(p []byte) ([]byte, error) {
		p, err := editProto(p, []protowire.Number{1}, func(m []byte) ([]byte, error) { return setVarint(m, 7, 1) })
		if err != nil {
			return nil, err
		}
		p, err = editProto(p, []protowire.Number{3, 2}, func(c []byte) ([]byte, error) { return setVarint(c, 7, 0) })
		if err != nil {
			return nil, err
		}
		return editProto(p, []protowire.Number{3}, func(s []byte) ([]byte, error) { return setVarint(s, 17, 0) })
	}
	return func(x *Exchange) (err error) {
		x.ResponseBody, err = editEnvelope(x.ResponseBody, func(obj []byte) ([]byte, error) { return editProto(obj, items, pod) })
		return err
	}
}
