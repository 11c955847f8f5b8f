package golden

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

var protoMagic = []byte("k8s\x00")

// editEnvelope applies f to the object inside a protobuf envelope (magic and
// runtime.Unknown, the object in its field 2).
func editEnvelope(body []byte, f func(obj []byte) ([]byte, error)) ([]byte, error) {
	if !bytes.HasPrefix(body, protoMagic) {
		return nil, fmt.Errorf("not a protobuf envelope")
	}
	out, err := editProto(body[len(protoMagic):], []protowire.Number{2}, f)
	if err != nil {
		return nil, err
	}
	return append(append([]byte{}, protoMagic...), out...), nil
}

// editProto applies f to every message at path below msg (a path of field
// numbers; a repeated field's every element), keeping the other bytes.
func editProto(msg []byte, path []protowire.Number, f func([]byte) ([]byte, error)) ([]byte, error) {
	if len(path) == 0 {
		return f(msg)
	}
	var out []byte
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		if num == path[0] && typ == protowire.BytesType {
			inner, _ := protowire.ConsumeBytes(msg[n:])
			edited, err := editProto(inner, path[1:], f)
			if err != nil {
				return nil, err
			}
			out = protowire.AppendTag(out, num, typ)
			out = protowire.AppendBytes(out, edited)
		} else {
			out = append(out, msg[:n+m]...)
		}
		msg = msg[n+m:]
	}
	return out, nil
}

// setVarint sets the varint field num of msg to v, in place if present, else
// inserted before the first field with a higher number (Kubernetes writes
// fields in number order).
func setVarint(msg []byte, num protowire.Number, v uint64) ([]byte, error) {
	var out []byte
	done := false
	for len(msg) > 0 {
		fn, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(fn, typ, msg[n:])
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		switch {
		case fn == num && !done:
			out = protowire.AppendVarint(protowire.AppendTag(out, num, protowire.VarintType), v)
			done = true
		case fn > num && !done:
			out = protowire.AppendVarint(protowire.AppendTag(out, num, protowire.VarintType), v)
			done = true
			out = append(out, msg[:n+m]...)
		default:
			out = append(out, msg[:n+m]...)
		}
		msg = msg[n+m:]
	}
	if !done {
		out = protowire.AppendVarint(protowire.AppendTag(out, num, protowire.VarintType), v)
	}
	return out, nil
}
