# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The nvidia-smi stand-in of the test containers (molecule/resources/gpu_standin) against the parsers.

The stand-in runs as a subprocess with its profiles directory and profile name given by environment
variables; what it prints is parsed with plugins/module_utils/nvidia_smi.py and must give back the
recorded values (round trip), and the H200 profile must replay the recording byte for byte.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys

import pytest
import yaml
from ansible.plugins.test.core import version_compare

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import nvidia_smi as smi
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import stack_declaration as sd
from ansible_collections.gpuops.sglang_stack.tests.unit.plugins.module_utils import test_stack_declaration as declaration_tests
from ansible_collections.gpuops.sglang_stack.tests.unit.recorded import REAL, REAL_CLI, host_section, read

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, '..', '..'))
STANDIN_DIR = os.path.join(REPO, 'molecule', 'resources', 'gpu_standin')
SCRIPT = os.path.join(STANDIN_DIR, 'nvidia-smi')
PROFILES = os.path.join(STANDIN_DIR, 'profiles')
QUERY_ARGS = ['--query-gpu=index,name,compute_cap,driver_version,memory.total,pci.bus_id', '--format=csv,nounits']
RTX_NAME = 'NVIDIA RTX PRO 6000 Blackwell Server Edition'

# molecule/ is not part of the built collection (galaxy.yml build_ignore): under ``ansible-test units``
# on the tarball there is no stand-in to test. From the repository (pytest tests/unit) it always runs.
if not os.path.exists(SCRIPT):
    pytest.skip('the GPU stand-in (molecule/resources/gpu_standin) is not in this tree', allow_module_level=True)
RTX_BUSES = ['00000000:16:00.0', '00000000:38:00.0', '00000000:49:00.0', '00000000:5A:00.0',
             '00000000:98:00.0', '00000000:B8:00.0', '00000000:C8:00.0', '00000000:D9:00.0']


def load_profile(name):
    with open(os.path.join(PROFILES, name, 'profile.json')) as handle:
        return json.load(handle)


@pytest.fixture
def etc(tmp_path):
    """An empty stand-in /etc/gpu-standin, so that the machine's own is never read."""
    path = tmp_path / 'etc-gpu-standin'
    path.mkdir()
    return path


def standin(args, profile='h200-x1', fail=None, etc_dir=None):
    env = dict(os.environ)
    env['GPU_STANDIN_ROOT'] = PROFILES
    env.pop('GPU_STANDIN_PROFILE', None)
    env.pop('GPU_STANDIN_FAIL', None)
    if profile is not None:
        env['GPU_STANDIN_PROFILE'] = profile
    if fail is not None:
        env['GPU_STANDIN_FAIL'] = fail
    env['GPU_STANDIN_ETC'] = str(etc_dir) if etc_dir else os.path.join(REPO, 'tests', 'unit', 'no-such-dir')
    proc = subprocess.run([sys.executable, SCRIPT] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env, check=False, universal_newlines=True)
    return proc.returncode, proc.stdout, proc.stderr


def runner(profile, fail=None):
    """A run(args) for nvidia_smi.gather that executes the stand-in."""
    def run(args):
        return standin(args[1:], profile=profile, fail=fail)
    return run


def import_standin():
    loader = importlib.machinery.SourceFileLoader('gpu_standin_nvidia_smi', SCRIPT)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


# --- h200-x1: the recording, replayed -----------------------------------------------------------

def test_h200_table_is_the_recording():
    rc, out, err = standin([])
    assert (rc, err) == (0, '')
    assert out == host_section('nvidia-smi')


def test_h200_recorded_query_is_replayed():
    rc, out, err = standin(['--query-gpu=index,name,compute_cap,driver_version,memory.total,pci.bus_id', '--format=csv'])
    assert rc == 0
    assert out == host_section('query')
    rc, out, err = standin(['--query-gpu=name,compute_cap', '--format=csv,noheader'])
    assert out == host_section('query noheader')


def test_generated_csv_equals_the_recording_byte_for_byte():
    module = import_standin()
    profile = load_profile('h200-x1')
    generated = module.render_query(profile, 'index,name,compute_cap,driver_version,memory.total,pci.bus_id', 'csv')
    assert generated == host_section('query')
    assert module.render_query(profile, 'name,compute_cap', 'csv,noheader') == host_section('query noheader')


def test_h200_xml_is_the_recording():
    rc, out, err = standin(['-q', '-x'])
    assert rc == 0
    assert out == read(REAL, 'nvidia-smi-q.xml')
    xml = smi.parse_xml(out)
    assert (xml['driver_version'], xml['cuda_version']) == ('580.159.04', '13.0')
    assert xml['gpus'][0]['bus_id'] == '00000000:00:06.0'


def test_h200_round_trip_through_gather():
    facts = smi.gather(runner('h200-x1'), '/usr/bin/nvidia-smi', include_xml=True)
    assert facts['nvidia_smi']['error_kind'] is None
    assert facts['driver_version'] == '580.159.04'
    assert facts['cuda_driver_version'] == '13.0'
    assert facts['gpus'] == [{
        'index': 0, 'name': 'NVIDIA H200', 'name_truncated': False, 'compute_cap': '9.0', 'memory_total_mib': 143771,
        'bus_id': '00000000:00:06.0', 'uuid': 'GPU-b1b0475d-8e01-ee23-7feb-ea1e2dc035a8',
    }]


def test_h200_list_and_version():
    rc, out, err = standin(['-L'])
    assert (rc, out) == (0, 'GPU 0: NVIDIA H200 (UUID: GPU-b1b0475d-8e01-ee23-7feb-ea1e2dc035a8)\n')
    rc, out, err = standin(['--version'])
    assert rc == 0
    assert out == ('NVIDIA-SMI version  : 580.159.04\nNVML version        : 580.159\n'
                   'DRIVER version      : 580.159.04\nCUDA Version        : 13.0\n')


# --- rtx-pro-6000-x8: the composed fleet host ---------------------------------------------------

def test_rtx_round_trip_through_gather():
    facts = smi.gather(runner('rtx-pro-6000-x8'), '/usr/bin/nvidia-smi', include_xml=True)
    assert facts['nvidia_smi']['error_kind'] is None
    assert facts['driver_version'] == '580.95.05'
    assert facts['cuda_driver_version'] == '13.0'
    assert facts['gpu_count'] == 8
    assert [gpu['bus_id'] for gpu in facts['gpus']] == RTX_BUSES
    for index, gpu in enumerate(facts['gpus']):
        assert gpu['index'] == index
        assert gpu['name'] == RTX_NAME
        assert gpu['name_truncated'] is False
        assert gpu['compute_cap'] == '12.0'
        assert gpu['memory_total_mib'] == 97887


def test_rtx_table_has_the_real_row_shape():
    rc, out, err = standin([], profile='rtx-pro-6000-x8')
    table = smi.parse_table(out)
    assert (table['driver_version'], table['cuda_version'], table['table_width']) == ('580.95.05', '13.0', 91)
    assert [gpu['bus_id'] for gpu in table['gpus']] == RTX_BUSES
    assert all(gpu['name'] == 'NVIDIA RTX PRO 6000 Blac...' and gpu['name_truncated'] for gpu in table['gpus'])
    assert all((gpu['memory_used_mib'], gpu['memory_total_mib']) == (14, 97887) for gpu in table['gpus'])
    # The first GPU row is the real one from vllm-project/vllm issue #43412, unchanged.
    real_row = read(HERE, 'fixtures', 'public', 'nvidia-smi', 'rtx-pro-6000-580.95.05.txt').splitlines()[8:11]
    assert out.splitlines()[8:11] == real_row


def test_rtx_xml_agrees_with_profile():
    rc, out, err = standin(['-q', '-x'], profile='rtx-pro-6000-x8')
    xml = smi.parse_xml(out)
    profile = load_profile('rtx-pro-6000-x8')
    assert xml['problems'] == []
    assert (xml['driver_version'], xml['cuda_version'], xml['attached_gpus']) == ('580.95.05', '13.0', 8)
    assert [(gpu['bus_id'], gpu['uuid'], gpu['memory_total_mib'], gpu['name']) for gpu in xml['gpus']] == [
        (gpu['bus_id'], gpu['uuid'], gpu['memory_total_mib'], gpu['name']) for gpu in profile['gpus']]
    assert all(gpu['architecture'] == 'Blackwell' for gpu in xml['gpus'])


@pytest.mark.parametrize('fmt', ['csv', 'csv,nounits', 'csv,noheader', 'csv,noheader,nounits'])
def test_rtx_csv_formats(fmt):
    fields = ['index', 'name', 'compute_cap', 'driver_version', 'memory.total', 'pci.bus_id']
    rc, out, err = standin(['--query-gpu=' + ','.join(fields), '--format=' + fmt], profile='rtx-pro-6000-x8')
    assert rc == 0
    parsed = smi.parse_query_csv(out, fields)
    assert parsed['has_header'] is ('noheader' not in fmt)
    assert len(parsed['gpus']) == 8
    assert {gpu['compute_cap'] for gpu in parsed['gpus']} == {'12.0'}
    assert {gpu['memory_total_mib'] for gpu in parsed['gpus']} == {97887}
    assert ('97887 MiB' in out) is ('nounits' not in fmt)
    if 'noheader' not in fmt:
        assert out.splitlines()[0] == 'index, name, compute_cap, driver_version, memory.total [MiB], pci.bus_id'


def test_any_field_subset_and_order():
    rc, out, err = standin(['--query-gpu=pci.bus_id,uuid,count,name', '--format=csv,noheader'], profile='rtx-pro-6000-x8')
    assert rc == 0
    lines = out.splitlines()
    assert len(lines) == 8
    assert lines[3] == '00000000:5A:00.0, GPU-00000000-0000-0000-0000-000000000003, 8, ' + RTX_NAME
    gpus = smi.parse_query_csv(out, ['pci.bus_id', 'uuid', 'count', 'name'])['gpus']
    assert gpus[3] == {'bus_id': '00000000:5A:00.0', 'uuid': 'GPU-00000000-0000-0000-0000-000000000003', 'count': 8, 'name': RTX_NAME}


def test_query_with_space_separated_options_and_id_selection():
    rc, out, err = standin(['--query-gpu', 'index,pci.bus_id', '--format', 'csv,noheader', '-i', '2,00000000:D9:00.0'], profile='rtx-pro-6000-x8')
    assert (rc, out) == (0, '2, 00000000:49:00.0\n7, 00000000:D9:00.0\n')
    rc, out, err = standin(['--id=GPU-00000000-0000-0000-0000-000000000001', '--query-gpu=index', '--format=csv,noheader'], profile='rtx-pro-6000-x8')
    assert (rc, out) == (0, '1\n')


def test_unknown_gpu_id():
    rc, out, err = standin(['--query-gpu=index', '--format=csv', '-i', '9'], profile='rtx-pro-6000-x8')
    assert (rc, out) == (6, 'No devices were found\n')
    assert smi.classify_error(rc, out, err)['kind'] == 'no_devices'


def test_aliases_print_the_canonical_header():
    rc, out, err = standin(['--query-gpu=gpu_name,gpu_bus_id,gpu_uuid', '--format=csv'])
    assert out == 'name, pci.bus_id, uuid\nNVIDIA H200, 00000000:00:06.0, GPU-b1b0475d-8e01-ee23-7feb-ea1e2dc035a8\n'


def test_rtx_version_and_list():
    rc, out, err = standin(['--version'], profile='rtx-pro-6000-x8')
    assert out.splitlines()[0] == 'NVIDIA-SMI version  : 580.95.05'
    assert out.splitlines()[1] == 'NVML version        : 580.95'
    rc, out, err = standin(['-L'], profile='rtx-pro-6000-x8')
    assert len(out.splitlines()) == 8
    assert out.splitlines()[1] == 'GPU 1: %s (UUID: GPU-00000000-0000-0000-0000-000000000001)' % RTX_NAME


# --- errors the real tool gives -----------------------------------------------------------------

def test_unknown_flag():
    rc, out, err = standin(['--bogus'])
    assert rc == 255
    assert out == "ERROR: Option --bogus is not recognized. Please run 'nvidia-smi -h'.\n\n"
    assert smi.classify_error(rc, out, err)['kind'] == 'invalid_argument'


def test_invalid_query_field():
    rc, out, err = standin(['--query-gpu=index,cuda_version', '--format=csv'])
    assert (rc, out) == (2, 'Field "cuda_version" is not a valid field to query.\n\n')
    assert smi.classify_error(rc, out, err)['kind'] == 'invalid_argument'


@pytest.mark.parametrize('args, rc_expected, first_line', [
    (['--query-gpu=index', '--format=xml'], 2, 'Format modifier is not recognized.'),
    (['--format=csv'], 255, "ERROR: Option --format=csv is not recognized. Please run 'nvidia-smi -h'."),
    (['--query-gpu'], 255, "ERROR: Option --query-gpu is not recognized. Please run 'nvidia-smi -h'."),
    (['-L', '-i', '0'], 2, "ERROR: Option -i is not valid for this command. Please run 'nvidia-smi -h' for help."),
    (['-x'], 2, 'Invalid combination of input arguments. Specify -q/--query and -x/--xml-format to run an XML query.  '
                "Please run 'nvidia-smi -h' for help."),
])
def test_bad_command_lines(args, rc_expected, first_line):
    rc, out, err = standin(args)
    assert rc == rc_expected
    assert out.splitlines()[0] == first_line
    assert smi.classify_error(rc, out, err)['kind'] == 'invalid_argument'


def test_format_is_optional():
    rc, out, err = standin(['--query-gpu=index'])
    assert (rc, out) == (0, 'index\n0\n')


def recorded_commands(*parts):
    """{'nvidia-smi args': (stdout, rc)} from the real CLI recordings (blocks '== cmd', output, 'rc=N')."""
    blocks = {}
    for block in read(REAL_CLI, *parts).split('== ')[1:]:
        command, rest = block.partition('\n')[::2]
        output, status = rest.rpartition('rc=')[::2]
        if command.startswith('nvidia-smi') and status.strip().isdigit():
            blocks[command] = (output, int(status))
    return blocks


def _real_cli_cases():
    cases = []
    for name in ('probe.txt', 'cli.txt'):
        for command, (output, status) in sorted(recorded_commands(name).items()):
            if status == 141 or 'GPU-' in output or '-h' in command.split():
                continue  # cut by head, instance-specific UUIDs, or help text the stand-in does not copy
            cases.append((command, output, status))
    return cases


@pytest.mark.parametrize('command, output, status', _real_cli_cases(), ids=lambda value: value if str(value).startswith('nvidia-smi') else '')
def test_stand_in_matches_the_real_tool_byte_for_byte(command, output, status):
    """Every recorded command line of the real 580.159.04 tool (tests/unit/fixtures/real/h200-nvidia-smi-cli) gets
    the same stdout and exit status from the stand-in with the h200-x1 profile."""
    rc, out, err = standin(command.split()[1:])
    assert (out, rc) == (output, status)


def test_plain_q_is_not_recorded():
    rc, out, err = standin(['-q'])
    assert rc == 2
    assert 'not recorded' in err


@pytest.mark.parametrize('fail, rc_expected, kind, first_line', [
    ('driver-mismatch', 18, 'driver_mismatch', 'Failed to initialize NVML: Driver/library version mismatch'),
    ('no-driver', 9, 'no_driver', "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                                  "Make sure that the latest NVIDIA driver is installed and running."),
    ('no-devices', 6, 'no_devices', 'No devices were found'),
])
def test_failure_modes(fail, rc_expected, kind, first_line):
    for args in ([], QUERY_ARGS, ['-q', '-x'], ['-L']):
        rc, out, err = standin(args, profile='rtx-pro-6000-x8', fail=fail)
        assert rc == rc_expected
        assert out.splitlines()[0] == first_line
    facts = smi.gather(runner('rtx-pro-6000-x8', fail), '/usr/bin/nvidia-smi')
    assert facts['nvidia_smi']['error_kind'] == kind
    assert facts['nvidia_smi']['rc'] == rc_expected
    assert facts['gpus'] == []


def test_driver_mismatch_names_the_nvml_version():
    rc, out, err = standin([], profile='h200-x1', fail='driver-mismatch')
    assert out == 'Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.159\n'
    assert smi.classify_error(rc, out, err)['nvml_library_version'] == '580.159'


def test_settings_from_etc_files(etc):
    (etc / 'profile').write_text('rtx-pro-6000-x8\n')
    rc, out, err = standin(['-L'], profile=None, etc_dir=etc)
    assert rc == 0 and len(out.splitlines()) == 8
    (etc / 'fail').write_text('no-driver\n')
    rc, out, err = standin([], profile=None, etc_dir=etc)
    assert rc == 9
    (etc / 'fail').write_text('\n')
    rc, out, err = standin([], profile=None, etc_dir=etc)
    assert rc == 0


def test_no_profile_is_a_setup_error(etc):
    rc, out, err = standin([], profile=None, etc_dir=etc)
    assert rc == 255
    assert out == ''
    assert 'no profile configured' in err


def test_unknown_profile_and_failure_mode():
    rc, out, err = standin([], profile='no-such-profile')
    assert rc == 255 and 'cannot load profile' in err
    rc, out, err = standin([], fail='on-fire')
    assert rc == 255 and 'unknown failure mode' in err


def test_help_works_even_when_failing():
    rc, out, err = standin(['-h'], fail='no-driver')
    assert rc == 0
    assert 'gpu-standin' in out


@pytest.mark.parametrize('name', ['h200-x1', 'rtx-pro-6000-x8'])
def test_profiles_are_self_consistent(name):
    profile = load_profile(name)
    table = smi.parse_table(read(PROFILES, name, 'nvidia-smi.txt'))
    xml = smi.parse_xml(read(PROFILES, name, 'nvidia-smi-q.xml'))
    assert table['driver_version'] == xml['driver_version'] == profile['driver_version']
    assert table['cuda_version'] == xml['cuda_version'] == profile['cuda_version']
    assert profile['nvml_version'] == '.'.join(profile['driver_version'].split('.')[:2])
    assert [gpu['bus_id'] for gpu in table['gpus']] == [gpu['bus_id'] for gpu in profile['gpus']]
    assert [gpu['memory_total_mib'] for gpu in table['gpus']] == [gpu['memory_total_mib'] for gpu in profile['gpus']]
    assert [gpu['uuid'] for gpu in xml['gpus']] == [gpu['uuid'] for gpu in profile['gpus']]
    assert [gpu['index'] for gpu in profile['gpus']] == list(range(len(profile['gpus'])))
    for recorded in profile['recorded_queries']:
        assert os.path.exists(os.path.join(PROFILES, name, recorded['file']))


# --- the profiles against the shipped declaration's driver floor (roles/preflight's driver gates) -------

def preflight_driver_gates(driver, cuda_driver, resolved):
    """The two gates of roles/preflight/tasks/main.yml, with Ansible's own ``version`` test."""
    return (version_compare(driver, resolved['cuda']['driver_minimum'], '>=')
            and (cuda_driver is None or version_compare(cuda_driver, resolved['cuda']['version'], '>=')))


@pytest.fixture
def resolved():
    """The shipped declaration (roles/stack_declaration/defaults), resolved."""
    with open(os.path.join(REPO, 'roles', 'stack_declaration', 'defaults', 'main.yml')) as handle:
        defaults = yaml.safe_load(handle)
    return sd.resolve({key[len('stack_declaration_'):]: value for key, value in defaults.items()})


@pytest.mark.parametrize('name', ['h200-x1', 'rtx-pro-6000-x8'])
def test_profiles_pass_the_driver_gates(name, resolved):
    profile = load_profile(name)
    assert preflight_driver_gates(profile['driver_version'], profile['cuda_version'], resolved)


def test_rtx_profile_driver_is_exactly_the_floor(resolved):
    # The fleet stand-in sits on the boundary: a floor raised above 580.95.05 fails the RTX scenarios.
    assert load_profile('rtx-pro-6000-x8')['driver_version'] == resolved['cuda']['driver_minimum']


@pytest.mark.parametrize('driver, cuda_driver', [('580.95.05', '13.0'), ('580.159.04', '13.0'), ('590.44.01', '13.1'),
                                                 ('580.82.07', '13.0'), ('580.65.06', '13.0'), ('575.57.08', '12.9'),
                                                 ('590.44.01', '12.9'), ('580.95.05', None)])
def test_unit_tests_driver_gate_is_ansibles_version_test(driver, cuda_driver, resolved):
    # test_stack_declaration.py compares with LooseVersion (ansible.plugins is not importable there).
    assert declaration_tests.driver_gate(driver, cuda_driver, resolved) == preflight_driver_gates(driver, cuda_driver, resolved)


def test_h200_profile_files_are_the_shared_recording():
    assert read(PROFILES, 'h200-x1', 'nvidia-smi-q.xml') == read(REAL, 'nvidia-smi-q.xml')
    assert read(PROFILES, 'h200-x1', 'nvidia-smi.txt') == host_section('nvidia-smi')
    assert read(PROFILES, 'h200-x1', 'query-gpu.csv') == host_section('query')


def test_repository_shebang_is_sanity_compliant_and_install_rewrites_it():
    with open(SCRIPT) as handle:
        assert handle.readline() == '#!/usr/bin/env python\n'
    assert os.access(SCRIPT, os.X_OK)
    with open(os.path.join(STANDIN_DIR, 'install.yml')) as handle:
        install = handle.read()
    assert "regex_replace('^#!/usr/bin/env python\\\\n', '#!/usr/bin/python3\\\\n')" in install
