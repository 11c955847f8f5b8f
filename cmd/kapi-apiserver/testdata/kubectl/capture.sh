#!/bin/sh
# Captures what kubectl prints against a kube-apiserver v1.37.2 (with
# kube-controller-manager: the objects are chosen so that its controllers
# leave them as a cluster without controllers would, see get-all.yaml) for
# TestKubectlKinds. Usage, from this directory:
#   eval "$(/work/shared/realk8s/realk8s.sh env)"; ./capture.sh
# It creates the namespaces kubectl-cmds and kubectl-all, deleting them first.
set -eu
k() { kubectl --kubeconfig="$KUBECONFIG" "$@"; }
for ns in kubectl-cmds kubectl-all; do
	k delete namespace "$ns" --ignore-not-found --wait=true >/dev/null
	k create namespace "$ns" >/dev/null
done
n="-n kubectl-cmds"
k $n create job j --image=busybox -o yaml -- true >create-job.yaml
k $n create role r --verb=get,list --resource=pods,deployments.apps,pods/log --resource-name=a -o yaml >create-role.yaml
k $n create rolebinding rb --role=r --user=alice --group=g --serviceaccount=kubectl-cmds:default -o yaml >create-rolebinding.yaml
k auth whoami >auth-whoami.txt
k auth whoami -o yaml >auth-whoami.yaml

# rollout history: a paused Deployment gets no ReplicaSet from the
# deployment controller, as under no controller at all; then two
# ReplicaSets it controls, as the controller would have made them.
k $n create -f rollout-deployment.yaml >/dev/null
k $n rollout history deployment/x >rollout-history-none.txt
uid=$(k $n get deployment x -o jsonpath='{.metadata.uid}')
for rev in 1 2; do
	sed "s/REV/$rev/g; s/UID/$uid/" rollout-replicaset.yaml.in | k $n create -f - >/dev/null
done
k $n rollout history deployment/x >rollout-history.txt
k $n rollout history deployment/x --revision=2 >rollout-history-2.txt

# apply --prune
k $n create configmap other >/dev/null
k $n label configmap other app=p >/dev/null
k apply --prune -l app=p -f prune-1.yaml >apply-prune-1.txt
k apply --prune -l app=p -f prune-2.yaml >apply-prune-2.txt
k $n get configmaps,deployments -l app=p -o name >apply-prune-left.txt

# get all
k -n kubectl-all create -f get-all.yaml >/dev/null
k -n kubectl-all get all >get-all.txt
