package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/bench/internal/sidekit"
)

// sides are the two libraries, by the name their side program reports.
var sides = []string{"kapi", "client-go"}

// sideBinaries builds the two side programs into dir (unless given) and
// returns their paths by side. Each links only its own library, so that
// neither child pays for the other's package initialisation.
func sideBinaries(ctx context.Context, dir string) (map[string]string, error) {
	bins := map[string]string{
		"kapi":      filepath.Join(dir, "kapi-bench-side-kapi"),
		"client-go": filepath.Join(dir, "kapi-bench-side-client-go"),
	}
	missing := false
	for _, b := range bins {
		if _, err := os.Stat(b); err != nil {
			missing = true
		}
	}
	if !missing {
		return bins, nil
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+string(filepath.Separator),
		"github.com/kapi-dev/kapi/bench/cmd/kapi-bench-side-kapi",
		"github.com/kapi-dev/kapi/bench/cmd/kapi-bench-side-client-go")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("building the side programs (run kapi-bench from the bench/ module, or give -side-dir with prebuilt ones): %w", err)
	}
	return bins, nil
}

// child is one run of a side program.
type child struct {
	side   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *bytes.Buffer
	waited chan error
}

func startChild(ctx context.Context, bin, side string, args sidekit.Args) (*child, error) {
	cmd := exec.CommandContext(ctx, bin, args.Flags()...)
	cmd.Env = append(os.Environ(), "KUBE_FEATURE_WatchListClient="+fmt.Sprint(args.List == "stream"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	c := &child{side: side, cmd: cmd, stdin: stdin, lines: make(chan string, 4), stderr: &bytes.Buffer{}, waited: make(chan error, 1)}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 256<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
		c.waited <- cmd.Wait()
	}()
	return c, nil
}

// next returns the child's next stdout line that is READY or a result.
func (c *child) next(ctx context.Context) (string, error) {
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				return "", fmt.Errorf("%s side exited without a result: %s", c.side, tail(c.stderr.String()))
			}
			if l == sidekit.ReadyLine || strings.HasPrefix(l, sidekit.ResultPrefix) {
				return l, nil
			}
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// outcome is a side's result plus what the harness measured from outside.
type outcome struct {
	sidekit.Result
	CPUSecs float64      `json:"cpuSecs"` // user + system CPU of the child (rusage)
	Traffic *sideTraffic `json:"traffic,omitempty"`
}

// finish reads the result line and waits for the child to exit.
func (c *child) finish(ctx context.Context) (*outcome, error) {
	l, err := c.next(ctx)
	if err != nil {
		return nil, err
	}
	if l == sidekit.ReadyLine {
		return nil, errors.New("unexpected READY")
	}
	var o outcome
	if err := json.Unmarshal([]byte(strings.TrimPrefix(l, sidekit.ResultPrefix)), &o.Result); err != nil {
		return nil, fmt.Errorf("%s side: bad result: %w", c.side, err)
	}
	_ = c.stdin.Close()
	for range c.lines {
	}
	werr := <-c.waited
	if st := c.cmd.ProcessState; st != nil {
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			// Not ru.Maxrss: Go starts children with CLONE_VFORK|CLONE_VM,
			// so the kernel carries the harness's RSS high-water mark into
			// the child's at exec. The side reads its own VmHWM instead.
			o.CPUSecs = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		}
	}
	if o.Error != "" {
		return &o, fmt.Errorf("%s side: %s (stderr: %s)", c.side, o.Error, tail(c.stderr.String()))
	}
	if werr != nil {
		return &o, fmt.Errorf("%s side: %w (stderr: %s)", c.side, werr, tail(c.stderr.String()))
	}
	return &o, nil
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return s
}
