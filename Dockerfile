# The broker (or any area-metrics command) in a container: built in one stage, run from production dependencies only,
# as a user without privileges. Build: docker build -t area-metrics .
# Run:   docker run -p 8080:8080 -v /etc/area-metrics/broker.json:/config/broker.json:ro \
#          -e ANDROID_SECRET=... area-metrics broker --config /config/broker.json --host 0.0.0.0

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: no dependency needs an install script, and none gets to run one.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.mjs ./scripts/
COPY bin ./bin
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist ./dist
# The image's `node` user (uid 1000): nothing in /app is writable by it.
USER node
EXPOSE 8080
# The broker's liveness; for readiness (drain, Redis, platform states) point the load balancer at /readyz.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.AREA_METRICS_BROKER_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM (docker stop) drains: set server.shutdownDelaySeconds below the orchestrator's grace period.
ENTRYPOINT ["node", "/app/bin/area-metrics.js"]
CMD ["broker", "--config", "/config/broker.json", "--host", "0.0.0.0", "--port", "8080"]
