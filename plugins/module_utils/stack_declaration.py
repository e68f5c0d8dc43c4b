# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The stack declaration: validation and resolution.

The declaration (roles/stack_declaration/defaults/main.yml, overridable from inventory) is the one
reviewed place that says which version of every layer goes in, from where, with which sha256, in
which order. Every role reads the *resolved* form produced here, so the rules that keep the upgrade
safe live in one place and are unit-tested:

* the layers come in the order torch -> flashinfer -> sgl_kernel -> sglang;
* every version is exact (no ranges): a range would let pip pick something nobody reviewed;
* torch and the flashinfer JIT cache are builds for the declared toolkit: the version carries its CUDA tag
  (cu130 for 13.0) or, where the version has no local tag (PyPI's torch 2.11.0 is a cu130 build whose
  torch/version.py says cuda = '13.0'), the package says ``cuda: "13.0"``;
* torchvision is declared in the torch layer (``python -m sglang.launch_server`` imports it for every
  model) and is the build of the same torch: 0.26.x for 2.11.x, the same nightly date, the same CUDA;
* every package carries a verify policy (``verify``: reason, require, report) that says which of its
  files must carry SM120 code (arch_policy.py judges them on the host);
* flashinfer-python, flashinfer-cubin and flashinfer-jit-cache move in lock-step (flashinfer refuses
  a cubin of another version at import time);
* sgl-kernel comes from a prebuilt wheel with the CUDA tag, never an sdist or a build;
* CUDA 13.0 is the only toolkit accepted unless an override carries a reason;
* a declared sha256 is 64 lower-case hex digits; without one (``sha256: null``, a torch nightly, the flashinfer
  JIT cache: their indexes publish none) the lock step hashes the file once on the controller and the reviewed lock
  pins it (module_utils/stack_lock).

Resolution maps every upstream URL onto a local mirror when one is given (the mirror keeps the
upstream layout under a per-upstream path prefix), and derives the stack id from the content of the
declaration, so two hosts given the same declaration build the same stack directory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import hashlib
import json
import re

# PEP 503 name normalisation ('flashinfer_python' -> 'flashinfer-python'): one rule for declared and installed names.
from ansible_collections.gpuops.sglang_stack.plugins.module_utils.stack_bom import normalize_name
from ansible_collections.gpuops.sglang_stack.plugins.module_utils.arch_policy import POLICY_KEYS, glob_problem
from ansible_collections.gpuops.sglang_stack.plugins.module_utils.apt_sources import normalize_fingerprint
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_lock
from ansible_collections.gpuops.sglang_stack.plugins.module_utils.stack_lock import nightly_spec, spec_requirement

LAYER_ORDER = ('torch', 'flashinfer', 'sgl_kernel', 'sglang')
FLASHINFER_TRIO = ('flashinfer-python', 'flashinfer-cubin', 'flashinfer-jit-cache')
SUPPORTED_CUDA = '13.0'
WHY_CUDA_13_0 = (
    'CUDA 13.0 is the only supported toolkit: the torch nightly, flashinfer-jit-cache and sgl-kernel wheels of this stack '
    'are cu130 builds, and a 580 driver (the LTS branch on these hosts) meets 13.0\'s minimum (580.65.06) but not '
    '13.1\'s (590.44.01).'
)

# PEP 440 version without any comparison operator: 2.11.0.dev20251231+cu130, 0.6.4, 0.3.21+cu130.
_EXACT_VERSION = re.compile(r'^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?(\+[a-z0-9]+(\.[a-z0-9]+)*)?$')
_SHA256 = re.compile(r'^[0-9a-f]{64}$')
_SDIST_SUFFIXES = ('.tar.gz', '.zip', '.tar.bz2', '.tgz')
SOURCES = ('index', 'url')
DEPENDENCY_MODES = ('none', 'resolve')
_REQUIREMENT_NAME = re.compile(r'^\s*([A-Za-z0-9][A-Za-z0-9._-]*)')
_CUDA_VERSION = re.compile(r'^[0-9]+\.[0-9]+$')
_LOCAL_CUDA_TAG = re.compile(r'^cu([0-9]+)([0-9])$')
VERSION_POLICIES = ('newest',)
_RELEASE = re.compile(r'^([0-9]+)\.([0-9]+)\.([0-9]+)((?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?(?:\.dev[0-9]+)?)$')
# Packages whose device code SGLang loads on the GPU: their verify policy must require at least one file,
# so that an inventory override cannot turn their check into a report.
MUST_REQUIRE = ('torch', 'flashinfer-jit-cache', 'sgl-kernel')
# torch 2.M.P ships with torchvision 0.(M+15).P (pytorch/vision's compatibility table; torchvision 0.26.0's
# METADATA says Requires-Dist: torch (==2.11.0)).
TORCHVISION_MINOR_OFFSET = {2: 15}


# PEP 508's name (case-insensitive): what pip reads as a distribution name and nothing else; a name such as
# "--extra-index-url=..." would otherwise reach the constraints file, where pip obeys it as an option.
PEP508_NAME = re.compile(r'^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$', re.IGNORECASE)
# The stack name names directories (the stack id): a safe charset, no '/', no '..', no leading '-' or '.'.
_STACK_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$')
# A pip option inside a requirement string: at the start, or after whitespace ("foo --index-url http://...").
_PIP_OPTION = re.compile(r'(^|\s)-')
_DRIVER_VERSION = re.compile(r'^[0-9]+(\.[0-9]+){1,2}$')
_KEY_FILE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]*$')


def driver_key(version):
    """'580.95.05' -> (580, 95, 5), for comparing driver versions."""
    return tuple(int(part) for part in str(version).split('.'))


def driver_minimum(cuda):
    """The lowest driver that runs the declared toolkit, and where that figure comes from.

    ``cuda.driver_minimums`` maps each toolkit package version to NVIDIA's minimum Linux driver for it (CUDA
    Toolkit Release Notes, "CUDA Toolkit and Corresponding Driver Versions"): 13.0 GA (13.0.0-1) needs
    580.65.06, 13.0 Update 2 (13.0.2-1) 580.95.05. An explicit ``cuda.driver_minimum`` may raise that floor,
    never lower it; without a table it is the floor. Returns ``(version, source)`` or ``(None, None)``.
    """
    table = cuda.get('driver_minimums') or {}
    explicit = cuda.get('driver_minimum')
    listed = table.get(str(cuda.get('package_version'))) if isinstance(table, dict) else None
    if listed and explicit and _DRIVER_VERSION.match(str(explicit)) and _DRIVER_VERSION.match(str(listed)):
        if driver_key(explicit) > driver_key(listed):
            return str(explicit), 'cuda.driver_minimum (above the table\'s %s)' % listed
    if listed:
        return str(listed), 'cuda.driver_minimums["%s"] (%s)' % (cuda.get('package_version'), cuda.get('driver_minimums_source') or 'declared table')
    if explicit:
        return str(explicit), 'cuda.driver_minimum'
    return None, None


def _driver_minimum_problems(cuda):
    """The toolkit's driver floor comes from the table (or an explicit value above it), never below NVIDIA's figure."""
    problems = []
    table = cuda.get('driver_minimums')
    explicit = cuda.get('driver_minimum')
    if table is not None and not isinstance(table, dict):
        return ['cuda.driver_minimums must map toolkit package versions ("13.0.2-1") to driver versions ("580.95.05")']
    for package_version, driver in sorted((table or {}).items(), key=lambda item: str(item[0])):
        if not _DRIVER_VERSION.match(str(driver)):
            problems.append('cuda.driver_minimums["%s"] "%s" is not a driver version (e.g. 580.95.05)' % (package_version, driver))
    if explicit and not _DRIVER_VERSION.match(str(explicit)):
        problems.append('cuda.driver_minimum "%s" is not a driver version (e.g. 580.95.05)' % explicit)
    if problems or not cuda.get('package_version'):
        return problems
    listed = (table or {}).get(str(cuda['package_version']))
    if table and listed is None and not explicit:
        problems.append('cuda.driver_minimums has no entry for %s=%s: add NVIDIA\'s minimum Linux driver for that release '
                        '(CUDA Toolkit Release Notes, "CUDA Toolkit and Corresponding Driver Versions"); known: %s'
                        % (cuda.get('package'), cuda['package_version'], ', '.join('%s -> %s' % item for item in sorted(table.items()))))
    elif listed is not None and explicit and driver_key(explicit) < driver_key(listed):
        problems.append('cuda.driver_minimum %s is below %s, NVIDIA\'s minimum driver for %s=%s (cuda.driver_minimums); '
                        'drop driver_minimum or raise it' % (explicit, listed, cuda.get('package'), cuda['package_version']))
    elif not table and not explicit:
        problems.append('cuda.driver_minimums (toolkit package version -> minimum driver) is missing, and no cuda.driver_minimum is given')
    return problems


def _apt_signing_key_problems(cuda):
    """NVIDIA's repository key per repository directory: a key file name and its OpenPGP fingerprint."""
    keys = cuda.get('apt_signing_keys')
    if keys is None:
        return []
    if not isinstance(keys, dict):
        return ['cuda.apt_signing_keys must map repository directories (debian12, ubuntu2404 ...) to {key_file, fingerprint}']
    problems = []
    for distro, key in sorted(keys.items(), key=lambda item: str(item[0])):
        if not isinstance(key, dict):
            problems.append('cuda.apt_signing_keys.%s must be {key_file, fingerprint}' % distro)
            continue
        if normalize_fingerprint(key.get('fingerprint')) is None:
            problems.append('cuda.apt_signing_keys.%s.fingerprint "%s" is not an OpenPGP fingerprint (40 hex digits for a '
                            'v4 key, 64 for v6): the key is compared with it before apt trusts it' % (distro, key.get('fingerprint')))
        if not _KEY_FILE.match(str(key.get('key_file') or '')):
            problems.append('cuda.apt_signing_keys.%s.key_file "%s" must be a file name in the repository directory '
                            '(3bf863cc.pub)' % (distro, key.get('key_file')))
    return problems


# The CUDA apt repository's directory for each operating system, keyed as os_key() names a host. The one map of it:
# the declaration may replace it (cuda.apt_repo_distros); cuda_toolkit, fleet_wheelhouse and preflight read the
# resolved cuda.apt_repos through the cuda_apt_repo filter, never a map of their own.
DEFAULT_APT_REPO_DISTROS = {
    'Debian-12': 'debian12',
    'Debian-13': 'debian13',
    'Ubuntu-22.04': 'ubuntu2204',
    'Ubuntu-24.04': 'ubuntu2404',
}
_REPO_DISTRO = re.compile(r'^[a-z0-9]{2,32}\Z')


def _apt_repo_distro_problems(cuda):
    distros = cuda.get('apt_repo_distros')
    if distros is None:
        return []
    if not isinstance(distros, dict) or not distros:
        return ['cuda.apt_repo_distros must map operating systems (Debian-12, Ubuntu-24.04 ...) to repository directories (debian12 ...)']
    return ['cuda.apt_repo_distros.%s "%s" is not a repository directory name (lower-case letters and digits, as debian12)'
            % (os_name, distro) for os_name, distro in sorted(distros.items(), key=lambda item: str(item[0]))
            if not _REPO_DISTRO.match(str(distro))]


def os_key(distribution, version, major_version):
    """How the CUDA repository map names a host: Debian by its major version, Ubuntu by its release (22.04)."""
    distribution = str(distribution or '')
    return '%s-%s' % (distribution, version if distribution == 'Ubuntu' else major_version)


def apt_repos(cuda, base_url, upstream_url):
    """Every repository of the declaration, keyed by directory: where it is, where it is upstream, its key."""
    repos = {}
    keys = cuda.get('apt_signing_keys') or {}
    for distro in sorted(set((cuda.get('apt_repo_distros') or DEFAULT_APT_REPO_DISTROS).values())):
        key = keys.get(distro) or {}
        url = '%s/repos/%s/x86_64/' % (base_url, distro)
        repos[distro] = {
            'distro': distro,
            'url': url,
            'upstream_url': '%s/repos/%s/x86_64/' % (upstream_url, distro),
            'key_file': key.get('key_file') or '',
            'key_url': url + key['key_file'] if key.get('key_file') else '',
            'fingerprint': key.get('fingerprint') or '',
        }
    return repos


def apt_repo_for_host(cuda, distribution, version, major_version, strict=True):
    """The resolved repository of a host (its os key added), or a ValueError naming the host's OS and the choices.

    With ``strict`` false an unknown OS gives ``{'os': <its key>}`` alone (preflight reports it as its OS gate).
    """
    name = os_key(distribution, version, major_version)
    distros = cuda.get('apt_repo_distros') or DEFAULT_APT_REPO_DISTROS
    distro = distros.get(name)
    repo = (cuda.get('apt_repos') or {}).get(distro) if distro else None
    if repo is None and not strict:
        return {'os': name}
    if repo is None:
        raise ValueError('no CUDA apt repository is declared for %s (cuda.apt_repo_distros knows %s); NVIDIA publishes '
                         'the toolkit for the operating systems listed there' % (name, ', '.join(sorted(distros)) or 'none'))
    return dict(repo, os=name)


class StackDeclarationError(ValueError):
    """The declaration breaks a rule; the message names the item and the fix."""

    def __init__(self, problems):
        self.problems = list(problems)
        super(StackDeclarationError, self).__init__('Invalid stack declaration:\n- ' + '\n- '.join(self.problems))


def name_problem(field, name):
    """None when ``name`` is a PEP 508 distribution name, else a refusal naming the field and the value."""
    if isinstance(name, str) and PEP508_NAME.match(name) and '\n' not in name:
        return None
    return ('%s %r is not a PEP 508 package name (letters, digits, ".", "_", "-"; starting and ending with a letter '
            'or digit): pip would read anything else as an option or a path' % (field, name))


def stack_name_problem(name):
    """None when the stack name is safe in a path, else a refusal naming the value."""
    if isinstance(name, str) and _STACK_NAME.match(name) and '..' not in name and '\n' not in name:
        return None
    return ('stack name %r is refused: it names the stack directory, so it must be 1 to 100 of letters, digits, '
            '".", "_", "+", "-", start with a letter or digit, and hold no "/" and no ".."' % (name,))


def requirement_option(requirement):
    """True when a requirement string carries a pip option (a leading "-", or " --index-url ..." after a name) or a line break."""
    text = str(requirement)
    return bool(_PIP_OPTION.search(text)) or '\n' in text or '\r' in text


def requirement_name(requirement):
    """'torch==2.9.1' -> 'torch'; 'av; sys_platform == "linux"' -> 'av'; None when unparsable."""
    match = _REQUIREMENT_NAME.match(str(requirement))
    return normalize_name(match.group(1)) if match else None


def cuda_tag(cuda_version):
    """'13.0' -> 'cu130' (the local version tag the wheels of that toolkit carry)."""
    major, minor = str(cuda_version).split('.')[:2]
    return 'cu%d%d' % (int(major), int(minor))


def version_base(version):
    """'0.6.4+cu130' -> '0.6.4'."""
    return str(version).split('+', 1)[0]


def version_local(version):
    """'2.11.0.dev20251231+cu130' -> 'cu130'; '2.11.0' -> None."""
    parts = str(version).split('+', 1)
    return parts[1] if len(parts) == 2 else None


def package_cuda(pkg):
    """The CUDA a declared package is built for: its explicit ``cuda`` ("13.0"), else its +cuXYZ tag, else None.

    The tag is not the only mark of a CUDA build: PyPI's torch 2.11.0 has no local tag while its
    torch/version.py says cuda = '13.0'; such a package says so with ``cuda: "13.0"``.
    """
    if pkg.get('cuda') not in (None, ''):
        return str(pkg['cuda'])
    match = _LOCAL_CUDA_TAG.match(version_local(pkg.get('version')) or '')
    return '%d.%s' % (int(match.group(1)), match.group(2)) if match else None


def torchvision_for(torch_version):
    """The torchvision release that goes with a torch version: '2.11.0.dev20251231+cu130' -> '0.26.0.dev20251231'.

    None when the version is not MAJOR.MINOR.PATCH[pre][.dev] or its major has no known offset.
    """
    match = _RELEASE.match(version_base(torch_version))
    if not match or int(match.group(1)) not in TORCHVISION_MINOR_OFFSET:
        return None
    major, minor, patch, suffix = int(match.group(1)), int(match.group(2)), int(match.group(3)), match.group(4)
    return '0.%d.%d%s' % (minor + TORCHVISION_MINOR_OFFSET[major], patch, suffix)


def _verify_policy_problems(where, pkg):
    """The package's verify policy: a mapping with a reason, and globs relative to site-packages."""
    policy = pkg.get('verify')
    if policy is None:
        return ['%s: "verify" is missing: every package says which of its files must carry code for the GPU '
                '(verify: {reason: ..., require: [globs], report: [globs]}; a pure Python package gives only the reason)' % where]
    if not isinstance(policy, dict):
        return ['%s: "verify" must be a mapping with the keys %s' % (where, ', '.join(POLICY_KEYS))]
    problems = []
    unknown = sorted(str(key) for key in policy if key not in POLICY_KEYS)
    if unknown:
        problems.append('%s: verify has unknown key(s) %s (allowed: %s)' % (where, ', '.join(unknown), ', '.join(POLICY_KEYS)))
    if not isinstance(policy.get('reason'), str) or not policy['reason'].strip():
        problems.append('%s: verify needs a "reason": why these files, and only these, must carry code for the GPU' % where)
    for key in ('require', 'report'):
        globs = policy.get(key)
        if globs is None:
            continue
        if not isinstance(globs, list):
            problems.append('%s: verify.%s must be a list of globs relative to site-packages' % (where, key))
            continue
        for pattern in globs:
            problem = glob_problem(pattern)
            if problem:
                problems.append('%s: verify.%s: %s' % (where, key, problem))
    if normalize_name(pkg.get('name', '')) in MUST_REQUIRE and not policy.get('require'):
        problems.append('%s: verify.require is empty: SGLang loads this package\'s device code on the GPU, so the policy '
                        'must name the files that have to carry code for it' % where)
    return problems


def _package_problems(layer_name, pkg, tag, upstreams):
    where = 'layer %s, package %s' % (layer_name, pkg.get('name', '?'))
    problems = []
    for key in ('name', 'version', 'source', 'upstream'):
        if not pkg.get(key):
            problems.append('%s: "%s" is missing' % (where, key))
    if problems:
        return problems
    problem = name_problem('name', pkg['name'])
    if problem:
        return ['%s: %s' % ('layer %s, package %r' % (layer_name, pkg['name']), problem)]
    version = str(pkg['version'])
    policy = pkg.get('version_policy')
    if nightly_spec(version) is not None:
        if policy not in VERSION_POLICIES:
            problems.append('%s: version "%s" is a spec: say which build the lock takes with version_policy: %s' % (
                where, version, ' or '.join(VERSION_POLICIES)))
        if pkg.get('dependencies') != 'resolve' or pkg.get('source') != 'index':
            problems.append('%s: version "%s" is a spec: it needs source "index" and dependencies "resolve" (the lock step\'s '
                            'resolver chooses the build)' % (where, version))
        if pkg.get('filename') or pkg.get('sha256'):
            problems.append('%s: version "%s" is a spec: leave filename and sha256 out, the lock records the build it chose'
                            % (where, version))
    elif not _EXACT_VERSION.match(version):
        problems.append('%s: version "%s" is not an exact version or a nightly spec (X.Y.Z.dev*[+tag] with version_policy: '
                        'newest); no ranges or operators: pin what was reviewed' % (where, version))
    elif policy is not None:
        problems.append('%s: version_policy "%s" is for a nightly spec (X.Y.Z.dev*[+tag]); version "%s" is exact' % (
            where, policy, version))
    if pkg['source'] not in SOURCES:
        problems.append('%s: source "%s" must be one of %s' % (where, pkg['source'], ', '.join(SOURCES)))
    if pkg['upstream'] not in upstreams:
        problems.append('%s: upstream "%s" is not declared in upstreams (%s)' % (where, pkg['upstream'], ', '.join(sorted(upstreams))))
    if pkg['source'] == 'index' and not pkg.get('index_path'):
        problems.append('%s: source "index" needs "index_path" (the PEP 503 index below the upstream)' % where)
    if pkg['source'] == 'url':
        path = str(pkg.get('file_path') or '')
        if not path:
            problems.append('%s: source "url" needs "file_path" (the wheel below the upstream)' % where)
        elif path.endswith(_SDIST_SUFFIXES):
            problems.append('%s: "%s" is a source distribution; only prebuilt wheels are installed (no build on GPU hosts)' % (where, path))
        elif not path.endswith('.whl'):
            problems.append('%s: "%s" is not a wheel (.whl)' % (where, path))
    if pkg.get('dependencies', 'none') not in DEPENDENCY_MODES:
        problems.append('%s: dependencies "%s" must be one of %s' % (where, pkg.get('dependencies'), ', '.join(DEPENDENCY_MODES)))
    elif pkg.get('dependencies') == 'resolve' and pkg['source'] != 'index':
        problems.append('%s: dependencies "resolve" needs source "index" (the requirements are resolved from that index)' % where)
    sha = pkg.get('sha256')
    if 'sha256_policy' in pkg:
        problems.append('%s: sha256_policy is gone (record_on_first_fetch trusted whatever each host fetched first): drop the key. '
                        'Without a declared sha256 the lock step hashes the file once on the controller and the reviewed lock '
                        'pins it (playbooks/lock.yml)' % where)
    elif sha and not _SHA256.match(str(sha)):
        problems.append('%s: sha256 "%s" is not 64 lower-case hex digits' % (where, sha))
    local = version_local(version)
    cuda = pkg.get('cuda')
    if cuda not in (None, ''):
        if not _CUDA_VERSION.match(str(cuda)):
            problems.append('%s: cuda "%s" must be MAJOR.MINOR, e.g. "13.0" (what the wheel\'s own CUDA version says)' % (where, cuda))
        elif local and _LOCAL_CUDA_TAG.match(local) and local != cuda_tag(cuda):
            problems.append('%s: cuda "%s" contradicts the version\'s tag +%s' % (where, cuda, local))
    if pkg.get('cuda_tagged'):
        if local != tag and not (local is None and package_cuda(pkg) is not None):
            problems.append('%s: version "%s" must carry the CUDA tag +%s of the declared toolkit (or, when the version has no '
                            'local tag, say cuda: "<the toolkit version>" as the wheel\'s own CUDA version reads)' % (where, version, tag))
    problems.extend(_verify_policy_problems(where, pkg))
    return problems


def validate(declaration):
    """Return the list of problems of a declaration (empty when it is valid)."""
    problems = []
    if not isinstance(declaration, dict):
        return ['the declaration must be a mapping, got %s' % type(declaration).__name__]
    if declaration.get('name') is not None and stack_name_problem(declaration['name']):
        problems.append(stack_name_problem(declaration['name']))
    cuda = declaration.get('cuda') or {}
    cuda_version = str(cuda.get('version', ''))
    if not re.match(r'^[0-9]+\.[0-9]+$', cuda_version):
        problems.append('cuda.version "%s" must be MAJOR.MINOR, e.g. 13.0' % cuda_version)
        return problems
    if cuda_version != SUPPORTED_CUDA and not str(declaration.get('cuda_version_override_reason') or '').strip():
        problems.append('cuda.version %s is refused. %s To use another version anyway, set cuda_version_override_reason '
                        'to the reason (it is recorded in the bill of materials).' % (cuda_version, WHY_CUDA_13_0))
    for key in ('package', 'package_version'):
        if not cuda.get(key):
            problems.append('cuda.%s is missing' % key)
    problems.extend(_driver_minimum_problems(cuda))
    problems.extend(_apt_signing_key_problems(cuda))
    problems.extend(_apt_repo_distro_problems(cuda))
    if cuda.get('package') and cuda_version and cuda['package'] != 'cuda-toolkit-%s' % cuda_version.replace('.', '-'):
        problems.append('cuda.package "%s" does not match cuda.version %s (expected cuda-toolkit-%s; never the "cuda" or '
                        '"cuda-drivers" metapackages, they pull a driver into the container)'
                        % (cuda['package'], cuda_version, cuda_version.replace('.', '-')))
    if cuda.get('package_version') and not str(cuda['package_version']).startswith(cuda_version + '.'):
        problems.append('cuda.package_version "%s" is not a %s release' % (cuda['package_version'], cuda_version))
    tag = cuda_tag(cuda_version)

    upstreams = declaration.get('upstreams') or {}
    for name, upstream in upstreams.items():
        if not isinstance(upstream, dict) or not upstream.get('url') or not upstream.get('mirror_path'):
            problems.append('upstream %s needs "url" and "mirror_path"' % name)

    layers = declaration.get('layers') or []
    names = [layer.get('name') for layer in layers if isinstance(layer, dict)]
    if names != list(LAYER_ORDER):
        problems.append('layers must be, in this order, %s; got %s' % (' -> '.join(LAYER_ORDER), ' -> '.join(map(str, names)) or 'none'))
    packages = {}
    for layer in layers:
        if not isinstance(layer, dict):
            continue
        if not layer.get('packages'):
            problems.append('layer %s has no packages' % layer.get('name'))
        for pkg in layer.get('packages') or []:
            problems.extend(_package_problems(layer.get('name'), pkg, tag, upstreams))
            packages[pkg.get('name')] = pkg
    if problems:
        return problems

    problems.extend(_torch_problems(layers, packages, cuda_version, tag))

    trio = [packages.get(name) for name in FLASHINFER_TRIO]
    if None in trio:
        problems.append('layer flashinfer must declare %s together (their versions move in lock-step)' % ', '.join(FLASHINFER_TRIO))
    else:
        bases = set(version_base(pkg['version']) for pkg in trio)
        if len(bases) != 1:
            problems.append('flashinfer-python, flashinfer-cubin and flashinfer-jit-cache must share one version '
                            '(flashinfer refuses a cubin of another version at import); got %s'
                            % ', '.join('%s %s' % (pkg['name'], pkg['version']) for pkg in trio))
        if not str(packages['flashinfer-jit-cache']['version']).endswith('+' + tag):
            problems.append('flashinfer-jit-cache %s must be the +%s build' % (packages['flashinfer-jit-cache']['version'], tag))

    kernel = packages.get('sgl-kernel')
    if kernel is None:
        problems.append('layer sgl_kernel must declare the package sgl-kernel')
    else:
        if kernel['source'] != 'url':
            problems.append('sgl-kernel must come from a prebuilt wheel URL (source: url): an index may offer an sdist or a wheel '
                            'built for another CUDA')
        if not str(kernel['version']).endswith('+' + tag) or ('+' + tag) not in str(kernel.get('file_path', '')).replace('%2B', '+'):
            problems.append('sgl-kernel %s (%s) is not the +%s build; the default PyPI wheel is built for CUDA 12 and torch 2.9.1'
                            % (kernel['version'], kernel.get('file_path'), tag))
    if 'sglang' not in packages:
        problems.append('layer sglang must declare the package sglang')
    problems.extend(_requirement_problems(layers, packages))
    problems.extend(_python_tag_problems(declaration.get('python') or {}, packages))
    return problems


def _torch_problems(layers, packages, cuda_version, tag):
    """torch is a build for the declared CUDA; torchvision, in the same layer, is the build of that torch."""
    problems = []
    torch = packages.get('torch')
    if torch is None:
        return ['layer torch must declare the package torch']
    torch_cuda = package_cuda(torch)
    if torch_cuda is None:
        problems.append('torch %s says nothing of its CUDA: its version carries no +%s tag and it declares no cuda. For a wheel '
                        'whose version has no local tag (PyPI\'s torch 2.11.0), set cuda: "%s" when its torch/version.py says '
                        'cuda = \'%s\'' % (torch['version'], tag, cuda_version, cuda_version))
    elif torch_cuda != cuda_version:
        problems.append('torch %s is a CUDA %s build (+%s), the declared toolkit is %s (+%s)'
                        % (torch['version'], torch_cuda, cuda_tag(torch_cuda), cuda_version, tag))
    vision = packages.get('torchvision')
    torch_layer = [pkg.get('name') for layer in layers if layer.get('name') == 'torch' for pkg in layer.get('packages') or []]
    if vision is None:
        problems.append('layer torch must declare torchvision beside torch: python -m sglang.launch_server imports it at module '
                        'level for every model (srt/multimodal/internvl_utils.py: import torchvision.transforms)')
        return problems
    if 'torchvision' not in torch_layer:
        problems.append('torchvision must be in layer torch, beside the torch it is built for')
    torch_spec, vision_spec = nightly_spec(torch['version']), nightly_spec(vision['version'])
    if torch_spec or vision_spec:
        # The builds are chosen by the lock step; the pair is checked again on the locked versions (resolve).
        if not (torch_spec and vision_spec):
            return problems + ['torch %s and torchvision %s: declare both as nightly specs with version_policy: newest, or both exact '
                               '(torchvision follows the torch build the lock takes)' % (torch['version'], vision['version'])]
        want = torchvision_for(torch_spec[0] + '.dev0')
        if want is None or version_base(want).rsplit('.dev', 1)[0] != vision_spec[0]:
            problems.append('torchvision %s does not follow torch %s: that torch ships with torchvision %s' % (
                vision['version'], torch['version'], (want or '?').rsplit('.dev', 1)[0] + '.dev*'))
        if torch_spec[1] != vision_spec[1]:
            problems.append('torchvision %s and torch %s must carry the same local tag: both come from one build of one index'
                            % (vision['version'], torch['version']))
        return problems
    want = torchvision_for(torch['version'])
    have = version_base(vision['version'])
    if want is None:
        problems.append('torch %s: no known torchvision release goes with it (torch 2.M.P ships with torchvision 0.(M+15).P)'
                        % torch['version'])
    elif have != want:
        problems.append('torchvision %s is not the build of torch %s: that torch ships with torchvision %s (torchvision pins '
                        'its torch exactly: 0.26.0 requires torch==2.11.0; a nightly needs the same date)'
                        % (vision['version'], torch['version'], want))
    if version_local(vision['version']) != version_local(torch['version']):
        problems.append('torchvision %s and torch %s must carry the same local tag (+%s): both come from one build of one index'
                        % (vision['version'], torch['version'], version_local(torch['version']) or 'none'))
    elif package_cuda(vision) != torch_cuda:
        problems.append('torchvision %s is a CUDA %s build, torch %s a CUDA %s build; set the same cuda on both'
                        % (vision['version'], package_cuda(vision) or 'unknown', torch['version'], torch_cuda or 'unknown'))
    return problems


def _cp_version(tag):
    """'cp312' -> (3, 12); None for anything else."""
    match = re.match(r'^cp([0-9])([0-9]+)$', str(tag))
    return (int(match.group(1)), int(match.group(2))) if match else None


def _python_tag_problems(python, packages):
    """Every wheel must install on the stack's interpreter: a cp312 wheel needs exactly 3.12, a
    cp312-abi3 wheel (the sgl-kernel cu130 build) needs 3.12 or newer."""
    problems = []
    version = str(python.get('version', ''))
    match = re.match(r'^([0-9]+)\.([0-9]+)$', version)
    if not match:
        return ['python.version "%s" must be MAJOR.MINOR, e.g. 3.12' % version]
    have = (int(match.group(1)), int(match.group(2)))
    if python.get('tag') != 'cp%d%d' % have:
        problems.append('python.tag "%s" does not match python.version %s (expected cp%d%d)' % (python.get('tag'), version, have[0], have[1]))
    if python.get('platform') not in (None, '') and not re.match(r'^x86_64-manylinux_2_[0-9]+$', str(python['platform'])):
        problems.append('python.platform "%s" must be x86_64-manylinux_2_N (the oldest glibc of the fleet, e.g. x86_64-manylinux_2_28): '
                        'the stack lock is resolved for it' % python['platform'])
    for name, pkg in packages.items():
        filename = str(pkg.get('filename') or pkg.get('file_path') or '').rsplit('/', 1)[-1].replace('%2B', '+')
        parts = filename[:-len('.whl')].split('-') if filename.endswith('.whl') else []
        if len(parts) < 5:
            continue
        py_tag, abi_tag = parts[-3], parts[-2]
        need = _cp_version(py_tag)
        if need is None:
            continue
        if abi_tag == 'abi3' and have < need:
            problems.append('%s: %s needs Python >= %d.%d, the stack interpreter is %s' % (name, filename, need[0], need[1], version))
        elif abi_tag != 'abi3' and abi_tag != 'none' and have != need:
            problems.append('%s: %s is built for Python %d.%d only, the stack interpreter is %s' % (name, filename, need[0], need[1], version))
    return problems


def _requirement_problems(layers, packages):
    """A layer's extra requirements must never name a declared package: installing, say, sglang's own
    torch==2.9.1 pin would replace the torch layer (the very failure the no-deps install avoids)."""
    problems = []
    declared = dict((normalize_name(name), name) for name in packages)
    for layer in layers:
        requirements = layer.get('requirements') or []
        if not isinstance(requirements, list):
            problems.append('layer %s: requirements must be a list of requirement strings' % layer.get('name'))
            continue
        for requirement in requirements:
            name = requirement_name(requirement)
            if requirement_option(requirement):
                problems.append('layer %s: requirement %r carries a pip option (a leading "-", or "-..." after whitespace, '
                                'such as " --index-url"): the requirements are pip\'s command-line arguments, where pip obeys '
                                'an option; give one requirement specifier per entry, without options' % (layer.get('name'), requirement))
            elif name is None:
                problems.append('layer %s: requirement "%s" is not a requirement specifier' % (layer.get('name'), requirement))
            elif name in declared:
                problems.append('layer %s: requirement "%s" names the declared package %s; it would replace that layer. '
                                'Drop it: the layer provides %s.' % (layer.get('name'), requirement, declared[name], declared[name]))
    return problems


def _join(*parts):
    return '/'.join(str(part).strip('/') for part in parts if part not in (None, ''))


def declaration_digest(declaration):
    """A stable digest of what gets installed (not of comments or of where it is fetched from)."""
    material = {
        'cuda': {k: declaration['cuda'].get(k) for k in ('version', 'package', 'package_version')},
        'python': declaration.get('python'),
        'layers': [
            {'name': layer['name'],
             'packages': [{k: pkg.get(k) for k in ('name', 'version', 'sha256')} for pkg in layer['packages']]}
            for layer in declaration['layers']
        ],
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode('utf-8')).hexdigest()


def is_plain_http(url):
    """True for an http:// URL (any case): what travels over it can be read and replaced on the path."""
    return str(url or '').strip().lower().startswith('http://')


def transport_problems(declaration, mirror_url=None, allow_insecure_http=False, insecure_http_reason=''):
    """Refusals of plain-HTTP sources: the mirror, else every upstream (wheel indexes, wheel URLs, the CUDA apt repository).

    Over http:// anyone on the path supplies what pip resolves beside the declared wheels (their requirements carry no
    declared hash) and, for the apt repository, sees every request. A site that has no TLS on its mirror sets
    ``stack_declaration_allow_insecure_http`` with a ``stack_declaration_insecure_http_reason``; nothing else opens it.
    """
    problems = []
    reason = str(insecure_http_reason or '').strip()
    if allow_insecure_http and not reason:
        problems.append('stack_declaration_allow_insecure_http is true but stack_declaration_insecure_http_reason is empty: say why '
                        'plain HTTP is accepted at this site (it is shown on every run), or drop the switch')
    if allow_insecure_http:
        return problems
    fix = ('Fix: serve it over https://, or, where the site accepts plain HTTP, set stack_declaration_allow_insecure_http: true '
           'with stack_declaration_insecure_http_reason (the declared sha256 and the apt signature are checked either way; '
           'the requirements pip resolves beside the declared wheels are not hash-pinned).')
    if mirror_url:
        if is_plain_http(mirror_url):
            problems.append('stack_declaration_mirror_url "%s" is plain HTTP: every wheel, index and the CUDA apt repository would '
                            'come over it, readable and replaceable on the path. %s' % (redact_url(mirror_url), fix))
        return problems
    for name, upstream in sorted((declaration.get('upstreams') or {}).items(), key=lambda item: str(item[0])):
        if isinstance(upstream, dict) and is_plain_http(upstream.get('url')):
            problems.append('stack_declaration_upstreams.%s.url "%s" is plain HTTP: what comes from it is readable and replaceable '
                            'on the path. %s' % (name, redact_url(upstream.get('url')), fix))
    return problems


# scheme://user[:password]@host...: credentials in a URL are printed by pip (its command line), apt (sources files,
# world-readable), Ansible (task arguments and results, the journal's "Invoked with") and every error message.
_USERINFO = re.compile(r'^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#@]*)@')


def redact_url(url):
    """The URL with any user:password part replaced by ``***`` (safe to print)."""
    return _USERINFO.sub(r'\1***@', str(url))


def _strings(node, path):
    if isinstance(node, dict):
        for key in sorted(node, key=str):
            yield from _strings(node[key], '%s.%s' % (path, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _strings(item, '%s[%d]' % (path, index))
    elif isinstance(node, str):
        yield path, node


def credential_problems(declaration, mirror_url=None):
    """Refusals of URLs that carry credentials (the declaration's and the mirror's); the messages show them redacted."""
    fix = ('Fix: remove the credentials from the URL and give them to pip in root\'s ~/.netrc (or pip\'s keyring) and to apt '
           'in /etc/apt/auth.conf.d/ on the controller and the hosts: a URL is printed by pip, apt and Ansible, and is '
           'world-readable in apt\'s sources.')
    found = [('stack_declaration_mirror_url', mirror_url)] if mirror_url else []
    found += list(_strings(declaration, 'stack_declaration'))
    return ['%s "%s" carries credentials. %s' % (where, redact_url(value), fix)
            for where, value in found if _USERINFO.match(str(value).strip())]


DEFAULT_DOWNLOAD_MAX_MB = 4096


def _download_cap_problems(declaration, download_max_mb):
    """The download cap is a positive number of MiB; a package's declared ``size`` (bytes) is a positive integer within it."""
    try:
        cap = int(download_max_mb)
    except (TypeError, ValueError):
        cap = 0
    if isinstance(download_max_mb, bool) or cap <= 0 or str(download_max_mb).strip() != str(cap):
        return ['stack_declaration_download_max_mb "%s" must be a positive whole number of MiB (the largest file a download '
                'may write)' % (download_max_mb,)]
    problems = []
    for layer in declaration.get('layers') or []:
        for pkg in layer.get('packages') or []:
            size = pkg.get('size')
            if size in (None, ''):
                continue
            if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
                problems.append('layer %s, package %s: size %r must be the wheel\'s size in bytes (a positive integer)'
                                % (layer.get('name'), pkg.get('name'), size))
            elif size > cap * 1024 * 1024:
                problems.append('layer %s, package %s: size %d is above stack_declaration_download_max_mb (%d MiB); raise the cap'
                                % (layer.get('name'), pkg.get('name'), size, cap))
    return problems


def plain_copy(value):
    """A deep copy of ``value`` made of plain dicts and lists (any mapping or sequence but a string is copied)."""
    if isinstance(value, Mapping):
        return dict((key, plain_copy(item)) for key, item in value.items())
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [plain_copy(item) for item in value]
    return value


def resolve(declaration, mirror_url=None, allow_insecure_http=False, insecure_http_reason='', download_max_mb=DEFAULT_DOWNLOAD_MAX_MB,
            lock=None):
    """Validate and return the resolved declaration every role reads.

    Adds: ``id`` (name plus a digest of the content), ``cuda_tag``, per package ``index_url`` or
    ``url`` (on the mirror when ``mirror_url`` is given), ``pip_requirement`` (name==version),
    ``layer``, ``order``; ``packages`` (flat, in install order); ``disk_mb`` (sum of the layers'
    estimates and the toolkit's); ``cuda.apt_repo_base_url``; ``insecure_http`` (``allowed``, ``reason``: the one
    switch every role reads before it lets pip or apt use a plain-HTTP URL, see transport_problems);
    ``download_max_bytes`` (the cap of any file a download writes) and per package ``max_bytes`` (its declared ``size``
    when given, which a fetched wheel must match before it is hashed, else that cap); ``requirements_index_url`` (the
    index of the layers' requirements).

    With ``lock`` (a stack lock, module_utils/stack_lock): the lock must be one of this declaration (lock_problems,
    each difference named); the result then carries it as ``lock``, and the stack id is the lock's content digest
    (``id``; ``lock_digest``), so any change of any locked distribution is a new stack.
    """
    # A copy of plain dicts and lists first: ansible-core 2.19 hands a filter lazy containers whose every access
    # (and whose deepcopy) goes through the templating engine again; copying those took 2 s of the test bed's
    # declaration, this walk takes milliseconds and the rest reads plain data.
    declaration = plain_copy(declaration)
    problems = validate(declaration)
    if not problems:
        problems = credential_problems(declaration, mirror_url)
        problems += transport_problems(declaration, mirror_url, allow_insecure_http, insecure_http_reason)
        problems += _download_cap_problems(declaration, download_max_mb)
    if problems:
        raise StackDeclarationError(problems)
    resolved = declaration  # already this call's own copy (above)
    mirror = str(mirror_url).rstrip('/') if mirror_url else None

    def base(upstream_name):
        upstream = resolved['upstreams'][upstream_name]
        return _join(mirror, upstream['mirror_path']) if mirror else str(upstream['url']).rstrip('/')

    digest = declaration_digest(resolved)
    resolved['digest'] = digest
    resolved['id'] = '%s-%s' % (resolved.get('name') or 'stack', digest[:12])
    resolved['cuda_tag'] = cuda_tag(resolved['cuda']['version'])
    resolved['mirror_url'] = mirror
    resolved['download_max_bytes'] = int(download_max_mb) * 1024 * 1024
    resolved['insecure_http'] = {'allowed': bool(allow_insecure_http),
                                 'reason': str(insecure_http_reason or '').strip() if allow_insecure_http else ''}
    resolved['cuda']['apt_repo_base_url'] = base(resolved['cuda'].get('upstream', 'nvidia_cuda'))
    resolved['cuda']['apt_repo_upstream_url'] = str(resolved['upstreams'][resolved['cuda'].get('upstream', 'nvidia_cuda')]['url']).rstrip('/')
    resolved['cuda']['driver_minimum'], resolved['cuda']['driver_minimum_from'] = driver_minimum(resolved['cuda'])
    resolved['cuda']['apt_signing_keys'] = dict(
        (distro, dict(key, fingerprint=normalize_fingerprint(key['fingerprint'])))
        for distro, key in (resolved['cuda'].get('apt_signing_keys') or {}).items())
    resolved['cuda']['apt_repo_distros'] = dict(resolved['cuda'].get('apt_repo_distros') or DEFAULT_APT_REPO_DISTROS)
    resolved['cuda']['apt_repos'] = apt_repos(resolved['cuda'], resolved['cuda']['apt_repo_base_url'],
                                              resolved['cuda']['apt_repo_upstream_url'])
    flat = []
    order = 0
    disk_mb = int(resolved['cuda'].get('disk_mb') or 0)
    for layer in resolved['layers']:
        disk_mb += int(layer.get('disk_mb') or 0)
        for pkg in layer['packages']:
            order += 1
            pkg['layer'] = layer['name']
            pkg['order'] = order
            pkg['pip_requirement'] = (spec_requirement(pkg['name'], pkg['version']) if nightly_spec(pkg['version']) is not None
                                      else '%s==%s' % (pkg['name'], pkg['version']))
            pkg.setdefault('sha256', None)
            pkg.setdefault('dependencies', 'none')
            pkg.setdefault('size', None)
            pkg['max_bytes'] = pkg['size'] or resolved['download_max_bytes']
            if pkg['source'] == 'index':
                pkg['index_url'] = _join(base(pkg['upstream']), pkg['index_path'])
                pkg['url'] = None
            else:
                pkg['index_url'] = None
                pkg['url'] = _join(base(pkg['upstream']), pkg['file_path'])
            flat.append(pkg)
        layer.setdefault('requirements', [])
    resolved['packages'] = flat
    # What no resolver may change once a layer is in: every declared package at its declared version.
    resolved['constraints'] = [pkg['pip_requirement'] for pkg in flat]
    resolved['disk_mb'] = disk_mb
    resolved['requirements_index_url'] = stack_lock.requirements_index_url(resolved)
    # What a lock of this declaration is made from, as one digest: the name of the lock the controller makes when the
    # site names none (roles/stack_declaration), so that any change of the declaration needs a new lock.
    resolved['lock_inputs_digest'] = stack_lock.inputs_digest(resolved)
    resolved['lock'] = None
    if lock is not None:
        lock = plain_copy(lock)
        problems = stack_lock.lock_problems(lock, resolved)
        if problems:
            raise StackDeclarationError(['STACK LOCK refused: %s' % problem for problem in problems])
        _take_locked_builds(resolved, lock)
        resolved['lock'] = lock
        resolved['lock_digest'] = stack_lock.lock_digest(lock)
        resolved['id'] = stack_lock.stack_id(resolved.get('name'), lock)
    return resolved


def _take_locked_builds(resolved, lock):
    """The declared packages given as nightly specs become the builds the lock chose (version, filename, sha256; the spec
    is kept as version_spec); then the rules for exact versions (torchvision the build of that torch, the CUDA tag ...)
    must hold for them, or the lock is refused."""
    locked = dict((stack_lock.normalize_name(dist['name']), dist) for layer in lock.get('layers') or []
                  for dist in layer.get('distributions') or [])
    changed = False
    for pkg in resolved['packages']:
        if nightly_spec(pkg['version']) is None:
            continue
        dist = locked[stack_lock.normalize_name(pkg['name'])]
        pkg.update(version_spec=pkg['version'], version=str(dist['version']), filename=dist['filename'], sha256=dist['sha256'],
                   pip_requirement='%s==%s' % (pkg['name'], dist['version']))
        pkg.pop('version_policy', None)
        changed = True
    if changed:
        resolved['constraints'] = [pkg['pip_requirement'] for pkg in resolved['packages']]
        problems = validate(resolved)
        if problems:
            raise StackDeclarationError(['STACK LOCK refused: the builds it took break a rule: %s' % problem for problem in problems])
