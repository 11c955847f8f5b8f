package controller_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/controller"
)

// metricsRecorder is a controller.Metrics and a workqueue.Metrics that
// records what it is told.
type metricsRecorder struct {
	mu       sync.Mutex
	active   int
	finished []string // "outcome took active", active counting this one
	added    int
}

func (m *metricsRecorder) ReconcileStarted() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.active++
}

func (m *metricsRecorder) ReconcileFinished(o controller.Outcome, took time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.finished = append(m.finished, fmt.Sprintf("%s %v %d", o, took, m.active))
	m.active--
}

func (m *metricsRecorder) Added() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.added++
}
func (m *metricsRecorder) Started(time.Duration)  {}
func (m *metricsRecorder) Finished(time.Duration) {}
func (m *metricsRecorder) Retried()               {}

// Config.Metrics is told every reconcile's outcome and duration on the
// controller's clock, and Config.QueueMetrics is the queue's.
func TestMetrics(t *testing.T) {
	e := newEnv(t, cm("a"))
	var mu sync.Mutex
	n := 0
	e.do = func(context.Context, controller.Request) (controller.Result, error) {
		mu.Lock()
		n++
		call := n
		mu.Unlock()
		switch call {
		case 1:
			e.clock.Step(2 * time.Second)
			return controller.Result{}, errors.New("boom")
		case 2:
			e.clock.Step(4 * time.Second)
			panic("bug")
		case 3:
			e.clock.Step(3 * time.Second)
			return controller.Result{RequeueAfter: time.Minute}, nil
		default:
			e.clock.Step(time.Second)
			return controller.Result{}, nil
		}
	}
	m := &metricsRecorder{}
	cfg := e.config()
	cfg.Metrics = m
	cfg.QueueMetrics = m
	ctl := controller.New[corev1.ConfigMap](e.factory, e, cfg)
	run(e, ctl)
	e.next() // 1: error
	e.timers(1)
	e.stepFires(5 * time.Millisecond) // 2: panic
	e.timers(1)
	e.stepFires(10 * time.Millisecond) // 3: RequeueAfter
	e.timers(1)
	e.stepFires(time.Minute) // 4: success
	waitIdle(e, ctl)

	m.mu.Lock()
	defer m.mu.Unlock()
	want := []string{"error 2s 1", "panic 4s 1", "requeue_after 3s 1", "success 1s 1"}
	if !slices.Equal(m.finished, want) {
		t.Errorf("ReconcileFinished calls %q, want %q", m.finished, want)
	}
	if m.active != 0 {
		t.Errorf("%d reconciles active once idle, want 0", m.active)
	}
	if m.added != 4 {
		t.Errorf("the queue reported %d adds, want 4 (the object and three requeues)", m.added)
	}
}
