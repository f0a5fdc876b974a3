#!/usr/bin/env bash
# What the tests need on this machine, installed and started when missing (idempotent, no input):
# PostgreSQL and Redis answering on 127.0.0.1, Debian's chromium for the browser tests, promtool
# for the alerting rules, HAProxy for the scale-out proof, kubectl for the overlays. Uses apt-get (as root, or sudo -n).
# `npm run test:all` runs it before `npm test`; CI (.ci/run) runs `npm run test:all`.
set -uo pipefail
export DEBIAN_FRONTEND=noninteractive

log() { printf '\n== %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }
apt_ready=
apt_install() {
  [ -n "$apt_ready" ] || { as_root apt-get update -qq && apt_ready=1; }
  as_root apt-get install -y -qq "$@"
}

postgres_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null || (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

ensure_postgres() {
  postgres_up && return 0
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    log "installing PostgreSQL"
    apt_install postgresql
    # Tests connect as the superuser over TCP without a password (trust on loopback only).
    for hba in /etc/postgresql/*/main/pg_hba.conf; do
      as_root sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
    done
  fi
  log "starting PostgreSQL"
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  for _ in $(seq 1 30); do postgres_up && return 0; sleep 1; done
  echo "PostgreSQL did not come up on 127.0.0.1:5432" >&2
  return 1
}

ensure_redis() {
  redis_up && return 0
  command -v redis-server >/dev/null || { log "installing Redis"; apt_install redis-server; }
  log "starting Redis"
  as_root mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis_up && return 0; sleep 1; done
  echo "Redis did not come up on 127.0.0.1:6379" >&2
  return 1
}

# The dashboard's browser tests drive Debian's chromium through playwright-core (no browser download).
ensure_chromium() {
  [ -x /usr/bin/chromium ] && return 0
  log "installing chromium"
  apt_install chromium
}

# The scale-out proof puts Debian's HAProxy in front of two instances of every service.
ensure_haproxy() {
  command -v haproxy >/dev/null && return 0
  log "installing haproxy"
  apt_install haproxy
}

# The alerting rules are checked by Prometheus's own promtool (Debian's prometheus package).
ensure_promtool() {
  command -v promtool >/dev/null && return 0
  log "installing promtool (prometheus)"
  apt_install --no-install-recommends prometheus
}

# The Kubernetes overlays are rendered by the real Kustomize inside kubectl (`kubectl kustomize`).
# Debian has no kubectl package: it is part of the machine image (or https://kubernetes.io/docs/tasks/tools/).
ensure_kubectl() {
  command -v kubectl >/dev/null && kubectl kustomize --help >/dev/null 2>&1 && return 0
  log "kubectl (1.27 or later, with its built-in kustomize) is needed to render deploy/kubernetes; install it and run again"
  return 1
}

ensure_postgres && ensure_redis && ensure_chromium && ensure_haproxy && ensure_promtool && ensure_kubectl
