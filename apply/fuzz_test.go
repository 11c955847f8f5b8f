package apply_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apply"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// Random configurations of three kinds (deployments with some zero values
// claimed), from a seed: FuzzRoundTrip checks,
// for each, that
//
//   - the object survives JSON: the object decoded from what Of
//     sends gives the same configuration again;
//   - applied as manager "a" to a new object, it is what Extract returns
//     for "a" (with apiVersion and kind);
//   - after manager "b" forces a random configuration of its own, applying
//     what Extract returns for "a" as "a" changes nothing.
func FuzzRoundTrip(f *testing.F) {
	for seed := range uint64(12) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		// A frozen clock: re-applying a zero value the server does not store
		// (stdin: false) restamps the applier's entry (TestExtractEmptyMap).
		now := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
		c := fake.NewWithOptions(t, fake.Options{Now: func() time.Time { return now }}).Client()
		switch seed % 3 {
		case 0:
			property(t, client.For[corev1.ConfigMap](c).Namespace(ns), randomConfigMap(r), randomConfigMap(r))
		case 1:
			property(t, client.For[appsv1.Deployment](c).Namespace(ns), randomDeployment(r, true), randomDeployment(r, false), claimZeros(r))
		case 2:
			property(t, client.For[corev1.Service](c).Namespace(ns), randomService(r), randomService(r))
		}
	})
}

// property checks the properties FuzzRoundTrip lists for a, as claim
// changes its configuration, and b.
func property[T any, PT client.ObjectPtr[T]](t *testing.T, res client.Resource[T], a, b *T, claim ...func(*testing.T, *T, apply.Config[T]) apply.Config[T]) {
	ctx := testContext(t)
	cfgA := apply.Of(a)
	for _, c := range claim {
		cfgA = c(t, a, cfgA)
	}
	sent := encode(t, cfgA)
	var back T
	if err := kjson.Unmarshal([]byte(sent), &back); err != nil {
		t.Fatal(err)
	}
	// Decoded, the zero values claimed are gone: Of sends the rest.
	if again, of := encode(t, apply.Of(&back)), encode(t, apply.Of(a)); again != of {
		t.Fatalf("JSON round trip\n sent  %s\n again %s", of, again)
	}

	live, err := res.ApplyConfig(ctx, cfgA, metav1.ApplyOptions{FieldManager: "a"})
	if err != nil {
		t.Fatalf("apply a %s: %v", sent, err)
	}
	cfg, err := apply.Extract(live, "a")
	if err != nil {
		t.Fatal(err)
	}
	var want, got map[string]any
	_ = json.Unmarshal([]byte(sent), &want)
	_ = json.Unmarshal([]byte(encode(t, cfg)), &got)
	delete(got, "apiVersion")
	delete(got, "kind")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("extracted after one apply\n got  %v\n want %v", got, want)
	}

	live, err = res.ApplyConfig(ctx, apply.Of(b), metav1.ApplyOptions{FieldManager: "b", Force: true})
	if err != nil {
		t.Fatalf("apply b %s: %v", encode(t, apply.Of(b)), err)
	}
	if cfg, err = apply.Extract(live, "a"); err != nil {
		t.Fatal(err)
	}
	again, err := res.ApplyConfig(ctx, cfg, metav1.ApplyOptions{FieldManager: "a"})
	if err != nil {
		t.Fatalf("re-apply %s: %v", encode(t, cfg), err)
	}
	if !reflect.DeepEqual(again, live) {
		g, _ := kjson.Marshal(again)
		l, _ := kjson.Marshal(live)
		t.Errorf("re-applying the extracted %s changed the object\n now    %s\n before %s", encode(t, cfg), g, l)
	}
}

// claimZeros returns a claim of some of a deployment's fields at their zero
// value: paused, and stdin of some containers.
func claimZeros(r *rand.Rand) func(*testing.T, *appsv1.Deployment, apply.Config[appsv1.Deployment]) apply.Config[appsv1.Deployment] {
	paused, stdin := r.IntN(2) == 0, r.Uint64()
	return func(t *testing.T, d *appsv1.Deployment, c apply.Config[appsv1.Deployment]) apply.Config[appsv1.Deployment] {
		var err error
		if paused {
			if c, err = c.Claim(&d.Spec.Paused); err != nil {
				t.Fatal(err)
			}
		}
		for i := range d.Spec.Template.Spec.Containers {
			if stdin>>i&1 == 1 {
				if c, err = c.Claim(&d.Spec.Template.Spec.Containers[i].Stdin); err != nil {
					t.Fatal(err)
				}
			}
		}
		return c
	}
}

// some returns a random map of up to n keys drawn from a few, or nil. It is
// never empty: an empty map is not stored, so applying it again is a change
// for the server (TestExtractEmptyMap).
func some(r *rand.Rand, prefix string, n int) map[string]string {
	if r.IntN(4) == 0 {
		return nil
	}
	m := map[string]string{}
	for range 1 + r.IntN(n) {
		m[fmt.Sprintf("%s%d", prefix, r.IntN(4))] = fmt.Sprint(r.IntN(3))
	}
	return m
}

func objectMeta(r *rand.Rand, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: some(r, "l", 3), Annotations: some(r, "a", 2)}
}

func randomConfigMap(r *rand.Rand) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: objectMeta(r, "cm"), Data: some(r, "k", 4)}
}

// randomDeployment returns a random deployment; one that creates the
// object (create) has the selector and template the server requires.
func randomDeployment(r *rand.Rand, create bool) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: objectMeta(r, "dep")}
	if r.IntN(2) == 0 {
		d.Spec.Replicas = new(int32(r.IntN(4)))
	}
	if create || r.IntN(3) > 0 {
		labels := map[string]string{"app": "dep"}
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		d.Spec.Template.Labels = labels
		for i := range 1 + r.IntN(3) {
			ctr := corev1.Container{Name: fmt.Sprintf("c%d", i), Image: fmt.Sprintf("img:%d", r.IntN(3))}
			for p := range r.IntN(3) {
				ctr.Ports = append(ctr.Ports, corev1.ContainerPort{ContainerPort: int32(8000 + 10*i + p), Protocol: corev1.ProtocolTCP})
			}
			if r.IntN(2) == 0 {
				ctr.Args = []string{"-v", fmt.Sprint(r.IntN(3))}
			}
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, ctr)
		}
	}
	return d
}

func randomService(r *rand.Rand) *corev1.Service {
	s := &corev1.Service{ObjectMeta: objectMeta(r, "svc"), Spec: corev1.ServiceSpec{Selector: some(r, "s", 2)}}
	used := map[int32]bool{}
	for range 1 + r.IntN(3) {
		port := int32(80 + r.IntN(5))
		if used[port] {
			continue
		}
		used[port] = true
		p := corev1.ServicePort{Name: fmt.Sprintf("p%d", port), Port: port, Protocol: corev1.ProtocolTCP}
		switch r.IntN(3) {
		case 0:
			p.TargetPort = intstr.FromInt32(port + 8000)
		case 1:
			p.TargetPort = intstr.FromString(fmt.Sprintf("t%d", port))
		}
		s.Spec.Ports = append(s.Spec.Ports, p)
	}
	return s
}
