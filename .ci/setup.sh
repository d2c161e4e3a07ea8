#!/usr/bin/env bash
# Installs what warpscope's build and tests need, only where it is missing or at the wrong version.
# Sourced by .ci/serve.sh and .ci/test.sh; safe to run again (a tool present at the pinned version is reused).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TRUNK_VERSION=0.21.14
# wasm-bindgen-cli must equal the wasm-bindgen crate in Cargo.lock.
WB_VERSION=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/"/, "", $3); print $3; exit}' Cargo.lock)
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PWD/node_modules/.bin:$PATH"

# Each line says how long the shell has run (bash's SECONDS), so a log shows where a fresh machine's time goes.
say() { printf '[setup, %s s] %s\n' "$SECONDS" "$*"; }

command -v cargo >/dev/null || { echo "[setup] cargo is missing: install Rust (rustup) first" >&2; exit 1; }

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# The two tools are built for this machine, not shipped: their release profiles' fat LTO and single codegen
# unit would make trunk alone take about 9 minutes on 2 cores. Built without them (and at opt-level 1) trunk
# took 5 m 22 s and wasm-bindgen-cli 2 m 11 s on such a machine with a build beside them, and the optimized
# builds run as fast here (wasm-bindgen on the page's main module: 0.15 s against 0.16 s).
install_tool() {
  CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_OPT_LEVEL=1 \
    CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_INCREMENTAL=false cargo install "$@"
}

if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WB_VERSION" ]; then
  say "installing wasm-bindgen-cli $WB_VERSION (about 2 minutes)"
  # Not --locked: its locked tree asks for a webpki-roots version the registry mirror here lacks.
  install_tool wasm-bindgen-cli --version "$WB_VERSION" --force
fi

if [ "$(trunk --version 2>/dev/null | awk '{print $2}')" != "$TRUNK_VERSION" ]; then
  say "installing trunk $TRUNK_VERSION (about 5 minutes)"
  install_tool trunk --version "$TRUNK_VERSION" --locked --force
fi

if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -x node_modules/.bin/esbuild ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm tools (binaryen's wasm-opt, esbuild and CodeMirror for the editor, playwright-core)"
  npm ci --no-audit --no-fund
fi

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  say "installing chromium and chromium-driver"
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# The Python package's build tool, in a virtual environment of its own (kept between runs, like the tools above).
MATURIN_VERSION=1.16.0
if [ "$(.tools/maturin/bin/maturin --version 2>/dev/null | awk '{print $2}')" != "$MATURIN_VERSION" ]; then
  say "installing maturin $MATURIN_VERSION (the Python package's build tool) into .tools/maturin"
  rm -rf .tools/maturin
  python3 -m venv .tools/maturin
  .tools/maturin/bin/pip install --quiet --disable-pip-version-check "maturin==$MATURIN_VERSION"
fi

# Trunk runs cargo offline (Trunk.toml), so the registry must be filled first.
say "filling the cargo registry (cargo fetch, for the crate and the Python package)"
cargo fetch --locked >/dev/null
cargo fetch --locked --manifest-path python/Cargo.toml >/dev/null
say "tools ready: $(trunk --version), wasm-bindgen $WB_VERSION, $(wasm-opt --version | head -1)"
