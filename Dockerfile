# syntax=docker/dockerfile:1
#
# One image for every app of the trading API. The build stage bundles all seven apps with Nx
# (dist/apps/<app>/main.js, third-party packages left external); the runtime stage has the
# production node_modules and dist/, and runs the app named by APP:
#
#   docker build -t trading-api .                      # APP defaults to platform (all-in-one)
#   docker build -t trading-api-auth --build-arg APP=auth .
#   docker run -e APP=gateway … trading-api            # or choose at run time
#   docker run trading-api node dist/apps/oms/main.js  # or by the command
#
# Apps: auth, gateway, rest-facade, accounts, banking, oms, platform. docker-compose.yml runs
# them as separate services.

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
 && ls dist/apps/*/main.js

# ---- production node_modules ----------------------------------------------------------------
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund

# ---- runtime ---------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ARG APP=platform
ENV NODE_ENV=production \
    APP=${APP} \
    NODE_OPTIONS=--enable-source-maps
WORKDIR /app
COPY --from=prod-deps --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /src/dist ./dist
COPY --chown=node:node package.json ./
USER node
# Documentation only; each app's port comes from its own variable (AUTH_PORT, GATEWAY_PORT, …).
EXPOSE 8080 8081 4000 4001 4002 4003
# exec: node is PID 1 and gets SIGTERM itself (every app drains and exits on it).
CMD ["/bin/sh", "-c", "exec node \"dist/apps/${APP}/main.js\""]
