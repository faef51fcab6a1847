#!/usr/bin/env bash
# Quick start, step 1: installs what is missing, builds into build/, and runs the demo on one
# machine emulating a cluster of 2 domains x 4 ranks.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
exec "$root/build/bin/tiercc-run" -n 8 --domain-size 4 --timeout 300 "$root/build/bin/tiercc-demo"
