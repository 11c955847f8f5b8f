package reflector_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/reflector"
)

// metricsRecorder is a reflector.Metrics that records its calls.
type metricsRecorder struct {
	mu    sync.Mutex
	calls []string
}

func (m *metricsRecorder) Listed(items int, relist bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, fmt.Sprintf("listed %d relist=%t", items, relist))
}

func (m *metricsRecorder) Watched() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, "watched")
}

func (m *metricsRecorder) get() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.calls)
}

// Config.Metrics is told every list, with its items and whether it is a
// relist, and every watch opened, paged or streaming.
func TestMetrics(t *testing.T) {
	for _, tc := range []struct {
		name      string
		streaming bool
		want      []string
	}{
		{"paged", false, []string{"listed 2 relist=false", "watched", "listed 3 relist=true", "watched"}},
		{"streaming", true, []string{"watched", "listed 2 relist=false", "watched", "listed 3 relist=true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScript()
			s.list = func(n int, _ metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
				if n == 1 {
					return page("5", cm("a", "4"), cm("b", "5"))
				}
				return page("9", cm("a", "4"), cm("b", "5"), cm("c", "9"))
			}
			s.watch = func(n int, _ metav1.ListOptions) ([]cmEvent, bool, error) {
				switch {
				case tc.streaming && n == 1:
					return []cmEvent{added("a", "4"), added("b", "5"), initialEventsEnd("5"), errorEvent(errExpired)}, true, nil
				case tc.streaming:
					return []cmEvent{added("a", "4"), added("b", "5"), added("c", "9"), initialEventsEnd("9")}, false, nil
				case n == 1:
					return []cmEvent{errorEvent(errExpired)}, true, nil
				}
				return nil, false, nil
			}
			m := &metricsRecorder{}
			start(t, s, reflector.Config[corev1.ConfigMap]{Metrics: m, UseStreamingList: tc.streaming})
			eventually(t, "four calls of the metrics", func() bool { return len(m.get()) >= len(tc.want) })
			if got := m.get(); !slices.Equal(got, tc.want) {
				t.Errorf("metrics calls %q, want %q", got, tc.want)
			}
		})
	}
}
