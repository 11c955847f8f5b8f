package v1

// TypeMeta names an object's kind and API version ("v1", "apps/v1"). It is inlined
// into every top-level kind.
type TypeMeta struct {
	Kind       string `json:"kind,omitempty" protobuf:"bytes,1,opt,name=kind"`
	APIVersion string `json:"apiVersion,omitempty" protobuf:"bytes,2,opt,name=apiVersion"`
}

// GetObjectKind returns the TypeMeta itself; it lets codecs set and read kind and
// apiVersion on any object that embeds TypeMeta.
func (t *TypeMeta) GetObjectKind() *TypeMeta { return t }
