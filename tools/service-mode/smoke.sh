#!/usr/bin/env bash
# Service-mode smoke test: build the bundles, run auth, gateway, rest-facade, accounts, banking
# and oms as six separate processes (as in docker-compose.yml) against a local PostgreSQL and
# Redis, and check them end to end:
#   - /healthz and /readyz answer 200 on every service's public and internal listener, /metrics
#     only on the internal one;
#   - a bad configuration (a SERVICE_KEY that is not a key) stops every app with a message
#     naming the variable and not echoing it;
#   - the auth admin API (its own loopback listener) creates a user and a PAT, and is not on
#     auth's public listener; the facade exchanges the PAT for a JWT (POST /v1/pat/login), and
#     GET /v1/accounts answers 200 with that JWT (401 without); a claims header sent to the
#     public gateway gets nothing;
#   - every service stops on SIGTERM.
# It then stops what it started and drops its databases. Exit status 0 = all checks passed.
#
# Settings (environment):
#   SMOKE_PG_URL      server URL, no database  (postgres://postgres@127.0.0.1:5432)
#   SMOKE_REDIS_URL   Redis URL for the preflight (redis://127.0.0.1:6379); the services use a
#                     private redis-server on BASE+379 with one ACL user each
#                     (tools/service-mode/redis-users.sh), as docker-compose.yml runs it
#   SMOKE_DB_PREFIX   database name prefix      (svc_  -> svc_auth, svc_accounts, …)
#   SMOKE_PORT_BASE   public ports BASE+0..3 (gateway, accounts, banking, oms), BASE+80 (facade),
#                     BASE+81 (auth); internal ports the same + 100; admin BASE+189; Redis BASE+379
#                     (18000: below the ephemeral port range, where a client socket could hold one)
#   SMOKE_SKIP_BUILD  1 = use the existing dist/ (0)
#   SMOKE_KEEP_LOGS   1 = keep the per-service logs after a successful run (0)
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

PG_URL="${SMOKE_PG_URL:-postgres://postgres@127.0.0.1:5432}"
PG_URL="${PG_URL%/}"
REDIS_URL="${SMOKE_REDIS_URL:-redis://127.0.0.1:6379}"
PREFIX="${SMOKE_DB_PREFIX:-svc_}"
BASE="${SMOKE_PORT_BASE:-18000}"
LOG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/service-mode-smoke.XXXXXX")"

APPS=(auth accounts banking oms gateway rest-facade)
DBS=(auth accounts banking oms)
declare -A PORT=(
  [gateway]=$((BASE + 0)) [accounts]=$((BASE + 1)) [banking]=$((BASE + 2)) [oms]=$((BASE + 3))
  [rest-facade]=$((BASE + 80)) [auth]=$((BASE + 81))
)
declare -A IPORT=()
for app in "${APPS[@]}"; do IPORT[$app]=$((PORT[$app] + 100)); done
ADMIN_PORT=$((BASE + 189))
ACL_REDIS_PORT=$((BASE + 379))
ACL_REDIS_PID=""
declare -A REDIS_FOR=()
declare -A PID=()
ENV=()

# Secrets made up for this run only: an admin credential and one identity per service (npm run service-keys).
AUTH_ADMIN_TOKEN="smoke-admin-$(openssl rand -hex 16)"
AUTH_URL="http://127.0.0.1:${PORT[auth]}"
ADMIN_URL="http://127.0.0.1:${ADMIN_PORT}"
AUTH_ISSUER="http://localhost:${PORT[auth]}"

FAILURES=0
pass() { printf '  ok    %s\n' "$*"; }
fail() { printf '  FAIL  %s\n' "$*"; FAILURES=$((FAILURES + 1)); }
warn() { printf '  warn  %s\n' "$*"; }
step() { printf '\n== %s\n' "$*"; }
die() { fail "$*"; exit 1; }

psql_admin() { psql "$PG_URL/postgres" -v ON_ERROR_STOP=1 -qAtX "$@"; }
db_url() { echo "$PG_URL/${PREFIX}$1"; }

# The environment each app gets, and nothing else (no leaking of the caller's variables):
# app_env APP fills the array ENV.
app_env() {
  local app="$1"
  local key_var="${app^^}_SERVICE_KEY"
  key_var="${key_var//-/_}"
  ENV=(PATH="$PATH" HOME="${HOME:-/tmp}" NODE_ENV=production LOG_LEVEL=warn LISTEN_HOST=127.0.0.1 INTERNAL_LISTEN_HOST=127.0.0.1
    SERVICE_KEY="${!key_var}" SERVICE_TRUSTED_KEYS="$SERVICE_TRUSTED_KEYS")
  local REDIS_URL="${REDIS_FOR[$app]:-$REDIS_URL}"
  local internal="http://127.0.0.1"
  case "$app" in
    auth)
      ENV+=(REDIS_URL="$REDIS_URL" AUTH_PORT="${PORT[auth]}" AUTH_INTERNAL_PORT="${IPORT[auth]}" AUTH_ADMIN_PORT="$ADMIN_PORT"
        AUTH_DATABASE_URL="$(db_url auth)" AUTH_ISSUER="$AUTH_ISSUER" AUTH_ADMIN_TOKEN="$AUTH_ADMIN_TOKEN" EVENTS_STREAM="${PREFIX}oms:events"
        ACCOUNTS_INTERNAL_URL="$internal:${IPORT[accounts]}" BANKING_INTERNAL_URL="$internal:${IPORT[banking]}" OMS_INTERNAL_URL="$internal:${IPORT[oms]}") ;;
    # accounts, banking and oms share the settlement stream (one name per smoke run).
    accounts) ENV+=(REDIS_URL="$REDIS_URL" EVENTS_STREAM="${PREFIX}oms:events"
        ACCOUNTS_PORT="${PORT[accounts]}" ACCOUNTS_INTERNAL_PORT="${IPORT[accounts]}" ACCOUNTS_DATABASE_URL="$(db_url accounts)") ;;
    banking) ENV+=(REDIS_URL="$REDIS_URL" EVENTS_STREAM="${PREFIX}oms:events" ACCOUNTS_URL="$internal:${IPORT[accounts]}/graphql"
        BANKING_PORT="${PORT[banking]}" BANKING_INTERNAL_PORT="${IPORT[banking]}" BANKING_DATABASE_URL="$(db_url banking)") ;;
    oms) ENV+=(REDIS_URL="$REDIS_URL" EVENTS_STREAM="${PREFIX}oms:events" ACCOUNTS_URL="$internal:${IPORT[accounts]}/graphql"
        BANKING_URL="$internal:${IPORT[banking]}" OMS_PORT="${PORT[oms]}" OMS_INTERNAL_PORT="${IPORT[oms]}" OMS_DATABASE_URL="$(db_url oms)") ;;
    gateway)
      ENV+=(REDIS_URL="$REDIS_URL" GATEWAY_PORT="${PORT[gateway]}" GATEWAY_INTERNAL_PORT="${IPORT[gateway]}"
        ACCOUNTS_URL="$internal:${IPORT[accounts]}/graphql" BANKING_URL="$internal:${IPORT[banking]}/graphql"
        OMS_URL="$internal:${IPORT[oms]}/graphql" AUTH_JWKS_URL="$AUTH_URL/.well-known/jwks.json" AUTH_ISSUER="$AUTH_ISSUER") ;;
    rest-facade)
      ENV+=(REDIS_URL="$REDIS_URL" FACADE_PORT="${PORT[rest-facade]}" FACADE_INTERNAL_PORT="${IPORT[rest-facade]}"
        GATEWAY_URL="$internal:${IPORT[gateway]}/graphql" AUTH_INTERNAL_URL="$internal:${IPORT[auth]}"
        AUTH_JWKS_URL="$AUTH_URL/.well-known/jwks.json" AUTH_ISSUER="$AUTH_ISSUER" EVENTS_STREAM="${PREFIX}oms:events") ;;
  esac
}

start_app() {
  local app="$1"
  app_env "$app"
  env -i "${ENV[@]}" node --enable-source-maps "dist/apps/$app/main.js" >"$LOG_DIR/$app.log" 2>&1 &
  PID[$app]=$!
}

wait_ready() {
  local app="$1" url="http://127.0.0.1:${PORT[$1]}/readyz" i
  for i in $(seq 1 60); do
    if ! kill -0 "${PID[$app]}" 2>/dev/null; then
      fail "$app exited during start (log below)"; sed 's/^/        /' "$LOG_DIR/$app.log" | tail -20; return 1
    fi
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$url")" = 200 ] && return 0
    sleep 0.5
  done
  fail "$app not ready after 30 s (log below)"; sed 's/^/        /' "$LOG_DIR/$app.log" | tail -20; return 1
}

stop_all() {
  local app i left
  for app in "${!PID[@]}"; do kill -TERM "${PID[$app]}" 2>/dev/null; done
  for i in $(seq 1 40); do
    left=0
    for app in "${!PID[@]}"; do kill -0 "${PID[$app]}" 2>/dev/null && left=1; done
    [ $left = 0 ] && break
    sleep 0.25
  done
  for app in "${!PID[@]}"; do
    if kill -0 "${PID[$app]}" 2>/dev/null; then
      fail "$app (pid ${PID[$app]}) still running 10 s after SIGTERM; killed"
      kill -KILL "${PID[$app]}" 2>/dev/null
    else
      pass "$app stopped on SIGTERM"
    fi
    wait "${PID[$app]}" 2>/dev/null
    unset "PID[$app]"
  done
}

drop_databases() {
  local db
  for db in "${DBS[@]}"; do psql_admin -c "DROP DATABASE IF EXISTS \"${PREFIX}${db}\" WITH (FORCE)" >/dev/null 2>&1; done
}

CLEANED=0
cleanup() {
  [ $CLEANED = 1 ] && return
  CLEANED=1
  step "teardown"
  [ ${#PID[@]} -gt 0 ] && stop_all
  [ -n "$ACL_REDIS_PID" ] && kill "$ACL_REDIS_PID" 2>/dev/null
  drop_databases && pass "dropped databases ${DBS[*]/#/$PREFIX}"
  if [ $FAILURES -gt 0 ] || [ "${SMOKE_KEEP_LOGS:-0}" = 1 ]; then echo "  logs in $LOG_DIR"; else rm -rf "$LOG_DIR"; fi
  echo
  if [ $FAILURES -gt 0 ]; then echo "SMOKE FAILED ($FAILURES failure(s))"; else echo "SMOKE PASSED"; fi
}
on_exit() { cleanup; [ $FAILURES -gt 0 ] && exit 1; exit 0; }
trap on_exit EXIT
trap 'echo; echo interrupted; FAILURES=$((FAILURES + 1)); exit 1' INT TERM

# JSON field from stdin: json_get token
json_get() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{const v=JSON.parse(s)[process.argv[1]];process.stdout.write(v===undefined?"":typeof v==="string"?v:JSON.stringify(v))}catch{}})' "$1"; }

# ---------------------------------------------------------------------------------------------
step "preflight"
for cmd in node curl psql openssl; do command -v "$cmd" >/dev/null || die "$cmd not found"; done
psql_admin -c 'select 1' >/dev/null || die "PostgreSQL not reachable at $PG_URL"
pass "PostgreSQL at $PG_URL"
node -e 'const n=require("net");const u=new URL(process.argv[1]);const s=n.connect(+(u.port||6379),u.hostname,()=>{s.write("PING\r\n")});s.on("data",d=>{process.exit(String(d).startsWith("+PONG")?0:1)});s.on("error",()=>process.exit(1));setTimeout(()=>process.exit(1),3000)' "$REDIS_URL" \
  || die "Redis not reachable at $REDIS_URL"
pass "Redis at $REDIS_URL"
for port in "${PORT[@]}" "${IPORT[@]}" "$ADMIN_PORT" "$ACL_REDIS_PORT"; do
  if node -e 'const s=require("net").createServer();s.once("error",()=>process.exit(1));s.listen(+process.argv[1],"0.0.0.0",()=>s.close())' "$port"; then :; else
    die "port $port is busy; set SMOKE_PORT_BASE"
  fi
done
pass "ports free: $(for a in "${APPS[@]}"; do printf '%s=%s ' "$a" "${PORT[$a]}"; done)"

if [ "${SMOKE_SKIP_BUILD:-0}" != 1 ]; then
  step "build: NX_DAEMON=false npx nx run-many -t build"
  if NX_DAEMON=false npx nx run-many -t build --outputStyle=static >"$LOG_DIR/build.log" 2>&1; then pass "nx run-many -t build"
  else fail "build failed (tail of log below)"; tail -30 "$LOG_DIR/build.log" | sed 's/^/        /'; exit 1; fi
fi
for app in "${APPS[@]}"; do [ -f "dist/apps/$app/main.js" ] || die "dist/apps/$app/main.js missing"; done
[ -f dist/apps/gateway/supergraph.graphql ] || die "dist/apps/gateway/supergraph.graphql missing"
pass "bundles present in dist/apps/{${APPS[*]// /,}}"

npx tsx tools/service-keys/generate.ts >"$LOG_DIR/keys.env" 2>/dev/null || die "npm run service-keys failed"
set -a; . "$LOG_DIR/keys.env"; set +a
pass "service identities made (npm run service-keys)"

step "redis with one ACL user per service"
command -v redis-server >/dev/null || die "redis-server not found (apt-get install redis-server)"
for v in AUTH FACADE GATEWAY ACCOUNTS BANKING OMS; do export "REDIS_${v}_PASSWORD=$(openssl rand -hex 16)"; done
EVENTS_STREAM="${PREFIX}oms:events" sh tools/service-mode/redis-users.sh --port "$ACL_REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
  >"$LOG_DIR/redis.log" 2>&1 &
ACL_REDIS_PID=$!
for _ in $(seq 1 20); do grep -q NOAUTH <<<"$(redis-cli -p "$ACL_REDIS_PORT" ping 2>&1)" && break; sleep 0.25; done
acl_url() { echo "redis://$1:$2@127.0.0.1:$ACL_REDIS_PORT"; }
REDIS_FOR=([auth]="$(acl_url auth "$REDIS_AUTH_PASSWORD")" [rest-facade]="$(acl_url rest-facade "$REDIS_FACADE_PASSWORD")"
  [gateway]="$(acl_url gateway "$REDIS_GATEWAY_PASSWORD")" [accounts]="$(acl_url accounts "$REDIS_ACCOUNTS_PASSWORD")"
  [banking]="$(acl_url banking "$REDIS_BANKING_PASSWORD")" [oms]="$(acl_url oms "$REDIS_OMS_PASSWORD")")
redis_as() { local user="$1" pw="$2"; shift 2; redis-cli -p "$ACL_REDIS_PORT" --user "$user" --pass "$pw" --no-auth-warning "$@" 2>&1; }
[ "$(redis-cli -p "$ACL_REDIS_PORT" get session:x 2>&1 | grep -c NOAUTH)" = 1 ] && pass "no default user" || fail "redis default user is on"
grep -q NOPERM <<<"$(redis_as banking "$REDIS_BANKING_PASSWORD" get session:x)" && pass "banking cannot read sessions" || fail "banking read a session key"
grep -q NOPERM <<<"$(redis_as gateway "$REDIS_GATEWAY_PASSWORD" set session:x forged)" && pass "the gateway cannot write sessions" || fail "the gateway wrote a session"
grep -q NOPERM <<<"$(redis_as auth "$REDIS_AUTH_PASSWORD" flushall)" && pass "no service may FLUSHALL" || fail "auth ran FLUSHALL"

step "databases"
drop_databases
for db in "${DBS[@]}"; do psql_admin -c "CREATE DATABASE \"${PREFIX}${db}\"" >/dev/null || die "CREATE DATABASE ${PREFIX}${db}"; done
pass "created ${DBS[*]/#/$PREFIX}"

# ---------------------------------------------------------------------------------------------
step "bad configuration stops every app, naming the variable"
for app in "${APPS[@]}"; do
  app_env "$app"
  out="$(env -i "${ENV[@]}" SERVICE_KEY='{"kty":"EC","d":"not-a-key-smoke-secret"}' timeout 30 node "dist/apps/$app/main.js" 2>&1)"
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q 'SERVICE_KEY' <<<"$out" && ! grep -q 'not-a-key-smoke-secret' <<<"$out"; then
    pass "$app: exit $rc, \"$(grep -m1 'SERVICE_KEY' <<<"$out" | sed 's/^ *//')\""
  else
    fail "$app with a bad SERVICE_KEY: exit $rc, output: $(head -c 300 <<<"$out")"
  fi
done
app_env auth
out="$(env -i "${ENV[@]}" AUTH_DATABASE_URL=mysql://x timeout 30 node dist/apps/auth/main.js 2>&1)"; rc=$?
if [ $rc -ne 0 ] && grep -q 'AUTH_DATABASE_URL' <<<"$out"; then pass "auth: exit $rc, \"$(grep -m1 'AUTH_DATABASE_URL' <<<"$out" | sed 's/^ *//')\""
else fail "auth with AUTH_DATABASE_URL=mysql://x: exit $rc, output: $(head -c 300 <<<"$out")"; fi

# ---------------------------------------------------------------------------------------------
step "start six services (separate processes)"
for app in auth accounts banking oms; do start_app "$app"; done
for app in auth accounts banking oms; do wait_ready "$app" && pass "$app ready (pid ${PID[$app]}, port ${PORT[$app]})"; done
[ $FAILURES -gt 0 ] && exit 1
start_app gateway
wait_ready gateway && pass "gateway ready (pid ${PID[gateway]}, port ${PORT[gateway]})"
start_app rest-facade
wait_ready rest-facade && pass "rest-facade ready (pid ${PID[rest-facade]}, port ${PORT[rest-facade]})"
[ $FAILURES -gt 0 ] && exit 1

step "health"
for app in "${APPS[@]}"; do
  for url in "http://127.0.0.1:${PORT[$app]}" "http://127.0.0.1:${IPORT[$app]}"; do
    for path in healthz readyz; do
      body="$(curl -s -w ' %{http_code}' "$url/$path")"
      code="${body##* }"
      if [ "$code" = 200 ]; then pass "$app $url/$path 200 ${body% *}"; else fail "$app $url/$path -> $body"; fi
    done
  done
  code="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${PORT[$app]}/metrics")"
  [ "$code" = 404 ] && pass "$app public /metrics 404" || fail "$app public /metrics -> $code"
  # Read it whole first: grep -q closing the pipe early would fail curl under pipefail.
  metrics="$(curl -s "http://127.0.0.1:${IPORT[$app]}/metrics")"
  grep -q http_request_duration_seconds <<<"$metrics" && pass "$app internal /metrics" || fail "$app internal /metrics"
done

# ---------------------------------------------------------------------------------------------
step "user, PAT, login through the facade, GET /v1/accounts"
EMAIL="smoke-$(date +%s)-$RANDOM@example.com"
EXPIRES="$(node -p 'new Date(Date.now()+7*86400e3).toISOString().slice(0,10)')"
admin_post() { curl -s -w '\n%{http_code}' -X POST "$ADMIN_URL$1" -H "authorization: Bearer $AUTH_ADMIN_TOKEN" -H 'content-type: application/json' -d "$2"; }

resp="$(admin_post /admin/users "{\"email\":\"$EMAIL\",\"password\":\"smoke-password-$RANDOM$RANDOM\",\"firstName\":\"Smoke\",\"lastName\":\"Test\"}")"
code="$(tail -n1 <<<"$resp")"; body="$(sed '$d' <<<"$resp")"
[ "$code" = 201 ] && pass "POST /admin/users 201 (userId $(json_get userId <<<"$body"))" || fail "POST /admin/users -> $code $body"

code="$(curl -s -o /dev/null -w '%{http_code}' -X POST "$ADMIN_URL/admin/users" -H 'content-type: application/json' -d '{}')"
[ "$code" = 401 ] && pass "POST /admin/users without the admin token 401" || fail "POST /admin/users without token -> $code"
code="$(curl -s -o /dev/null -w '%{http_code}' -X POST "$AUTH_URL/admin/users" -H "authorization: Bearer $AUTH_ADMIN_TOKEN" -H 'content-type: application/json' -d '{}')"
[ "$code" = 404 ] && pass "no admin API on auth's public listener (404 even with the credential)" || fail "POST $AUTH_URL/admin/users -> $code"

resp="$(admin_post /admin/pats "{\"email\":\"$EMAIL\",\"name\":\"smoke\",\"scope\":\"READ_ONLY\",\"expires\":\"$EXPIRES\"}")"
code="$(tail -n1 <<<"$resp")"; body="$(sed '$d' <<<"$resp")"
PAT="$(json_get token <<<"$body")"
[ "$code" = 201 ] && [ -n "$PAT" ] && pass "POST /admin/pats 201 (scope $(json_get scope <<<"$body"), expires $(json_get expiresAt <<<"$body"))" || fail "POST /admin/pats -> $code $body"

FACADE="http://127.0.0.1:${PORT[rest-facade]}/v1"
resp="$(curl -s -w '\n%{http_code}' -X POST "$FACADE/pat/login" -H 'content-type: application/json' -d "{\"token\":\"$PAT\"}")"
code="$(tail -n1 <<<"$resp")"; body="$(sed '$d' <<<"$resp")"
JWT="$(json_get token <<<"$body")"
[ "$code" = 200 ] && [ -n "$JWT" ] && pass "POST /v1/pat/login 200 (JWT ${#JWT} chars)" || fail "POST /v1/pat/login -> $code $body"

resp="$(curl -s -w '\n%{http_code}' "$FACADE/accounts" -H "authorization: Bearer $JWT")"
code="$(tail -n1 <<<"$resp")"; body="$(sed '$d' <<<"$resp")"
if [ "$code" = 200 ] && [ "$(json_get accounts <<<"$body" | head -c 1)" = "[" ]; then pass "GET /v1/accounts 200 $body"
else fail "GET /v1/accounts -> $code $body"; fi

# The back office: auth's admin API opens the account on accounts' internal listener (auth's own identity).
resp="$(admin_post /admin/accounts "{\"email\":\"$EMAIL\",\"type\":\"CASH\",\"currency\":\"USD\"}")"
code="$(tail -n1 <<<"$resp")"; body="$(sed '$d' <<<"$resp")"
ACCOUNT="$(json_get accountId <<<"$body")"
[ "$code" = 201 ] && [ -n "$ACCOUNT" ] && pass "POST /admin/accounts 201 (account $(json_get number <<<"$body"), opened through accounts' internal listener)" || fail "POST /admin/accounts -> $code $body"

# Live order events: the facade reads the settlement stream as its own Redis user (read-only there).
events="$(curl -s -N --max-time 2 -D - -H "authorization: Bearer $JWT" "$FACADE/oms/$ACCOUNT/events" || true)"
if grep -qi "content-type: text/event-stream" <<<"$events" && grep -q "retry: 3000" <<<"$events"; then pass "GET /v1/oms/{accountId}/events streams (text/event-stream)"
else fail "GET /v1/oms/{accountId}/events -> $events"; fi
sleep 1
grep -q "settlement stream for order events failed" "$LOG_DIR/rest-facade.log" && fail "the facade could not read the settlement stream (see $LOG_DIR/rest-facade.log)" || pass "the facade reads the settlement stream as its ACL user"
# Accounts' announcements (the OMS remembers accounts while it hears them): written and read as each one's ACL user.
grep -q "could not announce an accounts change" "$LOG_DIR/accounts.log" && fail "accounts could not write ACCOUNT_CHANGES_STREAM (see $LOG_DIR/accounts.log)" || pass "accounts announces its changes as its ACL user"
grep -q "reading accounts' announcements failed" "$LOG_DIR/oms.log" && fail "the OMS could not read ACCOUNT_CHANGES_STREAM (see $LOG_DIR/oms.log)" || pass "the OMS reads accounts' announcements as its ACL user"

code="$(curl -s -o /dev/null -w '%{http_code}' "$FACADE/accounts")"
[ "$code" = 401 ] && pass "GET /v1/accounts without a token 401" || fail "GET /v1/accounts without token -> $code"

code="$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:${PORT[gateway]}/graphql" -H 'content-type: application/json' -H "x-internal-claims: $JWT" -d '{"query":"{ accounts { id } }"}')"
[ "$code" = 401 ] && pass "public gateway ignores an x-internal-claims header (401)" || fail "public gateway with x-internal-claims -> $code"

# Every service still up after the traffic?
for app in "${APPS[@]}"; do kill -0 "${PID[$app]}" 2>/dev/null || fail "$app died (see $LOG_DIR/$app.log)"; done

exit 0
