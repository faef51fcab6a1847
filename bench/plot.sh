#!/usr/bin/env bash
# Turns tiercc-perf --json sweeps into a PNG of busbw against message size, one line per file
# (or per algorithm when files mix them), with gnuplot from Debian (installed if missing).
#   bench/plot.sh out.png sweep-hier.json sweep-ring.json ...
# Each JSON line is one size of a sweep: {"coll":..,"algo":..,"bytes":..,"oop_busbw":..}.
set -euo pipefail
if (($# < 2)); then
  echo "usage: $0 OUT.png SWEEP.json [SWEEP.json...]" >&2
  exit 2
fi
out=$1
shift
if ! command -v gnuplot >/dev/null; then
  echo "plot: installing gnuplot-nox" >&2
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends gnuplot-nox >/dev/null
fi
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT

# One data file per (file, algorithm): "bytes busbw" rows, sorted by size. Plain sed: the JSON
# is tiercc-perf's own, one flat object per line.
series=()
for f in "$@"; do
  [[ -s $f ]] || { echo "plot: $f is missing or empty" >&2; exit 1; }
  while read -r algo; do
    name="$(basename "$f" .json)"
    [[ $algo != "$name" ]] && name="$name:$algo"
    file="$data/${#series[@]}.dat"
    grep "\"algo\":\"$algo\"" "$f" |
      sed -E 's/.*"bytes":([0-9]+).*"oop_busbw":([0-9.eE+-]+).*/\1 \2/' | sort -n >"$file"
    series+=("$file|$name")
  done < <(sed -E 's/.*"algo":"([^"]*)".*/\1/' "$f" | sort -u)
done

plot=""
for s in "${series[@]}"; do
  plot+="${plot:+, }'${s%%|*}' using 1:2 with linespoints title '${s#*|}'"
done
title=$(sed -nE '1s/.*"coll":"([^"]*)".*"ranks":([0-9]+),"domains":([0-9]+).*/\1, \2 ranks in \3 domains/p' "$1")
gnuplot <<GP
set terminal pngcairo size 900,560 noenhanced
set output '$out'
set title 'tiercc-perf: $title'
set logscale x 2
set format x '%.0b%B'
set xlabel 'message size (bytes)'
set ylabel 'busbw (GB/s, out of place)'
set key left top
set grid
plot $plot
GP
echo "plot: wrote $out"
