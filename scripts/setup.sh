#!/usr/bin/env bash
# Install everything xco needs on a fresh Debian machine (idempotent).
# Rust and Python are expected (rustup's cargo, CPython >= 3.10 with pip).
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
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "setup: apt-get install ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "setup: please install with your package manager: ${need_apt[*]}" >&2
  fi
fi

echo "setup: python packages and the xco extension (a release build of the Rust core)"
python3 -m pip install -q --disable-pip-version-check "maturin>=1.5,<2" 2>&1 | grep -v "Running pip as the 'root' user" || true
python3 -m pip install -q --disable-pip-version-check --no-build-isolation -e ".[dev]" 2>&1 \
  | grep -v "Running pip as the 'root' user" || true
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
python3 -c "import xco; print('setup: xco', xco.__version__, 'ready')"
