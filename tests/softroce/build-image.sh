#!/usr/bin/env bash
# Builds tiercc's SoftRoCE test VM image: Debian's stock kernel (it ships rdma_rxe.ko) and an
# initramfs with busybox, rdma-core userspace, perftest and iproute2, all taken from Debian
# packages (apt-get download + dpkg -x). Installs qemu on the host if missing. Reuses a built image.
#
# usage: tests/softroce/build-image.sh [--force]
# Output in $TIERCC_SOFTROCE_DIR (default build/softroce): vmlinux (or vmlinuz), initramfs.cpio.gz,
# rootfs/ (the unpacked image, which run-vm.sh consults), debs/ (download cache), image.stamp.
# TIERCC_SOFTROCE_KVER=6.1.0-NN-amd64 picks the kernel (default: what linux-image-amd64 depends on).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${TIERCC_SOFTROCE_DIR:-$root/build/softroce}
triplet=x86_64-linux-gnu
start=$SECONDS

log() { echo "build-image [$((SECONDS - start))s]: $*"; }
die() {
  echo "build-image: FAILED: $*" >&2
  exit 1
}
as_root() { if ((EUID == 0)); then "$@"; else sudo "$@"; fi; }

# Debian packages that make up the image (the kernel is added once its ABI name is known). The
# libraries of the tools come from here as well, so the image does not depend on the host.
packages=(
  busybox-static
  libibverbs1 ibverbs-providers ibverbs-utils librdmacm1 rdmacm-utils libibumad3 perftest
  iproute2 libnl-3-200 libnl-route-3-200 libpci3 libmnl0 libbsd0 libmd0 libcap2 libbpf1 libelf1
  zlib1g libudev1 libc6 libstdc++6 libgcc-s1 libxtables12
)
# Programs copied into the image (paths inside the packages); everything else is busybox.
programs=(
  usr/bin/ibv_devices usr/bin/ibv_devinfo usr/bin/ibv_rc_pingpong usr/bin/ibv_ud_pingpong
  usr/bin/ib_write_bw usr/bin/ib_write_lat usr/bin/ib_read_bw usr/bin/ib_send_bw usr/bin/ib_send_lat
  usr/bin/rping usr/bin/rdma bin/ip sbin/tc
)
# Libraries test binaries commonly need even though no program above links them.
extra_libs=(libstdc++.so.6 libgcc_s.so.1 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 librdmacm.so.1
  libibverbs.so.1 libibumad.so.3)
# Kernel modules to load at boot, dependencies resolved below. crc32_generic is needed by rdma_rxe
# but requested by name at run time, so no depends= line mentions it.
modules=(crc32_generic ib_core ib_uverbs ib_cm iw_cm rdma_cm rdma_ucm rdma_rxe dummy
  virtio_pci 9pnet_virtio 9p sch_netem)

ensure_host_tools() {
  local missing=()
  command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
  command -v xz >/dev/null || missing+=(xz-utils)
  ((${#missing[@]})) || return 0
  log "installing ${missing[*]} on the host"
  as_root apt-get update -qq || die "apt-get update failed (no access to Debian's archive?)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    >/dev/null || die "apt-get install ${missing[*]} failed"
  command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 still missing after installing it"
}

image_is_current() {
  [[ -f $dir/image.stamp && -f $dir/initramfs.cpio.gz && -x $dir/rootfs/usr/bin/busybox ]] &&
    [[ -f $dir/vmlinux || -f $dir/vmlinuz ]] &&
    [[ $(cat "$dir/image.stamp") == "$(sha256sum <"${BASH_SOURCE[0]}")" ]]
}

kernel_abi() {
  if [[ -n ${TIERCC_SOFTROCE_KVER:-} ]]; then
    echo "$TIERCC_SOFTROCE_KVER"
    return
  fi
  apt-cache show linux-image-amd64 >/dev/null 2>&1 || as_root apt-get update -qq ||
    die "apt-get update failed (no access to Debian's archive?)"
  apt-cache depends linux-image-amd64 2>/dev/null |
    awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { sub("linux-image-", "", $2); print $2; exit }'
}

newest_deb() { compgen -G "$dir/debs/${1}_*.deb" | sort -V | tail -n 1; }

download_packages() {
  local p need=()
  mkdir -p "$dir/debs"
  for p in "${packages[@]}"; do [[ -n $(newest_deb "$p") ]] || need+=("$p"); done
  ((${#need[@]})) || return 0
  log "apt-get download ${#need[@]} packages"
  (cd "$dir/debs" && apt-get -q -o APT::Sandbox::User=root download "${need[@]}" >/dev/null) ||
    die "apt-get download ${need[*]} failed (no access to Debian's archive, or the kernel ABI is gone:" \
      "try TIERCC_SOFTROCE_KVER or apt-get update)"
}

# Packages are unpacked into a plain tree; the image itself uses the merged-/usr layout, so a file
# from bin/, sbin/ or lib/ lands under usr/.
image_path() {
  local rel=${1#/}
  [[ $rel == usr/* ]] && echo "$rel" || echo "usr/$rel"
}

copy_into_image() { # path on this machine, path in the image
  mkdir -p "$rootfs/$(dirname "$2")"
  cp -L "$1" "$rootfs/$2"
}

make_skeleton() {
  rm -rf "$rootfs"
  mkdir -p "$rootfs"/usr/{bin,sbin,lib/$triplet/libibverbs,lib64}
  mkdir -p "$rootfs"/{dev,proc,sys,tmp,run,root,mnt,etc/libibverbs.d}
  ln -s usr/bin "$rootfs/bin"
  ln -s usr/sbin "$rootfs/sbin"
  ln -s usr/lib "$rootfs/lib"
  ln -s usr/lib64 "$rootfs/lib64"
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\n' >"$rootfs/etc/group"
  printf '127.0.0.1 localhost\n::1 localhost\n' >"$rootfs/etc/hosts"
  # The kernel opens /dev/console before /init runs; devtmpfs is mounted only by /init.
  mknod -m 600 "$rootfs/dev/console" c 5 1 2>/dev/null || log "note: cannot mknod /dev/console (not root)"
}

install_programs() {
  local p applet
  for p in "${programs[@]}"; do copy_into_image "$sysroot/$p" "$(image_path "$p")"; done
  cp "$sysroot/bin/busybox" "$rootfs/usr/bin/busybox"
  for applet in $("$rootfs/usr/bin/busybox" --list); do
    [[ -e $rootfs/usr/bin/$applet ]] || ln -s busybox "$rootfs/usr/bin/$applet"
  done
  cp "$sysroot/usr/lib/$triplet/libibverbs/"librxe-*.so "$rootfs/usr/lib/$triplet/libibverbs/"
  cp "$sysroot/etc/libibverbs.d/rxe.driver" "$rootfs/etc/libibverbs.d/"
}

# ldd lists a binary's whole dependency closure; resolve it against the unpacked packages first.
install_libraries() {
  local f lib name search=$sysroot/usr/lib/$triplet:$sysroot/lib/$triplet
  local -a elves=()
  for f in "${programs[@]}"; do elves+=("$sysroot/$f"); done
  elves+=("$sysroot/usr/lib/$triplet/libibverbs/"librxe-*.so)
  for name in "${extra_libs[@]}"; do
    f=$(compgen -G "$sysroot/usr/lib/$triplet/$name" || compgen -G "$sysroot/lib/$triplet/$name") ||
      die "$name is in none of the packages"
    copy_into_image "$f" "usr/lib/$triplet/$name"
    elves+=("$f")
  done
  for f in "${elves[@]}"; do
    while read -r lib; do
      [[ $lib == "$sysroot"/* ]] || log "note: ${lib##*/} comes from the host, not from a package"
      name=usr/lib/$triplet/${lib##*/}
      [[ -e $rootfs/$name ]] || copy_into_image "$lib" "$name"
    done < <(LD_LIBRARY_PATH=$search ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }')
  done
  copy_into_image "$sysroot/lib/$triplet/ld-linux-x86-64.so.2" "usr/lib/$triplet/ld-linux-x86-64.so.2"
  ln -sf ../lib/$triplet/ld-linux-x86-64.so.2 "$rootfs/usr/lib64/ld-linux-x86-64.so.2"
}

# Copies the wanted modules and their depends= closure, and writes the load order.
install_modules() {
  local moddir=$kernel_tree/lib/modules/$kver f name
  local -A where=() seen=()
  local -a order=()
  while read -r f; do
    name=${f##*/}
    name=${name%.ko}
    where[${name//-/_}]=${f#"$moddir/"}
  done < <(find "$moddir/kernel" -name '*.ko')
  add_module() {
    local m=${1//-/_} dep
    [[ -n ${seen[$m]:-} ]] && return 0
    seen[$m]=1
    [[ -n ${where[$m]:-} ]] || { log "note: module $m is built into the kernel"; return 0; }
    for dep in $(tr '\0' '\n' <"$moddir/${where[$m]}" | sed -n 's/^depends=//p' | tr ',' ' '); do
      add_module "$dep"
    done
    order+=("${where[$m]}")
  }
  for name in "${modules[@]}"; do add_module "$name"; done
  [[ ${seen[rdma_rxe]:-} == 1 && -n ${where[rdma_rxe]:-} ]] || die "rdma_rxe.ko is not in linux-image-$kver"
  for f in "${order[@]}"; do copy_into_image "$moddir/$f" "usr/lib/modules/$kver/$f"; done
  mkdir -p "$rootfs/etc/tiercc-vm"
  printf '%s\n' "${order[@]}" >"$rootfs/etc/tiercc-vm/modules"
  echo "$kver" >"$rootfs/etc/tiercc-vm/kver"
  log "modules: $(printf '%s ' "${order[@]##*/}")"
}

# qemu boots the uncompressed ELF vmlinux directly (PVH, Debian sets CONFIG_PVH): that skips the
# bzImage's own xz decompression, ~5 s under TCG. The bzImage stays as the fallback.
install_kernel() {
  local offset
  cp "$kernel_tree/boot/vmlinuz-$kver" "$dir/vmlinuz"
  rm -f "$dir/vmlinux"
  offset=$(LC_ALL=C grep -abo $'\xfd7zXZ\x00' "$dir/vmlinuz" | head -n 1 | cut -d: -f1) || true
  if [[ -n $offset ]] && tail -c +$((offset + 1)) "$dir/vmlinuz" | xz -dc >"$dir/vmlinux" 2>/dev/null; then :; fi
  if ! head -c 4 "$dir/vmlinux" 2>/dev/null | grep -q ELF; then
    rm -f "$dir/vmlinux"
    log "note: no vmlinux extracted; run-vm.sh boots the bzImage (~5 s slower)"
  fi
}

pack_initramfs() {
  (cd "$rootfs" && find . -mindepth 1 | LC_ALL=C sort | "$rootfs/usr/bin/busybox" cpio -o -H newc 2>/dev/null) |
    gzip -6 >"$dir/initramfs.cpio.gz.new"
  mv "$dir/initramfs.cpio.gz.new" "$dir/initramfs.cpio.gz"
}

main() {
  [[ ${1:-} == --force ]] && rm -f "$dir/image.stamp"
  ensure_host_tools
  if image_is_current; then
    log "image in $dir is up to date (kernel $(cat "$dir/rootfs/etc/tiercc-vm/kver"))"
    return 0
  fi
  kver=$(kernel_abi)
  [[ -n $kver ]] || die "cannot tell which linux-image-*-amd64 to use (apt-cache depends linux-image-amd64)"
  log "kernel linux-image-$kver, image in $dir"
  packages+=("linux-image-$kver")
  download_packages

  sysroot=$dir/unpacked/sysroot
  kernel_tree=$dir/unpacked/kernel
  rootfs=$dir/rootfs
  rm -rf "$dir/unpacked" "$dir/image.stamp"
  mkdir -p "$sysroot" "$kernel_tree"
  local p deb
  for p in "${packages[@]}"; do
    deb=$(newest_deb "$p")
    [[ -n $deb ]] || die "$p was not downloaded"
    if [[ $p == linux-image-* ]]; then dpkg -x "$deb" "$kernel_tree"; else dpkg -x "$deb" "$sysroot"; fi
  done
  log "unpacked ${#packages[@]} packages"

  make_skeleton
  install_programs
  install_libraries
  install_modules
  install_kernel
  pack_initramfs
  rm -rf "$dir/unpacked"
  sha256sum <"${BASH_SOURCE[0]}" >"$dir/image.stamp"
  log "done: $(du -h "$dir/initramfs.cpio.gz" | cut -f1) initramfs, kernel $kver"
}

main "$@"
