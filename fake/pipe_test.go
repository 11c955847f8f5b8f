package fake

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

func TestStreamPipe(t *testing.T) {
	t.Run("data then EOF", func(t *testing.T) {
		p := newStreamPipe()
		want := bytes.Repeat([]byte("abc"), 3*streamLimit) // more than the buffer
		go func() {
			_, _ = p.Write(want)
			p.CloseWrite(nil)
		}()
		got, err := io.ReadAll(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("read %d bytes, %v; want %d", len(got), err, len(want))
		}
	})
	t.Run("a full buffer blocks the writer until read", func(t *testing.T) {
		p := newStreamPipe()
		wrote := make(chan int)
		go func() {
			n, _ := p.Write(make([]byte, streamLimit+10))
			wrote <- n
		}()
		select {
		case n := <-wrote:
			t.Fatalf("write of more than the buffer returned (%d) without a reader", n)
		case <-time.After(20 * time.Millisecond):
		}
		readN(t, p, 100)
		if n := <-wrote; n != streamLimit+10 {
			t.Errorf("wrote %d", n)
		}
	})
	t.Run("closing the reader wakes the writer", func(t *testing.T) {
		p := newStreamPipe()
		done := make(chan error)
		go func() {
			_, err := p.Write(make([]byte, 2*streamLimit))
			done <- err
		}()
		time.Sleep(10 * time.Millisecond)
		why := errors.New("gone")
		p.CloseRead(why)
		if err := <-done; !errors.Is(err, why) {
			t.Errorf("write err %v", err)
		}
		if _, err := p.Read(make([]byte, 1)); !errors.Is(err, why) {
			t.Errorf("read err %v", err)
		}
	})
	t.Run("a writer's error follows the data", func(t *testing.T) {
		p := newStreamPipe()
		_, _ = p.Write([]byte("partial"))
		p.CloseWrite(errAborted)
		got, err := io.ReadAll(p)
		if string(got) != "partial" || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("read %q, %v", got, err)
		}
		if _, err := p.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("write after close: %v", err)
		}
	})
}
