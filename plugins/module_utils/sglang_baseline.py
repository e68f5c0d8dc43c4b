# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Adopt the SGLang service that runs on a host before the collection's first switch: find it, describe it,
record it as the read-only stack ``baseline`` and restore it byte for byte.

How a serving process is recognised (sglang 0.5.9 wheel, read for this module): the server starts as
``python -m sglang.launch_server ARGS`` or ``python .../sglang/launch_server.py ARGS`` (the file has the
``__main__`` block), or through the wheel's one console script ``sglang = sglang.cli.main:main`` as
``sglang serve ARGS`` (the kernel then shows ``.../python .../bin/sglang serve ARGS``). No module under
``sglang.srt.entrypoints`` has a ``__main__`` block of a server (only ``ollama/smart_router.py``, a client), so
there is no ``python -m sglang.srt.entrypoints...`` form. ``--port`` defaults to 30000, ``--host`` to 127.0.0.1
(srt/server_args.py ``ServerArgs``); ``--model`` is an alias of ``--model-path``.

Where the facts come from, and why (recorded in tests/unit/fixtures/real/systemd-baseline):

- the command line from ``/proc/<pid>/cmdline`` (NUL-separated, exact). ``systemctl show -p ExecStart`` prints
  ``argv[]=`` as the words joined by blanks without quoting (systemd 252: ``--served-model-name qwen3 32b`` for a
  quoted ``"qwen3 32b"``), so it is used only for the resolved executable (``path=``);
- the unit from ``/proc/<pid>/cgroup``: the ``name=systemd`` line (cgroup v1) or the ``0::`` line (v2); the first
  path component after the slices that names a unit (a container's own prefix such as ``/docker/<id>`` or
  ``/lxc.payload.<name>`` holds no unit name and is skipped). A process in no unit, or in a ``.scope`` (a login
  session, ``docker exec``), runs outside any systemd service;
- the environment of the running server from ``/proc/<pid>/environ`` (what systemd gave it: Environment=,
  EnvironmentFile=, User's HOME). Its values are used only to run the interpreter probe and to find the CUDA
  directory; results carry variable names, never values (an EnvironmentFile may hold a token).
  ``/proc/<pid>/exe`` and ``cwd`` are not readable for another user's process without CAP_SYS_PTRACE (a Docker
  container's root, recorded), so the interpreter is argv[0] or the unit's resolved ``path=``, the directory
  the unit's WorkingDirectory.

Every refusal is a BaselineError whose message starts with ``BASELINE:``, raised before anything is written.
"""

from __future__ import annotations

import datetime
import grp
import hashlib
import json
import os
import pwd
import re
import shlex
import stat
import subprocess
import tempfile

PREFIX = 'BASELINE:'
MANIFEST_FORMAT = 1
DEFAULT_PORT = 30000
DEFAULT_HOST = '127.0.0.1'
SHOW_PROPERTIES = ('Id', 'LoadState', 'FragmentPath', 'DropInPaths', 'EnvironmentFiles', 'Environment', 'User', 'Group',
                   'ExecStart', 'WorkingDirectory', 'ActiveState', 'SubState', 'UnitFileState', 'MainPID',
                   'ControlGroup')
# Variables that decide which sglang an interpreter imports; the probe gets these of the server's environment only.
IMPORT_ENVIRONMENT = ('PATH', 'HOME', 'LANG', 'LC_ALL', 'PYTHONPATH', 'PYTHONHOME', 'PYTHONNOUSERSITE',
                      'PYTHONUSERBASE', 'PYTHONSAFEPATH', 'VIRTUAL_ENV')
UNIT_SUFFIXES = ('.service', '.scope', '.socket', '.mount', '.swap', '.target', '.timer', '.path', '.device',
                 '.automount')
_UNIT_NAME = re.compile(r'^[A-Za-z0-9:_.\\@-]+$')
_CUDA_DIR = re.compile(r'^(/(?:[^/]+/)*cuda(?:-[0-9][0-9.]*)?)(?:/|$)')
_ENV_KEY = re.compile(r'^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=')
# version.py of older releases, and the _version.py setuptools_scm writes at install (``__version__ = version = '0.5.9'``)
_VERSION_LITERAL = re.compile(r'''^__version__\s*=\s*(?:version\s*=\s*)?['"]([^'"]+)['"]''', re.M)
_SHA = re.compile(r'^[0-9a-f]{40}(?:[0-9a-f]{24})?$')

# Run by the serving interpreter: where its sglang is and which version, without importing sglang (no site code
# runs: find_spec does not execute the package, importlib.metadata reads the dist-info).
PROBE_SCRIPT = r'''
import json, sys, importlib.util
out = {"executable": sys.executable, "prefix": sys.prefix, "base_prefix": sys.base_prefix,
       "python_version": "%d.%d.%d" % sys.version_info[:3], "file": None, "version": None}
try:
    spec = importlib.util.find_spec("sglang")
    if spec is not None:
        out["file"] = spec.origin
except Exception as exc:
    out["error"] = "%s: %s" % (type(exc).__name__, exc)
try:
    from importlib.metadata import version
    out["version"] = version("sglang")
    out["version_from"] = "metadata"
except Exception:
    pass
print(json.dumps(out))
'''


class BaselineError(Exception):
    """A refusal: the message starts with BASELINE: and names the cause; nothing was changed."""

    def __init__(self, message):
        super(BaselineError, self).__init__('%s %s' % (PREFIX, message))


# --- parsing -----------------------------------------------------------------------------------------------------

def parse_cmdline(raw):
    """argv from the bytes of /proc/<pid>/cmdline (NUL-terminated words)."""
    if isinstance(raw, str):
        raw = raw.encode('utf-8', 'surrogateescape')
    if not raw:
        return []
    if raw.endswith(b'\0'):
        raw = raw[:-1]
    return [word.decode('utf-8', 'surrogateescape') for word in raw.split(b'\0')]


def _is_python(word):
    return bool(re.match(r'^python[0-9.]*$', os.path.basename(word or '')))


def sglang_entry(argv):
    """How argv starts the SGLang server, or None: {'form', 'args'} with args the server's own arguments.

    form: ``module`` (``python -m sglang.launch_server``), ``script`` (``python .../sglang/launch_server.py``) or
    ``console`` (``.../bin/sglang serve``, the wheel's console script, run by its interpreter or directly).
    """
    if not argv:
        return None
    start = 1 if _is_python(argv[0]) else 0
    index = start
    # the interpreter's own options before the program (-u, -O, -X opt, -W arg, -E, -s, -I, -B)
    while start and index < len(argv):
        word = argv[index]
        if word in ('-m',) and index + 1 < len(argv):
            if argv[index + 1] == 'sglang.launch_server':
                return {'form': 'module', 'args': argv[index + 2:]}
            return None
        if word.startswith('-m') and len(word) > 2:
            return {'form': 'module', 'args': argv[index + 1:]} if word[2:] == 'sglang.launch_server' else None
        if word in ('-X', '-W', '--check-hash-based-pycs'):
            index += 2
            continue
        if word.startswith('-') and word not in ('-', '-c'):
            index += 1
            continue
        break
    if index >= len(argv):
        return None
    program = argv[index]
    if program.endswith('/sglang/launch_server.py') or (program == 'sglang/launch_server.py'):
        return {'form': 'script', 'args': argv[index + 1:]}
    if os.path.basename(program) == 'sglang' and index + 1 < len(argv) and argv[index + 1] == 'serve':
        return {'form': 'console', 'args': argv[index + 2:]}
    return None


def option(args, *names):
    """The value of the last of ``names`` in args (``--port 1`` or ``--port=1``), or None."""
    found = None
    for index, word in enumerate(args):
        for name in names:
            if word == name and index + 1 < len(args):
                found = args[index + 1]
            elif word.startswith(name + '='):
                found = word[len(name) + 1:]
    return found


def server_options(args):
    """Port, host, model path and config file of the server's arguments, with sglang 0.5.9's defaults."""
    port = option(args, '--port')
    try:
        port_number = int(port) if port is not None else DEFAULT_PORT
    except ValueError:
        raise BaselineError('the server\'s --port %r is not a number' % port)
    return {'port': port_number, 'port_from': 'argv' if port is not None else 'default',
            'host': option(args, '--host') or DEFAULT_HOST,
            'model_path': option(args, '--model-path', '--model'),
            'tp_size': option(args, '--tp-size', '--tensor-parallel-size'),
            'config': option(args, '--config')}


# sglang 0.5.9's options whose value is a secret (srt/server_args.py: api_key, admin_api_key)
SECRET_OPTIONS = ('--api-key', '--admin-api-key')
MASK = '********'


def masked_argv(argv):
    """argv with the values of SECRET_OPTIONS replaced by MASK (for results and the manifest)."""
    out = list(argv)
    for index, word in enumerate(out):
        for name in SECRET_OPTIONS:
            if word == name and index + 1 < len(out):
                out[index + 1] = MASK
            elif word.startswith(name + '='):
                out[index] = name + '=' + MASK
    return out


def unit_from_cgroup_path(path):
    """The unit a cgroup path belongs to (first unit name after the slices), or None."""
    for part in (path or '').split('/'):
        if not part or not _UNIT_NAME.match(part):
            continue
        if part.endswith('.slice'):
            continue
        if part.endswith(UNIT_SUFFIXES):
            return part
    return None


def parse_cgroup(text):
    """(unit or None, cgroup path) from /proc/<pid>/cgroup: the name=systemd hierarchy (v1) or the 0:: one (v2)."""
    chosen = None
    for line in (text or '').splitlines():
        parts = line.split(':', 2)
        if len(parts) != 3:
            continue
        if parts[1] == 'name=systemd':
            chosen = parts[2]
            break
        if parts[0] == '0' and parts[1] == '':
            chosen = parts[2]
    return unit_from_cgroup_path(chosen), chosen


def parse_show(text):
    """``systemctl show -p ...`` output: {key: [values]} (EnvironmentFiles and ExecStart repeat)."""
    props = {}
    for line in (text or '').splitlines():
        if '=' not in line:
            continue
        key, value = line.split('=', 1)
        props.setdefault(key, []).append(value)
    return props


def show_value(props, key):
    values = props.get(key) or ['']
    return values[-1]


def parse_exec(value):
    """{'path', 'argv_words'} of one ExecStart= value; argv_words is systemd's unquoted join (lossy: see above)."""
    match = re.search(r'path=(.*?) ; argv\[\]=(.*?) ; ignore_errors=', value or '')
    if not match:
        return {'path': None, 'argv_words': []}
    return {'path': match.group(1), 'argv_words': match.group(2).split(' ')}


def parse_environment_files(values):
    """[{'path', 'optional'}] of the EnvironmentFiles= lines (``/etc/x.env (ignore_errors=yes)``)."""
    files = []
    for value in values or []:
        match = re.match(r'^(.*) \(ignore_errors=(yes|no)\)$', value)
        if match:
            files.append({'path': match.group(1), 'optional': match.group(2) == 'yes'})
        elif value:
            files.append({'path': value, 'optional': False})
    return files


def environment_names(value):
    """The variable names of an Environment= value (systemd quotes words that hold blanks or quotes)."""
    try:
        words = shlex.split(value or '')
    except ValueError:
        words = (value or '').split()
    return sorted(set(word.split('=', 1)[0] for word in words if '=' in word))


def env_file_names(text):
    """The variable names an environment file assigns (values are never read out of it)."""
    names = set()
    for line in (text or '').splitlines():
        if line.lstrip().startswith(('#', ';')):
            continue
        match = _ENV_KEY.match(line)
        if match:
            names.add(match.group(1))
    return sorted(names)


def parse_environ(raw):
    """{name: value} of /proc/<pid>/environ bytes. The values stay inside this module: never in a result."""
    environ = {}
    for word in parse_cmdline(raw):
        if '=' in word:
            name, value = word.split('=', 1)
            environ[name] = value
    return environ


def cuda_in_use(environ, exists=os.path.exists, readlink=os.path.realpath):
    """The CUDA directory the server's environment points at: {'home', 'version', 'from'} (a path, not a value).

    CUDA_HOME, then CUDA_PATH, then the first CUDA directory in PATH, then in LD_LIBRARY_PATH, then what
    /usr/local/cuda links to. The version is the directory's ``cuda-X.Y`` suffix or its version.json.
    """
    candidates = []
    for name in ('CUDA_HOME', 'CUDA_PATH'):
        if environ.get(name):
            candidates.append((name, environ[name].rstrip('/')))
    for name in ('PATH', 'LD_LIBRARY_PATH'):
        for entry in (environ.get(name) or '').split(':'):
            match = _CUDA_DIR.match(entry)
            if match:
                candidates.append((name, match.group(1)))
                break
    if not candidates and exists('/usr/local/cuda'):
        candidates.append(('/usr/local/cuda', readlink('/usr/local/cuda')))
    if not candidates:
        return {'home': None, 'version': None, 'from': None}
    source, home = candidates[0]
    match = re.search(r'cuda-([0-9][0-9.]*)$', home)
    return {'home': home, 'version': match.group(1) if match else None, 'from': source}


# --- the checkout ------------------------------------------------------------------------------------------------

def _read_text(path):
    with open(path, 'rb') as handle:
        return handle.read().decode('utf-8', 'replace')


def git_dir_of(path):
    """(work tree, git dir) of the first directory at or above path with a .git, or (None, None)."""
    current = os.path.abspath(path)
    while True:
        dot_git = os.path.join(current, '.git')
        if os.path.isdir(dot_git):
            return current, dot_git
        if os.path.isfile(dot_git):
            text = _read_text(dot_git).strip()
            if text.startswith('gitdir:'):
                target = text[len('gitdir:'):].strip()
                return current, os.path.normpath(os.path.join(current, target))
        parent = os.path.dirname(current)
        if parent == current:
            return None, None
        current = parent


def git_head(git_dir):
    """{'commit', 'ref'} of a git dir, read as gitrepository-layout(5) says (loose ref, then packed-refs)."""
    head = _read_text(os.path.join(git_dir, 'HEAD')).strip()
    common = git_dir
    if os.path.isfile(os.path.join(git_dir, 'commondir')):
        common = os.path.normpath(os.path.join(git_dir, _read_text(os.path.join(git_dir, 'commondir')).strip()))
    if _SHA.match(head):
        return {'commit': head, 'ref': None}
    if not head.startswith('ref:'):
        raise BaselineError('%s/HEAD is neither a commit nor a ref' % git_dir)
    ref = head[len('ref:'):].strip()
    for base in (git_dir, common):
        loose = os.path.join(base, ref)
        if os.path.isfile(loose):
            value = _read_text(loose).strip()
            if _SHA.match(value):
                return {'commit': value, 'ref': ref}
    packed = os.path.join(common, 'packed-refs')
    if os.path.isfile(packed):
        for line in _read_text(packed).splitlines():
            parts = line.split(' ', 1)
            if len(parts) == 2 and parts[1] == ref and _SHA.match(parts[0]):
                return {'commit': parts[0], 'ref': ref}
    return {'commit': None, 'ref': ref}


def package_version(package_dir):
    """A literal ``__version__ = "..."`` of sglang's version.py or _version.py (read, not imported), or None."""
    for name in ('_version.py', 'version.py', '__init__.py'):
        path = os.path.join(package_dir, name)
        if os.path.isfile(path):
            match = _VERSION_LITERAL.search(_read_text(path))
            if match:
                return match.group(1)
    return None


def find_venv(interpreter):
    """The virtual environment of an interpreter path (pyvenv.cfg beside it or one level up), without resolving
    the venv's python symlink, and its pyvenv.cfg settings: {'path', 'home', 'version'} or None."""
    if not interpreter:
        return None
    bindir = os.path.dirname(interpreter)
    for base in (bindir, os.path.dirname(bindir)):
        cfg = os.path.join(base, 'pyvenv.cfg')
        if os.path.isfile(cfg):
            settings = {}
            for line in _read_text(cfg).splitlines():
                if '=' in line:
                    key, value = line.split('=', 1)
                    settings[key.strip()] = value.strip()
            return {'path': base, 'home': settings.get('home'),
                    'version': settings.get('version') or settings.get('version_info')}
    return None


# --- the host ----------------------------------------------------------------------------------------------------

class Host(object):
    """What the module reads of the host; tests give the recorded outputs through a subclass."""

    def __init__(self, module=None, proc='/proc'):
        self.module = module
        self.proc = proc

    def pids(self):
        return sorted(int(name) for name in os.listdir(self.proc) if name.isdigit())

    def read_proc(self, pid, name):
        """Bytes of /proc/<pid>/<name>, or None when the process is gone or the file is not readable."""
        try:
            with open(os.path.join(self.proc, str(pid), name), 'rb') as handle:
                return handle.read()
        except (IOError, OSError):
            return None

    def read_link(self, pid, name):
        """The target of /proc/<pid>/<name> (exe, cwd), or None (another user's process needs CAP_SYS_PTRACE)."""
        try:
            return os.readlink(os.path.join(self.proc, str(pid), name))
        except (IOError, OSError):
            return None

    def systemctl_show(self, unit):
        systemctl = self.module.get_bin_path('systemctl', required=True)
        rc, out, err = self.module.run_command([systemctl, 'show', unit, '-p', ','.join(SHOW_PROPERTIES)],
                                               environ_update={'LC_ALL': 'C'})
        if rc != 0:
            raise BaselineError('systemctl show %s failed (rc=%d): %s' % (unit, rc, err.strip()))
        return out

    def probe(self, interpreter, environ, cwd, user, group, timeout):
        """Run PROBE_SCRIPT with the interpreter as the unit's user, in its directory, with the import-relevant
        part of its environment; the parsed JSON, or {'error': ...}."""
        env = dict((k, environ[k]) for k in IMPORT_ENVIRONMENT if k in environ)
        env.setdefault('PATH', '/usr/local/bin:/usr/bin:/bin')
        kwargs = {}
        if os.geteuid() == 0 and user and user != 'root':
            try:
                account = pwd.getpwuid(int(user)) if user.isdigit() else pwd.getpwnam(user)
                gid = account.pw_gid
                if group:
                    gid = int(group) if group.isdigit() else grp.getgrnam(group).gr_gid
                kwargs = {'user': account.pw_uid, 'group': gid, 'extra_groups': []}
            except KeyError:
                return {'error': 'the unit\'s user %s or group %s does not exist' % (user, group)}
        if cwd and not os.path.isdir(cwd):
            cwd = None
        try:
            proc = subprocess.run([interpreter, '-c', PROBE_SCRIPT], env=env, cwd=cwd or '/',
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, check=False,
                                  **kwargs)
        except (OSError, subprocess.SubprocessError) as exc:
            return {'error': '%s: %s' % (type(exc).__name__, exc)}
        if proc.returncode != 0:
            return {'error': 'exit %d: %s' % (proc.returncode, proc.stderr.decode('utf-8', 'replace').strip()[-500:])}
        try:
            return json.loads(proc.stdout.decode('utf-8', 'replace').strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {'error': 'the probe printed no JSON'}


# --- finding what serves -----------------------------------------------------------------------------------------

def normalize_unit(name):
    if not name:
        return None
    return name if name.endswith(UNIT_SUFFIXES) else name + '.service'


def scan(host):
    """Every SGLang server process: [{'pid', 'argv', 'entry', 'unit', 'cgroup'}]."""
    found = []
    for pid in host.pids():
        argv = parse_cmdline(host.read_proc(pid, 'cmdline'))
        entry = sglang_entry(argv)
        if entry is None:
            continue
        unit, cgroup = parse_cgroup((host.read_proc(pid, 'cgroup') or b'').decode('utf-8', 'replace'))
        found.append({'pid': pid, 'argv': argv, 'entry': entry, 'unit': unit, 'cgroup': cgroup})
    return found


def select(processes, unit=None, host=None):
    """The unit that serves and its server processes, or (None, []) when nothing serves; refusals as the module
    documents them. With host, a named unit that runs nothing is looked up to say whether it exists and runs."""
    unit = normalize_unit(unit)
    if unit:
        mine = [p for p in processes if p['unit'] == unit]
        if not mine and host is not None:
            props = parse_show(host.systemctl_show(unit))
            if show_value(props, 'LoadState') != 'loaded':
                raise BaselineError('the unit %s is not loaded (LoadState=%s): name the unit that serves SGLang, or '
                                    'leave unit empty to search' % (unit, show_value(props, 'LoadState')))
            if show_value(props, 'ActiveState') != 'active':
                raise BaselineError('the unit %s is not active (ActiveState=%s): adoption records the service that '
                                    'serves now; start it or name the one that runs'
                                    % (unit, show_value(props, 'ActiveState')))
        if not mine:
            others = sorted(set('%s (pid %d)' % (p['unit'] or 'no unit', p['pid']) for p in processes))
            raise BaselineError('the unit %s runs no SGLang server process (python -m sglang.launch_server, '
                                '.../sglang/launch_server.py or sglang serve)%s; name the unit that serves, or leave '
                                'unit empty to search' % (unit, '; SGLang runs in: ' + ', '.join(others) if others else ''))
        return unit, mine
    outside = [p for p in processes if not (p['unit'] or '').endswith('.service')]
    if outside:
        raise BaselineError('an SGLang server process runs outside any systemd service (%s): adoption can only '
                            'restore a service; stop it or run it as a unit, then name that unit'
                            % ', '.join('pid %d in cgroup %s' % (p['pid'], p['cgroup'] or '?') for p in outside))
    units = sorted(set(p['unit'] for p in processes))
    if len(units) > 1:
        raise BaselineError('%d units run an SGLang server (%s): name the one to adopt with the unit variable'
                            % (len(units), ', '.join(units)))
    if not units:
        return None, []
    return units[0], processes


def resolve_interpreter(argv0, exec_path, environ, exe, isfile=os.path.isfile):
    """The interpreter's path as the server named it: argv[0] when absolute; else systemd's resolved ExecStart path
    (same name), the first match in the server's PATH, or /proc/<pid>/exe (last: it resolves the venv's python
    link to the base interpreter and so loses the venv)."""
    if os.path.isabs(argv0):
        return argv0
    if exec_path and os.path.basename(exec_path) == os.path.basename(argv0):
        return exec_path
    if '/' not in argv0:
        for directory in (environ.get('PATH') or '').split(':'):
            if directory.startswith('/') and isfile(os.path.join(directory, argv0)):
                return os.path.join(directory, argv0)
    return exe or argv0


def describe(host, unit, processes, timeout=120):
    """The description of the serving unit (no environment value in it)."""
    props = parse_show(host.systemctl_show(unit))
    if show_value(props, 'LoadState') != 'loaded':
        raise BaselineError('the unit %s is not loaded (LoadState=%s)' % (unit, show_value(props, 'LoadState')))
    if show_value(props, 'ActiveState') != 'active':
        raise BaselineError('the unit %s is not active (ActiveState=%s): adoption records the service that serves '
                            'now; start it or name the one that runs' % (unit, show_value(props, 'ActiveState')))
    main_pid = int(show_value(props, 'MainPID') or 0)
    by_pid = dict((p['pid'], p) for p in processes)
    server = by_pid.get(main_pid) or sorted(processes, key=lambda p: p['pid'])[0]
    argv = server['argv']
    execs = [parse_exec(v) for v in props.get('ExecStart', [])]
    resolved = execs[0]['path'] if execs else None
    environ = parse_environ(host.read_proc(server['pid'], 'environ') or b'')
    interpreter = resolve_interpreter(argv[0], resolved, environ, host.read_link(server['pid'], 'exe'))
    user = show_value(props, 'User') or 'root'
    group = show_value(props, 'Group') or None
    workdir = show_value(props, 'WorkingDirectory') or None
    if workdir and workdir.startswith('!'):
        workdir = workdir[1:]
    if workdir == '~':
        workdir = environ.get('HOME')
    env_files = parse_environment_files(props.get('EnvironmentFiles'))
    for env in env_files:
        env['exists'] = os.path.isfile(env['path'])
        env['names'] = env_file_names(_read_text(env['path'])) if env['exists'] else []
    drop_ins = [p for p in show_value(props, 'DropInPaths').split(' ') if p]
    venv = find_venv(interpreter) if os.path.isabs(interpreter) else None
    probe = host.probe(interpreter, environ, workdir, user, group, timeout)
    sglang_file = probe.get('file')
    package_dir = os.path.dirname(sglang_file) if sglang_file else None
    version = probe.get('version')
    version_from = probe.get('version_from')
    if not version and package_dir:
        version = package_version(package_dir)
        version_from = 'file' if version else None
    checkout = None
    if package_dir:
        work_tree, git_dir = git_dir_of(package_dir)
        if git_dir:
            checkout = dict(path=work_tree, git_dir=git_dir, **git_head(git_dir))
    if checkout:
        kind = 'checkout'
    elif venv and sglang_file and sglang_file.startswith(venv['path'] + '/'):
        kind = 'venv'
    elif sglang_file:
        kind = 'system'
    else:
        kind = 'unknown'
    names = set()
    for value in props.get('Environment', []):
        names.update(environment_names(value))
    options = server_options(server['entry']['args'])
    return {
        'unit': unit,
        'pid': server['pid'],
        'pids': sorted(p['pid'] for p in processes),
        'form': server['entry']['form'],
        'argv': masked_argv(argv),
        'exec_path': resolved,
        'interpreter': interpreter,
        'python_version': probe.get('python_version'),
        'venv': venv,
        'kind': kind,
        'sglang': {'file': sglang_file, 'version': version, 'version_from': version_from},
        'checkout': checkout,
        'probe_error': probe.get('error'),
        'port': options['port'],
        'port_from': options['port_from'],
        'host': options['host'],
        'model_path': options['model_path'],
        'tp_size': options['tp_size'],
        'config': options['config'],
        'user': user,
        'group': group,
        'working_directory': workdir,
        'cuda': cuda_in_use(environ),
        'fragment_path': show_value(props, 'FragmentPath') or None,
        'drop_in_paths': drop_ins,
        'environment_files': env_files,
        'environment_names': sorted(names),
        'unit_file_state': show_value(props, 'UnitFileState') or None,
        'cgroup': server['cgroup'],
    }


def survey(host, unit, root, timeout=120):
    """What serves and what is recorded: {'found', 'unit', 'description', 'baseline_dir', 'recorded', 'manifest',
    'unit_file_state'} (description and manifest None when absent)."""
    baseline_dir = os.path.join(root, 'baseline')
    unit, processes = select(scan(host), unit, host)
    recorded = read_manifest(baseline_dir)
    description = describe(host, unit, processes, timeout=timeout) if unit else None
    return {'found': description is not None, 'unit': unit, 'description': description,
            'baseline_dir': baseline_dir, 'recorded': recorded is not None, 'manifest': recorded,
            'unit_file_state': description['unit_file_state'] if description else None}


# --- recording ---------------------------------------------------------------------------------------------------

def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as handle:
        for chunk in iter(lambda: handle.read(1 << 16), b''):
            digest.update(chunk)
    return digest.hexdigest()


def _owner_names(uid, gid):
    try:
        owner = pwd.getpwuid(uid).pw_name
    except KeyError:
        owner = None
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = None
    return owner, group


def file_entry(path, kind):
    """{'path', 'kind', 'sha256', 'size', 'mode', 'uid', 'gid', 'owner', 'group'} of a file as it is now."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise BaselineError('%s (%s of the unit) is not a regular file' % (path, kind))
    owner, group = _owner_names(info.st_uid, info.st_gid)
    return {'path': path, 'kind': kind, 'sha256': sha256_file(path), 'size': info.st_size,
            'mode': '%04o' % stat.S_IMODE(info.st_mode), 'uid': info.st_uid, 'gid': info.st_gid,
            'owner': owner, 'group': group}


def unit_files(description):
    """(entries of the unit file, drop-ins and existing environment files; absent optional environment files)."""
    entries, absent = [], []
    if not description['fragment_path']:
        raise BaselineError('the unit %s has no unit file (FragmentPath is empty): a generated or transient unit '
                            'cannot be restored' % description['unit'])
    entries.append(file_entry(description['fragment_path'], 'unit'))
    for path in description['drop_in_paths']:
        entries.append(file_entry(path, 'drop-in'))
    for env in description['environment_files']:
        if os.path.exists(env['path']):
            entry = file_entry(env['path'], 'environment')
            entry['optional'] = env['optional']
            entries.append(entry)
        elif env['optional']:
            absent.append(env['path'])
        else:
            raise BaselineError('the environment file %s of %s does not exist, yet the unit requires it'
                                % (env['path'], description['unit']))
    return entries, absent


def copy_name(path):
    """Where a recorded file's copy lives in the baseline: files/<its absolute path>."""
    return os.path.join('files', path.lstrip('/'))


def identity(manifest):
    """What decides whether a recorded baseline is the serving one: unit, command line and every file's bytes,
    mode and owner."""
    return {'unit': manifest['unit'],
            'argv': manifest['description']['argv'],
            'files': [dict((k, f[k]) for k in ('path', 'kind', 'sha256', 'mode', 'uid', 'gid')) for f in manifest['files']],
            'absent': manifest['absent']}


def build_manifest(description, entries, absent, recorded_at=None):
    files = []
    for entry in entries:
        entry = dict(entry)
        entry['copy'] = copy_name(entry['path'])
        files.append(entry)
    return {'format': MANIFEST_FORMAT, 'stack': 'baseline', 'read_only': True, 'unit': description['unit'],
            'recorded_at': recorded_at or datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'),
            'description': description, 'files': files, 'absent': absent}


def read_manifest(baseline_dir):
    path = os.path.join(baseline_dir, 'manifest.json')
    if not os.path.exists(path):
        return None
    try:
        with open(path) as handle:
            manifest = json.load(handle)
    except ValueError as exc:
        raise BaselineError('%s is not valid JSON (%s): the recorded baseline is damaged' % (path, exc))
    if manifest.get('format') != MANIFEST_FORMAT:
        raise BaselineError('%s has format %r, this module reads %d' % (path, manifest.get('format'), MANIFEST_FORMAT))
    return manifest


def drift(recorded, current):
    """Human-readable differences between the recorded and the serving unit (no file content)."""
    changes = []
    old, new = identity(recorded), identity(current)
    if old['unit'] != new['unit']:
        changes.append('the unit was %s and is now %s' % (old['unit'], new['unit']))
    if old['argv'] != new['argv']:
        changes.append('the server\'s command line changed')
    old_files = dict((f['path'], f) for f in old['files'])
    new_files = dict((f['path'], f) for f in new['files'])
    for path in sorted(set(old_files) | set(new_files)):
        if path not in new_files:
            changes.append('%s is no longer part of the unit' % path)
        elif path not in old_files:
            changes.append('%s is new in the unit' % path)
        else:
            for key, label in (('sha256', 'content'), ('mode', 'mode'), ('uid', 'owner'), ('gid', 'group')):
                if old_files[path][key] != new_files[path][key]:
                    changes.append('%s: %s changed' % (path, label))
    if old['absent'] != new['absent']:
        changes.append('the optional environment files that are absent changed')
    return changes


def _write_json(path, data, mode):
    with open(path, 'w') as handle:
        json.dump(data, handle, indent=2, sort_keys=True)
        handle.write('\n')
    os.chmod(path, mode)


def write_baseline(root, manifest):
    """Write <root>/baseline (copies then manifest) into a new directory and move it in place, replacing an old one."""
    if not os.path.isdir(root):
        os.makedirs(root, 0o755)
    final = os.path.join(root, 'baseline')
    work = tempfile.mkdtemp(prefix='.baseline.', dir=root)
    try:
        for entry in manifest['files']:
            target = os.path.join(work, entry['copy'])
            if not os.path.isdir(os.path.dirname(target)):
                os.makedirs(os.path.dirname(target), 0o755)
            with open(entry['path'], 'rb') as src:
                data = src.read()
            if hashlib.sha256(data).hexdigest() != entry['sha256']:
                raise BaselineError('%s changed while it was being recorded; run again' % entry['path'])
            with open(target, 'wb') as dst:
                dst.write(data)
            # environment files may hold secrets: their copies are readable by root only
            os.chmod(target, 0o600 if entry['kind'] == 'environment' else 0o444)
        _write_json(os.path.join(work, 'manifest.json'), manifest, 0o444)
        os.chmod(work, 0o755)
        if os.path.isdir(final):
            old = tempfile.mkdtemp(prefix='.baseline-old.', dir=root)
            os.rename(final, os.path.join(old, 'baseline'))
            os.rename(work, final)
            _remove_tree(old)
        else:
            os.rename(work, final)
    except Exception:
        _remove_tree(work)
        raise
    return final


def _remove_tree(path):
    for base, dirs, files in os.walk(path, topdown=False):
        for name in files:
            os.unlink(os.path.join(base, name))
        for name in dirs:
            os.rmdir(os.path.join(base, name))
    if os.path.isdir(path):
        os.rmdir(path)


def record(root, description, force=False, check_mode=False, recorded_at=None):
    """Record the serving unit as <root>/baseline. Returns {'changed', 'drift', 'manifest', 'before'}."""
    entries, absent = unit_files(description)
    current = build_manifest(description, entries, absent, recorded_at)
    baseline_dir = os.path.join(root, 'baseline')
    recorded = read_manifest(baseline_dir)
    result = {'changed': False, 'drift': [], 'manifest': current, 'before': recorded, 'recorded': False}
    if recorded is not None:
        changes = drift(recorded, current) + verify_copies(baseline_dir, recorded)
        if not changes:
            result['manifest'] = recorded
            return result
        result['drift'] = changes
        if not force:
            result['manifest'] = recorded
            return result
    result['changed'] = True
    if not check_mode:
        write_baseline(root, current)
        result['recorded'] = True
    return result


# --- restoring ---------------------------------------------------------------------------------------------------

def verify_copies(baseline_dir, manifest):
    """Problems of the recorded copies (missing, or sha256 not the recorded one); [] when intact."""
    problems = []
    for entry in manifest['files']:
        copy = os.path.join(baseline_dir, entry['copy'])
        if not os.path.isfile(copy):
            problems.append('the copy of %s is missing (%s)' % (entry['path'], copy))
        elif sha256_file(copy) != entry['sha256']:
            problems.append('the copy of %s (%s) no longer matches its recorded sha256' % (entry['path'], copy))
    return problems


def _live_differs(entry):
    path = entry['path']
    # a symlinked file is compared through the link; written back, it becomes a regular file
    if not os.path.isfile(path):
        return 'missing'
    info = os.stat(path)
    if sha256_file(path) != entry['sha256']:
        return 'content'
    if '%04o' % stat.S_IMODE(info.st_mode) != entry['mode']:
        return 'mode'
    if info.st_uid != entry['uid'] or info.st_gid != entry['gid']:
        return 'owner'
    return None


def extra_drop_ins(manifest):
    """Drop-ins in the unit's /etc drop-in directory that the baseline did not have (a later stack's)."""
    unit = manifest['unit']
    recorded = set(f['path'] for f in manifest['files'])
    dirs = set(os.path.dirname(f['path']) for f in manifest['files'] if f['kind'] == 'drop-in')
    fragment = [f['path'] for f in manifest['files'] if f['kind'] == 'unit']
    if fragment:
        dirs.add(os.path.join(os.path.dirname(fragment[0]), unit + '.d'))
    extra = []
    for directory in sorted(dirs):
        if os.path.isdir(directory):
            for name in sorted(os.listdir(directory)):
                path = os.path.join(directory, name)
                if name.endswith('.conf') and path not in recorded:
                    extra.append(path)
    return extra


def restore(root, check_mode=False, prune_drop_ins=True):
    """Write the recorded files back where they differ. Returns {'changed', 'restored', 'removed', 'manifest'}."""
    baseline_dir = os.path.join(root, 'baseline')
    manifest = read_manifest(baseline_dir)
    if manifest is None:
        raise BaselineError('no baseline is recorded under %s: nothing to restore (record it with state=present '
                            'before the first switch)' % baseline_dir)
    problems = verify_copies(baseline_dir, manifest)
    if problems:
        raise BaselineError('the recorded baseline was altered, refusing to restore it: %s' % '; '.join(problems))
    restored, reasons = [], {}
    for entry in manifest['files']:
        why = _live_differs(entry)
        if why:
            restored.append(entry['path'])
            reasons[entry['path']] = why
    removed = extra_drop_ins(manifest) if prune_drop_ins else []
    if not check_mode:
        for entry in manifest['files']:
            if entry['path'] in reasons:
                _write_back(os.path.join(baseline_dir, entry['copy']), entry)
        for path in removed:
            os.unlink(path)
    return {'changed': bool(restored or removed), 'restored': restored, 'reasons': reasons, 'removed': removed,
            'manifest': manifest}


def _write_back(copy, entry):
    """Replace entry['path'] atomically by the copy's bytes with the recorded mode and owner."""
    path = entry['path']
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    with open(copy, 'rb') as src:
        data = src.read()
    handle, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(handle, 'wb') as dst:
            dst.write(data)
        os.chmod(tmp, int(entry['mode'], 8))
        if os.geteuid() == 0:
            os.chown(tmp, entry['uid'], entry['gid'])
        elif (os.getuid(), os.getgid()) != (entry['uid'], entry['gid']):
            raise BaselineError('%s must be owned by uid %d gid %d: restoring it needs root' % (path, entry['uid'], entry['gid']))
        os.rename(tmp, path)
    except Exception:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
