#!/usr/bin/env bash
# Start a real LXC container with the configuration role lxc_gpu_host writes, and check that the GPU stand-in's
# device nodes are inside it (docs/lxc-real-container.md says what it shows and why). Needs root, Debian's lxc
# and busybox-static (apt-get install lxc busybox-static) and unshare. About 10 s.
#
# The NVIDIA nodes are stand-ins (mknod, the GPU test machine's numbers and modes) made in a private mount
# namespace whose /dev is a copy: the machine's own /dev is never changed. The role reads the GPU test machine's
# recorded /proc/devices and /proc/driver/nvidia/version (molecule/lxc_host/standin).
#
# Usage: tests/lxc_real/run.sh [WORKDIR]   (from the repository root; WORKDIR is removed at the end unless KEEP=1)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
for tool in lxc-create lxc-start lxc-attach busybox unshare; do
  command -v "$tool" >/dev/null || { echo "lxc_real: $tool is not installed (apt-get install lxc busybox-static)"; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "lxc_real: needs root (mknod, lxc-start)"; exit 2; }
W=${1:-$(mktemp -d /tmp/gpuops-lxc-real.XXXXXX)}
name=gpuops-gpu-ct
cleanup() {
  lxc-stop -P "$W/lxc" -n "$name" -k >/dev/null 2>&1 || true
  [ "${KEEP:-0}" = 1 ] || rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$W/lxc" "$W/standin/dev/nvidia-caps"

echo "== lxc-create (busybox template)"
lxc-create -P "$W/lxc" -n "$name" -t busybox >/dev/null
config=$W/lxc/$name/config
# No network and no console on this machine: no bridge, and a console needs a pty of the container's own.
sed -i 's/^lxc.net.0.type = veth/lxc.net.0.type = empty/; /^lxc.net.0.link/d; /^lxc.net.0.flags/d;
        s/^lxc.tty.max = .*/lxc.tty.max = 0/; s/^lxc.pty.max = .*/lxc.pty.max = 0\nlxc.console.path = none/' "$config"
# The device policy of Debian's /usr/share/lxc/config/common.conf: deny everything, allow the basic nodes.
sed -i 's|^lxc.mount.auto = .*|&\nlxc.cgroup.devices.deny = a\nlxc.cgroup.devices.allow = c 1:3 rwm\nlxc.cgroup.devices.allow = c 1:5 rwm\nlxc.cgroup.devices.allow = c 1:8 rwm\nlxc.cgroup.devices.allow = c 1:9 rwm\nlxc.cgroup2.devices.deny = a\nlxc.cgroup2.devices.allow = c 1:3 rwm\nlxc.cgroup2.devices.allow = c 1:5 rwm\nlxc.cgroup2.devices.allow = c 1:8 rwm\nlxc.cgroup2.devices.allow = c 1:9 rwm|' "$config"
rootfs=$W/lxc/$name/rootfs
mkdir -p "$rootfs/usr/local/nvidia/lib64"
echo "stand-in: only the name of this file is read" >"$rootfs/usr/local/nvidia/lib64/libnvidia-ml.so.580.159.04"
ln -sfn libnvidia-ml.so.580.159.04 "$rootfs/usr/local/nvidia/lib64/libnvidia-ml.so.1"

echo "== stand-in nodes (8 GPUs, as molecule/lxc_host/prepare.yml makes them)"
cp "$root/molecule/lxc_host/standin/proc-devices" "$root/molecule/lxc_host/standin/driver-version" "$W/standin/"
for i in 0 1 2 3 4 5 6 7; do mknod -m 0666 "$W/standin/dev/nvidia$i" c 195 "$i"; done
mknod -m 0666 "$W/standin/dev/nvidiactl" c 195 255
mknod -m 0666 "$W/standin/dev/nvidia-uvm" c 238 0
mknod -m 0666 "$W/standin/dev/nvidia-uvm-tools" c 238 1
mknod -m 0400 "$W/standin/dev/nvidia-caps/nvidia-cap1" c 241 1
mknod -m 0444 "$W/standin/dev/nvidia-caps/nvidia-cap2" c 241 2

echo "== role lxc_gpu_host"
cat >"$W/play.yml" <<PLAY
---
- name: GPU passthrough for a real LXC container
  hosts: localhost
  connection: local
  gather_facts: false
  roles:
    - role: gpuops.sglang_stack.lxc_gpu_host
      vars:
        lxc_gpu_host_proc_devices_path: $W/standin/proc-devices
        lxc_gpu_host_driver_version_path: $W/standin/driver-version
        lxc_gpu_host_dev_dir: $W/standin/dev
        lxc_gpu_host_containers:
          - {name: $name, config_path: $config, rootfs: $rootfs}
PLAY
ANSIBLE_COLLECTIONS_PATH=$root/build/collections "$root/.venv/bin/ansible-playbook" -i localhost, \
  -e ansible_python_interpreter="$root/.venv/bin/python" "$W/play.yml" >"$W/role.log" 2>&1 || { cat "$W/role.log"; exit 1; }
grep -A12 '^PLAY RECAP' "$W/role.log" | sed -n 2p
sed -n '/# BEGIN gpuops.sglang_stack lxc_gpu_host/,/# END gpuops.sglang_stack lxc_gpu_host/p' "$config"

echo "== lxc-start (private mount namespace: /dev is a copy holding the stand-in nodes)"
# shellcheck disable=SC2016  # the script runs in the new namespace; its variables are its own arguments
unshare --mount bash -euc '
  W=$1; name=$2
  mount --make-rprivate /
  mkdir -p "$W/pdev"
  mount -t tmpfs -o mode=0755 gpuops-standin-dev "$W/pdev"
  cp -a /dev/. "$W/pdev/" 2>/dev/null || true
  cp -a "$W/standin/dev/." "$W/pdev/"
  mount --rbind /dev/pts "$W/pdev/pts"
  mount --rbind /dev/shm "$W/pdev/shm"
  mount --bind "$W/pdev" /dev
  lxc-start -P "$W/lxc" -n "$name" -l INFO -o "$W/lxc-start.log"
' _ "$W" "$name" || { echo "lxc-start failed:"; grep -E 'ERROR|WARN' "$W/lxc-start.log"; exit 1; }
lxc-info -P "$W/lxc" -n "$name" | sed -n 2p
grep -E 'WARN|ERROR' "$W/lxc-start.log" || true

echo "== inside the container: ls -l /dev/nvidia* /dev/nvidia-caps"
attach() { lxc-attach -P "$W/lxc" -n "$name" -- "$@"; }
inside=$(attach ls -l /dev/nvidia0 /dev/nvidia1 /dev/nvidia2 /dev/nvidia3 /dev/nvidia4 /dev/nvidia5 /dev/nvidia6 /dev/nvidia7 \
  /dev/nvidiactl /dev/nvidia-uvm /dev/nvidia-uvm-tools /dev/nvidia-caps/nvidia-cap1 /dev/nvidia-caps/nvidia-cap2)
echo "$inside"
# Every node the host has, with its numbers and mode: "crw-rw-rw- ... 195, 0 ... /dev/nvidia0" and so on.
fail=0
while read -r path mode major minor; do
  echo "$inside" | awk -v p="$path" -v m="$mode" -v ma="$major," -v mi="$minor" \
    '$NF == p && $1 == m && $5 == ma && $6 == mi {found=1} END {exit !found}' || { echo "MISSING in the container: $path $mode $major:$minor"; fail=1; }
done <<NODES
$(for i in 0 1 2 3 4 5 6 7; do echo "/dev/nvidia$i crw-rw-rw- 195 $i"; done)
/dev/nvidiactl crw-rw-rw- 195 255
/dev/nvidia-uvm crw-rw-rw- 238 0
/dev/nvidia-uvm-tools crw-rw-rw- 238 1
/dev/nvidia-caps/nvidia-cap1 cr-------- 241 1
/dev/nvidia-caps/nvidia-cap2 cr--r--r-- 241 2
NODES

echo "== the container's device cgroup and an open of /dev/nvidia0 (no driver here: ENXIO means the cgroup let it through)"
cgroup_v1=/sys/fs/cgroup/devices/lxc.payload.$name/devices.list
if [ -r "$cgroup_v1" ]; then echo "cgroup v1 devices.list: $(tr '\n' ' ' <"$cgroup_v1")"; else echo "no cgroup v1 devices controller (cgroup v2 host)"; fi
opened=$(attach head -c1 /dev/nvidia0 2>&1 || true)
echo "$opened"
# "No such device or address": the device cgroup let the open through and no driver answered (none here); "Operation
# not permitted" would be the cgroup refusing it (what the lxc.cgroup2 rules got on this cgroup v1 machine before the
# role chose the key by the host's controller).
case "$opened" in
  *"No such device or address"*) echo "lxc_real: the device cgroup allows /dev/nvidia0" ;;
  *) echo "lxc_real: the device cgroup refused /dev/nvidia0 (or another error)"; fail=1 ;;
esac
if [ "$fail" != 0 ]; then echo "lxc_real: FAILED"; exit 1; fi
echo "lxc_real: every stand-in node is in the container and may be opened"
