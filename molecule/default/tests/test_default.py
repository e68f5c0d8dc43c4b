# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the upgrade must have left on every LXC GPU host stand-in."""

import json


def test_cuda_13_toolkit_installed_at_declared_version(host):
    pkg = host.package("cuda-toolkit-13-0")
    assert pkg.is_installed
    assert pkg.version == "13.0.2-1"


def test_nvcc_is_the_real_13_0(host):
    out = host.check_output("/usr/local/cuda-13.0/bin/nvcc --version")
    assert "release 13.0, V13.0.88" in out
    archs = host.check_output("/usr/local/cuda-13.0/bin/nvcc --list-gpu-arch").split()
    assert "compute_120" in archs


def test_repository_is_deb822_and_signed_by_its_own_key(host):
    sources = host.run("grep -l upstream-mirror /etc/apt/sources.list.d/*.sources").stdout.split()
    assert len(sources) == 1
    content = host.file(sources[0]).content_string
    assert "Signed-By: /etc/apt/keyrings/cuda-archive-keyring.gpg" in content
    assert "trusted" not in content.lower()
    assert host.file("/etc/apt/keyrings/cuda-archive-keyring.gpg").exists


def test_no_driver_can_be_installed(host):
    prefs = host.file("/etc/apt/preferences.d/cuda-toolkit-no-driver").content_string
    assert "Package: cuda-drivers\nPin: version *\nPin-Priority: -1" in prefs
    policy = host.check_output("apt-cache policy cuda-drivers")
    assert "Candidate: (none)" in policy or policy.strip() == ""
    assert not host.package("cuda-drivers").is_installed


def test_old_toolkit_untouched(host):
    marker = json.loads(host.file("/usr/local/cuda-12.8/version.json").content_string)
    assert marker["cuda"]["version"] == "12.8.1"
    # The cuda alternative is off by default: /usr/local/cuda is not created or moved.
    assert not host.file("/usr/local/cuda").exists


LEAK = "gpuops-leak-"
# The test's copies are built from parts, so that a failing assertion's source line never prints a whole marker.
HF_TOKEN = LEAK + "hf-7c1e90"
API_KEY = LEAK + "key-93b4d2"


def has_keys(host):
    return host.backend.get_hostname() == "sglang-gpu-d13"


def stack_dir(host):
    current = host.file("/opt/sglang/current")
    assert current.is_symlink
    return current.linked_to


def test_current_links_the_new_stack(host):
    stack = stack_dir(host)
    assert stack.startswith("/opt/sglang/stacks/cu130-sglang-0.5.9-")
    assert host.file(stack + "/venv/bin/python").exists
    assert not host.file("/opt/sglang/previous").exists  # first switch on this host: nothing served before


def test_bill_of_materials_matches_the_declaration(host):
    bom = json.loads(host.file(stack_dir(host) + "/bom.json").content_string)
    assert bom["drift"] is False
    got = {item["name"]: (item["installed"], item["status"]) for item in bom["items"]}
    assert got["torch"] == ("2.11.0.dev20251231+cu130", "ok")
    assert got["torch.version.cuda"] == ("13.0", "ok")
    assert got["flashinfer-python"] == ("0.6.4", "ok")
    assert got["flashinfer-cubin"] == ("0.6.4", "ok")
    assert got["flashinfer-jit-cache"] == ("0.6.4+cu130", "ok")
    assert got["sgl-kernel"] == ("0.3.21+cu130", "ok")
    assert got["sglang"] == ("0.5.9", "ok")


def test_every_layer_verified_for_sm120(host):
    report = json.loads(host.file(stack_dir(host) + "/verify.json").content_string)
    layers = {layer["layer"]: layer for layer in report["extra"]["layers"]}
    # One row per GPU check and per declared package with device code, judged by its policy in the declaration.
    for name in ("gpus", "nvcc", "torch", "torchvision", "sgl-kernel", "flashinfer-jit-cache"):
        assert layers[name]["ok"] and layers[name]["verdict"] == "ok", (name, layers[name])
    # flashinfer-cubin is reported, never required (its real cubins are SM100-class kernels).
    assert layers["flashinfer-cubin"]["verdict"] == "reported", layers["flashinfer-cubin"]


def test_stack_imports_with_its_own_interpreter(host):
    python = stack_dir(host) + "/venv/bin/python"
    out = host.check_output(python + " -c 'import torch, sgl_kernel, sglang; print(torch.__version__, torch.version.cuda, sglang.__version__)'")
    assert out.split() == ["2.11.0.dev20251231+cu130", "13.0", "0.5.9"]


def test_stack_holds_exactly_its_lock(host):
    """The lock (made on the controller by the upgrade) names every distribution; the venv holds exactly those, at the
    locked versions, and each wheel in the wheelhouse has its locked sha256 - the flashinfer JIT cache too, whose index
    publishes no hash (the lock step computed it)."""
    stack = stack_dir(host)
    lock = json.loads(host.file(stack + "/lock.json").content_string)
    locked = {}
    for layer in lock["layers"]:
        for dist in layer["distributions"]:
            locked[dist["name"].lower().replace("_", "-")] = dist
    python = stack + "/venv/bin/python"
    listed = json.loads(host.check_output(python + " -m pip list --format json --disable-pip-version-check"))
    installed = {d["name"].lower().replace("_", "-"): d["version"] for d in listed if d["name"] != "pip"}
    assert installed == {name: dist["version"] for name, dist in locked.items()}
    for dist in locked.values():
        path = stack + "/wheelhouse/" + dist["filename"]
        assert host.check_output("sha256sum -- %s", path).split()[0] == dist["sha256"], path
    jit = [d for d in locked.values() if d["name"] == "flashinfer-jit-cache"][0]
    assert len(jit["sha256"]) == 64


def test_installing_sglang_without_the_guard_would_break_the_stack(host):
    """The guard matters: sglang's own pins contradict the declared layers, and a plain install
    (with its dependencies) would enforce them. pip check shows the pins that --no-deps kept out."""
    python = stack_dir(host) + "/venv/bin/python"
    out = host.run(python + " -m pip check").stdout
    assert "sglang 0.5.9 has requirement torch==2.9.1, but you have torch 2.11.0.dev20251231+cu130." in out
    assert "sglang 0.5.9 has requirement flashinfer_python==0.6.3, but you have flashinfer-python 0.6.4." in out
    assert "sglang 0.5.9 has requirement flashinfer_cubin==0.6.3, but you have flashinfer-cubin 0.6.4." in out


def test_site_patches_applied_to_the_new_sglang(host):
    site = stack_dir(host) + "/venv/lib/"
    site += host.check_output("ls " + site) + "/site-packages"
    applied = json.loads(host.file(site + "/.gpuops-patches/site-nccl/applied.json").content_string)
    assert [p["name"] for p in applied["patches"]] == ["0002-torch-symm-mem-guard.patch", "0003-nccl-log-allreduce-path.patch"]
    # 0001 (custom all-reduce on PCIe) left the series: SGLang 0.5.9's kernel does not reduce over PCIe for 8 ranks.
    car = host.file(site + "/sglang/srt/distributed/device_communicators/custom_all_reduce.py").content_string
    assert 'SGLANG_CUSTOM_AR_ALLOW_PCIE' not in car
    ps = host.file(site + "/sglang/srt/distributed/parallel_state.py").content_string
    assert "def gpuops_allreduce_path(" in ps
    symm = host.file(site + "/sglang/srt/distributed/device_communicators/torch_symm_mem.py").content_string
    assert "self.device_capability not in TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES" in symm
    assert '"torch symmetric memory all-reduce disabled: no size table for "' in symm


def test_nccl_environment_written(host):
    env = host.file(stack_dir(host) + "/nccl.env").content_string
    assert "NCCL_P2P_LEVEL=SYS\n" in env
    assert "SGLANG_CUSTOM_AR_ALLOW_PCIE" not in env
    assert "NCCL_ALGO" not in env  # empty: NCCL chooses


def test_service_runs_the_new_stack_as_unprivileged_user(host):
    svc = host.service("sglang")
    assert svc.is_running
    assert svc.is_enabled
    unit = host.file("/etc/systemd/system/sglang.service").content_string
    # With an API key (the Debian 12 host) the key launcher starts the server; without, python -m.
    start = "/opt/sglang/libexec/sglang_keys_launch.py" if has_keys(host) else "-m"
    assert ("ExecStart=/opt/sglang/current/venv/bin/python %s sglang_standin.launch_server --model-path /srv/models/testbed-model --tp-size 8" % start) in unit
    assert "EnvironmentFile=/opt/sglang/current/nccl.env" in unit
    assert "LimitMEMLOCK=infinity" in unit
    pid = host.check_output("systemctl show -p MainPID --value sglang")
    assert host.check_output("ps -o user= -p %s" % pid).strip() == "sglang"
    # The process runs from the new stack, entered through the current link.
    # /proc/<pid>/cwd and environ of another user need CAP_SYS_PTRACE, which containers lack: read as that user.
    # The unit's WorkingDirectory is /opt/sglang/current; the kernel keeps the resolved directory.
    cwd = host.check_output("runuser -u sglang -- readlink /proc/%s/cwd" % pid)
    assert cwd == stack_dir(host)
    # It reads the NCCL environment written for the stack.
    environ = host.check_output("runuser -u sglang -- cat /proc/%s/environ | tr '\\0' '\\n'" % pid)
    assert "NCCL_P2P_LEVEL=SYS" in environ.splitlines()


def test_service_passes_its_health_gate(host):
    out = host.check_output("python3 -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.1:30000/health_generate').status)\"")
    assert out.strip() == "200"
    analyze = host.run("systemd-analyze verify /etc/systemd/system/sglang.service")
    assert analyze.rc == 0
    assert "sglang.service" not in analyze.stderr


def test_secrets_only_in_the_secret_file(host):
    secret = host.file("/etc/sglang/sglang.secret.env")
    assert secret.user == "root" and secret.group == "sglang" and secret.mode == 0o640
    if not has_keys(host):
        assert LEAK not in secret.content_string
        return
    assert "HF_TOKEN=" in secret.content_string and "GPUOPS_SGLANG_API_KEY=" in secret.content_string
    for path in ["/etc/systemd/system/sglang.service", "/etc/sglang/sglang.env", stack_dir(host) + "/service.env",
                 stack_dir(host) + "/nccl.env"]:
        assert LEAK not in host.file(path).content_string, path
    # Every command line on the host (the server's included), and the whole journal: module invocations
    # ("Invoked with ..."), the server's log (sglang logs server_args at start-up), systemd's own lines.
    assert LEAK not in host.check_output("cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '")
    journal = host.check_output("journalctl --no-pager -o cat")
    assert LEAK not in journal
    assert "'api_key': '<redacted>'" in journal  # the server got the key and its log line was redacted
    # The server got the secret environment. (Its initial environment block, /proc/<pid>/environ, still holds the
    # API key the launcher took out of os.environ: readable by root and the service user only, as the secret file
    # itself; the processes it starts do not get it, tests/unit/plugins/module_utils/test_sglang_keys.py.)
    pid = host.check_output("systemctl show -p MainPID --value sglang")
    environ = host.check_output("runuser -u sglang -- cat /proc/%s/environ | tr '\\0' '\\n'" % pid)
    assert ("HF_TOKEN=" + HF_TOKEN) in environ.splitlines()
    probe = ("python3 -c \"import sys, urllib.request as u, urllib.error as e\n"
             "r = u.Request('http://127.0.0.1:30000/get_server_info', headers=dict([sys.argv[1:]]) if sys.argv[1:] else {})\n"
             "try: print(u.urlopen(r).status)\n"
             "except e.HTTPError as x: print(x.code)\" %s")
    assert host.check_output(probe % "").strip() == "401"
    assert host.check_output(probe % ("Authorization 'Bearer %s'" % API_KEY)).strip() == "200"


def test_stack_is_root_owned_and_read_only_to_the_service_user(host):
    stack = stack_dir(host)
    assert host.check_output("find %s -xdev ! -user root -print -quit" % stack) == ""
    site = host.check_output("ls -d %s/venv/lib/python3*/site-packages" % stack)
    assert host.run("runuser -u sglang -- test -w %s" % site).rc != 0
    assert host.run("runuser -u sglang -- touch %s/venv/bin/python" % stack).rc != 0
    assert host.run("runuser -u sglang -- test -w %s" % "/opt/sglang/libexec").rc != 0


def test_service_runs_hardened_and_writes_only_its_own_directories(host):
    # The service's own mount namespace (ProtectSystem=strict, ReadWritePaths, PrivateTmp), read from its mountinfo as
    # its user (nsenter needs CAP_SYS_PTRACE, which the container lacks): / read-only, the state and cache
    # directories writable mounts of their own. The container has CAP_SYS_ADMIN, as an LXC container's init does.
    pid = host.check_output("systemctl show -p MainPID --value sglang")
    mounts = {}
    for line in host.check_output("runuser -u sglang -- cat /proc/%s/mountinfo" % pid).splitlines():
        fields = line.split()
        mounts[fields[4]] = fields[5].split(",")
    assert "ro" in mounts["/"], mounts["/"]
    assert "rw" in mounts["/var/cache/sglang"] and "rw" in mounts["/var/lib/sglang"]
    assert "rw" in mounts["/tmp"]  # a private /tmp
    props = host.check_output("systemctl show sglang -p NoNewPrivileges -p ProtectSystem -p DevicePolicy -p PrivateTmp")
    assert "NoNewPrivileges=yes" in props and "ProtectSystem=strict" in props and "DevicePolicy=closed" in props
