#!/usr/bin/env bash
# DDP step time of examples/torch/ddp_train.py through tiercc and gloo, side by side: launches
# alternate between the backends, and each prints its mean step time (warm-up steps left out).
# Usage: bench/torch/ddp.sh [--build DIR] [--launches N] [--layouts 1x2,2x2] [-- ddp_train.py flags]
# (default flags: --params 25M --steps 12)
set -Eeuo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build
launches=2
layouts=1x2,2x2
flags=(--params 25M --steps 12)
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --launches) launches=$2; shift 2 ;;
    --layouts) layouts=$2; shift 2 ;;
    --) shift; flags=("$@"); break ;;
    *) echo "unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
export PYTHONPATH=$build/python OMP_NUM_THREADS=1 GLOO_SOCKET_IFNAME=lo
echo "command: $0 --launches $launches --layouts $layouts -- ${flags[*]}; $(git -C "$root" rev-parse --short HEAD)"
echo "| layout | backend | mean step, ms (each launch) |"
echo "|---|---|---|"
for layout in ${layouts//,/ }; do
  case $layout in
    1x2) job=(-n 2) ;;
    2x2) job=(-n 4 --domain-size 2) ;;
    *) echo "unknown layout '$layout'" >&2; exit 2 ;;
  esac
  declare -A times=()
  for ((i = 0; i < launches; i++)); do
    for backend in tiercc gloo; do
      line=$(timeout 900 "$build/bin/tiercc-run" "${job[@]}" /usr/bin/python3 "$root/examples/torch/ddp_train.py" \
        --backend "$backend" "${flags[@]}" | grep "mean step")
      times[$backend]+="$(awk '{for (i = 1; i <= NF; i++) if ($i == "step") print $(i + 1)}' <<<"$line") "
    done
  done
  for backend in tiercc gloo; do echo "| $layout | $backend | ${times[$backend]}|"; done
  unset times
done
