package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
)

// systemNamespaces are the namespaces every Kubernetes cluster has (created
// by kube-apiserver's system-namespaces controller); kubectl's default
// context namespace is the first.
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// createSystemNamespaces creates systemNamespaces through h, the API server,
// so that they get the same defaulting as any other namespace. Existing ones
// are kept.
func createSystemNamespaces(ctx context.Context, h http.Handler) error {
	for _, ns := range systemNamespaces {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/api/v1/namespaces", strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated && rec.Code != http.StatusConflict {
			return fmt.Errorf("creating namespace %s: %d %s", ns, rec.Code, strings.TrimSpace(rec.Body.String()))
		}
	}
	return nil
}
