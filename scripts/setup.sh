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

# SeaweedFS, the S3-compatible server of the recordings' object-storage tests
# (test/api/calls/recording-s3.test.ts; docs/decisions/0214). `npm start` (--build) does not need
# it; SKIP_S3=1 skips it. Built once (10 minutes or more on 2 cores), then present.
if ! $build && [[ $# -eq 0 && -z "${SKIP_TOOLS:-}" && -z "${SKIP_S3:-}" ]]; then
  bash scripts/install-tools.sh s3
fi

# Debian's chromium for the browser tests (test/e2e/browser-page.test.ts and
# oauth-consent-page.test.ts, driven by playwright-core). `npm start` (--build) does not need it; SKIP_CHROMIUM=1 skips it too.
if ! $build && [[ -z "${SKIP_CHROMIUM:-}" ]]; then
  if [[ -x /usr/bin/chromium ]]; then
    echo "[setup] chromium: present"
  elif ! command -v apt-get >/dev/null 2>&1; then
    echo "[setup] warning: /usr/bin/chromium is missing and there is no apt-get; install Chromium there for the browser page test" >&2
  else
    sudo=()
    if [[ "$(id -u)" != 0 ]]; then
      command -v sudo >/dev/null 2>&1 || { echo "[setup] error: /usr/bin/chromium is missing; run as root or install it: apt-get install chromium" >&2; exit 1; }
      sudo=(sudo)
    fi
    echo "[setup] chromium: installing Debian's package (apt-get install chromium)"
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
    echo "[setup] chromium: installed at /usr/bin/chromium"
  fi
fi

# The tests' Python tools in .venv/: the OpenAPI fuzzer (`npm run test:fuzz`) and PyYAML, a
# YAML 1.1 parser the OpenAPI document must also load in (test/unit/openapi-document.test.ts).
$build || bash scripts/python-tools.sh

# Types generated from the contract (schemas/api-types.d.ts, git-ignored: always current).
npm run --silent gen:types >/dev/null

if $build; then
  echo "[setup] building (TypeScript, OpenAPI types, workflow bundle)"
  npm run --silent build
fi
