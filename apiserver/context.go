package apiserver

import (
	"context"
	"time"
)

// contextWithTimeout derives a context from req that also ends when the server
// closes (server) or after d.
func contextWithTimeout(req, server context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(req, d)
	stop := context.AfterFunc(server, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}
