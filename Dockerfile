# One image for the three processes (api, worker, media); docker-compose.yml picks the
# process by command. Build: `docker build -t voice-agent-service .`
#
# Debian (glibc), not Alpine: @temporalio/worker ships a native core bridge built for glibc.
# node:20 tracks the newest 20.x; the project needs Node >= 20.19.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: compile TypeScript into dist/ and prebundle the workflow code ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app

# Dependencies first, so source edits reuse this layer.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

COPY tsconfig.json tsconfig.build.json ./
COPY api ./api
COPY domain ./domain
COPY db ./db
COPY providers ./providers
COPY simulators ./simulators
COPY workflows ./workflows
COPY activities ./activities
COPY workers ./workers
COPY media ./media
COPY schemas ./schemas
COPY config ./config
COPY scripts ./scripts

# openapi-typescript -> schemas/api-types.d.ts, tsc -> dist/, then dist/workflow-bundle.js.
RUN npm run build

# ---- runtime: production dependencies, compiled code and the OpenAPI contract ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app

COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY --from=build /app/dist ./dist
# The API reads the contract at runtime: dist/api/../../schemas/openapi.yaml.
COPY schemas/openapi.yaml ./schemas/openapi.yaml

USER node
EXPOSE 8080 8081
CMD ["node", "dist/api/server.js"]
