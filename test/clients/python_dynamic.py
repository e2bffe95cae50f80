"""Drives Debian's python3-kubernetes DynamicClient against a custom resource
of a kubeling apiserver: the CRD is found through discovery, then create, list,
watch and patch. Prints one line per step; exits non-zero on failure."""
import sys
import threading

from kubernetes import dynamic, watch
from kubernetes.client import Configuration, ApiClient

server = sys.argv[1]
ns = sys.argv[2]
cfg = Configuration()
cfg.host = server
dyn = dynamic.DynamicClient(ApiClient(cfg))
foos = dyn.resources.get(api_version="clients.example.com/v1", kind="Foo")
print("discovery ok")

seen = []
def watcher():
    for ev in foos.watch(namespace=ns, timeout=10):
        seen.append((ev["type"], ev["object"].metadata.name))
        if ev["type"] == "MODIFIED":
            return
t = threading.Thread(target=watcher)
t.start()

created = foos.create(namespace=ns, body={"apiVersion": "clients.example.com/v1", "kind": "Foo",
                                          "metadata": {"name": "py-foo"}, "spec": {"size": 1}})
assert created.metadata.uid, created
print("create ok")

names = [i.metadata.name for i in foos.get(namespace=ns).items]
assert "py-foo" in names, names
print("list ok")

patched = foos.patch(namespace=ns, name="py-foo", body={"spec": {"size": 2}},
                     content_type="application/merge-patch+json")
assert patched.spec.size == 2, patched.spec
print("patch ok")

t.join(15)
assert ("ADDED", "py-foo") in seen and ("MODIFIED", "py-foo") in seen, seen
print("watch ok")
