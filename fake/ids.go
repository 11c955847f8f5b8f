package fake

import (
	"fmt"
	"sync/atomic"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// sequentialUIDs returns a UID generator that counts from 1:
// 00000000-0000-0000-0000-000000000001, …-000000000002, and so on (the count
// in decimal, which is also valid hex, so every UID is a well-formed UUID).
// Each Fake has its own counter, so the same test gets the same UIDs on every
// run.
func sequentialUIDs() func() metav1.UID {
	var n atomic.Uint64
	return func() metav1.UID {
		return metav1.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", n.Add(1)))
	}
}

// nameAlphabet is Kubernetes' alphabet for generated name suffixes: no vowels,
// no look-alike characters.
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// sequentialNameSuffixes returns a generateName suffix generator that counts
// from 0 in base 27 over Kubernetes' alphabet, five characters wide, as
// kube-apiserver's suffixes are: bbbbb, bbbbc, …, bbbb9, bbbcb, … . Names
// never repeat within one Fake (there are 27^5 of them before the count
// wraps).
func sequentialNameSuffixes() func() string {
	var n atomic.Uint64
	return func() string {
		v := n.Add(1) - 1
		var b [5]byte
		for i := len(b) - 1; i >= 0; i-- {
			b[i] = nameAlphabet[v%uint64(len(nameAlphabet))]
			v /= uint64(len(nameAlphabet))
		}
		return string(b[:])
	}
}
