# The service in a container: the first stage installs everything and builds (npm ci's prepare:
# the patches, the Prisma client, dist/); the second installs the production dependencies only
# (its prepare sees no dev dependencies and builds nothing) and runs that dist/ as the
# unprivileged `node` user. See docs/operators/production.md.
ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY prisma/migrations ./prisma/migrations
USER node
EXPOSE 8080
# Node images have no curl: node asks /readyz itself (503 while migrations are pending, the
# database is unreachable or the service is shutting down).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is the process the runtime signals (PID 1): SIGTERM starts the graceful shutdown.
CMD ["node", "--max-old-space-size=512", "--require", "./dist/platform-threads-priority.cjs", "dist/main.js"]
