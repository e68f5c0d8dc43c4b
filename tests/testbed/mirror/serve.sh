#!/usr/bin/env bash
# Run the test bed's upstream mirror (build/mirror, built by build_mirror.py) as a Docker container.
#
#   tests/testbed/mirror/serve.sh start|stop|status
#
# Container sglang-stack-mirror on the network sglang-stack-testnet (created if missing), reachable
# there as http://upstream-mirror:8080/ and from the controller as http://127.0.0.1:18080/.
# build/mirror is bind-mounted read-only; the access log (JSON lines) goes to build/mirror-logs/access.jsonl.
# The image is the test bed's Debian 12 base image (tests/testbed/build_base_images.sh), which has python3.
#
# `start` is a no-op when the container already runs with the same content (mirror MANIFEST, server
# script, image and settings: their hash is the container's label); otherwise it (re)creates it and
# waits until the server accepts connections. `status` exits 0 when it runs, 3 when it does not.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
name=${MIRROR_CONTAINER:-sglang-stack-mirror}
network=${MIRROR_NETWORK:-sglang-stack-testnet}
alias=${MIRROR_ALIAS:-upstream-mirror}
image=${MIRROR_IMAGE:-sglang-stack-testbed/debian12:latest}
root=${MIRROR_ROOT:-$repo/build/mirror}
logs=${MIRROR_LOGS:-$repo/build/mirror-logs}
host_port=${MIRROR_HOST_PORT:-18080}
port=8080
label=org.gpuops.testbed.mirror.content

die() { echo "serve.sh: ERROR: $*" >&2; exit 1; }

content_hash() {
  local image_id
  image_id=$(docker image inspect --format '{{.Id}}' "$image")
  {
    sha256sum "$root/MANIFEST.json" "$here/mirror_server.py"
    # The inode too: a mirror tree deleted and rebuilt under the same path needs a new bind mount.
    echo "$image_id $root $(stat -c %i "$root") $logs $network $alias $port $host_port"
  } | sha256sum | cut -c1-16
}

running() {
  [ "$(docker inspect --format '{{.State.Running}}' "$name" 2>/dev/null || true)" = "true" ]
}

# A TCP connect only (no HTTP request), so that readiness checks add no line to the access log.
wait_ready() {
  local _
  for _ in $(seq 1 60); do
    if docker exec "$name" python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1).close()" 2>/dev/null \
       && python3 -c "import socket; socket.create_connection(('127.0.0.1', $host_port), 1).close()" 2>/dev/null; then
      return 0
    fi
    running || { docker logs --tail 20 "$name" >&2 || true; die "container $name exited"; }
    sleep 0.5
  done
  docker logs --tail 20 "$name" >&2 || true
  die "mirror did not accept connections within 30 s"
}

start() {
  [ -f "$root/MANIFEST.json" ] || die "$root/MANIFEST.json not found: build the mirror first (python3 tests/testbed/mirror/build_mirror.py --out build/mirror)"
  docker image inspect "$image" >/dev/null 2>&1 || die "image $image not found: build it first (tests/testbed/build_base_images.sh debian12)"
  docker network inspect "$network" >/dev/null 2>&1 || docker network create "$network" >/dev/null
  local want have
  want=$(content_hash)
  have=$(docker inspect --format "{{ index .Config.Labels \"$label\" }}" "$name" 2>/dev/null || true)
  if running && [ "$have" = "$want" ]; then
    wait_ready
    echo "mirror $name already running (content $want): http://$alias:$port/ on $network, http://127.0.0.1:$host_port/"
    return 0
  fi
  docker rm -f "$name" >/dev/null 2>&1 || true
  mkdir -p "$logs"
  docker run -d --name "$name" \
    --network "$network" --network-alias "$alias" \
    -p "127.0.0.1:$host_port:$port" \
    -v "$root:/srv/mirror:ro" \
    -v "$here/mirror_server.py:/opt/mirror/mirror_server.py:ro" \
    -v "$logs:/var/log/mirror" \
    --label "$label=$want" \
    --label "org.gpuops.testbed.what=sglang-stack test mirror (stand-in upstreams)" \
    "$image" \
    python3 /opt/mirror/mirror_server.py --root /srv/mirror --port "$port" --log /var/log/mirror/access.jsonl >/dev/null
  wait_ready
  echo "mirror $name started (content $want): http://$alias:$port/ on $network, http://127.0.0.1:$host_port/, log $logs/access.jsonl"
}

stop() {
  if docker inspect "$name" >/dev/null 2>&1; then
    docker rm -f "$name" >/dev/null
    echo "mirror $name stopped"
  else
    echo "mirror $name is not running"
  fi
}

status() {
  if running; then
    local have want=""
    have=$(docker inspect --format "{{ index .Config.Labels \"$label\" }}" "$name")
    [ -f "$root/MANIFEST.json" ] && docker image inspect "$image" >/dev/null 2>&1 && want=$(content_hash)
    echo "mirror $name running: http://$alias:$port/ on $network, http://127.0.0.1:$host_port/ (content $have$([ "$have" = "$want" ] || echo ", stale: build content is ${want:-unknown}"))"
    return 0
  fi
  echo "mirror $name not running"
  return 3
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
