#!/usr/bin/env bash
# Builds, removes or shows a two-tier test network on one Linux host: one network namespace per
# domain, one rate-limited veth "rail" per local rank (rail-optimised), or one shared link per
# domain (--single-link), plus a management network that reaches the launcher's store.
#
# Usage: bench/two-tier-net.sh up|down|status [--domains D] [--ranks-per-domain K]
#                              [--rate RATE] [--single-link]
#   up      builds the network (refuses when one is already up; a failure midway removes it)
#   down    removes everything this script may have created; idempotent, also after a partial up
#   status  shows the namespaces, addresses and rate limits
#   --domains D            domains (namespaces), 1..253 (default 2)
#   --ranks-per-domain K   local ranks = rails per domain, 1..256 (default 2)
#   --rate RATE            each link's rate per direction, as tc writes it: 4gbit, 200mbit, 500kbit
#                          (default 4gbit)
#   --single-link          all ranks of a domain share one link (same addresses, one interface)
#
# Address plan (all inside 198.18.0.0/15, reserved for benchmarking by RFC 2544):
#   rail r of domain d:  198.18.<r>.<d+1>/24 on interface rail<r> in namespace tiercc-d<d>
#                        (--single-link: all of 198.18.<r>.<d+1>/24 on the one interface link0)
#   rail r's switch:     bridge br-rail<r> (br-link with --single-link) in namespace tiercc-fabric;
#                        its ports are d<d>r<r> (d<d> with --single-link)
#   management:          bridge tiercc-mgmt in the root namespace, 198.19.0.1/24 (the launcher's
#                        store listens there); domain d is 198.19.0.<d+2>/24 on interface mgmt0,
#                        root-side peer tiercc-m<d>. Not rate-limited.
# Rate limits: a tbf qdisc on both ends of every rail (or link), so each direction of each link
# carries at most RATE. tiercc-run --netns-prefix tiercc-d --rail-subnet 198.18 runs a job on it.
set -Eeuo pipefail

readonly NS_PREFIX=tiercc-d
readonly FABRIC_NS=tiercc-fabric
readonly MGMT_BRIDGE=tiercc-mgmt
readonly MGMT_PEER_PREFIX=tiercc-m
readonly MGMT_ROOT_ADDR=198.19.0.1
readonly STEP_TIMEOUT=10  # seconds any one ip/tc command may take

domains=2
ranks_per_domain=2
rate=4gbit
single_link=0

die() {
  echo "two-tier-net: $*" >&2
  exit 1
}

# Every command is bounded: a wedged netlink call must not hang a test.
run() {
  timeout "$STEP_TIMEOUT" "$@"
}

usage() {
  sed -n '6,16s/^# \{0,1\}//p' "$0"
}

# The rate in bits per second, from tc's spelling (integer with bit, kbit, mbit or gbit).
rate_bits() {
  local number unit
  [[ $1 =~ ^([0-9]+)(bit|kbit|mbit|gbit)?$ ]] || die "--rate needs a number with bit, kbit, mbit or gbit, got '$1'"
  number=${BASH_REMATCH[1]}
  unit=${BASH_REMATCH[2]:-bit}
  case $unit in
    bit) echo "$number" ;;
    kbit) echo $((number * 1000)) ;;
    mbit) echo $((number * 1000000)) ;;
    gbit) echo $((number * 1000000000)) ;;
  esac
}

check_environment() {
  [[ $(id -u) -eq 0 ]] || die "must run as root (it creates network namespaces)"
  command -v ip >/dev/null || die "'ip' (iproute2) not found"
  command -v tc >/dev/null || die "'tc' (iproute2) not found"
  run ip netns list >/dev/null 2>&1 || die "'ip netns' does not work here"
}

namespaces() {
  run ip netns list | awk '{print $1}' | grep -E "^(${NS_PREFIX}[0-9]+|${FABRIC_NS})$" || true
}

# tbf on dev (in namespace ns): RATE per direction. Burst: 1 ms at RATE, but at least 128 KiB so
# that one 64 KiB GSO segment always fits. Queue: 20 ms at RATE, then drops (TCP backs off).
limit_rate() {
  local ns=$1 dev=$2 bits burst
  bits=$(rate_bits "$rate")
  burst=$((bits / 8 / 1000))
  ((burst >= 131072)) || burst=131072
  run ip netns exec "$ns" tc qdisc replace dev "$dev" root tbf rate "$rate" burst "$burst" latency 20ms
}

# A veth pair: name in namespace ns_a, peer in ns_b (created in place, so no name clash in root).
add_veth() {
  local name=$1 ns_a=$2 peer=$3 ns_b=$4
  run ip link add "$name" netns "$ns_a" type veth peer name "$peer" netns "$ns_b"
}

# The root namespace has no name under /run/netns; "ip -n" needs one, so root commands go plain.
in_ns() {
  local ns=$1
  shift
  if [[ $ns == root ]]; then run "$@"; else run ip -n "$ns" "${@:2}"; fi
}

add_bridge() {
  local ns=$1 name=$2
  in_ns "$ns" ip link add "$name" type bridge forward_delay 0
  in_ns "$ns" ip link set "$name" up
}

up_domain_links() {
  local d=$1 ns=${NS_PREFIX}$1 r
  if ((single_link)); then
    add_veth link0 "$ns" "d$d" "$FABRIC_NS"
    for ((r = 0; r < ranks_per_domain; r++)); do
      run ip -n "$ns" addr add "198.18.$r.$((d + 1))/24" dev link0
    done
    run ip -n "$FABRIC_NS" link set "d$d" master br-link up
    run ip -n "$ns" link set link0 up
    limit_rate "$ns" link0
    limit_rate "$FABRIC_NS" "d$d"
    return
  fi
  for ((r = 0; r < ranks_per_domain; r++)); do
    add_veth "rail$r" "$ns" "d${d}r$r" "$FABRIC_NS"
    run ip -n "$ns" addr add "198.18.$r.$((d + 1))/24" dev "rail$r"
    run ip -n "$FABRIC_NS" link set "d${d}r$r" master "br-rail$r" up
    run ip -n "$ns" link set "rail$r" up
    limit_rate "$ns" "rail$r"
    limit_rate "$FABRIC_NS" "d${d}r$r"
  done
}

up_domain_management() {
  local d=$1 ns=${NS_PREFIX}$1
  run ip link add mgmt0 netns "$ns" type veth peer name "${MGMT_PEER_PREFIX}$d"
  run ip link set "${MGMT_PEER_PREFIX}$d" master "$MGMT_BRIDGE" up
  run ip -n "$ns" addr add "198.19.0.$((d + 2))/24" dev mgmt0
  run ip -n "$ns" link set mgmt0 up
}

cmd_up() {
  local d r
  [[ -z $(namespaces) ]] || die "a two-tier network is already up (see 'status'); run 'down' first"
  ((domains >= 1 && domains <= 253)) || die "--domains must be 1..253, got $domains"
  ((ranks_per_domain >= 1 && ranks_per_domain <= 256)) || die "--ranks-per-domain must be 1..256, got $ranks_per_domain"
  rate_bits "$rate" >/dev/null
  trap 'echo "two-tier-net: up failed; removing what was built" >&2; cmd_down' ERR
  run ip netns add "$FABRIC_NS" || die "'ip netns add' failed (no permission or no netns support?)"
  run ip -n "$FABRIC_NS" link set lo up
  if ((single_link)); then
    add_bridge "$FABRIC_NS" br-link
  else
    for ((r = 0; r < ranks_per_domain; r++)); do add_bridge "$FABRIC_NS" "br-rail$r"; done
  fi
  add_bridge root "$MGMT_BRIDGE"
  run ip addr add "$MGMT_ROOT_ADDR/24" dev "$MGMT_BRIDGE"
  for ((d = 0; d < domains; d++)); do
    run ip netns add "${NS_PREFIX}$d"
    run ip -n "${NS_PREFIX}$d" link set lo up
    up_domain_links "$d"
    up_domain_management "$d"
  done
  trap - ERR
  local layout="rail-optimised: $ranks_per_domain rails per domain"
  if ((single_link)); then layout="single link per domain ($ranks_per_domain ranks share it)"; fi
  echo "two-tier-net: up: $domains domains (${NS_PREFIX}0..${NS_PREFIX}$((domains - 1))), $layout, $rate per link and direction; store address $MGMT_ROOT_ADDR"
}

cmd_down() {
  local ns link
  # Deleting a namespace deletes its veths, and with them their peers in other namespaces.
  for ns in $(namespaces); do
    run ip netns del "$ns" || echo "two-tier-net: could not delete namespace $ns" >&2
  done
  for link in $(run ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' |
    grep -E "^(${MGMT_BRIDGE}|${MGMT_PEER_PREFIX}[0-9]+)$" || true); do
    run ip link del "$link" 2>/dev/null || true
  done
  return 0
}

cmd_status() {
  local ns
  local found
  found=$(namespaces)
  if [[ -z $found ]]; then
    echo "two-tier-net: down"
    return 0
  fi
  for ns in $found; do
    echo "== namespace $ns"
    run ip -n "$ns" -br addr show | grep -v '^lo ' || true
    run tc -n "$ns" qdisc show | grep tbf || true
  done
  echo "== root namespace"
  run ip -br addr show dev "$MGMT_BRIDGE" 2>/dev/null || echo "$MGMT_BRIDGE missing"
}

main() {
  (($# >= 1)) || {
    usage >&2
    exit 2
  }
  local command=$1
  shift
  while (($# > 0)); do
    case $1 in
      --domains) domains=${2:?--domains needs a value}; shift 2 ;;
      --ranks-per-domain) ranks_per_domain=${2:?--ranks-per-domain needs a value}; shift 2 ;;
      --rate) rate=${2:?--rate needs a value}; shift 2 ;;
      --single-link) single_link=1; shift ;;
      -h | --help) usage; exit 0 ;;
      *) die "unknown option '$1' (see --help)" ;;
    esac
  done
  [[ $domains =~ ^[0-9]+$ ]] || die "--domains needs a number, got '$domains'"
  [[ $ranks_per_domain =~ ^[0-9]+$ ]] || die "--ranks-per-domain needs a number, got '$ranks_per_domain'"
  case $command in
    -h | --help) usage ;;
    up) check_environment; cmd_up ;;
    down) check_environment; cmd_down ;;
    status) check_environment; cmd_status ;;
    *) die "unknown command '$command': up, down or status" ;;
  esac
}

main "$@"
