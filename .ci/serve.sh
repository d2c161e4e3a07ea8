#!/usr/bin/env bash
# README command 1: set up what is missing, then build and serve the lab page on http://127.0.0.1:8080.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source .ci/setup.sh
exec trunk serve --release
