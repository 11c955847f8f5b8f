package informer_test

import (
	"context"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/informer"
)

// TestFactoryDecodesForACache: the factory's informers list and watch with
// the decode options of a cache (client.Resource.WithDecodeOptions): the
// objects of one response share the bytes of equal managedFields, in JSON
// and protobuf.
func TestFactoryDecodesForACache(t *testing.T) {
	for _, ct := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		t.Run(ct, func(t *testing.T) {
			e := newEnvWith(t, apiserver.Config{}, ct)
			for _, name := range []string{"a", "b"} {
				if _, err := e.cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
					Data: map[string]string{"k": "v"}}, metav1.CreateOptions{FieldManager: "m"}); err != nil {
					t.Fatal(err)
				}
			}
			f := informer.NewFactory(e.c, informer.FactoryConfig{Namespace: "inf", Logger: quietLogger()})
			inf := informer.For[corev1.ConfigMap](f)
			startFactory(t, f)
			waitCaches(t, f)
			var raws [][]byte
			for _, name := range []string{"a", "b"} {
				cm, err := inf.Lister().Namespace("inf").Get(name)
				if err != nil {
					t.Fatal(err)
				}
				if len(cm.ManagedFields) != 1 || cm.ManagedFields[0].FieldsV1 == nil || len(cm.ManagedFields[0].FieldsV1.Raw) == 0 {
					t.Fatalf("%s cached with managedFields %v", name, cm.ManagedFields)
				}
				raws = append(raws, cm.ManagedFields[0].FieldsV1.Raw)
			}
			if string(raws[0]) != string(raws[1]) {
				t.Fatalf("fieldsV1 %s and %s differ; the test wants them equal", raws[0], raws[1])
			}
			if &raws[0][0] != &raws[1][0] {
				t.Error("the listed objects do not share their equal managedFields bytes")
			}
		})
	}
}
