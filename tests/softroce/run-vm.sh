#!/usr/bin/env bash
# Boots tiercc's SoftRoCE test VM (qemu TCG, no KVM, no NIC) with rxe0 inside, runs one command in
# it and exits with that command's exit status. Host binaries run in the VM through a virtio-9p
# share mounted at the same path; the whole console goes to a log file.
#
# usage: tests/softroce/run-vm.sh [options] [--] [command [args...]]
#   (no command)      in-vm.sh: shows the RDMA device (see in-vm.sh for running checks)
#   --share DIR       host folder shared read-write, mounted at the same path in the VM and used as
#                     the working dir; DIR/bin goes on PATH (default: the project's build dir)
#   --no-share        no share
#   --libs-for PATH   an ELF file, or a folder of them: the shared libraries they need that are
#                     neither in the image nor in the share are copied into the VM (on
#                     LD_LIBRARY_PATH). Repeatable. DIR/bin and DIR/lib of the share always count.
#   -e VAR=VALUE      export VAR to the command. Repeatable.
#   --timeout SEC     limit of the whole run, boot included; qemu is killed after it (default 600);
#                     the command itself gets SEC - 30 (busybox timeout, then exit 143)
#   --log FILE        console log, each line stamped with seconds since qemu started
#                     (default: $TIERCC_SOFTROCE_DIR/last-run.log)
#   -q, --quiet       do not echo the console here
#   --shell           interactive shell on the console instead of a command (Ctrl-A X quits)
# Inside the VM: SOFTROCE_DEV=rxe0, SOFTROCE_IP=192.0.2.1, SOFTROCE_GID_INDEX (RoCE v2 IPv4 GID).
# Exit status: the command's; 124 = qemu killed by --timeout; 125 = the VM ended without reporting
# (boot failure, kernel panic); 126 = setup inside the VM failed (modules, rxe0, share); 2 = bad
# usage, or no image yet (tests/softroce/build-image.sh makes it).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${TIERCC_SOFTROCE_DIR:-$root/build/softroce}
triplet=x86_64-linux-gnu
share=$root/build
timeout_s=600
log=
quiet=0
shell_mode=0
libs_for=()
envs=()

die() {
  echo "run-vm.sh: $*" >&2
  exit 2
}
usage() { sed -n '/^# usage/,/^set -e/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

while (($#)); do
  case $1 in
    --share) share=$2; shift 2 ;;
    --no-share) share=; shift ;;
    --libs-for) libs_for+=("$2"); shift 2 ;;
    -e) [[ $2 == [A-Za-z_]*=* ]] || die "-e wants VAR=VALUE, got '$2'"; envs+=("$2"); shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    -q | --quiet) quiet=1; shift ;;
    --shell) shell_mode=1; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) break ;;
  esac
done
if ! [[ $timeout_s =~ ^[0-9]+$ ]] || ((timeout_s < 30)); then die "--timeout wants whole seconds >= 30"; fi
[[ -f $dir/initramfs.cpio.gz && -x $dir/rootfs/usr/bin/busybox ]] ||
  die "no VM image in $dir: run tests/softroce/build-image.sh first"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing: run tests/softroce/build-image.sh"
if [[ -n $share ]]; then
  share=$(cd "$share" && pwd) || die "--share: no folder $share"
  [[ $share != *[[:space:]]* ]] || die "--share: a path with white space cannot be mounted in the VM"
fi
kernel=$dir/vmlinux
[[ -f $kernel ]] || kernel=$dir/vmlinuz
log=${log:-$dir/last-run.log}
busybox=$dir/rootfs/usr/bin/busybox

mkdir -p "$dir/tmp"
work=$(mktemp -d "$dir/tmp/run.XXXXXX")
trap 'rm -rf "$work"' EXIT
overlay=$work/overlay
mkdir -p "$overlay/tiercc-vm/bin"

quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

# Copies the libraries an ELF file needs that the VM would not find: not in the image, not in
# the share (mounted at the same path, so RUNPATHs into it keep working).
copy_missing_libs() {
  local lib name
  while read -r name lib; do
    if [[ $lib != /* ]]; then
      echo "run-vm.sh: warning: $1 needs $name, which is not found here either" >&2
      continue
    fi
    [[ -n $share && $lib == "$share"/* ]] && continue
    [[ -e $dir/rootfs/usr/lib/$triplet/$name || -e $overlay/tiercc-vm/lib/$name ]] && continue
    mkdir -p "$overlay/tiercc-vm/lib"
    cp -L "$lib" "$overlay/tiercc-vm/lib/$name"
  done < <(ldd "$1" 2>/dev/null | awk '$2 == "=>" { print $1, $3 }')
}

[[ -n $share && -d $share/bin ]] && libs_for+=("$share/bin")
[[ -n $share && -d $share/lib ]] && libs_for+=("$share/lib")
for path in "${libs_for[@]}"; do
  [[ -e $path ]] || die "--libs-for: $path not found"
  while read -r f; do
    [[ $(head -c 4 "$f") == $'\x7fELF' ]] && copy_missing_libs "$f"
  done < <(find "$path" -maxdepth 1 -type f)
done

cmd_timeout=$((timeout_s > 90 ? timeout_s - 30 : timeout_s * 2 / 3))
install -m 755 "$here/vm-init.sh" "$overlay/init"
install -m 755 "$here/in-vm.sh" "$here/expect-rdma-traffic.sh" "$here/under-netem.sh" "$overlay/tiercc-vm/bin/"
{
  echo "TIERCC_VM_SHARE=$(quote "$share")"
  echo "TIERCC_VM_TIMEOUT=$cmd_timeout"
  echo "TIERCC_VM_SHELL=$shell_mode"
} >"$overlay/tiercc-vm/settings"
{
  for e in "${envs[@]}"; do echo "export ${e%%=*}=$(quote "${e#*=}"); echo $(quote "env: $e")"; done
  if (($#)); then
    printf 'exec'
    for a in "$@"; do printf ' %s' "$(quote "$a")"; done
    echo
  else
    echo "exec in-vm.sh"
  fi
} >"$overlay/tiercc-vm/cmd.sh"

# The kernel unpacks concatenated cpio archives in order and later files win: the per-run overlay
# (uncompressed) goes after the base image, padded to a 4-byte boundary.
initrd=$work/initrd.img
cp "$dir/initramfs.cpio.gz" "$initrd"
base_size=$(stat -c %s "$initrd")
head -c $(((4 - base_size % 4) % 4)) /dev/zero >>"$initrd"
(cd "$overlay" && find . -mindepth 1 | LC_ALL=C sort | "$busybox" cpio -o -H newc 2>/dev/null) >>"$initrd"

# -nodefaults -nic none: no network device at all, so nothing leaves the VM. -smp 2: two polling
# processes on one vCPU make RDMA round trips take scheduler ticks.
qemu=(qemu-system-x86_64 -nodefaults -no-user-config -machine pc -accel "tcg,thread=multi" -cpu max
  -smp 2 -m 2048 -display none -vga none -nic none -no-reboot -kernel "$kernel" -initrd "$initrd"
  -append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init mitigations=off 8250.nr_uarts=1")
if [[ -n $share ]]; then
  qemu+=(-virtfs "local,path=$share,mount_tag=tiercc,security_model=none,id=tiercc")
fi
if ((shell_mode)); then
  "${qemu[@]}" -serial mon:stdio
  exit
fi

echo "run-vm.sh: booting (share ${share:-none}, limit ${timeout_s}s, log $log)" >&2
mkdir -p "$(dirname "$log")"
: >"$log"
start_us=${EPOCHREALTIME/./}
stamp_lines() {
  local line us
  while IFS= read -r line; do
    line=${line%$'\r'}
    us=$((${EPOCHREALTIME/./} - start_us))
    line=$(printf '[%4d.%03d] %s' $((us / 1000000)) $((us / 1000 % 1000)) "$line")
    echo "$line" >>"$log"
    ((quiet)) || echo "$line"
  done
}
qemu_rc=0
timeout -k 5 "$timeout_s" "${qemu[@]}" -serial stdio -monitor none </dev/null 2>&1 | stamp_lines ||
  qemu_rc=${PIPESTATUS[0]}
elapsed_us=$((${EPOCHREALTIME/./} - start_us))
elapsed=$((elapsed_us / 1000000)).$((elapsed_us / 100000 % 10))

ready=$(sed -n 's/^\[ *\([0-9.]*\)\] TIERCC_VM_READY.*/\1/p' "$log" | head -n 1)
vm_rc=$(sed -n 's/.*TIERCC_VM_EXIT=\([0-9]*\).*/\1/p' "$log" | head -n 1)
if [[ -n $vm_rc ]]; then
  rc=$vm_rc
elif ((qemu_rc == 124 || qemu_rc == 137)); then
  rc=124
  echo "run-vm.sh: TIMEOUT: qemu killed after ${timeout_s}s" >&2
else
  rc=125
  echo "run-vm.sh: the VM ended without reporting an exit status (qemu exit $qemu_rc); see $log" >&2
fi
echo "run-vm.sh: exit $rc (VM ready after ${ready:-never}s, total ${elapsed}s); console log: $log" >&2
exit "$rc"
