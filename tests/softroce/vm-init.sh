#!/bin/sh
# /init of tiercc's SoftRoCE test VM (busybox sh; run-vm.sh puts it into every boot): loads the RDMA
# modules, creates rxe0 on dummy0 (192.0.2.1/24, inside the VM only: it has no NIC), mounts the
# host share, runs /tiercc-vm/cmd.sh and reports on the console: TIERCC_VM_RXE=..., TIERCC_VM_EXIT=RC.
export PATH=/tiercc-vm/bin:/usr/sbin:/usr/bin HOME=/root GTEST_COLOR=no
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
exec </dev/console >/dev/console 2>&1
hostname softroce-vm

# Written by run-vm.sh: TIERCC_VM_SHARE (host folder, mounted at the same path), TIERCC_VM_TIMEOUT
# (seconds for the command), TIERCC_VM_SHELL (1: interactive shell instead of the command).
# shellcheck source=/dev/null
. /tiercc-vm/settings

uptime_s() { cut -d' ' -f1 /proc/uptime; }

finish() {
  echo "TIERCC_VM_EXIT=$1 uptime=$(uptime_s)"
  if [ "$1" != 0 ]; then
    echo "--- kernel log, last 30 lines"
    dmesg | grep -v 'speed is unknown' | tail -n 30
  fi
  sync
  poweroff -f
  sleep 10
}

setup_failed() {
  echo "TIERCC_VM_SETUP_FAILED: $*"
  finish 126
}

load_modules() {
  kver=$(cat /etc/tiercc-vm/kver)
  while read -r module; do
    case $module in
      *9p* | *virtio* | *netfs* | *fscache*) [ -n "$TIERCC_VM_SHARE" ] || continue ;;
    esac
    insmod "/usr/lib/modules/$kver/$module" || return 1
  done </etc/tiercc-vm/modules
}

# rxe's RoCE v2 GID for the IPv4 address (::ffff:192.0.2.1). One grep over the 1024 slots: a fork
# per slot would cost seconds under TCG.
find_gid_index() {
  port=/sys/class/infiniband/rxe0/ports/1
  grep -l '^0000:0000:0000:0000:0000:ffff:' "$port"/gids/* 2>/dev/null | while read -r gid; do
    index=${gid##*/}
    [ "$(cat "$port/gid_attrs/types/$index" 2>/dev/null)" = "RoCE v2" ] && echo "$index" && break
  done | grep .
}

# busybox sh runs its own `ip` applet for a bare `ip`; iproute2's is needed for `type dummy`.
create_rxe() {
  /usr/bin/ip link set lo up &&
    /usr/bin/ip addr add 192.0.2.1/24 dev dummy0 &&
    /usr/bin/ip link set dummy0 up &&
    rdma link add rxe0 type rxe netdev dummy0 || return 1
  tries=0
  until grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && SOFTROCE_GID_INDEX=$(find_gid_index); do
    tries=$((tries + 1))
    [ $tries -le 100 ] || return 1
    sleep 0.1
  done
  export SOFTROCE_DEV=rxe0 SOFTROCE_IP=192.0.2.1 SOFTROCE_GID_INDEX
}

echo "TIERCC_VM_BOOTED uptime=$(uptime_s)"
load_modules || setup_failed "insmod failed"
if create_rxe; then
  echo "TIERCC_VM_RXE=ok dev=rxe0 netdev=dummy0 ip=192.0.2.1 gid_index=$SOFTROCE_GID_INDEX"
else
  echo "TIERCC_VM_RXE=fail"
  setup_failed "rxe0 did not become ACTIVE"
fi
if [ -n "$TIERCC_VM_SHARE" ]; then
  mkdir -p "$TIERCC_VM_SHARE"
  if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 tiercc "$TIERCC_VM_SHARE"; then
    setup_failed "cannot mount the host share at $TIERCC_VM_SHARE"
  fi
  [ -d "$TIERCC_VM_SHARE/bin" ] && export PATH="$PATH:$TIERCC_VM_SHARE/bin"
  cd "$TIERCC_VM_SHARE" || setup_failed "cannot cd to $TIERCC_VM_SHARE"
else
  cd /root || setup_failed "no /root"
fi
[ -d /tiercc-vm/lib ] && export LD_LIBRARY_PATH=/tiercc-vm/lib

echo "TIERCC_VM_READY uptime=$(uptime_s)"
if [ "$TIERCC_VM_SHELL" = 1 ]; then
  setsid cttyhack sh -l
  finish $?
fi
timeout "$TIERCC_VM_TIMEOUT" sh /tiercc-vm/cmd.sh
finish $?
