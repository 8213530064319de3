#!/usr/bin/env bash
# The README's set-up as a new user on stock Debian 12 meets it: a clean clone
# of this checkout's HEAD, Debian's own /usr/bin/python3 (PEP 668's
# EXTERNALLY-MANAGED marker and all) first on PATH, then `bash run.sh` and the
# README's later commands after `source .venv/bin/activate`.
#
#   bash scripts/check-fresh-debian.sh [WORKDIR]
#
# WORKDIR (default: a new temporary folder) receives the clone; it is removed
# at the end unless given. CARGO_TARGET_DIR, if set, is used for the Rust build
# (a warm target saves minutes; the Python side is made fresh either way).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -x /usr/bin/python3 ]; then
  echo "check: no /usr/bin/python3 (Debian's Python); nothing to check here" >&2
  exit 2
fi
keep=1
work="${1:-}"
if [ -z "$work" ]; then
  work="$(mktemp -d -t xco-fresh-XXXXXX)"
  keep=0
fi
cleanup() { if [ "$keep" -eq 0 ]; then rm -rf -- "$work"; fi; }
trap cleanup EXIT

git clone -q "$repo" "$work/xco"
cd "$work/xco"
# Debian's Python first, as on a stock machine; cargo stays reachable
cargo_dir="$(dirname "$(command -v cargo)")"
export PATH="/usr/bin:/bin:/usr/sbin:/sbin:$cargo_dir"
echo "check: clean clone of $(git -C "$repo" rev-parse --short HEAD) in $work/xco"
echo "check: python3 is $(command -v python3) ($(python3 --version 2>&1)); marker: $(ls /usr/lib/python3*/EXTERNALLY-MANAGED 2>/dev/null || echo none)"
echo "check: pip install outside a venv, as PEP 668 has it:"
if python3 -m pip install --dry-run six >"$work/pep668.log" 2>&1; then
  echo "  (no refusal: this Python is not externally managed)"
else
  grep -m1 -o "externally-managed-environment" "$work/pep668.log" || tail -n 3 "$work/pep668.log"
fi
echo "check: bash run.sh"
bash run.sh
echo "check: the README's later commands, after 'source .venv/bin/activate'"
# shellcheck disable=SC1091
source .venv/bin/activate
echo "check: xco is $(command -v xco); python3 is $(command -v python3)"
# whole outputs into files, then their heads: a pipe into head can close before xco has
# written all (EPIPE, exit 2 under pipefail)
xco --help >"$work/help.txt"; head -n 3 "$work/help.txt"
xco list >"$work/list.txt"; head -n 3 "$work/list.txt"
xco sim check scenarios/incast.toml
# the campaign engine's dependencies (Dask, pyarrow) came with the set-up
xco sweep examples/incast-sweep.toml --out "$work/campaign" --seeds 1 -q
echo "check: passed"
