package client_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
)

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingReader) Close() error { return nil }

// bodyTransport answers every request with one response body.
type bodyTransport struct {
	contentType string
	body        *countingReader
}

func (t *bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {t.contentType}},
		Body:    t.body,
		Request: req,
	}, nil
}

// TestListEachMemoryBounded: ListEach hands each item of a list to its
// callback while the response is still being read: when an item arrives, the
// body has been read no further than the end of that item plus the next one
// and the decoder's buffers. A client that read the whole body first would
// be a list's size ahead.
func TestListEachMemoryBounded(t *testing.T) {
	const n, valueSize = 1000, 4 << 10
	items := make([]*corev1.ConfigMap, n)
	for i := range items {
		items[i] = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Namespace: "m", ResourceVersion: fmt.Sprint(i + 1)},
			Data:       map[string]string{"v": strings.Repeat(string(rune('a'+i%26)), valueSize)},
		}
	}
	typ := metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"}
	meta := &metav1.ListMeta{ResourceVersion: fmt.Sprint(n)}
	for _, ct := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		t.Run(ct, func(t *testing.T) {
			var buf bytes.Buffer
			var err error
			if ct == "application/json" {
				err = codec.EncodeJSONList(&buf, typ, meta, items)
			} else {
				err = codec.EncodeProtobufList(&buf, typ, meta, items)
			}
			if err != nil {
				t.Fatal(err)
			}
			body := buf.Bytes()
			// Item i ends before the name of item i+1 (the name is in the
			// item's metadata, which comes before its data); the last ends
			// with the body.
			end := make([]int64, n)
			var from int64
			for i := range n - 1 {
				next := []byte(fmt.Sprintf("cm-%05d", i+1))
				at := bytes.Index(body[from:], next)
				if at < 0 {
					t.Fatalf("%s is not in the body after item %d", next, i)
				}
				from += int64(at)
				end[i] = from
			}
			end[n-1] = int64(len(body))
			var largest int64
			for i := range n {
				start := int64(0)
				if i > 0 {
					start = end[i-1]
				}
				largest = max(largest, end[i]-start)
			}
			// What may legitimately be read ahead of the item handed out: the
			// next item, and the decoders' buffers (bufio readers of 64 KiB
			// and 32 KiB for protobuf, a growing buffer for JSON).
			bound := 2*largest + 128<<10
			if int64(len(body)) < 20*bound {
				t.Fatalf("the body (%d bytes) is too small to tell streaming from reading it whole (bound %d)", len(body), bound)
			}

			rd := &countingReader{r: bytes.NewReader(body)}
			c, err := client.New(&client.Config{Host: "http://memory.test", QPS: -1, ContentType: ct, Transport: &bodyTransport{contentType: ct, body: rd}})
			if err != nil {
				t.Fatal(err)
			}
			var got int
			var worst int64
			lm, err := client.For[corev1.ConfigMap](c).Namespace("m").ListEach(context.Background(), metav1.ListOptions{}, func(cm *corev1.ConfigMap) error {
				if want := fmt.Sprintf("cm-%05d", got); cm.Name != want {
					return fmt.Errorf("item %d is %s, want %s", got, cm.Name, want)
				}
				worst = max(worst, rd.n.Load()-end[got])
				got++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != n || lm.ResourceVersion != fmt.Sprint(n) {
				t.Fatalf("%d items, list meta %+v", got, lm)
			}
			t.Logf("%s: body %d bytes, largest item %d, read at most %d bytes ahead of an item (bound %d)", ct, len(body), largest, worst, bound)
			if worst > bound {
				t.Errorf("the body was read %d bytes ahead of the item handed out (bound %d, body %d): the list is not decoded item by item", worst, bound, len(body))
			}
		})
	}
}
