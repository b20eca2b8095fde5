# The service in a container: dist/ is built in the first stage; the second runs it with the
# production dependencies only, as the unprivileged `node` user. See docs/operators/production.md.
ARG NODE_VERSION=20.20.2

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Install scripts are the project's postinstall (generate the Prisma client, build), which needs
# the sources; the dependencies' own scripts are not needed to build.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run postinstall

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
# --ignore-scripts: the postinstall would rebuild dist/ from sources this stage does not have. The
# Prisma client is generated into src/ and compiled into dist/, so nothing needs generating here;
# the patches to dependencies (patches/) are applied as the postinstall applies them.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npx patch-package --error-on-fail --error-on-warn && npm cache clean --force
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
