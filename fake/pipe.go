package fake

import (
	"io"
	"sync"
)

// streamLimit bounds the bytes a streaming response holds between the
// handler and the client: about what the socket buffers of a loopback
// connection hold.
const streamLimit = 256 << 10

// streamPipe carries a streaming response body from the handler to the
// client: an in-memory pipe with a bounded buffer, standing in for a
// connection's socket buffers.
//
// It is written here rather than taken from io.Pipe because io.Pipe is
// synchronous: each write waits until the reader has taken all of it, so
// the server could not encode the next items of a list while the client
// decodes the previous ones, and lists through the fake were slower than
// over loopback TCP (BenchmarkList). With a buffer, a write returns as soon
// as it fits; a reader that stops reading still stops the writer once the
// buffer is full, as TCP flow control would. No library in the module's
// dependencies provides a bounded in-memory pipe.
type streamPipe struct {
	mu   sync.Mutex
	cond sync.Cond // signalled on every change: data, space, close
	buf  []byte    // unread bytes are buf[off:]
	off  int
	werr error // the writer closed: reads end with it once buf is drained
	rerr error // the reader closed: reads and writes fail with it
}

// streamBuffers holds buffers of streamLimit bytes, which a stream takes
// when its backlog outgrows its first buffer and gives back when drained.
var streamBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, streamLimit)
	return &b
}}

// release gives a pooled buffer back; p.buf is then nil.
func (p *streamPipe) release() {
	if cap(p.buf) == streamLimit {
		b := p.buf[:0]
		streamBuffers.Put(&b)
	}
	p.buf = nil
}

func newStreamPipe() *streamPipe {
	p := &streamPipe{}
	p.cond.L = &p.mu
	return p
}

// Write copies b into the buffer, waiting for room when it is full. It fails
// with the reader's error once the reader has closed.
func (p *streamPipe) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for n < len(b) {
		switch {
		case p.rerr != nil:
			return n, p.rerr
		case p.werr != nil:
			return n, io.ErrClosedPipe
		}
		room := streamLimit - (len(p.buf) - p.off)
		if room <= 0 {
			p.cond.Wait()
			continue
		}
		k := min(room, len(b)-n)
		if unread := len(p.buf) - p.off; len(p.buf)+k > cap(p.buf) {
			if unread+k <= cap(p.buf) {
				// Move the unread bytes to the front rather than grow.
				copy(p.buf, p.buf[p.off:])
				p.buf = p.buf[:unread]
			} else {
				// Grow to the limit at once, from the pool.
				nb := (*streamBuffers.Get().(*[]byte))[:unread]
				copy(nb, p.buf[p.off:])
				p.release()
				p.buf = nb
			}
			p.off = 0
		}
		p.buf = append(p.buf, b[n:n+k]...)
		n += k
		p.cond.Broadcast()
	}
	return n, nil
}

// Read takes buffered bytes, waiting for some when the buffer is empty. Once
// the writer has closed and the buffer is drained, it returns the writer's
// error (io.EOF for a clean close).
func (p *streamPipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if p.rerr != nil {
			return 0, p.rerr
		}
		if p.off < len(p.buf) {
			k := copy(b, p.buf[p.off:])
			p.off += k
			if p.off == len(p.buf) {
				// Drained: an idle stream (a quiet watch) holds no
				// pooled buffer.
				if cap(p.buf) == streamLimit {
					p.release()
				}
				p.buf, p.off = p.buf[:0], 0
			}
			p.cond.Broadcast()
			return k, nil
		}
		if p.werr != nil {
			return 0, p.werr
		}
		if len(b) == 0 {
			return 0, nil
		}
		p.cond.Wait()
	}
}

// CloseWrite ends the stream: reads return err (io.EOF if nil) once the
// buffer is drained. Only the first close counts.
func (p *streamPipe) CloseWrite(err error) {
	if err == nil {
		err = io.EOF
	}
	p.mu.Lock()
	if p.werr == nil {
		p.werr = err
	}
	p.cond.Broadcast()
	p.mu.Unlock()
}

// CloseRead abandons the stream: reads and writes fail with err at once (a
// blocked writer wakes up). Only the first close counts.
func (p *streamPipe) CloseRead(err error) {
	if err == nil {
		err = io.ErrClosedPipe
	}
	p.mu.Lock()
	if p.rerr == nil {
		p.rerr = err
		p.release()
		p.off = 0
	}
	p.cond.Broadcast()
	p.mu.Unlock()
}
