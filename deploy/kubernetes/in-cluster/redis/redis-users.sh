#!/bin/sh
# Starts redis-server with one ACL user per service (and the default user off), so a service
# reaches only the keys its job needs: a leaked banking password cannot read sessions, and the
# edges can read session state but not write it (the facade reads the settlement stream for
# clients' live order events, and cannot write it; the OMS, its producer, reads it only to check
# that Redis still holds what it published). Auth and both edges share the DPoP proofs' replay
# cache (dpop-jti:*: SET NX with a TTL, one key per proof). The one place these rules are written:
# docker-compose.yml runs this script in the redis container, the service-mode smoke test runs
# it on this machine. The OMS writes the market ticks stream (live quotes, MARKET_TICKS_STREAM),
# which the facade only reads. Accounts writes its changes stream (ACCOUNT_CHANGES_STREAM), which
# the OMS only reads: the OMS remembers accounts while accounts says it is listening.
#
#   REDIS_AUTH_PASSWORD=… REDIS_FACADE_PASSWORD=… REDIS_GATEWAY_PASSWORD=… REDIS_ACCOUNTS_PASSWORD=… \
#   REDIS_BANKING_PASSWORD=… REDIS_OMS_PASSWORD=… EVENTS_STREAM=trading:oms:events \
#     sh tools/service-mode/redis-users.sh [redis-server options…]
#
# Every user may run the ordinary data commands but nothing @dangerous (FLUSHALL, KEYS, CONFIG,
# DEBUG, …); INFO stays allowed because the client's ready check sends it.
set -eu
: "${REDIS_AUTH_PASSWORD:?}" "${REDIS_FACADE_PASSWORD:?}" "${REDIS_GATEWAY_PASSWORD:?}"
: "${REDIS_ACCOUNTS_PASSWORD:?}" "${REDIS_BANKING_PASSWORD:?}" "${REDIS_OMS_PASSWORD:?}"
STREAM="${EVENTS_STREAM:-trading:oms:events}"
TICKS="${MARKET_TICKS_STREAM:-trading:market:ticks}"
CHANGES="${ACCOUNT_CHANGES_STREAM:-trading:accounts:changes}"
COMMANDS="+@all -@dangerous +info"

# shellcheck disable=SC2086 # COMMANDS and the key patterns are meant to split into words
exec redis-server "$@" \
  --user default off \
  --user auth on ">$REDIS_AUTH_PASSWORD" resetkeys '~session:*' '~session-used:*' '~pat-sessions:*' '~grant-sessions:*' '~oauth-*' '~browser-session:*' '~browser-sessions-ended:*' '~signin-second-factor:*' '~passkey-challenge:*' '~dashboard-flash:*' '~pat-logins:*' '~ratelimit:*' '~dpop-jti:*' "~$STREAM" $COMMANDS \
  --user rest-facade on ">$REDIS_FACADE_PASSWORD" resetkeys '%R~session:*' '~session-used:*' '~ratelimit:*' '~dpop-jti:*' "%R~$STREAM" "%R~$TICKS" $COMMANDS \
  --user gateway on ">$REDIS_GATEWAY_PASSWORD" resetkeys '%R~session:*' '~session-used:*' '~ratelimit:*' '~dpop-jti:*' $COMMANDS \
  --user oms on ">$REDIS_OMS_PASSWORD" resetkeys "~$STREAM" "~$TICKS" "%R~$CHANGES" $COMMANDS \
  --user banking on ">$REDIS_BANKING_PASSWORD" resetkeys "~$STREAM" "~$STREAM:*" $COMMANDS \
  --user accounts on ">$REDIS_ACCOUNTS_PASSWORD" resetkeys "~$STREAM" "~$STREAM:*" "~$CHANGES" $COMMANDS
