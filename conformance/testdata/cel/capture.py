#!/usr/bin/env python3
"""Captures kube-apiserver's answers to steps.json into <step>.json.
Successful answers are cut to their code and the part a step's "keep" names.

Run against a real kube-apiserver (../../../../shared/realk8s):
    eval "$(realk8s.sh env)"; python3 capture.py
It creates probe-crd.json, cost-crd.json, more-crd.json, emb-crd.json and rat-crd.json (group cel.i16.kapi.dev) and
namespace cel-i16-capture, runs the steps in order and deletes what it made.
conformance/cel_test.go runs the same steps and compares.
"""
import json, os, ssl, subprocess, time, urllib.request

G = "cel.i16.kapi.dev"
NS = "cel-i16-capture"
server = os.environ["REALK8S_SERVER"]
token = open(os.environ["REALK8S_TOKEN_FILE"]).read().strip()
ctx = ssl.create_default_context(cafile=os.environ["REALK8S_CA_FILE"])
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

def req(method, path, body=None, ct="application/json"):
    data = None if body is None else json.dumps(body).encode()
    r = urllib.request.Request(server + path, data=data, method=method,
                               headers={"Authorization": "Bearer " + token, "Content-Type": ct})
    try:
        with urllib.request.urlopen(r, context=ctx) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())

def established(name):
    for _ in range(100):
        code, crd = req("GET", CRDS + "/" + name)
        if code == 200 and any(c["type"] == "Established" and c["status"] == "True"
                               for c in (crd.get("status") or {}).get("conditions") or []):
            time.sleep(2)  # discovery and the handler follow shortly
            return
        time.sleep(0.2)
    raise SystemExit("CRD %s not established" % name)

here = os.path.dirname(os.path.abspath(__file__))
load = lambda f: json.load(open(os.path.join(here, f)))
req("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
crds = {"probe": (load("probe-crd.json"), "probes"), "cost": (load("cost-crd.json"), "bads"),
        "more": (load("more-crd.json"), "mores"), "emb": (load("emb-crd.json"), "embs"),
        "rat": (load("rat-crd.json"), "rats")}
for crd, _ in crds.values():
    print(req("POST", CRDS, crd)[0])
    established(crd["metadata"]["name"])
try:
    for s in load("steps.json"):
        if s["crd"]:
            base = "/apis/%s/v1/namespaces/%s/%s" % (G, NS, crds[s["crd"]][1])
        else:
            base = CRDS
        code, body = req(s["method"], base + s["path"], s["body"], s.get("contentType", "application/json"))
        print(s["name"], code)
        if code < 300:
            # a success is compared by its code, and the part "keep" names
            body = {s["keep"]: body.get(s["keep"])} if s.get("keep") else None
        json.dump({"code": code, "body": body}, open(os.path.join(here, s["name"] + ".json"), "w"), indent=1)
finally:
    for crd, _ in crds.values():
        req("DELETE", CRDS + "/" + crd["metadata"]["name"])
    req("DELETE", "/api/v1/namespaces/" + NS)
