#!/usr/bin/env bash
# Build the Debian 12 and Debian 13 base images for the test bed without a registry:
# debootstrap a minimal root file system, then `docker import` it.
#
# Each image carries the sha256 of its recipe (this script + the package list) as the label
# org.gpuops.testbed.recipe; an image whose label matches is kept, so a second run costs seconds.
# The images stand in for the LXC system containers that hold the GPUs: they run systemd-capable
# Debian with Python for Ansible, nothing NVIDIA (the GPU stand-in is installed by molecule).
#
# Usage: tests/testbed/build_base_images.sh [debian12|debian13 ...]   (default: both)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
work=${TESTBED_WORK:-$here/../../build/images}
repo_prefix=${TESTBED_IMAGE_PREFIX:-sglang-stack-testbed}

# What Ansible and the roles need inside a target: python3 with apt bindings, deb822 support for
# deb822_repository, venv for the stack virtualenvs, systemd for the service roles.
packages=python3,python3-apt,python3-debian,python3-venv,ca-certificates,systemd,systemd-sysv,procps,iproute2,gpgv

declare -A suite=([debian12]=bookworm [debian13]=trixie)

# The apt mirror this machine is configured with (deb822 sources first, then sources.list).
apt_mirror() {
  local uri=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1=="deb"{for(i=2;i<=NF;i++) if ($i ~ /^(https?|file):/) {print $i; exit}}' /etc/apt/sources.list)
  fi
  [ -n "$uri" ] || { echo "ERROR: no Debian mirror found in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list" >&2; exit 1; }
  echo "$uri"
}

recipe_hash() {
  { cat "$0"; echo "$1 ${suite[$1]} $packages"; } | sha256sum | cut -c1-16
}

build_one() {
  local name=$1 image="$repo_prefix/$1:latest" want have rootfs
  want=$(recipe_hash "$name")
  have=$(docker image inspect --format '{{ index .Config.Labels "org.gpuops.testbed.recipe" }}' "$image" 2>/dev/null || true)
  if [ "$have" = "$want" ]; then
    echo "base image $image is current (recipe $want)"
    return 0
  fi
  command -v debootstrap >/dev/null || { echo "ERROR: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 1; }
  rootfs="$work/$name-rootfs"
  rm -rf "$rootfs"; mkdir -p "$rootfs"
  echo "building $image from ${suite[$name]} (recipe $want)"
  debootstrap --variant=minbase --include="$packages" "${suite[$name]}" "$rootfs" "$(apt_mirror)" >"$work/$name-debootstrap.log" 2>&1 \
    || { tail -20 "$work/$name-debootstrap.log" >&2; echo "ERROR: debootstrap of ${suite[$name]} failed (log: $work/$name-debootstrap.log)" >&2; exit 1; }
  # Trim what a test container never needs; keep the image small and the import fast.
  chroot "$rootfs" apt-get clean
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/*
  # The machine's resolver and apt sources must not leak into the image: targets use the test mirror.
  : >"$rootfs/etc/resolv.conf"
  rm -f "$rootfs"/etc/apt/sources.list "$rootfs"/etc/apt/sources.list.d/*
  echo "$name" >"$rootfs/etc/hostname"
  tar --numeric-owner -C "$rootfs" -c . | docker import \
    --change 'CMD ["/bin/sleep", "infinity"]' \
    --change 'ENV LANG=C.UTF-8' \
    --change "LABEL org.gpuops.testbed.recipe=$want" \
    --change "LABEL org.gpuops.testbed.what=\"stand-in for an LXC GPU container ($name), built by debootstrap\"" \
    - "$image" >/dev/null
  rm -rf "$rootfs"
  echo "built $image"
}

mkdir -p "$work"
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(debian12 debian13)
for t in "${targets[@]}"; do
  [ -n "${suite[$t]:-}" ] || { echo "ERROR: unknown image '$t' (known: ${!suite[*]})" >&2; exit 2; }
  build_one "$t"
done
