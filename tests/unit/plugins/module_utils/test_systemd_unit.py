# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Quoting for systemd (module_utils/systemd_unit.py), checked against the real systemd where it is installed.

Before, the unit's command line and the environment files were quoted for a POSIX shell (Jinja's ``quote``,
i.e. ``shlex.quote``): systemd read ``%`` as a specifier and ``$HOME`` as a variable in ExecStart=, and a newline
in an environment key started a new assignment such as ``LD_PRELOAD=``. Each test below fails with that quoting.

The real-systemd tests (skipped without it; systemd 252 on the Debian 12 controller):
- ``systemd --test --system`` loads a unit from a directory of ours and prints every parsed setting, the command
  line word by word, without being PID 1 (it refuses to run as root, so it runs as ``nobody``);
- ``systemd-analyze verify`` reports what systemd would not accept;
- ``systemd-analyze condition ConditionOSRelease=KEY=value`` reads the file named by ``$SYSTEMD_OS_RELEASE`` with
  src/basic/env-file.c's parser, the one EnvironmentFile= uses, and compares one variable's value.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import systemd_unit as su

SYSTEMD = '/lib/systemd/systemd'
ANALYZE = shutil.which('systemd-analyze')
RUNUSER = shutil.which('runuser')

TRICKY = ['100%', '%n', '$HOME', '${HOME}', '$$', 'say "hi"', "it's", 'back\\slash', 'a b', ';', '', '#x',
          '--opt=1%', 'ünï', '`id`', "\\n", '$(id)']

needs_analyze = pytest.mark.skipif(ANALYZE is None, reason='needs systemd-analyze (systemd)')
needs_systemd_test = pytest.mark.skipif(
    not (os.path.exists(SYSTEMD) and RUNUSER and os.geteuid() == 0),
    reason='needs systemd, runuser and root (systemd --test runs as nobody)')


def shell_exec_line(argv):
    """The old template's ExecStart: {{ argv | map('quote') | join(' ') }}."""
    return ' '.join(shlex.quote(w) for w in argv)


# --- the quoting itself -----------------------------------------------------------------------------------------

@pytest.mark.parametrize('value, expected', [
    ('plain', 'plain'),
    ('/srv/models/m-1.5', '/srv/models/m-1.5'),
    ('100%', '"100%%"'),
    ('$HOME', '"$$HOME"'),
    ('say "hi"', '"say \\"hi\\""'),
    ('back\\slash', '"back\\\\slash"'),
    ('a b', '"a b"'),
    (';', '";"'),
    ('', '""'),
    ("it's", '"it\'s"'),
])
def test_exec_word(value, expected):
    assert su.exec_word(value) == expected


def test_exec_line_specifier_and_variable_escaped():
    line = su.exec_line(['/usr/bin/python3', '--model-path', '/srv/m%n', '--x', '$HOME'])
    assert line == '/usr/bin/python3 --model-path "/srv/m%%n" --x "$$HOME"'
    # A POSIX shell leaves both alone: systemd would put the unit name for %n and the service's HOME for $HOME.
    assert '%%' not in shell_exec_line(['/srv/m%n']) and '$$' not in shell_exec_line(['$HOME'])


@pytest.mark.parametrize('bad', ['a\nb', 'a\rb', 'a\x00b', 'a\tb', 'a\x1bb', 'a\x85b'])
def test_exec_word_refuses_control_characters(bad):
    with pytest.raises(su.SystemdValueError) as err:
        su.exec_line(['/bin/echo', '--api-key', 'secret' + bad], source='sglang_service_extra_args')
    msg = str(err.value)
    assert msg.startswith('sglang_service_extra_args: word 2 (after --api-key) holds '), msg
    assert 'secret' not in msg


def test_exec_line_refuses_newline_that_shell_quoting_let_through():
    argv = ['/bin/echo', 'x\nExecStartPre=/bin/sh']
    # shlex.quote keeps the newline: the unit would get a second line, a new setting.
    assert '\nExecStartPre=' in shell_exec_line(argv)
    with pytest.raises(su.SystemdValueError, match='holds a newline'):
        su.exec_line(argv)


@pytest.mark.parametrize('exe', ['python', '-/bin/x', '/bin/"x"', '/bin/x\\', '/bin/$X', '/usr/bin/'])
def test_exec_line_refuses_unsafe_executable(exe):
    with pytest.raises(su.SystemdValueError, match='executable'):
        su.exec_line([exe, 'arg'])


def test_exec_line_arguments_only():
    assert su.exec_line(['--a', '1%'], source='extra', executable=False) == '--a "1%%"'
    with pytest.raises(su.SystemdValueError, match='^extra: item 2 holds a newline'):
        su.exec_line(['--a', '1\n'], source='extra', executable=False)


def test_unit_value():
    assert su.unit_value('SGLang server (m%d, tp 8)', 'model') == 'SGLang server (m%%d, tp 8)'
    assert su.unit_value('/opt/$x', 'root') == '/opt/$x'  # no variables outside command lines
    for bad, why in [('a\nb', 'newline'), (' a', 'space'), ('a ', 'space'), ('a\\', 'backslash')]:
        with pytest.raises(su.SystemdValueError, match=why):
            su.unit_value(bad, 'sglang_service_root')


def test_path_list():
    assert su.path_list(['/var/lib/sglang', '/srv/a b', '/c%d', '/e$f'], 'dirs') == '/var/lib/sglang "/srv/a b" "/c%%d" "/e$f"'
    with pytest.raises(su.SystemdValueError, match='^dirs: path 2 is not an absolute path'):
        su.path_list(['/a', 'rel'], 'dirs')
    with pytest.raises(su.SystemdValueError, match='^dirs: path 1 holds a newline'):
        su.path_list(['/a\n/b'], 'dirs')


@pytest.mark.parametrize('value, expected', [
    ('SYS', 'K=SYS'),
    ('/opt/sglang/stacks/x/venv/bin:/usr/bin', 'K=/opt/sglang/stacks/x/venv/bin:/usr/bin'),
    ('', 'K=""'),
    ('a b', 'K="a b"'),
    ('$HOME', 'K="\\$HOME"'),
    ('say "hi"', 'K="say \\"hi\\""'),
    ('back\\slash', 'K="back\\\\slash"'),
    ('`id`', 'K="\\`id\\`"'),
    ("it's", 'K="it\'s"'),
    ('100%', 'K="100%"'),
    (8, 'K=8'),
])
def test_env_line(value, expected):
    assert su.env_line('K', value, 'env') == expected


@pytest.mark.parametrize('key', ['FOO\nLD_PRELOAD', 'LD_PRELOAD=/x.so\nFOO', '1ABC', 'A-B', 'A B', '', 'A.B', 'Ä'])
def test_env_key_refused(key):
    with pytest.raises(su.SystemdValueError) as err:
        su.env_lines({key: 'secret-value'}, 'sglang_service_environment')
    msg = str(err.value)
    assert msg.startswith('sglang_service_environment: ') and 'is not an environment variable name' in msg, msg
    assert 'secret-value' not in msg and '\n' not in msg


@pytest.mark.parametrize('bad', ['x\nLD_PRELOAD=/tmp/evil.so', 'x\rLD_PRELOAD=/tmp/evil.so', 'x\x00', 'a\tb'])
def test_env_value_control_characters_refused(bad):
    with pytest.raises(su.SystemdValueError) as err:
        su.env_lines({'HF_TOKEN': 'hf_secret' + bad}, 'sglang_service_environment')
    msg = str(err.value)
    assert msg.startswith('sglang_service_environment: the value of HF_TOKEN holds '), msg
    assert 'hf_secret' not in msg and 'evil' not in msg


def test_env_lines_sorted_and_typed():
    assert su.env_lines({'B': '2', 'A': '1'}, 'env') == ['A=1', 'B=2']
    with pytest.raises(su.SystemdValueError, match='the value of A is a NoneType'):
        su.env_lines({'A': None}, 'env')


# --- the real systemd: command lines ----------------------------------------------------------------------------

def _decode_dump_words(line):
    """The words of a "Command Line:" line of systemd's dump (quote_command_line: bare, or "..." with \\ escapes)."""
    words = []
    for match in re.finditer(r'"((?:\\.|[^"\\])*)"|(\S+)', line):
        if match.group(2) is not None:
            words.append(match.group(2))
        else:
            words.append(re.sub(r'\\(.)', r'\1', match.group(1)))
    return words


def _load_unit(text):
    """systemd's own parse of a unit: the dump of `systemd --test` for it, as {setting: [values]}."""
    top = tempfile.mkdtemp(prefix='systemd-unit-test-')
    try:
        os.chmod(top, 0o755)
        with open(os.path.join(top, 'probe.service'), 'w', encoding='utf-8') as handle:
            handle.write(text)
        os.chmod(os.path.join(top, 'probe.service'), 0o644)
        env = dict(os.environ, SYSTEMD_UNIT_PATH=top + ':', SYSTEMD_LOG_LEVEL='warning')
        proc = subprocess.run([RUNUSER, '-u', 'nobody', '--', SYSTEMD, '--test', '--system', '--unit=probe.service',
                               '--log-target=console'], env=env, capture_output=True, text=True, timeout=120, check=False)
        verify = subprocess.run([ANALYZE, 'verify', os.path.join(top, 'probe.service')], capture_output=True, text=True,
                                timeout=120, check=False)
    finally:
        shutil.rmtree(top)
    # systemd 257 (Debian 13) marks units with an arrow in a UTF-8 locale, older ones with '->'.
    block = re.search(r'(?:->|\u2192) Unit probe\.service:(.*?)(?:\n\t(?:->|\u2192) Unit |\Z)', proc.stdout, re.S).group(1)
    settings = {}
    for raw in block.splitlines():
        if ': ' in raw or raw.rstrip().endswith(':'):
            name, _sep, value = raw.strip().partition(': ')
            settings.setdefault(name.rstrip(':'), []).append(value)
    return settings, verify


@needs_systemd_test
@needs_analyze
def test_real_systemd_reads_each_word_back():
    argv = ['/bin/echo'] + TRICKY
    unit = '[Unit]\nDescription=%s\n[Service]\nExecStart=%s\n' % (
        su.unit_value('probe 100%% (m%d $x)', 'test'), su.exec_line(argv))
    settings, verify = _load_unit(unit)
    assert verify.returncode == 0 and 'probe.service' not in verify.stderr, verify.stderr
    assert settings['Description'] == ['probe 100%% (m%d $x)']
    # At load systemd has unquoted the words and resolved the specifiers; "$$" becomes "$" when the command starts
    # (systemd.service(5): 'To pass a literal dollar sign, use "$$"').
    words = _decode_dump_words(settings['Command Line'][0])
    assert words == ['/bin/echo'] + [w.replace('$', '$$') for w in TRICKY]


@needs_systemd_test
def test_real_systemd_misreads_shell_quoting():
    """The old quoting: systemd resolves %n to the unit name and keeps $HOME for expansion."""
    settings, _verify = _load_unit('[Service]\nExecStart=%s\n' % shell_exec_line(['/bin/echo', '100%n', '$HOME']))
    words = _decode_dump_words(settings['Command Line'][0])
    assert words == ['/bin/echo', '100probe.service', '$HOME']


@needs_systemd_test
def test_real_systemd_reads_path_list_back():
    paths = ['/var/lib/sglang', '/srv/a b', '/c%d', '/e$f', '/q"z']
    settings, _verify = _load_unit('[Service]\nExecStart=/bin/true\nReadWritePaths=%s\n' % su.path_list(paths, 'dirs'))
    # The dump joins the paths with spaces; each path is one entry of the list.
    assert settings['ReadWritePaths'] == [' '.join(paths)]


# --- the real systemd: environment files ------------------------------------------------------------------------

def _env_file_holds(tmp_path, text, key, value):
    """Whether systemd's environment-file parser reads ``key`` as ``value`` from ``text``."""
    path = tmp_path / 'probe.env'
    path.write_text(text, encoding='utf-8')
    # The condition's argument is itself unquoted and specifier-expanded: one double-quoted word.
    word = '"%s=%s"' % (key, value.replace('\\', '\\\\').replace('"', '\\"').replace('%', '%%'))
    proc = subprocess.run([ANALYZE, 'condition', 'ConditionOSRelease=' + word], capture_output=True, text=True,
                          env=dict(os.environ, SYSTEMD_OS_RELEASE=str(path)), timeout=60, check=False)
    assert 'succeeded' in proc.stderr or 'failed' in proc.stderr, proc.stderr
    return proc.returncode == 0


@needs_analyze
def test_real_env_file_reads_each_value_back(tmp_path):
    # Not the empty value (the parser hands the condition no value at all for K=""; EnvironmentFile= makes it "K=")
    # nor leading or trailing spaces (with systemd 252 the condition did not match them; not checked further).
    values = [value for value in TRICKY if value] + ['multi  space', 'a = b']
    env = dict(('V%d' % index, value) for index, value in enumerate(values))
    text = '# header\n' + ''.join(line + '\n' for line in su.env_lines(env, 'test'))
    for key, value in env.items():
        assert _env_file_holds(tmp_path, text, key, value), (key, value, text)
    # The comparison is real: another value does not match.
    assert not _env_file_holds(tmp_path, text, 'V0', '100')


@needs_analyze
def test_real_env_file_shell_quoting_lets_a_key_inject_ld_preload(tmp_path):
    """The old template wrote {{ key }}={{ value | quote }}: a newline in a key is a second assignment."""
    key = 'NCCL_DEBUG\nLD_PRELOAD'
    old = '%s=%s\n' % (key, shlex.quote('/tmp/evil.so'))
    assert _env_file_holds(tmp_path, old, 'LD_PRELOAD', '/tmp/evil.so')
    with pytest.raises(su.SystemdValueError):
        su.env_lines({key: '/tmp/evil.so'}, 'sglang_service_environment')
