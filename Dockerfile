# One image for both processes: the gateway (default command) and the listings data service
# (`command: ["node", "dist/backend-mock/main.js"]`).
# The Node base image of both stages, one build argument: a tag by default, or pinned by digest,
# `docker build --build-arg NODE_IMAGE=node:26-trixie-slim@sha256:<digest> .` (the digest of the
# tag today: `docker buildx imagetools inspect node:26-trixie-slim`), so a rebuild gets the same base.
ARG NODE_IMAGE=node:26-trixie-slim
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY gateway gateway
COPY backend-mock backend-mock
COPY scripts scripts
RUN npx tsc -p tsconfig.json && npm prune --omit=dev

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json ./
COPY config config
COPY openapi openapi
# The console's and the portal's stylesheets (and the console's script), read at start-up (the only
# non-compiled files under gateway/).
COPY gateway/console/assets gateway/console/assets
COPY gateway/portal/assets gateway/portal/assets
USER node
# 8080 the gateway (PORT), 8081 the data service (BACKEND_PORT), 9090 the admin API, 9091 the ops listener,
# 8083 the key holders' portal where PORTAL_PORT sets it (docker-compose.yml does for gateway-1).
EXPOSE 8080 8081 8083 9090 9091
# A young generation of 4 MB semi-spaces: under load V8 26's own sizing lets RSS reach ~190 MB with one
# key, this keeps it ~135 MB at the same CPU per request (docs/benchmark.md, "Memory").
CMD ["node", "--max-semi-space-size=4", "dist/gateway/main.js"]
