# syntax=docker/dockerfile:1
#
# One image for every app of the trading API. The build stage bundles all seven apps with Nx
# (dist/apps/<app>/main.js, third-party packages left external); the runtime stage has the
# production node_modules and dist/, and runs the app named by APP:
#
#   docker build -t trading-api .                      # APP defaults to rest-facade
#   docker build -t trading-api-auth --build-arg APP=auth .
#   docker run -e APP=gateway … trading-api            # or choose at run time
#   docker run trading-api node dist/apps/oms/main.js  # or by the command
#
# Apps: auth, gateway, rest-facade, accounts, banking, oms. docker-compose.yml runs them as
# separate services. The all-in-one demo platform is built too (dist/apps/platform) but refuses
# to start here: the image sets NODE_ENV=production, and the demo is for a developer's machine.

ARG NODE_IMAGE=node:20-slim

# ---- dependencies (all, for the build) ------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund

# ---- build: nx run-many -t build -------------------------------------------------------------
FROM deps AS build
ENV NX_DAEMON=false \
    NX_NO_CLOUD=true \
    NX_TUI=false
COPY nx.json tsconfig.base.json tsconfig.json jest.preset.js ./
COPY libs ./libs
COPY apps ./apps
RUN npx nx run-many -t build --outputStyle=static \
 && test -f dist/apps/gateway/supergraph.graphql \
 && test -f dist/apps/platform/supergraph.graphql \
 && test -f dist/apps/oms/oms-service/orders/orders.graphql \
 && test -f dist/apps/accounts/accounts-service/accounts/accounts.graphql \
 && test -f dist/apps/banking/banking-service/funding/funding.graphql \
 && test -f dist/apps/platform/oms-service/orders/orders.graphql \
 && ls dist/apps/*/main.js

# ---- production node_modules ----------------------------------------------------------------
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund

# ---- runtime ---------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ARG APP=rest-facade
ENV NODE_ENV=production \
    APP=${APP} \
    NODE_OPTIONS=--enable-source-maps
WORKDIR /app
COPY --from=prod-deps --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /src/dist ./dist
COPY --chown=node:node package.json ./
USER node
# Documentation only; each app's ports come from its own variables (AUTH_PORT, AUTH_INTERNAL_PORT, …).
# Public: 8080 facade, 8081 auth, 4000 gateway (4001-4003 subgraphs: health only). Internal: the same + 100.
# Admin: 8189 (auth only; publish it on the host's loopback).
EXPOSE 8080 8081 4000 4001 4002 4003 8180 8181 4100 4101 4102 4103 8189
# exec: node is PID 1 and gets SIGTERM itself (every app drains and exits on it).
CMD ["/bin/sh", "-c", "exec node \"dist/apps/${APP}/main.js\""]
