#!/usr/bin/env bash
# `npm start`: install what is missing, build, and launch the whole stack (scripts/launch.ts).
# Only the servers that will be embedded are installed: none for MONGODB_URI/TEMPORAL_ADDRESS.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

tools=()
[[ -n "${TEMPORAL_ADDRESS:-}" ]] || tools+=(temporal)
[[ -n "${MONGODB_URI:-}" ]] || tools+=(ferretdb)
if [[ ${#tools[@]} -gt 0 ]]; then
  bash scripts/setup.sh --build "${tools[@]}"
else
  SKIP_TOOLS=1 bash scripts/setup.sh --build
fi
exec node dist/scripts/launch.js
