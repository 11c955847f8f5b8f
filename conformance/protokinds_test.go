package conformance

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kapi-dev/kapi/codec"
)

// This file writes CustomResourceDefinitions and Scales in protobuf with its
// own minimal encoder (field numbers from Kubernetes' generated.proto of
// apiextensions/v1 and autoscaling/v1), as client-go and controller-runtime
// send them by default.

// pbMsg builds a protobuf message field by field.
type pbMsg []byte

func (m pbMsg) str(num protowire.Number, s string) pbMsg {
	m = protowire.AppendTag(m, num, protowire.BytesType)
	return protowire.AppendString(m, s)
}

func (m pbMsg) msg(num protowire.Number, v pbMsg) pbMsg {
	m = protowire.AppendTag(m, num, protowire.BytesType)
	return protowire.AppendBytes(m, v)
}

func (m pbMsg) varint(num protowire.Number, v uint64) pbMsg {
	m = protowire.AppendTag(m, num, protowire.VarintType)
	return protowire.AppendVarint(m, v)
}

// envelope wraps an object in the protobuf envelope.
func envelope(apiVersion, kind string, object pbMsg) []byte {
	tm := pbMsg{}.str(1, apiVersion).str(2, kind)
	return append([]byte("k8s\x00"), pbMsg{}.msg(1, tm).msg(2, object)...)
}

// protoGearCRD is a CRD of gears in group: a schema with a default and an
// enum (JSON values, carried as their text), and the status and scale
// subresources.
func protoGearCRD(group string) []byte {
	schemaOf := func(typ string, extra func(pbMsg) pbMsg) pbMsg { return extra(pbMsg{}.str(5, typ)) }
	prop := func(name string, s pbMsg) pbMsg { return pbMsg{}.str(1, name).msg(2, s) } // map entry
	replicas := schemaOf("integer", func(m pbMsg) pbMsg {
		return m.msg(8, pbMsg{}.str(1, "1")) // default: 1
	})
	color := schemaOf("string", func(m pbMsg) pbMsg {
		return m.msg(20, pbMsg{}.str(1, `"red"`)).msg(20, pbMsg{}.str(1, `"blue"`)) // enum
	})
	spec := schemaOf("object", func(m pbMsg) pbMsg {
		return m.msg(29, prop("color", color)).msg(29, prop("replicas", replicas))
	})
	status := schemaOf("object", func(m pbMsg) pbMsg {
		return m.msg(29, prop("replicas", schemaOf("integer", func(m pbMsg) pbMsg { return m })))
	})
	root := schemaOf("object", func(m pbMsg) pbMsg {
		return m.msg(29, prop("spec", spec)).msg(29, prop("status", status))
	})
	version := pbMsg{}.str(1, "v1").varint(2, 1).varint(3, 1).
		msg(4, pbMsg{}.msg(1, root)).                                                                       // schema.openAPIV3Schema
		msg(5, pbMsg{}.msg(1, pbMsg{}).msg(2, pbMsg{}.str(1, ".spec.replicas").str(2, ".status.replicas"))) // subresources
	names := pbMsg{}.str(1, "gears").str(2, "gear").str(4, "Gear").str(5, "GearList")
	crdSpec := pbMsg{}.str(1, group).msg(3, names).str(4, "Namespaced").msg(7, version)
	return envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition",
		pbMsg{}.msg(1, pbMsg{}.str(1, "gears."+group)).msg(2, crdSpec))
}

// protoScale is an autoscaling/v1 Scale body.
func protoScale(name, namespace, resourceVersion string, replicas int) []byte {
	meta := pbMsg{}.str(1, name).str(3, namespace).str(6, resourceVersion)
	return envelope("autoscaling/v1", "Scale", pbMsg{}.msg(1, meta).msg(2, pbMsg{}.varint(1, uint64(replicas))))
}

// decodeProtoScale reads the name, resourceVersion and spec.replicas of a
// protobuf Scale answer.
func decodeProtoScale(t testing.TB, b []byte) (name, resourceVersion string, replicas int) {
	t.Helper()
	u, err := codec.DecodeEnvelope(b)
	if err != nil || u.TypeMeta.Kind != "Scale" || u.TypeMeta.APIVersion != "autoscaling/v1" {
		t.Fatalf("want a Scale envelope, got %+v (%v)", u.TypeMeta, err)
	}
	err = protoFields(u.Raw, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case 1:
			m, err := protoObjectMeta(v)
			name, resourceVersion = str(m, "name"), rv(m)
			return err
		case 2:
			return protoFields(v, func(num protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
				if num == 1 {
					replicas = int(x)
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		t.Fatalf("decoding the Scale: %v", err)
	}
	return name, resourceVersion, replicas
}

// TestProtobufCRDAndScale writes the kinds client-go sends as protobuf by
// default beyond the core ones: a CustomResourceDefinition created in
// protobuf (its schema's JSON values arrive as JSON text in the protobuf
// body and read back in JSON as values), and a deployment's Scale read and
// updated in protobuf. A custom resource's Scale is read from a protobuf
// body but never answered in protobuf: 406, itself a protobuf Status, when
// the request accepts nothing else.
func TestProtobufCRDAndScale(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	proto := []string{"Content-Type", codec.MediaTypeProtobuf, "Accept", codec.MediaTypeProtobuf}

	group := "p" + randomSuffix() + ".conformance.kapi.dev"
	crdName := "gears." + group
	r := e.post(t, crdPath, protoGearCRD(group), proto...)
	if r.Code != http.StatusCreated || !isProtobuf(r.Header.Get("Content-Type")) {
		t.Fatalf("protobuf CRD create: want 201 in protobuf, got\n%s", r)
	}
	t.Cleanup(func() {
		if r := e.del(t, crdPath+"/"+crdName, nil); r.Code != http.StatusOK && r.Code != http.StatusNotFound {
			t.Errorf("deleting CRD %s:\n%s", crdName, r)
		}
	})
	u, err := codec.DecodeEnvelope(r.Body)
	if err != nil || u.TypeMeta.Kind != "CustomResourceDefinition" || u.TypeMeta.APIVersion != "apiextensions.k8s.io/v1" {
		t.Fatalf("create answered %+v (%v), want a CustomResourceDefinition envelope", u.TypeMeta, err)
	}
	if !bytes.Contains(u.Raw, []byte(crdName)) || !bytes.Contains(u.Raw, []byte(`"red"`)) {
		t.Errorf("the protobuf answer lacks the CRD's name or its enum: %q", truncate(u.Raw))
	}
	e.waitCollection(t, crdPath+q("fieldSelector", "metadata.name="+crdName), "the CRD to be Established", 30*time.Second,
		func(objs map[string]obj) bool {
			for _, o := range objs {
				if conditionStatus(o, "Established") == "True" {
					return true
				}
			}
			return false
		})
	crd := expect(t, e.get(t, crdPath+"/"+crdName), http.StatusOK)
	versions, _ := field(crd, "spec", "versions")
	v1, _ := versions.([]any)
	if len(v1) != 1 {
		t.Fatalf("versions %s", compact(versions))
	}
	specSchema, _ := field(v1[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties")
	props, _ := specSchema.(map[string]any)
	if def, _ := num(props, "replicas", "default"); def != 1 || compact(props["color"].(map[string]any)["enum"]) != `["red","blue"]` {
		t.Errorf("the schema read back in JSON as %s", compact(specSchema))
	}
	if !has(v1[0].(map[string]any), "subresources", "scale") {
		t.Errorf("subresources %s", compact(v1[0]))
	}

	// The custom resource's Scale.
	gears := "/apis/" + group + "/v1/namespaces/" + ns + "/gears"
	expect(t, e.post(t, gears, obj{"apiVersion": group + "/v1", "kind": "Gear", "metadata": obj{"name": "g1"}, "spec": obj{"color": "red"}}), http.StatusCreated)
	r = e.get(t, gears+"/g1/scale", "Accept", codec.MediaTypeProtobuf)
	if r.Code != http.StatusNotAcceptable || !isProtobuf(r.Header.Get("Content-Type")) {
		t.Fatalf("custom resource scale accepting protobuf only: want 406 in protobuf, got\n%s", r)
	}
	if u, err := codec.DecodeEnvelope(r.Body); err != nil || u.TypeMeta.Kind != "Status" ||
		!bytes.Contains(u.Raw, []byte("only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf")) {
		t.Errorf("406 body %+v %q (%v)", u.TypeMeta, truncate(u.Raw), err)
	}
	sc := expect(t, e.get(t, gears+"/g1/scale"), http.StatusOK)
	if n, _ := num(sc, "spec", "replicas"); n != 1 {
		t.Errorf("gear scale %s, want the defaulted replicas 1", compact(sc))
	}
	r = e.put(t, gears+"/g1/scale", protoScale("g1", ns, rv(sc), 4), "Content-Type", codec.MediaTypeProtobuf)
	if put := expect(t, r, http.StatusOK); !isJSON(r.Header.Get("Content-Type")) || compact(put["spec"]) != `{"replicas":4}` {
		t.Errorf("custom resource scale from a protobuf body answered\n%s", r)
	}

	// A deployment's Scale, in protobuf both ways.
	deployments := "/apis/apps/v1/namespaces/" + ns + "/deployments"
	expect(t, e.post(t, deployments, deployment("web", 3)), http.StatusCreated)
	for attempt := 0; ; attempt++ {
		r = e.get(t, deployments+"/web/scale", "Accept", codec.MediaTypeProtobuf)
		if r.Code != http.StatusOK || !isProtobuf(r.Header.Get("Content-Type")) {
			t.Fatalf("scale in protobuf: want 200 in protobuf, got\n%s", r)
		}
		name, resourceVersion, replicas := decodeProtoScale(t, r.Body)
		if name != "web" || replicas != 3 {
			t.Fatalf("protobuf scale: name %q replicas %d", name, replicas)
		}
		// Again on a conflict: a cluster's controller writes the
		// deployment's status meanwhile.
		r = e.put(t, deployments+"/web/scale", protoScale("web", ns, resourceVersion, 5), proto...)
		if r.Code == http.StatusConflict && attempt < 20 {
			continue
		}
		break
	}
	if r.Code != http.StatusOK || !isProtobuf(r.Header.Get("Content-Type")) {
		t.Fatalf("protobuf scale update: want 200 in protobuf, got\n%s", r)
	}
	if _, _, replicas := decodeProtoScale(t, r.Body); replicas != 5 {
		t.Errorf("protobuf scale update answered replicas %d", replicas)
	}
	if n, _ := num(expect(t, e.get(t, deployments+"/web"), http.StatusOK), "spec", "replicas"); n != 5 {
		t.Errorf("deployment spec.replicas %d after a protobuf scale to 5", n)
	}
}

func isJSON(ct string) bool { return ct == codec.MediaTypeJSON }
