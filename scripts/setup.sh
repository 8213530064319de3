#!/usr/bin/env bash
# Install everything xco needs on a fresh Debian machine (idempotent).
#
# Rust (rustup's cargo) and CPython >= 3.10 are expected. The Python side goes
# into a virtual environment of its own, ./.venv in this checkout (XCO_VENV
# names another), so a system Python that refuses `pip install` (PEP 668, as
# Debian 12's does) is never touched. After this script:
#     source .venv/bin/activate      # puts `xco`, `pytest`, `ruff` on PATH
# run.sh and test.sh activate it themselves.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v tshark >/dev/null 2>&1 || need_apt+=(tshark)
# the real-host testbed: iptables (NFQUEUE rules), ethtool (offloads), iperf3, ping
command -v iptables >/dev/null 2>&1 || need_apt+=(iptables)
command -v ethtool >/dev/null 2>&1 || need_apt+=(ethtool)
command -v iperf3 >/dev/null 2>&1 || need_apt+=(iperf3)
command -v ping >/dev/null 2>&1 || need_apt+=(iputils-ping)
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)
# the real-host tests run a controller under a faked wall clock (a clock step)
command -v faketime >/dev/null 2>&1 || need_apt+=(faketime)
# the docs tests open every page in a real headless browser: Debian's chromium and its driver
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need_apt+=(chromium-driver)
# the operator guide's commands (run by the docs test) read the daemons' /metrics with curl
command -v curl >/dev/null 2>&1 || need_apt+=(curl)

python="${PYTHON:-python3}"
if ! command -v "$python" >/dev/null 2>&1; then
  echo "setup: no $python on PATH; install CPython >= 3.10 (Debian: apt-get install python3)" >&2
  exit 1
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "setup: $("$python" --version 2>&1) is too old; xco needs CPython >= 3.10" >&2
  exit 1
fi
# Debian splits venv's pip bootstrap (ensurepip) into python3-venv
if ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
  pyver="$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
  need_apt+=("python${pyver}-venv")
fi

if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "setup: apt-get install ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "setup: please install with your package manager: ${need_apt[*]}" >&2
  fi
fi

venv="${XCO_VENV:-.venv}"
# a venv whose interpreter is gone (its Python was removed or moved) is made anew
if [ -d "$venv" ] && ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
  echo "setup: $venv is broken (its Python no longer runs); making it anew"
  rm -rf -- "$venv"
fi
if [ ! -d "$venv" ]; then
  echo "setup: a virtual environment in $venv (from $(command -v "$python"), $("$python" --version 2>&1))"
  if ! "$python" -m venv "$venv"; then
    echo "setup: '$python -m venv $venv' failed; on Debian install python3-venv (as root: apt-get install python3-venv)" >&2
    exit 1
  fi
fi
vpy="$venv/bin/python"
# the build backend (maturin) calls its own command by name: the venv comes first on PATH
export VIRTUAL_ENV="$(cd "$venv" && pwd)"
export PATH="$VIRTUAL_ENV/bin:$PATH"

# pip's own messages are kept unless it succeeds; a failure stops the set-up with them
pip_install() {
  local log
  log="$(mktemp)"
  if ! "$vpy" -m pip install -q --disable-pip-version-check "$@" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "setup: pip install $* failed (above)" >&2
    exit 1
  fi
  rm -f "$log"
}

echo "setup: python packages and the xco extension into $venv (a release build of the Rust core)"
pip_install "maturin>=1.5,<2"
# dev: pytest, ruff; docs: mkdocs (Material, mkdocstrings), selenium, nbclient and ipykernel
pip_install --no-build-isolation -e ".[dev,docs]"

echo "setup: the XCo daemons (cargo build --release -p xco-daemon)"
cargo build -q --release -p xco-daemon
daemon="${CARGO_TARGET_DIR:-target}/release/xco-daemon"
prefix="${XCO_PREFIX:-/usr/local}"
if [ -w "$prefix" ] || [ "$(id -u)" -eq 0 ]; then
  # a copy, not a link: it keeps working if this checkout moves or is rebuilt half-way
  install -D -m 0755 "$daemon" "$prefix/bin/xco-daemon"
  install -D -m 0644 docs/deployment.md "$prefix/share/doc/xco/deployment.md"
  echo "setup: installed $prefix/bin/xco-daemon ($("$prefix/bin/xco-daemon" --version))"
else
  echo "setup: to put xco-daemon on PATH: sudo install -m 0755 $daemon $prefix/bin/xco-daemon"
fi
"$vpy" -c "import xco; print('setup: xco', xco.__version__, 'ready in $venv')"
echo "setup: for xco on PATH in this shell: source $venv/bin/activate"
