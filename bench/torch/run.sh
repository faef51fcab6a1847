#!/usr/bin/env bash
# tiercc against gloo inside torch.distributed, same tensors, same job (collectives.py), on
#   1x2  two ranks, one domain (shared memory);
#   2x2  two domains of two ranks on this machine (tiercc-run --domain-size 2);
#   net  2x2 over bench/two-tier-net.sh's namespaces, one rate-limited rail per local rank.
# Usage: bench/torch/run.sh [--build DIR] [--rate RATE] [--layouts 1x2,2x2,net] [-- collectives.py flags]
# Prints one markdown table per layout. Needs root for the net layout (network namespaces).
set -Eeuo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build
rate=4gbit
layouts=1x2,2x2,net
extra=()
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --layouts) layouts=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
[[ -x $build/bin/tiercc-run && -d $build/python/tiercc ]] || { echo "no tiercc-run or python package in $build" >&2; exit 1; }
export PYTHONPATH=$build/python OMP_NUM_THREADS=1
run=$build/bin/tiercc-run
bench=(/usr/bin/python3 "$here/collectives.py" "${extra[@]}")
echo "command: $0 --layouts $layouts --rate $rate ${extra[*]:+-- ${extra[*]}}; $(git -C "$root" rev-parse --short HEAD)"
echo "torch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)'), gloo as torch ships it"
for layout in ${layouts//,/ }; do
  echo
  case $layout in
    1x2)
      echo "## 1x2: one domain of 2 ranks"
      GLOO_SOCKET_IFNAME=lo timeout 900 "$run" -n 2 "${bench[@]}" | sed -n 's/^\[r0\.d0\] //p' ;;
    2x2)
      echo "## 2x2: two domains of 2 ranks, one host"
      GLOO_SOCKET_IFNAME=lo timeout 900 "$run" -n 4 --domain-size 2 "${bench[@]}" | sed -n 's/^\[r0\.d0\] //p' ;;
    net)
      echo "## 2x2 over the two-tier network: rails of $rate per direction (TIERCC_TRANSPORT=tcp)"
      net=$root/bench/two-tier-net.sh
      "$net" up --domains 2 --ranks-per-domain 2 --rate "$rate" >/dev/null
      trap '"$net" down >/dev/null 2>&1 || true' EXIT
      TIERCC_TRANSPORT=tcp timeout 900 "$run" -n 4 --domain-size 2 --netns-prefix tiercc-d --rail-subnet 198.18 \
        "${bench[@]}" --gloo-rail-iface | sed -n 's/^\[r0\.d0\] //p'
      "$net" down >/dev/null
      trap - EXIT ;;
    *) echo "unknown layout '$layout'" >&2; exit 2 ;;
  esac
done
