#!/usr/bin/env bash
# Set everything up and run the main job: the pdn-goodput incast sweep.
# Writes results/pdn-goodput.{csv,png,txt,meta.json} (and pdn-completion.*).
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/setup.sh
# the Python side lives in its own virtual environment (scripts/setup.sh)
source "${XCO_VENV:-.venv}/bin/activate"
xco reproduce pdn-goodput --out results "$@"
