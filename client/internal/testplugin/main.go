// Command testplugin is an exec credential plugin for the client package's
// tests. It prints an ExecCredential built from environment variables:
//
//	TESTPLUGIN_COUNTER      file to which each run appends one line; the run's
//	                        number n (1, 2, …) is the line count after that
//	TESTPLUGIN_TOKEN        status.token; "{n}" is replaced by n
//	TESTPLUGIN_EXPIRY       RFC 3339 time: status.expirationTimestamp is this
//	TESTPLUGIN_EXPIRY_STEP  plus (n-1) times this Go duration
//	TESTPLUGIN_CERT/_KEY    files whose PEM becomes clientCertificateData/clientKeyData
//	TESTPLUGIN_API_VERSION  apiVersion to answer (default: the one in
//	                        KUBERNETES_EXEC_INFO)
//	TESTPLUGIN_STDOUT       print this instead of an ExecCredential
//	TESTPLUGIN_STDERR       write this to stderr
//	TESTPLUGIN_EXIT         exit with this status after writing stderr
//	TESTPLUGIN_FAIL_AFTER   exit 1 when n is greater than this
//	TESTPLUGIN_SLEEP        sleep this Go duration first
//	TESTPLUGIN_RECORD       write {"args","execInfo","env"} of this run here
//
// It must not import the client package: it is what the client is tested
// against.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "testplugin:", err)
		os.Exit(2)
	}
}

func run() error {
	if d := os.Getenv("TESTPLUGIN_SLEEP"); d != "" {
		dur, err := time.ParseDuration(d)
		if err != nil {
			return err
		}
		time.Sleep(dur)
	}
	n := 1
	if p := os.Getenv("TESTPLUGIN_COUNTER"); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		_, werr := f.WriteString("x\n")
		if err := f.Close(); err != nil || werr != nil {
			return fmt.Errorf("counter: %v %v", werr, err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n = strings.Count(string(b), "\n")
	}
	if p := os.Getenv("TESTPLUGIN_RECORD"); p != "" {
		rec, err := json.Marshal(map[string]any{
			"args":     os.Args[1:],
			"execInfo": os.Getenv("KUBERNETES_EXEC_INFO"),
			"env":      os.Environ(),
		})
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, rec, 0o600); err != nil {
			return err
		}
	}
	if s := os.Getenv("TESTPLUGIN_STDERR"); s != "" {
		fmt.Fprint(os.Stderr, s)
	}
	if s := os.Getenv("TESTPLUGIN_EXIT"); s != "" {
		code, err := strconv.Atoi(s)
		if err != nil {
			return err
		}
		os.Exit(code)
	}
	if s := os.Getenv("TESTPLUGIN_FAIL_AFTER"); s != "" {
		limit, err := strconv.Atoi(s)
		if err != nil {
			return err
		}
		if n > limit {
			fmt.Fprintf(os.Stderr, "run %d: failing after %d runs\n", n, limit)
			os.Exit(1)
		}
	}
	if s, ok := os.LookupEnv("TESTPLUGIN_STDOUT"); ok {
		fmt.Print(s)
		return nil
	}

	apiVersion := os.Getenv("TESTPLUGIN_API_VERSION")
	if apiVersion == "" {
		var in struct {
			APIVersion string `json:"apiVersion"`
		}
		if err := json.Unmarshal([]byte(os.Getenv("KUBERNETES_EXEC_INFO")), &in); err != nil {
			return fmt.Errorf("KUBERNETES_EXEC_INFO: %w", err)
		}
		apiVersion = in.APIVersion
	}
	status := map[string]string{}
	if tok := os.Getenv("TESTPLUGIN_TOKEN"); tok != "" {
		status["token"] = strings.ReplaceAll(tok, "{n}", strconv.Itoa(n))
	}
	if e := os.Getenv("TESTPLUGIN_EXPIRY"); e != "" {
		t, err := time.Parse(time.RFC3339, e)
		if err != nil {
			return err
		}
		if s := os.Getenv("TESTPLUGIN_EXPIRY_STEP"); s != "" {
			step, err := time.ParseDuration(s)
			if err != nil {
				return err
			}
			t = t.Add(time.Duration(n-1) * step)
		}
		status["expirationTimestamp"] = t.UTC().Format(time.RFC3339)
	}
	for env, field := range map[string]string{"TESTPLUGIN_CERT": "clientCertificateData", "TESTPLUGIN_KEY": "clientKeyData"} {
		if p := os.Getenv(env); p != "" {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			status[field] = string(b)
		}
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"apiVersion": apiVersion,
		"kind":       "ExecCredential",
		"status":     status,
	})
}
