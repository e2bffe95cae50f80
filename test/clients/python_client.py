"""Drives Debian's python3-kubernetes against a kubeling apiserver: list, watch,
create, patch and delete. Prints one line per step; exits non-zero on failure."""
import sys
import threading

from kubernetes import client, watch
from kubernetes.client import Configuration, ApiClient

server = sys.argv[1]
ns = sys.argv[2]
cfg = Configuration()
cfg.host = server
api = ApiClient(cfg)
core = client.CoreV1Api(api)
apps = client.AppsV1Api(api)

names = [n.metadata.name for n in core.list_namespace().items]
assert "default" in names, names
print("list ok")

seen = []
def watcher():
    w = watch.Watch()
    for ev in w.stream(core.list_namespaced_config_map, namespace=ns, timeout_seconds=10):
        seen.append((ev["type"], ev["object"].metadata.name))
        if ev["type"] == "DELETED":
            w.stop()
t = threading.Thread(target=watcher)
t.start()

cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-cm"), data={"a": "1"})
created = core.create_namespaced_config_map(ns, cm)
assert created.metadata.uid, created
print("create ok")

patched = core.patch_namespaced_config_map("py-cm", ns, {"data": {"b": "2"}})
assert patched.data == {"a": "1", "b": "2"}, patched.data
print("patch ok")

dep = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "py-dep"},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "py"}},
             "template": {"metadata": {"labels": {"app": "py"}},
                          "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]}}},
}
apps.create_namespaced_deployment(ns, dep)
apps.patch_namespaced_deployment_scale("py-dep", ns, {"spec": {"replicas": 3}})
got = apps.read_namespaced_deployment("py-dep", ns)
assert got.spec.replicas == 3, got.spec.replicas
assert got.spec.template.spec.containers[0].ports[0].container_port == 80
print("scale ok")

core.delete_namespaced_config_map("py-cm", ns)
apps.delete_namespaced_deployment("py-dep", ns)
print("delete ok")

t.join(15)
assert ("ADDED", "py-cm") in seen and ("DELETED", "py-cm") in seen, seen
print("watch ok")
