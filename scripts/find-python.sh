#!/usr/bin/env bash
# Print the path of a Python >= 3.12 interpreter, or fail with a clear message.
# Order: $PYTHON, versioned names on PATH, pyenv's versions, plain python3.
set -euo pipefail

ok() {
  "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1
}

candidates=()
[ -n "${PYTHON:-}" ] && candidates+=("$PYTHON")
for name in python3.14 python3.13 python3.12; do
  command -v "$name" >/dev/null 2>&1 && candidates+=("$(command -v "$name")")
done
pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
if [ -d "$pyenv_root/versions" ]; then
  # Newest first; only plain CPython releases (3.12.1, 3.13.0, ...).
  while IFS= read -r version; do
    candidates+=("$pyenv_root/versions/$version/bin/python")
  done < <(ls "$pyenv_root/versions" | grep -E '^3\.[0-9]+\.[0-9]+$' | sort -t. -k1,1n -k2,2n -k3,3n -r)
fi
command -v python3 >/dev/null 2>&1 && candidates+=("$(command -v python3)")

for candidate in "${candidates[@]}"; do
  if [ -x "$candidate" ] && ok "$candidate"; then
    # Resolve shims (pyenv) to the real interpreter so the venv does not depend on them.
    "$candidate" -c 'import sys; print(sys.executable)'
    exit 0
  fi
done
echo "error: no Python >= 3.12 found (tried: ${candidates[*]:-nothing}). Install one or set PYTHON=/path/to/python3.12." >&2
exit 1
