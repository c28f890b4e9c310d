#!/usr/bin/env bash
# Regenerate requirements.lock: the exact versions a fresh install of citewise with its test extra
# resolves to today (pyproject.toml holds the lower-bounded ranges). Run from the repository root;
# commit the result with the pyproject change that needed it.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q -e '.[test]'
{
  echo "# Exact versions for pip install -c requirements.lock -e '.[test]' (tools/lock.sh writes this file)."
  "$tmp/venv/bin/pip" freeze --exclude-editable | grep -v '^-e ' | LC_ALL=C sort -f
} > requirements.lock
echo "wrote requirements.lock ($(grep -vc '^#' requirements.lock) packages)"
