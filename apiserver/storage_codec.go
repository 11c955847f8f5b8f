package apiserver

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// DataFile is the name of the data file in Config.DataDir.
const DataFile = "kapi.db"

// openDataDir opens the durable store of cfg.DataDir (storage.OpenBolt),
// with the server's history window and object copier.
func (s *Server) openDataDir() (storage.Interface, error) {
	return storage.OpenBolt(storage.BoltConfig{
		Path:  filepath.Join(s.cfg.DataDir, DataFile),
		Codec: newStorageCodec(s.reg),
		Memory: storage.MemoryConfig{
			HistoryWindow: s.cfg.HistoryWindow,
			Copy:          s.copyObject,
		},
	})
}

// storageCodec encodes objects as kube-apiserver stores them in etcd: the
// kinds of the built-in resources as protobuf in the Kubernetes envelope
// ("k8s\x00", with their apiVersion and kind), custom resources as JSON
// (which carries its apiVersion and kind). Decoding goes by the content
// (JSON of a built-in kind decodes typed: kube-apiserver stores CRDs as
// v1beta1 JSON, converted to v1 here, see etcd_crd.go),
// not by the key, so the objects of custom resources decode before their
// CustomResourceDefinitions are served again.
type storageCodec struct {
	reg *registry.Registry

	mu      sync.Mutex
	scanned bool // the maps were built, at the registry generation gen
	gen     uint64
	byType  map[reflect.Type]metav1.TypeMeta
	byKind  map[metav1.TypeMeta]func() registry.Object
}

func newStorageCodec(reg *registry.Registry) *storageCodec { return &storageCodec{reg: reg} }

// scanLocked (re)builds the maps from the registry's typed resources when
// the registry changed since the last scan. A resource stored as another's
// (StoredAs) stores no object of its own type.
func (c *storageCodec) scanLocked() {
	all, gen := c.reg.All()
	if c.scanned && gen == c.gen {
		return
	}
	c.scanned, c.gen = true, gen
	c.byType = map[reflect.Type]metav1.TypeMeta{}
	c.byKind = map[metav1.TypeMeta]func() registry.Object{}
	// The CustomResourceDefinitions' resource is registered after the
	// store is open (startCRDs), and their objects are read at open.
	for _, r := range append(all, crdResource()) {
		if r.Custom || r.New == nil || r.StoredAs != nil {
			continue
		}
		t, tm := reflect.TypeOf(r.New()), r.TypeMeta()
		if _, ok := c.byType[t]; !ok {
			c.byType[t] = tm
		}
		c.byKind[tm] = r.New
	}
}

func (c *storageCodec) typeMeta(t reflect.Type) (metav1.TypeMeta, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm, ok := c.byType[t]
	if !ok {
		c.scanLocked()
		tm, ok = c.byType[t]
	}
	return tm, ok
}

func (c *storageCodec) newObject(tm metav1.TypeMeta) func() registry.Object {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.byKind[tm]
	if f == nil {
		c.scanLocked()
		f = c.byKind[tm]
	}
	return f
}

// Encode implements storage.Codec.
func (c *storageCodec) Encode(key string, obj storage.Object) ([]byte, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.MarshalJSON()
	}
	tm, ok := c.typeMeta(reflect.TypeOf(obj))
	if !ok {
		return nil, fmt.Errorf("no resource stores objects of type %T", obj)
	}
	pm, ok := obj.(codec.ProtoMarshaler)
	if !ok {
		return nil, fmt.Errorf("%T has no protobuf encoding", obj)
	}
	return codec.MarshalProtobuf(tm, pm)
}

// Decode implements storage.Codec.
func (c *storageCodec) Decode(key string, data []byte) (storage.Object, error) {
	if !bytes.HasPrefix(data, []byte(codec.EnvelopeMagic)) {
		// JSON: a custom resource, or an object of a built-in kind that
		// another writer stored as JSON (kube-apiserver stores
		// CustomResourceDefinitions so): typed if its kind is known.
		var tm metav1.TypeMeta
		err := kjson.Unmarshal(data, &tm)
		if err == nil && tm.APIVersion == crdV1beta1 && tm.Kind == "CustomResourceDefinition" {
			if data, err = crdFromV1beta1(data); err != nil {
				return nil, err
			}
			tm.APIVersion = crdGroup + "/v1"
		}
		if err == nil {
			if newObj := c.newObject(tm); newObj != nil {
				obj := newObj()
				if err := kjson.Unmarshal(data, obj); err != nil {
					return nil, err
				}
				return obj, nil
			}
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		return u, nil
	}
	env, err := codec.DecodeEnvelope(data)
	if err != nil {
		return nil, err
	}
	newObj := c.newObject(env.TypeMeta)
	if newObj == nil {
		return nil, fmt.Errorf("no resource of kind %s %s", env.TypeMeta.APIVersion, env.TypeMeta.Kind)
	}
	obj := newObj()
	pu, ok := obj.(codec.ProtoUnmarshaler)
	if !ok {
		return nil, fmt.Errorf("%T has no protobuf decoding", obj)
	}
	if _, err := codec.UnmarshalProtobuf(data, pu); err != nil {
		return nil, err
	}
	return obj, nil
}
