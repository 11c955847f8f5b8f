package client

import (
	"context"

	"github.com/kapi-dev/kapi/codec"
)

type decodeOptionsKey struct{}

// WithDecodeOptions returns a context under which the lists and watches of
// typed clients (List, ListEach, Watch) decode objects with o: for example,
// skip managedFields unread, or let the objects share the bytes of equal
// managedFields. The reflector sets them for an informer's cache; other
// callers rarely need them. A ListerWatcher that is not a typed client
// ignores them, which only costs the saving.
func WithDecodeOptions(ctx context.Context, o codec.DecodeOptions) context.Context {
	return context.WithValue(ctx, decodeOptionsKey{}, o)
}

// decodeOptionsFrom returns the options WithDecodeOptions set on ctx, or
// the zero options.
func decodeOptionsFrom(ctx context.Context) codec.DecodeOptions {
	o, _ := ctx.Value(decodeOptionsKey{}).(codec.DecodeOptions)
	return o
}
