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
