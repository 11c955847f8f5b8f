#!/bin/sh
# Captures the answers of kube-apiserver v1.37.2 (../../../../shared/realk8s)
# that the auth conformance cases compare with, word for word. Run with the
# real server's environment: eval "$(realk8s.sh env)". It makes the
# service account authn-i17/nobody (no rights) and deletes its namespace
# at the end.
set -eu
S=$REALK8S_SERVER
T=$(cat "$REALK8S_TOKEN_FILE")
NS=authn-i17
kubectl create namespace $NS >/dev/null 2>&1 || true
kubectl -n $NS create serviceaccount nobody >/dev/null 2>&1 || true
trap 'kubectl delete namespace $NS --wait=false >/dev/null' EXIT
SAT=$(kubectl -n $NS create token nobody)
SSR='{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}'
# capture NAME CURL-ARGS...: the status line, the headers that do not vary
# (no Date, Audit-Id, flow-control uids) and the body.
capture() {
	name=$1
	shift
	curl -sS --http1.1 -A kapi-conformance -D "$name.h" -o "$name.b" --cacert "$REALK8S_CA_FILE" "$@"
	{
		tr -d '\r' <"$name.h" | grep -viE '^(date|audit-id|x-kubernetes-pf-[a-z-]*):'
		cat "$name.b"
	} >"$name.http"
	rm "$name.h" "$name.b"
}
capture unauthorized -H "Authorization: Bearer not-a-token" "$S/api/v1/namespaces"
capture impersonate-no-user -H "Authorization: Bearer $T" -H "Impersonate-Group: dev" \
	-H Content-Type:application/json -d "$SSR" "$S/apis/authentication.k8s.io/v1/selfsubjectreviews"
capture impersonate-refused -H "Authorization: Bearer $SAT" -H "Impersonate-User: alice" \
	-H Content-Type:application/json -d "$SSR" "$S/apis/authentication.k8s.io/v1/selfsubjectreviews"
