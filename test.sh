#!/usr/bin/env bash
# Run every check and test: Rust (rustfmt, clippy -D warnings, unit and
# integration tests) and Python (ruff, pytest). Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
# ruff, pytest and the xco package live in the set-up's virtual environment
source "${XCO_VENV:-.venv}/bin/activate"
echo "== rustfmt";  cargo fmt --all --check
echo "== clippy";   cargo clippy -q --workspace --all-targets --release -- -D warnings
# the planted protocol bugs (tests only) must keep compiling: the harnesses'
# mutation sweeps (docs/control-plane.md) are run by hand, not here
echo "== clippy (planted bugs)"; cargo clippy -q -p xco-core -p xco-sim --features xco-sim/mutations --all-targets --release -- -D warnings
echo "== cargo test"; cargo test -q --workspace --exclude xco-py --release
# the core again with its debug assertions live (internal orderings and
# invariants the release build does not check)
echo "== cargo test (xco-core, debug assertions)"; cargo test -q -p xco-core
echo "== ruff";     ruff check python tests scripts; ruff format --check python tests scripts
echo "== pytest";   python3 -m pytest -q tests
