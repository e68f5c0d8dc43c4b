# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The stack lock: every distribution of every layer, with its exact version, file, URL and sha256.

The declaration (roles/stack_declaration) names a few packages and, for the sglang layer, a list of requirements; the
lock is what they resolve to for the declared Python and platform, resolved once on the controller by uv
(``uv pip compile --format pylock.toml``) and reviewed by the site. Hosts never resolve: they install exactly the
locked files, ``--no-deps --require-hashes`` (stack_wheels).

How a lock is made (make_lock):
* The packages declared with ``dependencies: resolve`` and the layers' requirements are resolved together, once, so
  that one distribution has one version in the whole stack (resolving layer by layer let the sglang layer move
  nvidia-cutlass-dsl and cuda-bindings that the torch and flashinfer layers had installed).
* Each distribution goes to the first layer whose own resolution (the layers so far, pinned to the full resolution's
  versions) needs it: that is the layer that installs it, in the declared order.
* The packages declared without their dependencies (flashinfer-cubin, flashinfer-jit-cache, sgl-kernel, sglang: their
  pins conflict with the stack or their dependencies are the layers above) are locked as declared: the declared file,
  from the declared index or URL.
* A file whose index publishes no sha256 is downloaded once by the lock step and hashed there; a lock without a
  sha256 for every file is refused.

The stack id is the lock's content digest (lock_digest): any change of any distribution is a new stack.
"""

from __future__ import annotations

import hashlib
import json
import re

try:
    import tomllib
except ImportError:  # Python < 3.11: the lock step runs on the controller, which has 3.11 or later.
    tomllib = None

LOCK_VERSION = 1
DEFAULT_PLATFORM = 'x86_64-manylinux_2_28'
_SHA256 = re.compile(r'^[0-9a-f]{64}$')
_WHEEL = re.compile(r'^(?P<name>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$')


# A nightly-style version spec (the declaration's version_policy: newest): every .dev build of one release, of one
# local tag ('2.11.0.dev*+cu130'); the lock records the build it took.
_NIGHTLY_SPEC = re.compile(r'^([0-9]+(?:\.[0-9]+)*)\.dev\*(\+[a-z0-9]+(?:\.[a-z0-9]+)*)?$')


def nightly_spec(version):
    """'2.11.0.dev*+cu130' -> ('2.11.0', 'cu130'); '2.11.0.dev*' -> ('2.11.0', None); None for an exact version."""
    match = _NIGHTLY_SPEC.match(str(version))
    if not match:
        return None
    return match.group(1), (match.group(2) or '')[1:] or None


def spec_requirement(name, version):
    """The requirement the resolver gets for a nightly spec: every .dev build of the release and nothing else
    ('torch', '2.11.0.dev*+cu130' -> 'torch>=2.11.0.dev0,<2.11.0a0'); the local tag is checked on the build chosen."""
    release = nightly_spec(version)[0]
    return '%s>=%s.dev0,<%sa0' % (name, release, release)


def spec_matches(version, chosen):
    """Whether ``chosen`` (exact) is what the declared ``version`` allows: the same version, or, for a nightly spec, a
    .dev build of its release with its local tag."""
    spec = nightly_spec(version)
    if spec is None:
        return str(version) == str(chosen)
    release, local = spec
    base, _sep, chosen_local = str(chosen).partition('+')
    return bool(re.match(r'^%s\.dev[0-9]+$' % re.escape(release), base)) and (chosen_local or None) == local


class StackLockError(Exception):
    """A lock (or its making) refused; ``problems`` names each cause."""

    def __init__(self, problems):
        self.problems = list(problems)
        super(StackLockError, self).__init__('; '.join(self.problems))


def normalize_name(name):
    """PEP 503 normal form: 'Flashinfer_Python' -> 'flashinfer-python'."""
    return re.sub(r'[-_.]+', '-', str(name)).lower()


def wheel_filename(url):
    """The file name at the end of a wheel URL, with %2B read as '+' (sgl_kernel-0.3.21%2Bcu130-...)."""
    name = str(url).split('#', 1)[0].split('?', 1)[0].rstrip('/').rsplit('/', 1)[-1]
    return re.sub(r'%2[Bb]', '+', name)


def _canonical(value):
    return json.dumps(value, sort_keys=True, separators=(',', ':'))


def _digest(value):
    return hashlib.sha256(_canonical(value).encode('utf-8')).hexdigest()


# What the lock is made from ---------------------------------------------------------------------------------------

def platform_of(resolved):
    """The platform the lock is resolved for (uv's --python-platform): the declaration's python.platform."""
    return str((resolved.get('python') or {}).get('platform') or DEFAULT_PLATFORM)


def lock_inputs(resolved):
    """The part of a resolved declaration a lock depends on; a lock made from other inputs is refused (input_changes).

    Python, platform, and per layer in order: each package's name, version, sha256, where it comes from and whether
    its dependencies are resolved, and the layer's requirements.
    """
    layers = []
    for layer in resolved['layers']:
        layers.append({
            'name': layer['name'],
            'packages': [{
                'name': pkg['name'],
                'version': str(pkg['version']),
                'sha256': pkg.get('sha256') or None,
                'filename': pkg.get('filename') or None,
                'dependencies': pkg.get('dependencies') or 'none',
                'source': pkg.get('index_url') or pkg.get('url'),
            } for pkg in layer['packages']],
            'requirements': [str(req) for req in layer.get('requirements') or []],
        })
    return {
        'python': {'version': str(resolved['python']['version']), 'tag': str(resolved['python']['tag'])},
        'platform': platform_of(resolved),
        'requirements_index_url': requirements_index_url(resolved),
        'layers': layers,
    }


def inputs_digest(resolved):
    """The digest of lock_inputs(resolved): a lock made from other inputs is another lock."""
    return _digest(lock_inputs(resolved))


def requirements_index_url(resolved):
    """The index the layers' requirements come from: the resolved declaration's, else the first PyPI package's index."""
    if resolved.get('requirements_index_url'):
        return resolved['requirements_index_url']
    for pkg in resolved.get('packages') or []:
        if pkg.get('upstream') == 'pypi' and pkg.get('index_url'):
            return pkg['index_url']
    for pkg in resolved.get('packages') or []:
        if pkg.get('index_url'):
            return pkg['index_url']
    return None


def index_urls(resolved):
    """The indexes uv searches, in priority order: those of the packages resolved with their dependencies (torch's
    own index first, as pip installed torch from it), then the requirements' index. A name is taken from the first
    index that has it (uv's first-index strategy), so a later index can never shadow an earlier one's package."""
    urls = []
    for pkg in resolved.get('packages') or []:
        if pkg.get('dependencies') == 'resolve' and pkg.get('index_url') and pkg['index_url'] not in urls:
            urls.append(pkg['index_url'])
    req = requirements_index_url(resolved)
    if req and req not in urls:
        urls.append(req)
    return urls


def resolution_roots(resolved):
    """Per layer, in order: (layer name, the requirements its resolution adds, the packages locked as declared)."""
    out = []
    for layer in resolved['layers']:
        roots = [pkg.get('pip_requirement') or '%s==%s' % (pkg['name'], pkg['version'])
                 for pkg in layer['packages'] if pkg.get('dependencies') == 'resolve']
        roots += [str(req) for req in layer.get('requirements') or []]
        direct = [pkg for pkg in layer['packages'] if pkg.get('dependencies') != 'resolve']
        out.append((layer['name'], roots, direct))
    return out


def uv_compile_argv(uv, requirements_file, output_file, resolved, constraints_file=None, cache_dir=None):
    """uv's command line for one resolution of ``requirements_file`` into a pylock.toml for the declared target."""
    python = resolved['python']
    indexes = index_urls(resolved)
    if not indexes:
        raise StackLockError(['the declaration names no index to resolve from'])
    argv = [uv, 'pip', 'compile', requirements_file, '--format', 'pylock.toml', '--output-file', output_file,
            '--python-version', str(python['version']), '--python-platform', platform_of(resolved),
            '--only-binary', ':all:', '--index-strategy', 'first-index', '--no-header', '--no-config', '--quiet']
    # --index has priority over --default-index, and earlier --index over later.
    for url in indexes[:-1]:
        argv += ['--index', url]
    argv += ['--default-index', indexes[-1]]
    if constraints_file:
        argv += ['--constraints', constraints_file]
    if cache_dir:
        argv += ['--cache-dir', cache_dir]
    if (resolved.get('insecure_http') or {}).get('allowed'):
        hosts = []
        for url in indexes:
            match = re.match(r'(?i)^http://([^/:]+)', url)
            if match and match.group(1) not in hosts:
                hosts.append(match.group(1))
        for host in hosts:
            argv += ['--allow-insecure-host', host]
    return argv


# uv's output -------------------------------------------------------------------------------------------------------

def supported_tags(python_tag, platform):
    """The wheel tags an interpreter ``python_tag`` (cp312) on ``platform`` (x86_64-manylinux_2_28) installs, best
    first, in the order pip (packaging.tags) prefers them: its own ABI, abi3 of older CPythons, none; then the
    pure-Python tags. Platforms: manylinux_2_N down to manylinux_2_5 (with the legacy manylinux2014/2010/1 names), then
    linux."""
    match = re.match(r'^cp3(\d+)$', str(python_tag))
    minor = int(match.group(1)) if match else 12
    arch, _sep, libc = str(platform).partition('-')
    glibc = int(re.match(r'^manylinux_2_(\d+)$', libc).group(1)) if re.match(r'^manylinux_2_(\d+)$', libc) else 17
    platforms = []
    for version in range(glibc, 4, -1):
        platforms.append('manylinux_2_%d_%s' % (version, arch))
        legacy = {17: 'manylinux2014', 12: 'manylinux2010', 5: 'manylinux1'}.get(version)
        if legacy:
            platforms.append('%s_%s' % (legacy, arch))
    platforms.append('linux_%s' % arch)
    interp = 'cp3%d' % minor
    tags = [(interp, interp, plat) for plat in platforms]
    tags += [(interp, 'abi3', plat) for plat in platforms]
    tags += [(interp, 'none', plat) for plat in platforms]
    for older in range(minor - 1, 1, -1):
        tags += [('cp3%d' % older, 'abi3', plat) for plat in platforms]
    for py in ['py3%d' % minor, 'py3'] + ['py3%d' % older for older in range(minor - 1, -1, -1)]:
        tags += [(py, 'none', plat) for plat in platforms]
    tags += [(interp, 'none', 'any'), ('py3%d' % minor, 'none', 'any'), ('py3', 'none', 'any')]
    tags += [('py3%d' % older, 'none', 'any') for older in range(minor - 1, -1, -1)]
    return tags


def wheel_tags(filename):
    """The (python, abi, platform) tags of a wheel file name, its compressed tag sets expanded."""
    parts = filename[:-len('.whl')].split('-') if filename.endswith('.whl') else []
    if len(parts) < 5:
        return []
    return [(py, abi, plat) for py in parts[-3].split('.') for abi in parts[-2].split('.') for plat in parts[-1].split('.')]


def best_wheel(filenames, python_tag, platform):
    """The file pip would install on the target among ``filenames`` (None when none installs there)."""
    rank = dict((tag, index) for index, tag in enumerate(supported_tags(python_tag, platform)))
    best = None
    for name in filenames:
        ranks = [rank[tag] for tag in wheel_tags(name) if tag in rank]
        if ranks and (best is None or min(ranks) < best[0]):
            best = (min(ranks), name)
    return best[1] if best else None


def parse_pylock(text, python_tag='cp312', platform=DEFAULT_PLATFORM):
    """The distributions of a pylock.toml (PEP 751) that uv wrote for one platform: [{name, version, filename, url,
    sha256 (None when the index published none), size}]. uv lists every wheel of a version that the platform accepts;
    the one taken is the one pip would install there (best_wheel). A package with no such wheel (a source distribution
    only) is refused: hosts install wheels only."""
    if tomllib is None:
        raise StackLockError(['reading pylock.toml needs Python 3.11 or later (tomllib) on the controller'])
    data = tomllib.loads(text)
    problems = []
    out = []
    for pkg in data.get('packages') or []:
        name = pkg.get('name')
        wheels = dict((w.get('name') or wheel_filename(w.get('url') or ''), w) for w in pkg.get('wheels') or [])
        chosen = best_wheel(sorted(wheels), python_tag, platform)
        if chosen is None:
            problems.append('%s %s: no wheel for %s on %s in the resolution (%s)' % (
                name, pkg.get('version'), python_tag, platform, 'only a source distribution' if pkg.get('sdist') and not wheels
                else ', '.join(sorted(wheels)) or 'no file'))
            continue
        wheel = wheels[chosen]
        url = wheel.get('url')
        if not url:
            problems.append('%s %s: the wheel has no URL (%s)' % (name, pkg.get('version'), wheel.get('path') or chosen))
            continue
        sha = (wheel.get('hashes') or {}).get('sha256')
        out.append({'name': name, 'version': str(pkg.get('version')), 'filename': chosen,
                    'url': url, 'sha256': sha.lower() if sha else None, 'size': wheel.get('size')})
    if problems:
        raise StackLockError(problems)
    return out


def parse_simple_index(html, base_url):
    """The files a PEP 503 project page links: {filename: (absolute url without fragment, sha256 or None)}."""
    files = {}
    for match in re.finditer(r'<a\s[^>]*href\s*=\s*["\']([^"\']+)["\']', html, re.IGNORECASE):
        href = match.group(1).replace('&amp;', '&')
        url, _sep, fragment = href.partition('#')
        url = _absolute(base_url, url)
        sha = None
        frag = re.match(r'sha256=([0-9a-fA-F]{64})$', fragment)
        if frag:
            sha = frag.group(1).lower()
        files[wheel_filename(url)] = (url, sha)
    return files


def _absolute(base, href):
    if re.match(r'(?i)^[a-z][a-z0-9+.-]*://', href):
        return href
    scheme_host = re.match(r'(?i)^([a-z][a-z0-9+.-]*://[^/]+)', base).group(1)
    if href.startswith('/'):
        return scheme_host + href
    # base is the project page (a directory URL): resolve ../ against it.
    parts = base.rstrip('/').split('/')
    for piece in href.split('/'):
        if piece == '..':
            if len(parts) > 3:
                parts.pop()
        elif piece not in ('.', ''):
            parts.append(piece)
    return '/'.join(parts)


# The lock ----------------------------------------------------------------------------------------------------------

def assign_layers(layer_names, layer_sets, final):
    """Each distribution of ``final`` (list of dicts) to the first layer whose own resolution (``layer_sets``: per layer
    the normalised names its cumulative resolution holds) contains it; returns {layer: [distributions, by name]}."""
    placed = {}
    for layer, names in zip(layer_names, layer_sets):
        for name in names:
            placed.setdefault(name, layer)
    out = dict((layer, []) for layer in layer_names)
    for dist in final:
        layer = placed.get(normalize_name(dist['name']), layer_names[-1])
        out[layer].append(dist)
    for layer in out:
        out[layer].sort(key=lambda d: normalize_name(d['name']))
    return out


def build_lock(resolved, per_layer, resolver):
    """The lock document: inputs, resolver, and per layer the distributions (declared ones marked)."""
    declared = dict((normalize_name(pkg['name']), pkg['layer']) for pkg in resolved['packages'])
    layers = []
    for layer in resolved['layers']:
        dists = []
        for dist in per_layer.get(layer['name'], []):
            entry = {'name': dist['name'], 'version': str(dist['version']), 'filename': dist['filename'], 'url': dist['url'],
                     'sha256': dist.get('sha256'), 'size': dist.get('size')}
            if declared.get(normalize_name(dist['name'])) == layer['name']:
                entry['declared'] = True
            dists.append(entry)
        layers.append({'name': layer['name'], 'distributions': dists})
    lock = {'lock_version': LOCK_VERSION, 'inputs': lock_inputs(resolved),
            'resolver': resolver, 'layers': layers}
    lock['digest'] = lock_digest(lock)
    return lock


def lock_digest(lock):
    """The content digest of a lock: what it was made from (Python, platform, packages, requirements) and every
    distribution's layer, name, version and sha256 - not where a file is fetched from, so a mirror that serves the same
    files keeps the id. Any other change (a requirement added, a distribution moved) is a new stack."""
    inputs = lock.get('inputs') or {}
    material = {'python': inputs.get('python'), 'platform': inputs.get('platform'),
                'declared': [[layer.get('name'), [dict((k, v) for k, v in pkg.items() if k != 'source') for pkg in layer.get('packages') or []],
                              layer.get('requirements') or []] for layer in inputs.get('layers') or []],
                'layers': [[layer.get('name'), [[normalize_name(d.get('name')), str(d.get('version')), d.get('sha256')]
                                                for d in layer.get('distributions') or []]]
                           for layer in lock.get('layers') or []]}
    return _digest(material)


def render(lock):
    """The lock file's text: JSON, one key per line, stable, so a review sees a one-line diff per changed file."""
    return json.dumps(lock, indent=2, sort_keys=True) + '\n'


def input_changes(locked, declared):
    """What differs between the inputs a lock was made from and the declaration's now, one line each."""
    changes = []
    for key in ('python', 'platform', 'requirements_index_url'):
        if locked.get(key) != declared.get(key):
            changes.append('%s: locked %s, declared %s' % (key, _canonical(locked.get(key)), _canonical(declared.get(key))))
    old_layers = dict((layer.get('name'), layer) for layer in locked.get('layers') or [])
    new_layers = dict((layer.get('name'), layer) for layer in declared.get('layers') or [])
    if [layer.get('name') for layer in locked.get('layers') or []] != [layer.get('name') for layer in declared.get('layers') or []]:
        changes.append('layers: locked %s, declared %s' % ([layer.get('name') for layer in locked.get('layers') or []],
                                                           [layer.get('name') for layer in declared.get('layers') or []]))
    for name, new in new_layers.items():
        old = old_layers.get(name)
        if old is None:
            continue
        old_pkgs = dict((p.get('name'), p) for p in old.get('packages') or [])
        new_pkgs = dict((p.get('name'), p) for p in new.get('packages') or [])
        for pkg_name in sorted(set(old_pkgs) | set(new_pkgs)):
            before, after = old_pkgs.get(pkg_name), new_pkgs.get(pkg_name)
            if before is None:
                changes.append('layer %s: package %s declared, not in the lock' % (name, pkg_name))
            elif after is None:
                changes.append('layer %s: package %s in the lock, no longer declared' % (name, pkg_name))
            else:
                for key in sorted(set(before) | set(after)):
                    if before.get(key) != after.get(key):
                        changes.append('layer %s, package %s: %s locked %s, declared %s' % (
                            name, pkg_name, key, before.get(key), after.get(key)))
        old_reqs, new_reqs = old.get('requirements') or [], new.get('requirements') or []
        for req in new_reqs:
            if req not in old_reqs:
                changes.append('layer %s: requirement "%s" added' % (name, req))
        for req in old_reqs:
            if req not in new_reqs:
                changes.append('layer %s: requirement "%s" removed' % (name, req))
    return changes


def lock_problems(lock, resolved):
    """Why a lock cannot be used for this declaration (empty when it can): wrong format, made from other inputs (each
    difference named), a distribution without a sha256 or URL, a declared package locked at another version, file
    or sha256, a name locked twice, a digest that does not match its content."""
    if not isinstance(lock, dict):
        return ['the lock is not a JSON object']
    problems = []
    if lock.get('lock_version') != LOCK_VERSION:
        return ['lock_version %r: this collection reads lock_version %d; make the lock again (playbooks/lock.yml)'
                % (lock.get('lock_version'), LOCK_VERSION)]
    changes = input_changes(lock.get('inputs') or {}, lock_inputs(resolved))
    if changes:
        problems.append('the lock was made from another declaration (%s); make it again with playbooks/lock.yml and review '
                        'the difference' % '; '.join(changes))
    seen = {}
    layer_names = [layer['name'] for layer in resolved['layers']]
    if [layer.get('name') for layer in lock.get('layers') or []] != layer_names and not changes:
        problems.append('the lock\'s layers %s are not the declared %s' % ([layer.get('name') for layer in lock.get('layers') or []], layer_names))
    for layer in lock.get('layers') or []:
        for dist in layer.get('distributions') or []:
            label = 'layer %s, %s %s' % (layer.get('name'), dist.get('name'), dist.get('version'))
            sha = str(dist.get('sha256') or '')
            if not _SHA256.match(sha):
                problems.append('%s: no sha256 in the lock (%r); every locked file needs one' % (label, dist.get('sha256')))
            if not dist.get('url'):
                problems.append('%s: no URL in the lock' % label)
            filename = str(dist.get('filename') or '')
            if not filename.endswith('.whl') or '/' in filename:
                problems.append('%s: file %r is not a wheel file name' % (label, filename))
            norm = normalize_name(dist.get('name') or '')
            if norm in seen:
                problems.append('%s: also locked in layer %s' % (label, seen[norm]))
            seen[norm] = layer.get('name')
    locked = {}
    for layer in lock.get('layers') or []:
        for dist in layer.get('distributions') or []:
            locked[normalize_name(dist.get('name') or '')] = (layer.get('name'), dist)
    for pkg in resolved['packages']:
        where, dist = locked.get(normalize_name(pkg['name']), (None, None))
        if dist is None:
            problems.append('declared package %s %s is not in the lock' % (pkg['name'], pkg['version']))
            continue
        if where != pkg['layer']:
            problems.append('declared package %s is locked in layer %s, declared in layer %s' % (pkg['name'], where, pkg['layer']))
        if not spec_matches(pkg.get('version_spec') or pkg['version'], dist.get('version')):
            problems.append('declared package %s: locked %s, declared %s' % (pkg['name'], dist.get('version'), pkg['version']))
        if pkg.get('filename') and dist.get('filename') != pkg['filename']:
            problems.append('declared package %s: locked file %s, declared %s' % (pkg['name'], dist.get('filename'), pkg['filename']))
        if pkg.get('sha256') and dist.get('sha256') != pkg['sha256']:
            problems.append('declared package %s: locked sha256 %s, declared %s' % (pkg['name'], dist.get('sha256'), pkg['sha256']))
    if not problems and lock.get('digest') != lock_digest(lock):
        problems.append('the lock\'s digest %s does not match its content (%s): it was edited by hand; make it again'
                        % (lock.get('digest'), lock_digest(lock)))
    return problems


def stack_id(name, lock):
    """The stack id of a locked stack: its name and the first 12 hex digits of the lock's content digest."""
    return '%s-%s' % (name or 'stack', lock_digest(lock)[:12])


def layer_distributions(lock, layer_name):
    """The distributions the lock installs in one layer."""
    for layer in lock.get('layers') or []:
        if layer.get('name') == layer_name:
            return list(layer.get('distributions') or [])
    return []


def guarded_through(resolved, layer_name=None):
    """What the stack must hold once ``layer_name`` (default: the last layer) is in, as stack_bom's ``declared`` list:
    every declared package of that layer and those before it, as declared, and every other distribution their lock
    layers install, at its locked version. The per-layer guard of python_stack reads it after each layer, the finished
    stack's check before a re-run skips the build reads it for the whole stack."""
    names = [layer['name'] for layer in resolved['layers']]
    upto = names[:names.index(layer_name) + 1] if layer_name is not None else names
    locked = [dist for layer in (resolved.get('lock') or {}).get('layers') or [] if layer.get('name') in upto
              for dist in layer.get('distributions') or [] if not dist.get('declared')]
    return [pkg for pkg in resolved['packages'] if pkg['layer'] in upto] + locked


def count(lock):
    """(distributions, distributions with a sha256) of a lock."""
    dists = [d for layer in lock.get('layers') or [] for d in layer.get('distributions') or []]
    return len(dists), len([d for d in dists if _SHA256.match(str(d.get('sha256') or ''))])
