package registry

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// componentstatuses (core/v1, get and list only, deprecated since v1.19)
// is not stored: kube-apiserver answers it by probing, at each request, the
// scheduler and the controller manager at their default secure ports on
// loopback and its storage, and reports each as a ComponentStatus whose
// Healthy condition says how the probe went.
//
// kapi's answer is the same probes: a scheduler or controller manager that
// runs beside the server is found, and one that does not is reported as
// kube-apiserver reports it (Unhealthy, with the dial error as message).
// The storage is reported as etcd-0, the name clients look for, healthy
// when kapi's store answers: it stands in for etcd everywhere else too.
//
// The resource is Computed: a get probes the one component it names, a
// list all of them, in kube-apiserver's order (scheduler,
// controller-manager, etcd-0). Options.ComponentProbes and
// Options.ComponentClient replace the probes and the client that makes
// them (tests probe servers of their own, or none).

// componentStatusDeprecation is the Warning of every componentstatuses
// answer.
const componentStatusDeprecation = "v1 ComponentStatus is deprecated in v1.19+"

func componentStatusKinds(opts Options, _ services) []*Resource {
	probes := opts.ComponentProbes
	if probes == nil {
		probes = DefaultComponentProbes
	}
	client := opts.ComponentClient
	return []*Resource{kind[corev1.ComponentStatus]("", "v1", "componentstatuses", Resource{
		NotStored: true, Warning: componentStatusDeprecation, Printer: componentStatusPrinter,
		Computed: func(ctx context.Context, env ComputeEnv, name string) ([]Object, *metav1.Status) {
			ps, health := probes, env.StorageHealth
			if name != "" {
				ps = nil
				for _, p := range probes {
					if p.Name == name {
						ps = []ComponentProbe{p}
					}
				}
				if ps == nil && name != "etcd-0" {
					// kube-apiserver names the resource by its singular.
					return nil, metav1.NewNotFound(metav1.GroupResource{Resource: "componentstatus"}, name)
				}
			}
			if health == nil {
				health = func(context.Context) error { return nil }
			}
			statuses := ComponentStatuses(ctx, client, ps, health)
			out := make([]Object, 0, len(statuses))
			for i := range statuses {
				if name == "" || statuses[i].Name == name {
					out = append(out, &statuses[i])
				}
			}
			return out, nil
		},
	})}
}

// ComponentProbe names a component and the health URL kube-apiserver
// probes it at.
type ComponentProbe struct {
	Name, URL string
}

// DefaultComponentProbes are kube-apiserver v1.37's: the scheduler's and
// the controller manager's /healthz on their default secure ports.
var DefaultComponentProbes = []ComponentProbe{
	{Name: "scheduler", URL: "https://127.0.0.1:10259/healthz"},
	{Name: "controller-manager", URL: "https://127.0.0.1:10257/healthz"},
}

// componentProbeTimeout is how long kube-apiserver waits for a probe.
const componentProbeTimeout = 20 * time.Second

// ComponentStatuses probes each component of probes (over client, which
// should skip certificate verification as kube-apiserver's prober does; nil
// for such a client) and the storage (storage returns nil when it answers),
// and returns their ComponentStatuses in that order, the storage's as
// etcd-0 last.
func ComponentStatuses(ctx context.Context, client *http.Client, probes []ComponentProbe, storage func(context.Context) error) []corev1.ComponentStatus {
	if client == nil {
		// kube-apiserver's prober does not verify certificates either; no
		// connection outlives the probe.
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}} //nolint:gosec
		defer client.CloseIdleConnections()
	}
	// The probes run at once, as kube-apiserver's do, so that an answer
	// waits for the slowest probe rather than for all of them in turn;
	// kube-apiserver lists them in the order they end, kapi in probes'.
	out := make([]corev1.ComponentStatus, len(probes), len(probes)+1)
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() {
			st, msg := probeComponent(ctx, client, p.URL)
			out[i] = componentStatus(p.Name, st, msg)
		})
	}
	wg.Wait()
	if err := storage(ctx); err != nil {
		out = append(out, componentStatus("etcd-0", corev1.ConditionFalse, err.Error()))
	} else {
		out = append(out, componentStatus("etcd-0", corev1.ConditionTrue, "ok"))
	}
	return out
}

func componentStatus(name string, st corev1.ConditionStatus, msg string) corev1.ComponentStatus {
	return corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: name},
		Conditions: []corev1.ComponentCondition{{Type: corev1.ComponentHealthy, Status: st, Message: msg}}}
}

// probeComponent GETs url as kube-apiserver's HTTP prober does: healthy
// on 2xx and 3xx with the body as message, unhealthy otherwise, with the
// request's error ("Get \"https://...\": dial tcp ...: connection
// refused") or the status code as message.
func probeComponent(ctx context.Context, client *http.Client, url string) (corev1.ConditionStatus, string) {
	ctx, cancel := context.WithTimeout(ctx, componentProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return corev1.ConditionUnknown, ""
	}
	resp, err := client.Do(req)
	if err != nil {
		return corev1.ConditionFalse, err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 10<<10))
	if err != nil {
		return corev1.ConditionFalse, err.Error()
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return corev1.ConditionFalse, "HTTP probe failed with statuscode: " + strconv.Itoa(resp.StatusCode)
	}
	return corev1.ConditionTrue, string(body)
}

// componentStatusPrinter prints componentstatuses as kube-apiserver does:
// the Healthy condition as Healthy, Unhealthy or Unknown, its message and
// error.
var componentStatusPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Status", "Status of the component conditions"),
		col("Message", "Message of the component conditions"),
		col("Error", "Error of the component conditions"),
	},
	Row: func(o Object, _ time.Time) ([]any, []metav1.TableRowCondition) {
		cs := o.(*corev1.ComponentStatus)
		status, msg, errText := "Unknown", "", ""
		for _, c := range cs.Conditions {
			if c.Type == corev1.ComponentHealthy {
				status = "Unhealthy"
				if c.Status == corev1.ConditionTrue {
					status = "Healthy"
				}
				msg, errText = c.Message, c.Error
				break
			}
		}
		return []any{cs.Name, status, msg, errText}, nil
	},
}
