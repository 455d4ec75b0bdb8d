#!/usr/bin/env bash
# `npm run audit`: the runtime dependencies (package-lock.json, dev dependencies left out)
# checked against the npm registry's advisory database (`npm audit`), failing at
# AUDIT_LEVEL (default moderate) or above. Arguments go to npm audit (`npm run audit --
# --include=dev` adds the test tooling). Exit codes: 0 no advisory at that level, 1 advisories
# found, 2 the check could not run (the advisory endpoint refused or was unreachable), which
# is never reported as a pass.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
errors="$(mktemp)"
trap 'rm -f "$errors"' EXIT

npm audit --omit=dev --audit-level="${AUDIT_LEVEL:-moderate}" "$@" 2> >(tee "$errors" >&2)
status=$?
wait
if grep -q 'audit endpoint returned an error\|ENOTFOUND\|ECONNREFUSED\|ECONNRESET\|ETIMEDOUT\|EAI_AGAIN' "$errors"; then
  echo "npm run audit: the advisory endpoint could not be used; dependencies were NOT checked." >&2
  exit 2
fi
exit "$status"
