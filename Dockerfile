# One image for every service; the compose file picks the entry point per service.
FROM node:24-bookworm-slim
WORKDIR /app
# Two malloc arenas a process, as scripts/start.ts sets: see the comment there.
ENV NODE_ENV=production MALLOC_ARENA_MAX=2
COPY package.json package-lock.json turbo.json tsconfig.base.json ./
COPY shared/package.json shared/
COPY services/api/package.json services/api/
COPY services/ingestor/package.json services/ingestor/
COPY services/worker/package.json services/worker/
COPY services/exchange-sim/package.json services/exchange-sim/
COPY test/package.json test/
COPY clients/typescript/package.json clients/typescript/
RUN npm ci --no-audit --no-fund --include=dev
COPY shared shared
COPY services services
COPY scripts scripts
# Each service as one bundle (scripts/lib/build.ts): no TypeScript loader in the running processes.
RUN npm run build
USER node
# API (PORT), ingestor and worker ops ports (INGESTOR_PORT, WORKER_PORT), simulator (SIM_PORT).
EXPOSE 3000 3001 3002 4000
# Health checks live in docker-compose.yml (/healthz, /readyz); each service exits within 10 s of SIGTERM.
# Overridden per service in docker-compose.yml.
# The API's V8 heap flags: scripts/lib/node-args.ts (peak RSS; test/infra/compose.unit.test.ts keeps them equal).
CMD ["node", "--max-semi-space-size=4", "--initial-old-space-size=32", "--heap-growing-percent=50", "services/api/dist/main.mjs"]
