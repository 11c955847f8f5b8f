package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// crashRounds is how many times TestCrashDataDir kills the server; the
// environment variable KAPI_CRASH_ROUNDS, when set, wins.
var crashRounds = flag.Int("crash-rounds", 3, "how many times TestCrashDataDir kills the server with SIGKILL")

// crashChild is a server process with --data-dir, run from the test binary.
type crashChild struct {
	cmd    *exec.Cmd
	url    string
	stderr *lockedBuffer
}

func startCrashChild(t *testing.T, ctx context.Context, dir string) *crashChild {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "--log-level=warn", "--data-dir", dir)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	c := &crashChild{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = c.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), readyPrefix)
	if !ok {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("first line %q (%v), want the ready line\nstderr:\n%s", line, err, c.stderr)
	}
	c.url = url
	return c
}

// acked is what a writer was told: the object and resourceVersion of its
// last acknowledged write of each name.
type acked struct {
	mu     sync.Mutex
	rv     map[string]uint64 // name -> resourceVersion acknowledged
	data   map[string]int    // name -> the counter acknowledged (updated objects)
	max    uint64
	writes int           // acknowledged writes in all
	target int           // close reached when writes gets there
	reach  chan struct{} // see target
}

func (a *acked) record(name string, rv uint64, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rv[name] = rv
	a.data[name] = n
	a.max = max(a.max, rv)
	if a.writes++; a.writes == a.target {
		close(a.reach)
	}
}

// after returns a channel closed once n more writes are acknowledged.
func (a *acked) after(n int) <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.target, a.reach = a.writes+n, make(chan struct{})
	return a.reach
}

// statusError is a write the server answered with an error status.
type statusError struct{ msg string }

func (e *statusError) Error() string { return e.msg }

type cmBody struct {
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Data map[string]string `json:"data"`
}

// write sends one ConfigMap write and returns its acknowledged
// resourceVersion, or an error if it was not acknowledged.
func crashWrite(ctx context.Context, client *http.Client, method, url string, name string, n int) (uint64, error) {
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"n":"%d"}}`, name, n)
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return 0, &statusError{fmt.Sprintf("%s %s: %d %s", method, url, resp.StatusCode, b)}
	}
	var cm cmBody
	if err := json.Unmarshal(b, &cm); err != nil {
		return 0, err
	}
	return strconv.ParseUint(cm.Metadata.ResourceVersion, 10, 64)
}

// TestCrashDataDir runs kapi-apiserver --data-dir in a child process under
// concurrent writers (creates, and updates of one object per writer) and
// kills it with SIGKILL at a random moment, -crash-rounds times (or
// KAPI_CRASH_ROUNDS). After each restart on the same directory, every
// acknowledged write must be there (zero lost) and resourceVersions must
// go on increasing.
func TestCrashDataDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL on Windows")
	}
	rounds := *crashRounds
	if v := os.Getenv("KAPI_CRASH_ROUNDS"); v != "" {
		var err error
		if rounds, err = strconv.Atoi(v); err != nil {
			t.Fatalf("KAPI_CRASH_ROUNDS=%q: %v", v, err)
		}
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rounds+1)*time.Minute)
	defer cancel()
	a := &acked{rv: map[string]uint64{}, data: map[string]int{}}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	defer client.CloseIdleConnections()
	const writers = 8
	for round := range rounds + 1 {
		child := startCrashChild(t, ctx, dir)
		base := child.url + "/api/v1/namespaces/default/configmaps"
		verifyAcked(t, client, base, a, round)
		if round == rounds {
			_ = child.cmd.Process.Signal(syscall.SIGTERM)
			if err := child.cmd.Wait(); err != nil {
				t.Fatalf("stopping: %v\n%s", err, child.stderr)
			}
			break
		}
		floor := a.max // every write of this round must be above what was acknowledged before
		if round == 0 {
			for w := range writers {
				name := fmt.Sprintf("counter-%d", w)
				rv, err := crashWrite(ctx, client, http.MethodPost, base, name, 0)
				if err != nil {
					t.Fatal(err)
				}
				a.record(name, rv, 0)
			}
		}
		reached := a.after(writers*5 + rand.IntN(400))
		var wg sync.WaitGroup
		var mu sync.Mutex
		var writeErrs []string
		for w := range writers {
			wg.Go(func() {
				counter := fmt.Sprintf("counter-%d", w)
				for i := 0; ; i++ {
					name, method, url := fmt.Sprintf("r%d-w%d-%d", round, w, i), http.MethodPost, base
					n := i
					if i%2 == 1 { // every other write updates the writer's counter (created if missing)
						// Increasing values, never one written before (a
						// write of the same value would be a no-op).
						name, method, url = counter, http.MethodPut, base+"/"+counter
						n = (round+1)*1_000_000 + i
					}
					rv, err := crashWrite(ctx, client, method, url, name, n)
					if err != nil {
						if _, ok := err.(*statusError); !ok {
							return // the server is gone
						}
						mu.Lock()
						writeErrs = append(writeErrs, err.Error())
						mu.Unlock()
						return
					}
					if rv <= floor {
						mu.Lock()
						writeErrs = append(writeErrs, fmt.Sprintf("%s acknowledged at %d, not above %d acknowledged before the restart", name, rv, floor))
						mu.Unlock()
					}
					a.record(name, rv, n)
				}
			})
		}
		// Kill at a random moment once writes are flowing.
		select {
		case <-reached:
		case <-ctx.Done():
			t.Fatalf("round %d: writes not acknowledged\n%s", round, child.stderr)
		}
		if err := child.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = child.cmd.Wait()
		wg.Wait()
		if len(writeErrs) > 0 {
			t.Fatalf("round %d: %s", round, strings.Join(writeErrs, "\n"))
		}
		t.Logf("round %d: killed after %d acknowledged writes in all (resourceVersion %d)", round, a.count(), a.max)
	}
}

func (a *acked) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.writes
}

// verifyAcked lists the ConfigMaps and checks every acknowledged write:
// a created object at the resourceVersion acknowledged, a counter at its
// acknowledged value or a later one (a write done but not acknowledged).
func verifyAcked(t *testing.T, client *http.Client, url string, a *acked, round int) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []cmBody `json:"items"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("list: %d %v %s", resp.StatusCode, err, bytes.TrimSpace(b))
	}
	got := map[string]cmBody{}
	for _, it := range list.Items {
		got[it.Metadata.Name] = it
	}
	listRV, _ := strconv.ParseUint(list.Metadata.ResourceVersion, 10, 64)
	a.mu.Lock()
	defer a.mu.Unlock()
	if listRV < a.max {
		t.Fatalf("after restart %d: list at resourceVersion %d, below %d acknowledged", round, listRV, a.max)
	}
	lost := 0
	for name, rv := range a.rv {
		it, ok := got[name]
		if !ok {
			lost++
			t.Errorf("after restart %d: %s (acknowledged at %d) is lost", round, name, rv)
			continue
		}
		n, _ := strconv.Atoi(it.Data["n"])
		itRV, _ := strconv.ParseUint(it.Metadata.ResourceVersion, 10, 64)
		if strings.HasPrefix(name, "counter-") {
			if want := a.data[name]; n < want || itRV < rv {
				lost++
				t.Errorf("after restart %d: %s has n=%d at %d, acknowledged n=%d at %d", round, name, n, itRV, want, rv)
			}
			continue
		}
		if itRV != rv {
			lost++
			t.Errorf("after restart %d: %s at resourceVersion %d, acknowledged at %d", round, name, itRV, rv)
		}
	}
	if lost > 0 {
		t.FailNow()
	}
}
