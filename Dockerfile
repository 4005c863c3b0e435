# syntax=docker/dockerfile:1
# One image, two roles, chosen by the command (see compose.yaml and docs/deploy.md):
#   node server.js     the web server: Next's standalone output (the default command)
#   npm run worker     a worker: lib/ and worker/ run from source with tsx
# It runs as the image's unprivileged `node` user. Redis and Kafka are not in it.

ARG NODE_VERSION=24

# Every package, for the build (Next, TypeScript and the types the build checks).
FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

FROM deps AS build
COPY . .
# NEXT_OUTPUT=standalone turns on `output: "standalone"` (next.config.mjs): .next/standalone/server.js.
ENV NEXT_TELEMETRY_DISABLED=1 NEXT_OUTPUT=standalone
RUN npm run build

# The production packages only: the worker imports kafkajs, ioredis, openai, gpt-tokenizer… and runs on tsx.
FROM node:${NODE_VERSION}-bookworm-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
WORKDIR /app
# HOSTNAME is what the standalone server binds (Docker would set it to the container's id).
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 HOSTNAME=0.0.0.0 PORT=3000 DATA_DIR=/app/.data
# The standalone server first, then the full production packages over its traced subset of them.
COPY --from=build --chown=node:node /app/.next/standalone ./
COPY --from=build --chown=node:node /app/.next/static ./.next/static
COPY --from=prod-deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node public ./public
# The worker's sources; README.md and docs/ are also local-ngram's training text.
COPY --chown=node:node package.json tsconfig.json README.md ./
COPY --chown=node:node lib ./lib
COPY --chown=node:node worker ./worker
COPY --chown=node:node docs ./docs
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
VOLUME ["/app/.data"]
EXPOSE 3000
CMD ["node", "server.js"]
