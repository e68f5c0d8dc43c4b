# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""sglang_baseline on the outputs recorded in a Debian 12 test-bed container with systemd 252
(fixtures/real/systemd-baseline, see its README): /proc/<pid>/cmdline, cgroup and environ of a site unit that
serves ``python -m sglang.launch_server`` from a source checkout, ``systemctl show`` of it and of other units,
and the interpreter probe's output. Record and restore run on a copy of the site's files under a temp dir."""

from __future__ import annotations

import json
import os
import shutil
import stat

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import sglang_baseline as sb

REAL = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'real', 'systemd-baseline')
SECRET = 'hf_FIXTURE_NOT_A_REAL_TOKEN'


def real(*parts):
    with open(os.path.join(REAL, *parts), 'rb') as handle:
        return handle.read()


def recorded_commit():
    return real('files', 'git-rev-parse-HEAD.txt').decode().splitlines()[0]


class RecordedHost(sb.Host):
    """The recorded container: /proc from the fixture, systemctl show from the recorded files, the recorded probe.

    With ``base`` the site's absolute paths (/etc, /srv) are moved under that directory, in every text the host
    gives, so that record and restore work on a temp copy of the site's files.
    """

    def __init__(self, base=None, probe_file='probe-venv-checkout.json', show_suffix=None):
        super(RecordedHost, self).__init__(module=None, proc=os.path.join(REAL, 'proc'))
        self.base = base
        self.probe_file = probe_file
        self.show_suffix = show_suffix or {}
        self.probes = []

    def _move(self, data):
        if not self.base:
            return data
        for top in ('/etc/', '/srv/'):
            if isinstance(data, bytes):
                data = data.replace(top.encode(), (self.base + top).encode())
            else:
                data = data.replace(top, self.base + top)
        return data

    def read_proc(self, pid, name):
        data = super(RecordedHost, self).read_proc(pid, name)
        return self._move(data) if data is not None else None

    def systemctl_show(self, unit):
        path = os.path.join(REAL, 'show-%s%s.txt' % (unit, self.show_suffix.get(unit, '')))
        return self._move(real(path).decode())

    def probe(self, interpreter, environ, cwd, user, group, timeout):
        self.probes.append({'interpreter': interpreter, 'cwd': cwd, 'user': user, 'group': group,
                            'names': sorted(environ)})
        return json.loads(self._move(real(self.probe_file).decode()))


def make_site(base):
    """The recorded site's files under base: unit, drop-in, env file (0640), checkout .git, venv pyvenv.cfg."""
    layout = {
        'etc/systemd/system/sglang.service': ('sglang.service', 0o644),
        'etc/systemd/system/sglang.service.d/override.conf': ('override.conf', 0o644),
        'etc/sglang/sglang.env': ('sglang.env', 0o640),
        'srv/sglang/.git/HEAD': ('git-HEAD', 0o644),
        'srv/sglang/.git/packed-refs': ('git-packed-refs', 0o644),
        'srv/sglang/.venv/pyvenv.cfg': ('pyvenv.cfg', 0o644),
        'srv/sglang/python/sglang/_version.py': ('_version.py', 0o644),
    }
    for rel, (name, mode) in layout.items():
        path = os.path.join(base, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as handle:
            handle.write(real('files', name))
        os.chmod(path, mode)
    return base


@pytest.fixture
def site(tmp_path):
    return make_site(str(tmp_path / 'host'))


def snapshot(base):
    """{path: (bytes, mode)} of every file under the site's /etc."""
    out = {}
    for top, _dirs, files in os.walk(os.path.join(base, 'etc')):
        for name in files:
            path = os.path.join(top, name)
            with open(path, 'rb') as handle:
                out[path] = (handle.read(), stat.S_IMODE(os.stat(path).st_mode))
    return out


# --- the command line ------------------------------------------------------------------------------------------

def test_cmdline_keeps_a_quoted_word_that_systemctl_show_splits():
    argv = sb.parse_cmdline(real('proc', '152', 'cmdline'))
    assert argv[:3] == ['/srv/sglang/.venv/bin/python', '-m', 'sglang.launch_server']
    assert argv[-2:] == ['--served-model-name', 'qwen3 32b']
    words = sb.parse_exec(sb.show_value(sb.parse_show(real('show-sglang.service.txt').decode()), 'ExecStart'))
    assert words['path'] == '/srv/sglang/.venv/bin/python'
    # systemd 252 prints argv[] without quoting: the quoted argument comes back as two words
    assert words['argv_words'][-2:] == ['qwen3', '32b'] and words['argv_words'] != argv


def test_module_form_and_its_options():
    entry = sb.sglang_entry(sb.parse_cmdline(real('proc', '152', 'cmdline')))
    assert entry['form'] == 'module'
    options = sb.server_options(entry['args'])
    assert options == {'port': 30000, 'port_from': 'argv', 'host': '0.0.0.0', 'model_path': '/models/Qwen3-32B',
                       'tp_size': '8', 'config': None}


def test_script_form_with_the_model_alias_and_default_port():
    entry = sb.sglang_entry(sb.parse_cmdline(real('proc', '154', 'cmdline')))
    assert entry['form'] == 'script'
    options = sb.server_options(entry['args'])
    assert options['model_path'] == '/models/Llama-3.1-8B'
    assert (options['port'], options['port_from'], options['host']) == (30000, 'default', '127.0.0.1')


@pytest.mark.parametrize('argv, form', [
    # the wheel's console script sglang = sglang.cli.main:main, as the kernel shows a script run through its shebang
    (['/opt/venv/bin/python3', '/opt/venv/bin/sglang', 'serve', '--model-path', 'm', '--port=31000'], 'console'),
    (['/opt/venv/bin/sglang', 'serve', '--model-path', 'm'], 'console'),
    (['python3', '-u', '-X', 'faulthandler', '-m', 'sglang.launch_server', '--port', '1'], 'module'),
    (['/usr/bin/python3.12', '-msglang.launch_server'], 'module'),
    (['/usr/bin/python3', '-m', 'sglang.bench_one_batch_server', '--port', '1'], None),
    (['/usr/bin/python3', '/x/sglang/multimodal_gen/runtime/launch_server.py'], None),
    (['/opt/venv/bin/sglang', 'version'], None),
    (['/usr/bin/python3', '-c', 'import sglang.launch_server'], None),
    (sb.parse_cmdline(real('proc', '1', 'cmdline')), None),
])
def test_entry_forms(argv, form):
    entry = sb.sglang_entry(argv)
    assert (entry['form'] if entry else None) == form
    if form == 'console' and '--port=31000' in argv:
        assert sb.server_options(entry['args'])['port'] == 31000


def test_api_keys_on_the_command_line_are_masked():
    argv = ['/v/bin/python', '-m', 'sglang.launch_server', '--api-key', 'k1', '--admin-api-key=k2', '--port', '1']
    assert sb.masked_argv(argv) == ['/v/bin/python', '-m', 'sglang.launch_server', '--api-key', '********',
                                    '--admin-api-key=********', '--port', '1']
    assert argv[4] == 'k1'


def test_a_port_that_is_not_a_number_is_refused():
    with pytest.raises(sb.BaselineError, match=r'^BASELINE: .*--port'):
        sb.server_options(['--port', 'http'])


# --- the unit ----------------------------------------------------------------------------------------------------

def test_cgroup_v1_of_the_recorded_processes():
    assert sb.parse_cgroup(real('proc', '152', 'cgroup').decode())[0] == 'sglang.service'
    assert sb.parse_cgroup(real('proc', '154', 'cgroup').decode())[0] == 'sglang-b.service'
    unit, path = sb.parse_cgroup(real('proc', '157', 'cgroup').decode())   # started by docker exec
    assert unit is None and path.startswith('/docker/')
    assert sb.parse_cgroup(real('proc', '1', 'cgroup').decode())[0] == 'init.scope'


@pytest.mark.parametrize('text, unit', [
    # cgroup v2 lines (cgroups(7): "0::<path>")
    ('0::/system.slice/sglang.service\n', 'sglang.service'),
    ('0::/lxc.payload.gpu1/system.slice/sglang-qwen.service/worker\n', 'sglang-qwen.service'),
    ('0::/user.slice/user-0.slice/session-3.scope\n', 'session-3.scope'),
    ('0::/\n', None),
])
def test_cgroup_v2_paths(text, unit):
    assert sb.parse_cgroup(text)[0] == unit


def test_show_of_the_site_unit():
    props = sb.parse_show(real('show-sglang.service.txt').decode())
    assert sb.show_value(props, 'MainPID') == '152' and sb.show_value(props, 'UnitFileState') == 'enabled'
    assert sb.parse_environment_files(props['EnvironmentFiles']) == [
        {'path': '/etc/sglang/sglang.env', 'optional': False}, {'path': '/etc/default/sglang', 'optional': True}]
    assert sb.environment_names(sb.show_value(props, 'Environment')) == ['CUDA_HOME', 'NCCL_P2P_DISABLE', 'PATH']


def test_environment_names_of_quoted_values():
    props = sb.parse_show(real('show-sglang-b.service-stopped.txt').decode())
    assert sb.environment_names(sb.show_value(props, 'Environment')) == ['QUOTE', 'SPACED']
    assert sb.show_value(props, 'ActiveState') == 'inactive'


def test_env_file_names_only():
    names = sb.env_file_names(real('files', 'sglang.env').decode())
    assert names == ['HF_TOKEN', 'LD_LIBRARY_PATH', 'SGLANG_ENABLE_TORCH_COMPILE']


def test_cuda_from_the_server_environment():
    environ = sb.parse_environ(real('proc', '152', 'environ'))
    assert environ['USER'] == 'sglang'
    assert sb.cuda_in_use(environ) == {'home': '/usr/local/cuda-12.8', 'version': '12.8', 'from': 'CUDA_HOME'}
    del environ['CUDA_HOME']
    assert sb.cuda_in_use(environ)['from'] == 'PATH'
    assert sb.cuda_in_use({'PATH': '/usr/bin'}, exists=lambda p: False)['home'] is None
    linked = sb.cuda_in_use({'PATH': '/usr/bin'}, exists=lambda p: True, readlink=lambda p: '/usr/local/cuda-13.0')
    assert linked == {'home': '/usr/local/cuda-13.0', 'version': '13.0', 'from': '/usr/local/cuda'}


def test_interpreter_resolution():
    environ = sb.parse_environ(real('proc', '152', 'environ'))
    venv_python = '/srv/sglang/.venv/bin/python'
    assert sb.resolve_interpreter(venv_python, None, environ, None) == venv_python
    assert sb.resolve_interpreter('python', venv_python, environ, None) == venv_python
    # a shell wrapper (ExecStart=/bin/bash -c "python -m ...") with python found through the server's PATH
    found = sb.resolve_interpreter('python3', '/bin/bash', environ, '/usr/bin/python3.11',
                                   isfile=lambda p: p == '/usr/bin/python3')
    assert found == '/usr/bin/python3'
    assert sb.resolve_interpreter('python3', '/bin/bash', {}, '/usr/bin/python3.11') == '/usr/bin/python3.11'


# --- checkout and venv -------------------------------------------------------------------------------------------

def test_checkout_commit_from_packed_refs(site):
    work, git_dir = sb.git_dir_of(os.path.join(site, 'srv/sglang/python/sglang'))
    assert work == os.path.join(site, 'srv/sglang')
    assert sb.git_head(git_dir) == {'commit': recorded_commit(), 'ref': 'refs/heads/main'}


def test_checkout_loose_ref_detached_head_and_worktree(tmp_path):
    git = tmp_path / 'src' / '.git'
    (git / 'refs' / 'heads').mkdir(parents=True)
    (git / 'HEAD').write_text('ref: refs/heads/dev\n')
    (git / 'refs' / 'heads' / 'dev').write_text('3207427' + '0' * 33 + '\n')
    (git / 'packed-refs').write_text('%s refs/heads/dev\n' % ('1' * 40))
    assert sb.git_head(str(git))['commit'] == '3207427' + '0' * 33   # a loose ref wins over packed-refs
    (git / 'HEAD').write_text('2' * 40 + '\n')
    assert sb.git_head(str(git)) == {'commit': '2' * 40, 'ref': None}
    # a `git worktree`: .git is a file naming the worktree's git dir, whose commondir holds the refs
    wt_git = git / 'worktrees' / 'wt'
    wt_git.mkdir(parents=True)
    (wt_git / 'HEAD').write_text('ref: refs/heads/dev\n')
    (wt_git / 'commondir').write_text('../..\n')
    (tmp_path / 'wt').mkdir()
    (tmp_path / 'wt' / '.git').write_text('gitdir: %s\n' % wt_git)
    work, git_dir = sb.git_dir_of(str(tmp_path / 'wt'))
    assert sb.git_head(git_dir)['commit'] == '3207427' + '0' * 33


def test_venv_and_version_file(site):
    venv = sb.find_venv(os.path.join(site, 'srv/sglang/.venv/bin/python'))
    assert venv == {'path': os.path.join(site, 'srv/sglang/.venv'), 'home': '/usr/bin', 'version': '3.11.2'}
    assert sb.find_venv('/usr/bin/python3-not-a-venv-here') is None
    assert sb.package_version(os.path.join(site, 'srv/sglang/python/sglang')) == '0.5.9'


# --- finding what serves -----------------------------------------------------------------------------------------

def test_scan_finds_the_three_recorded_servers():
    found = sb.scan(RecordedHost())
    assert [(p['pid'], p['unit'], p['entry']['form']) for p in found] == [
        (152, 'sglang.service', 'module'), (154, 'sglang-b.service', 'script'), (157, None, 'module')]


def test_refusals():
    processes = sb.scan(RecordedHost())
    with pytest.raises(sb.BaselineError, match=r'^BASELINE: an SGLang server process runs outside any systemd service '
                                               r'\(pid 157 in cgroup /docker/'):
        sb.select(processes)
    services = [p for p in processes if p['pid'] != 157]
    with pytest.raises(sb.BaselineError, match=r'^BASELINE: 2 units run an SGLang server \(sglang-b.service, '
                                               r'sglang.service\)'):
        sb.select(services)
    host = RecordedHost(show_suffix={'sglang-b.service': '-stopped'})
    only_site = [p for p in processes if p['pid'] == 152]
    with pytest.raises(sb.BaselineError, match=r'^BASELINE: the unit systemd-journald.service runs no SGLang server process'):
        sb.select(only_site, 'systemd-journald', host)
    with pytest.raises(sb.BaselineError, match=r'^BASELINE: the unit nosuch.service is not loaded \(LoadState=not-found\)'):
        sb.select(only_site, 'nosuch.service', host)
    with pytest.raises(sb.BaselineError, match=r'^BASELINE: the unit sglang-b.service is not active'):
        sb.select(only_site, 'sglang-b', host)


def test_named_unit_and_nothing_serving():
    processes = sb.scan(RecordedHost())
    unit, mine = sb.select(processes, 'sglang')
    assert unit == 'sglang.service' and [p['pid'] for p in mine] == [152]
    assert sb.select([]) == (None, [])


def test_describe_the_recorded_site(site):
    host = RecordedHost(base=site)
    unit, mine = sb.select(sb.scan(host), 'sglang.service')
    description = sb.describe(host, unit, mine)
    assert description['kind'] == 'checkout' and description['form'] == 'module'
    assert description['checkout']['commit'] == recorded_commit()
    assert description['checkout']['path'] == os.path.join(site, 'srv/sglang')
    assert description['sglang'] == {'file': os.path.join(site, 'srv/sglang/python/sglang/__init__.py'),
                                     'version': '0.5.9', 'version_from': 'file'}
    assert description['venv']['path'] == os.path.join(site, 'srv/sglang/.venv')
    assert (description['user'], description['group'], description['port']) == ('sglang', 'sglang', 30000)
    assert description['cuda']['home'] == '/usr/local/cuda-12.8'
    assert description['environment_files'][0]['names'] == ['HF_TOKEN', 'LD_LIBRARY_PATH',
                                                            'SGLANG_ENABLE_TORCH_COMPILE']
    assert description['environment_files'][1] == {'path': os.path.join(site, 'etc/default/sglang'), 'optional': True,
                                                   'exists': False, 'names': []}
    # the probe ran the unit's interpreter as its user in its directory; no environment value is in the result
    assert host.probes[0]['user'] == 'sglang' and host.probes[0]['cwd'] == os.path.join(site, 'srv/sglang')
    text = json.dumps(description)
    assert SECRET not in text and 'NCCL_P2P_DISABLE=1' not in text and 'cuda-12.8/lib64' not in text


def test_describe_refuses_a_stopped_unit(site):
    host = RecordedHost(base=site)
    host.systemctl_show = lambda unit: real('show-sglang-b.service-stopped.txt').decode()
    with pytest.raises(sb.BaselineError, match=r'^BASELINE: the unit sglang.service is not active'):
        sb.describe(host, 'sglang.service', [p for p in sb.scan(host) if p['pid'] == 152])


# --- record and restore ------------------------------------------------------------------------------------------

def described(site):
    host = RecordedHost(base=site)
    unit, mine = sb.select(sb.scan(host), 'sglang')
    return sb.describe(host, unit, mine)


def test_record_is_byte_for_byte_and_idempotent(site, tmp_path):
    root = str(tmp_path / 'opt-sglang')
    description = described(site)
    preview = sb.record(root, description, check_mode=True)
    assert preview['changed'] and not os.path.exists(root)
    first = sb.record(root, description)
    assert first['changed'] and first['recorded'] and first['drift'] == []
    baseline = os.path.join(root, 'baseline')
    manifest = sb.read_manifest(baseline)
    assert [f['kind'] for f in manifest['files']] == ['unit', 'drop-in', 'environment']
    assert manifest['absent'] == [os.path.join(site, 'etc/default/sglang')]
    for entry in manifest['files']:
        copy = os.path.join(baseline, entry['copy'])
        with open(copy, 'rb') as a, open(entry['path'], 'rb') as b:
            assert a.read() == b.read()
        assert stat.S_IMODE(os.stat(copy).st_mode) == (0o600 if entry['kind'] == 'environment' else 0o444)
    assert [f['mode'] for f in manifest['files']] == ['0644', '0644', '0640']
    assert SECRET not in json.dumps(manifest)
    second = sb.record(root, described(site))
    assert not second['changed'] and second['drift'] == [] and second['manifest']['recorded_at'] == manifest['recorded_at']


def test_drift_is_reported_and_kept_unless_forced(site, tmp_path):
    root = str(tmp_path / 'opt-sglang')
    sb.record(root, described(site))
    before = sb.read_manifest(os.path.join(root, 'baseline'))
    override = os.path.join(site, 'etc/systemd/system/sglang.service.d/override.conf')
    with open(override, 'ab') as handle:
        handle.write(b'CPUQuota=400%\n')
    os.chmod(os.path.join(site, 'etc/sglang/sglang.env'), 0o600)
    result = sb.record(root, described(site))
    assert not result['changed'] and result['drift'] == ['%s: mode changed' % os.path.join(site, 'etc/sglang/sglang.env'),
                                                         '%s: content changed' % override]
    assert sb.read_manifest(os.path.join(root, 'baseline')) == before
    forced = sb.record(root, described(site), force=True)
    assert forced['changed'] and sb.read_manifest(os.path.join(root, 'baseline'))['files'][1]['sha256'] != \
        before['files'][1]['sha256']
    assert sorted(os.listdir(root)) == ['baseline']   # no work or old directory left behind


def test_restore_round_trip(site, tmp_path):
    root = str(tmp_path / 'opt-sglang')
    original = snapshot(site)
    sb.record(root, described(site))
    unit_file = os.path.join(site, 'etc/systemd/system/sglang.service')
    stack_drop_in = os.path.join(site, 'etc/systemd/system/sglang.service.d/50-stack.conf')
    env_file = os.path.join(site, 'etc/sglang/sglang.env')
    # what a new stack's switch does to the site's files
    with open(unit_file, 'w') as handle:
        handle.write('[Service]\nExecStart=/opt/sglang/stacks/new/venv/bin/python -m sglang.launch_server\n')
    with open(stack_drop_in, 'w') as handle:
        handle.write('[Service]\nEnvironment=NEW=1\n')
    os.chmod(env_file, 0o600)
    preview = sb.restore(root, check_mode=True)
    assert preview['changed'] and os.path.exists(stack_drop_in)
    result = sb.restore(root)
    assert result['restored'] == [unit_file, env_file] and result['removed'] == [stack_drop_in]
    assert result['reasons'] == {unit_file: 'content', env_file: 'mode'}
    assert snapshot(site) == original
    again = sb.restore(root)
    assert not again['changed'] and again['restored'] == [] and again['removed'] == []
    os.unlink(unit_file)
    shutil.rmtree(os.path.join(site, 'etc/systemd/system/sglang.service.d'))
    assert sb.restore(root)['reasons'] == {unit_file: 'missing',
                                           os.path.join(site, 'etc/systemd/system/sglang.service.d/override.conf'): 'missing'}
    assert snapshot(site) == original


def test_restore_refuses_a_tampered_or_missing_baseline(site, tmp_path):
    root = str(tmp_path / 'opt-sglang')
    with pytest.raises(sb.BaselineError, match=r'^BASELINE: no baseline is recorded under'):
        sb.restore(root)
    sb.record(root, described(site))
    copy = os.path.join(root, 'baseline', 'files', site.lstrip('/'), 'etc/sglang/sglang.env')
    os.chmod(copy, 0o600)
    with open(copy, 'ab') as handle:
        handle.write(b'X=1\n')
    unit_file = os.path.join(site, 'etc/systemd/system/sglang.service')
    with open(unit_file, 'w') as handle:
        handle.write('changed\n')
    with pytest.raises(sb.BaselineError, match=r'^BASELINE: the recorded baseline was altered, refusing to restore it: '
                                               r'the copy of .*sglang.env .* no longer matches its recorded sha256'):
        sb.restore(root)
    with open(unit_file) as handle:
        assert handle.read() == 'changed\n'   # nothing was written
    # a record over a damaged copy reports it instead of calling the baseline unchanged
    drifted = sb.record(root, described(site))['drift']
    assert drifted[0].endswith('sglang.service: content changed') and 'no longer matches' in drifted[1]


def test_a_required_environment_file_that_is_missing_is_refused(site, tmp_path):
    description = described(site)
    os.unlink(os.path.join(site, 'etc/sglang/sglang.env'))
    with pytest.raises(sb.BaselineError, match=r'^BASELINE: the environment file .*sglang.env of sglang.service does '
                                               r'not exist'):
        sb.record(str(tmp_path / 'opt'), description)


def test_a_symlinked_unit_file_that_matches_is_left_alone(site, tmp_path):
    unit_file = os.path.join(site, 'etc/systemd/system/sglang.service')
    target = os.path.join(site, 'srv/sglang/sglang.service')
    shutil.move(unit_file, target)
    os.symlink(target, unit_file)
    root = str(tmp_path / 'opt-sglang')
    sb.record(root, described(site))
    result = sb.restore(root)
    assert not result['changed'] and os.path.islink(unit_file)
