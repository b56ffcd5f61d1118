# syntax=docker/dockerfile:1
# One image for every process of the distributed mode; the service is the command:
#   docker build -t lead-capture .
#   docker run lead-capture services/scoring/dist/main.js      (default: the gateway)
# Stages: build (full install, the dashboard, `pnpm build`, then dev dependencies and sources
# dropped) -> runtime (plain node, non-root, no dev dependencies, no TypeScript).

ARG NODE_IMAGE=node:20.19-bookworm-slim

FROM ${NODE_IMAGE} AS build
ARG PNPM_VERSION=10.34.9
RUN npm install -g pnpm@${PNPM_VERSION}
WORKDIR /app
# Dependencies first, from the lockfile alone, so source changes reuse this layer.
COPY pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN pnpm fetch
COPY . .
# The full install also builds the dashboard (root `prepare`); `pnpm build` transpiles every package to dist/.
RUN pnpm install --offline --frozen-lockfile && pnpm build
# Production dependencies only; then nothing the processes do not run.
RUN pnpm install --offline --frozen-lockfile --prod --ignore-scripts \
 && find packages services -path '*/node_modules' -prune -o -type d \( -name src -o -name test -o -name bench \) -print \
    | xargs rm -rf \
 && rm -rf e2e deploy scripts docs .ci

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/app/data
WORKDIR /app
COPY --from=build /app /app
# The image's own `node` user (uid 1000); the code stays root-owned and read-only to it.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 3000 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `lead-capture-build` makes every @lead-capture/* import resolve to its dist/ (see each package.json).
ENTRYPOINT ["node", "--heap-growing-percent=50", "--no-memory-reducer", "--conditions=lead-capture-build", "--enable-source-maps"]
CMD ["services/gateway/dist/main.js"]
