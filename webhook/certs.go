package webhook

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/workqueue"
)

// Why reload on the handshake. Serving certificates are rotated by rewriting
// files: cert-manager or a script writes them in place, and a Secret mounted
// in a pod is swapped by moving a "..data" symlink. A file watcher misses the
// symlink swap unless it watches the directory, needs a goroutine, and is not
// a dependency kapi has. Instead the certificate is looked up on each TLS
// handshake: two stat calls (a few microseconds, next to a handshake's
// milliseconds) say whether either file changed (another file, mtime or size),
// and only then are the files read and parsed. A file modified within the
// last racyWindow is also read and compared, as git does for its index: a
// rewrite within the filesystem's timestamp granularity can leave mtime and
// size as they were. Until both files hold a matching pair again (a rotation
// writes one file, then the other), the previous certificate is served.

// racyWindow is how recently a file must have changed for its stat to be
// distrusted. It covers the coarsest timestamp granularity of common
// filesystems (FAT's two seconds).
const racyWindow = 2 * time.Second

// certReloader serves the certificate in certFile and keyFile, reloading it
// when they change.
type certReloader struct {
	certFile, keyFile string
	clock             workqueue.Clock
	log               *slog.Logger

	mu                sync.Mutex
	cert              *tls.Certificate
	certStat, keyStat os.FileInfo
	certPEM, keyPEM   []byte
	failed            []byte // the cert and key that last failed to load, not to log them at each handshake
}

// load loads the certificate, or returns why it cannot: the previous one is
// kept and served when there is one.
func (r *certReloader) load() (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cs, err := os.Stat(r.certFile)
	if err != nil {
		return r.keep(err)
	}
	ks, err := os.Stat(r.keyFile)
	if err != nil {
		return r.keep(err)
	}
	if r.cert != nil && sameStat(cs, r.certStat) && sameStat(ks, r.keyStat) && !r.racy(cs) && !r.racy(ks) {
		return r.cert, nil
	}
	certPEM, err := os.ReadFile(r.certFile)
	if err != nil {
		return r.keep(err)
	}
	keyPEM, err := os.ReadFile(r.keyFile)
	if err != nil {
		return r.keep(err)
	}
	if r.cert != nil && bytes.Equal(certPEM, r.certPEM) && bytes.Equal(keyPEM, r.keyPEM) {
		r.certStat, r.keyStat = cs, ks
		return r.cert, nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		pair := append(append([]byte(nil), certPEM...), keyPEM...)
		if bytes.Equal(pair, r.failed) && r.cert != nil {
			return r.cert, nil
		}
		r.failed = pair
		return r.keep(fmt.Errorf("loading %s and %s: %w", r.certFile, r.keyFile, err))
	}
	if r.cert != nil {
		r.log.Info("webhook: serving certificate reloaded", "certFile", r.certFile, "serial", cert.Leaf.SerialNumber, "notAfter", cert.Leaf.NotAfter)
	}
	r.cert, r.certStat, r.keyStat, r.certPEM, r.keyPEM, r.failed = &cert, cs, ks, certPEM, keyPEM, nil
	return r.cert, nil
}

// keep returns the current certificate, logging err, or err when there is
// none yet.
func (r *certReloader) keep(err error) (*tls.Certificate, error) {
	if r.cert == nil {
		return nil, err
	}
	r.log.Warn("webhook: serving the previous certificate", "err", err)
	return r.cert, nil
}

func (r *certReloader) racy(fi os.FileInfo) bool {
	return r.clock.Now().Sub(fi.ModTime()) < racyWindow
}

// sameStat reports whether a and b describe the same file (device and inode),
// unchanged.
func sameStat(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

// getCertificate is the tls.Config hook.
func (r *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.load()
}
