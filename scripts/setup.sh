#!/usr/bin/env bash
# Installs whatever is missing on this machine, so that `npm start` and `npm test` work on a
# fresh clone: npm dependencies, then the local infrastructure tools. Idempotent.
# Usage: setup.sh [--build] [tool ...]   (tools as in install-tools.sh; none: all)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

build=false
if [[ "${1:-}" == "--build" ]]; then build=true; shift; fi

node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error(`[setup] error: Node.js >= 20.19 is needed, this is ${process.versions.node}`); process.exit(1); }'

# npm ci when node_modules is absent or older than the lock file.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "[setup] installing npm dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
else
  echo "[setup] npm dependencies: present"
fi

[[ -n "${SKIP_TOOLS:-}" ]] || bash scripts/install-tools.sh "$@"

# Types generated from the contract (schemas/api-types.d.ts, git-ignored: always current).
npm run --silent gen:types >/dev/null

if $build; then
  echo "[setup] building (TypeScript, OpenAPI types, workflow bundle)"
  npm run --silent build
fi
