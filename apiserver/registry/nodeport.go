package registry

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// PortRange is a range of node ports: Base to Base+Size-1, as
// kube-apiserver's --service-node-port-range.
type PortRange struct {
	Base, Size int
}

// DefaultNodePortRange is kube-apiserver's default node port range,
// 30000-32767.
var DefaultNodePortRange = PortRange{Base: 30000, Size: 2768}

// String writes the range as kube-apiserver does, "30000-32767".
func (r PortRange) String() string {
	return fmt.Sprintf("%d-%d", r.Base, r.Base+r.Size-1)
}

// ParsePortRange parses a port range as kube-apiserver's flag does:
// "first-last", "first+offset" (first to first+offset) or a single port,
// within 1-65535.
func ParsePortRange(s string) (PortRange, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return PortRange{}, errors.New("empty port range")
	}
	port := func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			return 0, fmt.Errorf("invalid port %q in range %q", v, s)
		}
		return n, nil
	}
	var low, high int
	var err error
	switch first, rest, sep := cutAny(s, "-+"); sep {
	case 0:
		if low, err = port(s); err != nil {
			return PortRange{}, err
		}
		high = low
	case '-':
		if low, err = port(first); err != nil {
			return PortRange{}, err
		}
		if high, err = port(rest); err != nil {
			return PortRange{}, err
		}
	case '+':
		if low, err = port(first); err != nil {
			return PortRange{}, err
		}
		off, err := strconv.Atoi(rest)
		if err != nil || off < 0 || low+off > 65535 {
			return PortRange{}, fmt.Errorf("invalid offset %q in range %q", rest, s)
		}
		high = low + off
	}
	if high < low {
		return PortRange{}, fmt.Errorf("the end of range %q is before its start", s)
	}
	return PortRange{Base: low, Size: high - low + 1}, nil
}

// cutAny cuts s around the first of the separators in seps, reporting which
// (0 if none).
func cutAny(s, seps string) (before, after string, sep byte) {
	if i := strings.IndexAny(s, seps); i >= 0 {
		return s[:i], s[i+1:], s[i]
	}
	return s, "", 0
}

// The node port allocator's errors, with kube-apiserver's texts.
var errPortAllocated = errors.New("provided port is already allocated")

// portAllocator hands out the node ports of one range. As ipAllocator, every
// reservation belongs to an object UID, so a retried write keeps its ports
// and nothing frees another object's. Dynamic allocation scans from a cursor
// that moves on, so that a freed port is not handed out again at once. State
// is in memory.
type portAllocator struct {
	r PortRange

	mu    sync.Mutex
	next  int                // offset where the next dynamic scan starts
	owner map[int]metav1.UID // allocated ports
	held  map[metav1.UID][]int
}

func newPortAllocator(r PortRange) (*portAllocator, error) {
	if r.Size < 1 || r.Base < 1 || r.Base+r.Size-1 > 65535 {
		return nil, fmt.Errorf("registry: node port range %s is not within 1-65535", r)
	}
	return &portAllocator{r: r, owner: map[int]metav1.UID{}, held: map[metav1.UID][]int{}}, nil
}

func (a *portAllocator) notInRange(port int) error {
	return fmt.Errorf("provided port is not in the valid range. The range of valid ports is %s", a.r)
}

func (a *portAllocator) contains(port int) bool {
	return port >= a.r.Base && port < a.r.Base+a.r.Size
}

// allocateNext gives uid the next free port.
func (a *portAllocator) allocateNext(uid metav1.UID) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.r.Size {
		p := a.r.Base + (a.next+i)%a.r.Size
		if _, taken := a.owner[p]; !taken {
			a.take(uid, p)
			a.next = (p - a.r.Base + 1) % a.r.Size
			return p, nil
		}
	}
	return 0, errRangeFull
}

// reserve gives port to uid if it is in the range and free (or uid's).
func (a *portAllocator) reserve(uid metav1.UID, port int) error {
	if !a.contains(port) {
		return a.notInRange(port)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch owner, taken := a.owner[port]; {
	case !taken:
		a.take(uid, port)
	case owner != uid:
		return errPortAllocated
	}
	return nil
}

func (a *portAllocator) take(uid metav1.UID, port int) {
	a.owner[port] = uid
	a.held[uid] = append(a.held[uid], port)
}

// check reports why port is not uid's: out of range, taken by another
// object (errPortAllocated) or free (errNotHeld).
func (a *portAllocator) check(uid metav1.UID, port int) error {
	if !a.contains(port) {
		return a.notInRange(port)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch owner, taken := a.owner[port]; {
	case taken && owner == uid:
		return nil
	case taken:
		return errPortAllocated
	}
	return errNotHeld
}

// retain frees the ports uid holds but keep lacks.
func (a *portAllocator) retain(uid metav1.UID, keep map[int]bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var kept []int
	for _, p := range a.held[uid] {
		if keep[p] {
			kept = append(kept, p)
		} else {
			delete(a.owner, p)
		}
	}
	if len(kept) == 0 {
		delete(a.held, uid)
	} else {
		a.held[uid] = kept
	}
}

// release frees every port uid holds.
func (a *portAllocator) release(uid metav1.UID) { a.retain(uid, nil) }
