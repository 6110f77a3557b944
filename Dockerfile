# syntax=docker/dockerfile:1
# One image for every tenantplane service. The command selects the service:
#   node services/<name>/dist/bundle/main.js   (the Helm chart sets it per Deployment)
# Each service runs from its bundle (services/bundle.mjs): one file holding only the code it
# reaches, which keeps its idle memory near a bare Node.js process (bench/footprint.ts).
# Build from the repository root: docker build -t ghcr.io/tenantplane/tenantplane:0.1.0 .

ARG NODE_IMAGE=node:20-bookworm-slim

# Only the npm manifests, so the dependency layer below is rebuilt when they change
# and not on every source edit.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN find . -type f ! -name package.json ! -name package-lock.json ! -name .npmrc -delete \
 && find . -depth -type d -empty -delete

FROM ${NODE_IMAGE} AS build
WORKDIR /src
ENV CI=true \
    TURBO_TELEMETRY_DISABLED=1 \
    NPM_CONFIG_UPDATE_NOTIFIER=false
COPY --from=manifests /src/ ./
RUN npm ci
COPY . .
RUN npx turbo run build
RUN npm prune --omit=dev
# Gather what runs: production node_modules (workspace links included) and, per
# workspace, package.json (its `exports`), dist/ and data files such as the CRDs.
RUN mkdir -p /out \
 && cp package.json /out/ \
 && cp -a node_modules /out/ \
 && rm -f /out/node_modules/@tenantplane/test \
 && for dir in libs/* services/*; do \
      mkdir -p "/out/$dir" && cp "$dir/package.json" "/out/$dir/" && cp -a "$dir/dist" "/out/$dir/"; \
      for extra in crds node_modules; do \
        if [ -d "$dir/$extra" ]; then cp -a "$dir/$extra" "/out/$dir/"; fi; \
      done; \
    done

FROM ${NODE_IMAGE}
LABEL org.opencontainers.image.title="tenantplane" \
      org.opencontainers.image.description="Explainability-first control plane for virtual Kubernetes tenants" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV NODE_ENV=production
# The services are I/O-bound controllers with small, short-lived young objects: a 2 MiB
# semi-space keeps scavenges short and saves the 10-15 MiB of resident young generation V8
# grows into during start-up (bench/footprint.ts measures both settings on every run).
ENV NODE_OPTIONS="--max-semi-space-size=2"
WORKDIR /app
COPY --from=build /out/ ./
# Files stay root-owned and read-only to the service user.
USER 10001:10001
EXPOSE 8080
# No default service: the command names one, e.g. ["node", "services/watcher/dist/bundle/main.js"].
