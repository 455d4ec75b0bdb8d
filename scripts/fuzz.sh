#!/usr/bin/env bash
# `npm run test:fuzz`: the OpenAPI fuzzer (schemathesis, pinned in test/fuzz/requirements.txt,
# installed into the git-ignored .venv/) against the whole stack on free ports
# (test/fuzz/run.ts). Arguments go to schemathesis: `npm run test:fuzz -- --max-examples 5`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
SKIP_CHROMIUM=1 bash scripts/setup.sh temporal ferretdb
exec npx tsx test/fuzz/run.ts "$@"
