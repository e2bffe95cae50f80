#!/usr/bin/env bash
# Installs what the project needs and is missing: pnpm (10, which runs on Node 20),
# the workspace's dependencies, and etcd (Debian's etcd-server) when no etcd is on PATH.
# Safe to run again: each step is skipped when already satisfied.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v pnpm >/dev/null 2>&1 || ! pnpm --version 2>/dev/null | grep -q '^10\.'; then
  echo "ensure: installing pnpm 10" >&2
  npm install -g --silent pnpm@10 >&2
fi

stamp=node_modules/.kubeling-install-stamp
if [ ! -f "$stamp" ] || [ pnpm-lock.yaml -nt "$stamp" ] || [ package.json -nt "$stamp" ] \
   || [ -n "$(find packages -maxdepth 2 -name package.json -newer "$stamp" 2>/dev/null)" ]; then
  echo "ensure: installing workspace dependencies" >&2
  if [ -f pnpm-lock.yaml ] && [ -n "${CI:-}" ]; then
    pnpm install --frozen-lockfile --reporter=silent >&2
  else
    pnpm install --reporter=silent >&2
  fi
  touch "$stamp"
fi

# Debian packages: etcd (server and etcdctl), and the official Python client the
# compatibility tests drive.
missing=()
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || missing+=(etcd-client)
optional=()
if [ -n "${ENSURE_TEST_DEPS:-}" ] && [ -x /usr/bin/python3 ] && ! /usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1; then optional+=(python3-kubernetes); fi
# The Python client's exec streams need websocket-client.
if [ -n "${ENSURE_TEST_DEPS:-}" ] && [ -x /usr/bin/python3 ] && ! /usr/bin/python3 -c 'import websocket' >/dev/null 2>&1; then optional+=(python3-websocket); fi
# The kubelet suite also runs against real containerd where we are root (a
# hermetic instance per test; nothing is started by the packages themselves).
if [ -n "${ENSURE_TEST_DEPS:-}" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  [ -x /usr/bin/containerd ] || optional+=(containerd)
  [ -x /usr/sbin/runc ] || optional+=(runc)
  [ -x /usr/lib/cni/bridge ] || optional+=(containernetworking-plugins)
  [ -x /bin/busybox ] || optional+=(busybox-static)
  # docker-compose.yml is brought up for real with Debian's dockerd and compose v1.
  [ -x /usr/sbin/dockerd ] || optional+=(docker.io)
  [ -x /usr/bin/docker-compose ] || optional+=(docker-compose)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "ensure: installing from Debian: ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q >&2 || true
  $SUDO apt-get install -y -q "${missing[@]}" >&2
fi
# Test-only packages: the suites that need them skip with the reason when absent.
if [ ${#optional[@]} -gt 0 ]; then
  echo "ensure: installing test packages from Debian: ${optional[*]}" >&2
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  [ ${#missing[@]} -gt 0 ] || $SUDO apt-get update -q >&2 || true
  $SUDO apt-get install -y -q "${optional[@]}" >&2 || echo "ensure: could not install ${optional[*]}; those suites will be skipped" >&2
fi
