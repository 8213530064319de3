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
echo "setup: the XCo daemons (cargo build --release -p xco-daemon -> target/release/xco-daemon)"
cargo build -q --release -p xco-daemon
python3 -c "import xco; print('setup: xco', xco.__version__, 'ready')"
