package registry

import (
	"strings"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	resourcev1 "github.com/kapi-dev/kapi/api/resource/v1"
)

// The Tables of resource.k8s.io/v1, as kube-apiserver v1.37.2 prints them
// (testdata/golden-1.37/kinds/table-resource.k8s.io-*).

var deviceClassPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		return []any{o.GetName(), Age(o.GetCreationTimestamp(), now)}, nil
	},
}

var deviceTaintRulePrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Key", Type: "string", Description: "The taint key to be applied to a device. Must be a label name."},
		{Name: "Value", Type: "string", Description: "The taint value corresponding to the taint key. Must be a label value."},
		{Name: "Effect", Type: "string", Description: "The effect of the taint on claims that do not tolerate the taint and through such claims on the pods using them.\n\nValid effects are None, NoSchedule and NoExecute. PreferNoSchedule as used for nodes is not valid here. More effects may get added in the future. Consumers must treat unknown effects like None."},
		{Name: "TimeAdded", Type: "string", Description: "TimeAdded represents the time at which the taint was added or (only in a DeviceTaintRule) the effect was modified. Added automatically during create or update if not set.\n\nIn addition, in a DeviceTaintRule a value provided during an update gets replaced with the current time if the provided value is the same as the old one and the new effect is different. Changing the key and/or value while keeping the effect unchanged is possible and does not update the time stamp because the eviction which uses it is either already started (NoExecute) or not started yet (NoEffect, NoSchedule)."},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		r := o.(*resourcev1.DeviceTaintRule)
		t := r.Spec.Taint
		added := "<unknown>"
		if t.TimeAdded != nil {
			added = Age(*t.TimeAdded, now)
		}
		return []any{r.Name, t.Key, t.Value, string(t.Effect), added, Age(r.CreationTimestamp, now)}, nil
	},
}

var resourceClaimPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "State", Type: "string", Description: "A summary of the current state (allocated, pending, reserved, etc.)."},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		c := o.(*resourcev1.ResourceClaim)
		return []any{c.Name, resourceClaimState(c), Age(c.CreationTimestamp, now)}, nil
	},
}

// resourceClaimState summarises a claim as kubectl does: deleted,
// allocated, reserved, or pending.
func resourceClaimState(c *resourcev1.ResourceClaim) string {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	if c.Status.Allocation == nil {
		if c.DeletionTimestamp == nil {
			states = append(states, "pending")
		}
	} else {
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	}
	return strings.Join(states, ",")
}

var resourceClaimTemplatePrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		return []any{o.GetName(), Age(o.GetCreationTimestamp(), now)}, nil
	},
}

var resourceSlicePrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Node", Type: "string", Description: "NodeName identifies the node which provides the resources in this pool. A field selector can be used to list only ResourceSlice objects belonging to a certain node.\n\nThis field can be used to limit access from nodes to ResourceSlices with the same node name. It also indicates to autoscalers that adding new nodes of the same type as some old node might also make new resources available.\n\nExactly one of NodeName, NodeSelector, AllNodes, and PerDeviceNodeSelection must be set. This field is immutable."},
		{Name: "Driver", Type: "string", Description: "Driver identifies the DRA driver providing the capacity information. A field selector can be used to list only ResourceSlice objects with a certain driver name.\n\nMust be a DNS subdomain and should end with a DNS domain owned by the vendor of the driver. It should use only lower case characters. This field is immutable."},
		{Name: "Pool", Type: "string", Description: "Name is used to identify the pool. For node-local devices, this is often the node name, but this is not required. A field selector can be used to list only ResourceSlice objects belonging to a certain pool.\n\nIt must not be longer than 253 characters and must consist of one or more DNS sub-domains separated by slashes. This field is immutable."},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		s := o.(*resourcev1.ResourceSlice)
		node := ""
		if s.Spec.NodeName != nil {
			node = *s.Spec.NodeName
		}
		return []any{s.Name, node, s.Spec.Driver, s.Spec.Pool.Name, Age(s.CreationTimestamp, now)}, nil
	},
}
