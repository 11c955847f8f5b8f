package conformance

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// ownedCM builds a ConfigMap body owned by the ConfigMap owner (its decoded
// object), with finalizers.
func ownedCM(name string, owner obj, block bool, finalizers ...string) obj {
	meta := obj{"name": name, "ownerReferences": []any{obj{
		"apiVersion": "v1", "kind": "ConfigMap", "name": str(owner, "metadata", "name"),
		"uid": str(owner, "metadata", "uid"), "blockOwnerDeletion": block,
	}}}
	if len(finalizers) > 0 {
		fs := make([]any, len(finalizers))
		for i, f := range finalizers {
			fs[i] = f
		}
		meta["finalizers"] = fs
	}
	return obj{"metadata": meta}
}

func finalizersOf(o obj) []string {
	v, _ := field(o, "metadata", "finalizers")
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, f := range list {
		s, _ := f.(string)
		out = append(out, s)
	}
	return out
}

// waitGone waits until the named ConfigMap of ns no longer exists.
func (e *env) waitGone(t *testing.T, ns, name string) {
	t.Helper()
	e.waitCollection(t, cmPath(ns)+q("fieldSelector", "metadata.name="+name), name+" to be deleted", 60*time.Second,
		func(objs map[string]obj) bool { return len(objs) == 0 })
}

// TestGarbageCollection checks deletion propagation through ownerReferences,
// which a real cluster's garbage collector carries out and the reference
// server's own collector does too: Background (the default), Foreground,
// Orphan, dangling references, and dry runs.
func TestGarbageCollection(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)

	t.Run("background", func(t *testing.T) {
		t.Parallel()
		owner := e.createCM(t, ns, "bg-owner", nil, nil)
		expect(t, e.post(t, cmPath(ns), ownedCM("bg-dep", owner, false)), http.StatusCreated)
		st := expect(t, e.del(t, cmPath(ns, "bg-owner"), nil), http.StatusOK)
		if str(st, "kind") != "Status" || str(st, "status") != "Success" {
			t.Errorf("a background delete answered %s", compact(st))
		}
		e.waitGone(t, ns, "bg-dep")
	})

	t.Run("foreground", func(t *testing.T) {
		t.Parallel()
		owner := e.createCM(t, ns, "fg-owner", nil, nil)
		expect(t, e.post(t, cmPath(ns), ownedCM("fg-held", owner, true, "example.com/hold")), http.StatusCreated)
		t.Cleanup(func() { e.removeFinalizers(t, ns, "fg-held") })
		expect(t, e.post(t, cmPath(ns), ownedCM("fg-free", owner, false)), http.StatusCreated)
		marked := expect(t, e.del(t, cmPath(ns, "fg-owner"), obj{"propagationPolicy": "Foreground"}), http.StatusOK)
		if str(marked, "kind") != "ConfigMap" || !has(marked, "metadata", "deletionTimestamp") || !slices.Contains(finalizersOf(marked), "foregroundDeletion") {
			t.Fatalf("a foreground delete answered %s", compact(marked))
		}
		e.waitGone(t, ns, "fg-free")
		e.waitCollection(t, cmPath(ns)+q("fieldSelector", "metadata.name=fg-held"), "fg-held to be marked", 60*time.Second,
			func(objs map[string]obj) bool {
				h, ok := objs[ns+"/fg-held"]
				return ok && has(h, "metadata", "deletionTimestamp")
			})
		// The owner waits for its blocking dependent.
		if o := expect(t, e.get(t, cmPath(ns, "fg-owner")), http.StatusOK); !has(o, "metadata", "deletionTimestamp") {
			t.Errorf("owner %s, want it kept marked", compact(o))
		}
		e.removeFinalizers(t, ns, "fg-held")
		e.waitGone(t, ns, "fg-owner")
	})

	t.Run("orphan", func(t *testing.T) {
		t.Parallel()
		owner := e.createCM(t, ns, "or-owner", nil, nil)
		expect(t, e.post(t, cmPath(ns), ownedCM("or-dep", owner, true)), http.StatusCreated)
		marked := expect(t, e.del(t, cmPath(ns, "or-owner")+q("propagationPolicy", "Orphan"), nil), http.StatusOK)
		if !slices.Contains(finalizersOf(marked), "orphan") {
			t.Errorf("an orphan delete answered %s", compact(marked))
		}
		e.waitGone(t, ns, "or-owner")
		dep := expect(t, e.get(t, cmPath(ns, "or-dep")), http.StatusOK)
		if has(dep, "metadata", "ownerReferences") {
			t.Errorf("the orphaned dependent still has owner references: %s", compact(dep))
		}
		// The collector's write is an update like any other: the creator
		// no longer owns the references it removed, and the collector,
		// which set nothing, owns nothing.
		mf, _ := field(dep, "metadata", "managedFields")
		for _, m := range asList(mf) {
			if fields, _ := field(m, "fieldsV1", "f:metadata"); has(obj{"m": fields}, "m", "f:ownerReferences") || str(m, "manager") == "kube-controller-manager" {
				t.Errorf("managedFields of the orphaned dependent: %s", compact(obj{"managedFields": mf}))
			}
		}
	})

	t.Run("dangling-at-creation", func(t *testing.T) {
		t.Parallel()
		ghost := obj{"metadata": obj{"name": "ghost", "uid": "0b1f5a84-2f0e-4c1e-9a55-" + "000000000001"}}
		expect(t, e.post(t, cmPath(ns), ownedCM("dangling", ghost, false)), http.StatusCreated)
		e.waitGone(t, ns, "dangling")
	})

	t.Run("dryRun", func(t *testing.T) {
		t.Parallel()
		owner := e.createCM(t, ns, "dry-owner", nil, nil)
		expect(t, e.post(t, cmPath(ns), ownedCM("dry-dep", owner, true)), http.StatusCreated)
		marked := expect(t, e.del(t, cmPath(ns, "dry-owner")+q("dryRun", "All", "propagationPolicy", "Foreground"), nil), http.StatusOK)
		if !has(marked, "metadata", "deletionTimestamp") || !slices.Contains(finalizersOf(marked), "foregroundDeletion") {
			t.Errorf("a dry-run foreground delete answered %s", compact(marked))
		}
		if got := expect(t, e.get(t, cmPath(ns, "dry-owner")), http.StatusOK); rv(got) != rv(owner) || has(got, "metadata", "deletionTimestamp") {
			t.Errorf("a dry-run delete changed the owner: %s", compact(got))
		}
		expect(t, e.get(t, cmPath(ns, "dry-dep")), http.StatusOK)
	})

	t.Run("deletecollection-propagation", func(t *testing.T) {
		t.Parallel()
		owner := e.createCM(t, ns, "dc-owner", map[string]string{"dc": "yes"}, nil)
		expect(t, e.post(t, cmPath(ns), ownedCM("dc-dep", owner, false)), http.StatusCreated)
		expect(t, e.del(t, cmPath(ns)+q("labelSelector", "dc=yes", "propagationPolicy", "Orphan"), nil), http.StatusOK)
		e.waitGone(t, ns, "dc-owner")
		if dep := expect(t, e.get(t, cmPath(ns, "dc-dep")), http.StatusOK); has(dep, "metadata", "ownerReferences") {
			t.Errorf("dependent of an orphaned owner: %s", compact(dep))
		}
	})
}
