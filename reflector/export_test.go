package reflector

import (
	"context"
	"time"
)

// SetSleep replaces the wait between retries, so that a test can record the
// waits Run asks for instead of waiting them out. Call it before Run.
func SetSleep[T any](r *Reflector[T], sleep func(ctx context.Context, d time.Duration) error) {
	r.sleep = sleep
}
