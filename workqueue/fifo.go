package workqueue

// fifo is a ring buffer of items. Unlike re-slicing a slice from the front,
// it reuses its storage, so a queue with a steady backlog does not allocate.
// Popped slots are zeroed so the garbage collector can reclaim what they
// referenced, and the buffer shrinks again after a burst.
//
// fifo is not safe for concurrent use; the queue's lock guards it.
type fifo[T any] struct {
	buf  []T
	head int // index of the oldest item
	n    int // number of items
}

func (f *fifo[T]) len() int { return f.n }

func (f *fifo[T]) push(item T) {
	if f.n == len(f.buf) {
		f.grow()
	}
	f.buf[(f.head+f.n)%len(f.buf)] = item
	f.n++
}

// pop removes and returns the oldest item. The fifo must not be empty.
func (f *fifo[T]) pop() T {
	item := f.buf[f.head]
	var zero T
	f.buf[f.head] = zero
	f.head = (f.head + 1) % len(f.buf)
	f.n--
	if f.n == 0 {
		f.head = 0
	}
	if len(f.buf) > minFIFO && f.n < len(f.buf)/4 {
		f.resize(len(f.buf) / 2)
	}
	return item
}

// minFIFO is the smallest buffer allocated, and the size below which the
// buffer is not shrunk.
const minFIFO = 16

// grow doubles the capacity.
func (f *fifo[T]) grow() { f.resize(max(minFIFO, 2*len(f.buf))) }

// resize moves the items, oldest first, to a new buffer of the given size,
// which must hold them.
func (f *fifo[T]) resize(size int) {
	buf := make([]T, size)
	if f.head+f.n <= len(f.buf) {
		copy(buf, f.buf[f.head:f.head+f.n])
	} else {
		k := copy(buf, f.buf[f.head:])
		copy(buf[k:], f.buf[:f.n-k])
	}
	f.buf = buf
	f.head = 0
}
