# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The launch-flag rules (module_utils/sglang_flags.py) against the real sglang 0.5.9 and flashinfer 0.6.4 files.

Fixtures (verbatim wheel files, tests/unit/fixtures/sglang-0.5.9/README.md): server_args.py (the option table
and a real argparse parser built from it), communicator.py, torch_symm_mem.py, custom_all_reduce.py,
all_reduce_utils.py, pymscclpp.py, parallel_state.py, and flashinfer 0.6.4's jit/comm.py. Patch 0003 is applied
to the real parallel_state.py and its decision function is compared with the module's.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import itertools
import os

import pytest

from ansible_collections.gpuops.sglang_stack.plugins.module_utils import patch_series as ps
from ansible_collections.gpuops.sglang_stack.plugins.module_utils import sglang_flags as sf
from ansible_collections.gpuops.sglang_stack.tests.unit.recorded import FIXTURES
from ansible_collections.gpuops.sglang_stack.tests.unit.sglang_site import NAMES, PATCH_DIR, make_site

SRT = os.path.join(FIXTURES, 'sglang-0.5.9', 'sglang', 'srt')
SERVER_ARGS = os.path.join(SRT, 'server_args.py.orig')


def _read(*parts):
    with open(os.path.join(*parts)) as handle:
        return handle.read()


def _add_cli_args_calls():
    """(option strings, keywords) of every add_argument call in ServerArgs.add_cli_args of the real file."""
    tree = ast.parse(_read(SERVER_ARGS))
    server_args = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == 'ServerArgs')
    add_cli_args = next(n for n in server_args.body if isinstance(n, ast.FunctionDef) and n.name == 'add_cli_args')
    calls = []
    for node in ast.walk(add_cli_args):
        if isinstance(node, ast.Call) and getattr(node.func, 'attr', '') == 'add_argument':
            options = [a.value for a in node.args if isinstance(a, ast.Constant)]
            keywords = dict((k.arg, ast.unparse(k.value)) for k in node.keywords)
            calls.append((options, keywords))
    return calls


def real_parser():
    """An argparse parser with the option strings, actions and nargs of sglang 0.5.9's (values as strings)."""
    parser = argparse.ArgumentParser(prog='launch_server')
    for options, keywords in _add_cli_args_calls():
        action = keywords.get('action')
        if action in ("'store_true'", 'DeprecatedAction'):
            parser.add_argument(*options, action='store_true')
        elif 'nargs' in keywords:
            extra = dict(const=ast.literal_eval(keywords['const'])) if 'const' in keywords else {}
            parser.add_argument(*options, nargs=ast.literal_eval(keywords['nargs']), **extra)
        else:
            parser.add_argument(*options)
    return parser


def test_option_table_is_the_real_server_args():
    kinds = {}
    for options, keywords in _add_cli_args_calls():
        action, nargs = keywords.get('action'), keywords.get('nargs')
        kind = ('flag' if action in ("'store_true'", 'DeprecatedAction') else
                'many' if nargs in ("'+'", "'*'") else 'optional' if nargs == "'?'" else 'value')
        for option in options:
            kinds[option] = kind
    assert len(kinds) == 341
    assert kinds == sf.OPTIONS
    star = set(o for options, kw in _add_cli_args_calls() if kw.get('nargs') == "'*'" for o in options)
    assert star == set(sf._STAR)
    for alias, canonical in sf.ALIASES.items():
        assert any(alias in options and canonical in options for options, kw in _add_cli_args_calls())
    for removed in sf.REMOVED:
        assert removed not in kinds


@pytest.mark.parametrize('argv', [
    ['--tp-size', '8', '--enable-torch-symm-mem'],
    ['--tp', '8'],
    ['--enable-torch-symm'],
    ['--enable-symm'],
    ['--enable-fl'],
    ['--enable-flashinfer-allreduce'],
    ['--disable-custom'],
    ['--moe-a2a-backend=deepep'],
    ['--moe-a2a', 'flashinfer'],
    ['--ep', '8'],
    ['--expert-parallel-size', '4', '--ep-size', '8'],
    ['--enable-ep-moe'],
    ['--enable-mscclpp=1'],
    ['--mem-fraction-static', '--enable-mscclpp'],
    ['--lora-target-modules', '--enable-mscclpp'],
    ['--enable-mscclpp', 'extra'],
    ['--config', 'x.yaml'],
    ['--tensor-parallel-size=2', '--speculative-moe-a2a-backend', 'deepep'],
    ['--model-checksum', '--enable-symm-mem'],
    ['--json-model-override-args', '{"a": 1}', '--enable-nccl-nvls'],
])
def test_parse_matches_argparse(argv):
    """What sglang 0.5.9's parser accepts, the rules read the same way; what it refuses, they refuse."""
    parser = real_parser()
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            namespace = vars(parser.parse_args(argv))
    except SystemExit:
        namespace = None
    if namespace is None:
        with pytest.raises(sf.FlagError):
            sf.parse_args(argv)
        errors = []
        sf.parse_args(argv, errors)
        assert errors
        return
    settings = dict(sf.parse_args(argv))
    for option, value in settings.items():
        dest = [a.dest for a in parser._actions if option in a.option_strings][0]
        assert namespace[dest] == value, (option, namespace[dest], value)
    # Every option argparse set away from its default, the rules saw.
    for action in parser._actions:
        if action.dest != 'help' and namespace[action.dest] != action.default:
            assert any(o in settings or sf.ALIASES.get(o) in settings for o in action.option_strings), action.dest


# -- the reasons cite real lines -------------------------------------------------------------------


def _lines(path, first, last):
    return ''.join(_read(path).splitlines(True)[first - 1:last])


def test_cited_lines_are_the_real_ones():
    comm = os.path.join(SRT, 'layers', 'communicator.py.orig')
    assert 'def apply_flashinfer_allreduce_fusion' in _lines(comm, 91, 91)
    assert '(_is_sm90_supported or _is_sm100_supported)' in _lines(comm, 91, 101)
    assert 'enable_flashinfer_allreduce_fusion' in _lines(comm, 100, 100)
    fusion_auto = _lines(SERVER_ARGS, 1672, 1697)
    assert '(is_sm90_supported() or is_sm100_supported())' in fusion_auto
    assert 'self.enable_flashinfer_allreduce_fusion = True' in fusion_auto
    assert '"--enable-flashinfer-allreduce-fusion"' in _lines(SERVER_ARGS, 4107, 4107)
    assert '"--expert-parallel-size"' in _lines(SERVER_ARGS, 4077, 4083)
    assert '"--moe-a2a-backend"' in _lines(SERVER_ARGS, 4085, 4091)
    assert 'MOE_A2A_BACKEND_CHOICES = [' in _lines(SERVER_ARGS, 188, 195)
    assert 'flashinfer_cutlass' in _lines(SERVER_ARGS, 2213, 2215)
    assert '"--config" in argv' in _lines(SERVER_ARGS, 5583, 5589)
    comm_fi = os.path.join(FIXTURES, 'flashinfer-0.6.4', 'flashinfer', 'jit', 'comm.py.orig')
    assert 'def gen_trtllm_comm_module' in _lines(comm_fi, 59, 59)
    assert 'supported_major_versions=[9, 10]' in _lines(comm_fi, 59, 62)
    dc = os.path.join(SRT, 'distributed', 'device_communicators')
    symm = os.path.join(dc, 'torch_symm_mem.py.orig')
    assert 'TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES[self.device_capability]' in _lines(symm, 83, 83)
    assert 'handle.multicast_ptr == 0' in _lines(symm, 100, 107)
    assert 'World size %d not supported' in _lines(symm, 81, 90)
    table = _lines(os.path.join(dc, 'all_reduce_utils.py.orig'), 3, 16)
    assert '    9: {' in table and '    10: {' in table and '    12: {' not in table
    car = os.path.join(dc, 'custom_all_reduce.py.orig')
    assert 'if world_size > 2 and not full_nvlink:' in _lines(car, 146, 146)
    assert 'return' in _lines(car, 152, 152)
    assert 'if self.world_size == 2 or self.full_nvlink:' in _lines(car, 340, 343)
    assert 'return False' in _lines(car, 340, 343)
    assert '_SUPPORTED_WORLD_SIZES = [2, 4, 6, 8]' in _lines(car, 53, 53)
    assert '_MAX_CAR_SIZE = 8192 * 1024' in _lines(car, 54, 54)
    msc = os.path.join(dc, 'pymscclpp.py.orig')
    assert '_SUPPORTED_WORLD_SIZES = [8, 16]' in _lines(msc, 92, 92)
    assert '"SGLANG_MSCCLPP_MAX_BYTES", "1MB"' in _lines(msc, 93, 93)
    assert 'unsupported world' in _lines(msc, 134, 142)
    assert '# PyMscclpp is enabled only in cuda graph' in _lines(msc, 227, 227)
    ps_file = os.path.join(SRT, 'distributed', 'parallel_state.py.orig')
    assert 'self.pynccl_comm is not None and self.is_symmetric_memory_enabled()' in _lines(ps_file, 584, 584)
    assert 'inplace_all_reduce(input_, group_name=self.unique_name)' in _lines(ps_file, 626, 626)


def test_sizes_are_the_real_ones():
    dc = os.path.join(SRT, 'distributed', 'device_communicators')
    namespace = {}
    exec(compile(_read(dc, 'all_reduce_utils.py.orig'), 'all_reduce_utils.py', 'exec'), namespace)  # pylint: disable=exec-used
    assert namespace['TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES'] == sf.TORCH_SYMM_MEM_MAX_SIZES


# -- refusals, through every way a flag or a variable reaches the service ---------------------------

# A stack like the site's: SM120, 8 PCIe-only GPUs, sglang 0.5.9, flashinfer 0.6.4, the shipped series.
SITE = dict(sglang_version='0.5.9', compute_capability='12.0', full_nvlink=False, flashinfer_version='0.6.4',
            patches=list(NAMES), base_args=['--model-path', '/models/m', '--tp-size', '8', '--port', '30000'])

# (what, where it is given, the expected start of the message after "NCCL_GUARD ")
CASES = [
    ('--enable-flashinfer-allreduce-fusion', 'flashinfer_allreduce_fusion: --enable-flashinfer-allreduce-fusion',
     'sglang 0.5.9 applies flashinfer all-reduce fusion only on SM90/SM100'),
    ('--enable-torch-symm-mem', 'torch_symm_mem: --enable-torch-symm-mem',
     'with patch 0002-torch-symm-mem-guard the communicator disables itself on compute capability 12'),
    ('--moe-a2a-backend deepep', 'moe_a2a_backend: --moe-a2a-backend deepep', 'DeepEP is not in the stack'),
    ('--moe-a2a-backend flashinfer', 'moe_a2a_backend: --moe-a2a-backend flashinfer', 'the flashinfer MoE all-to-all'),
    ('--config /etc/sglang/x.yaml', 'config_file: --config /etc/sglang/x.yaml', 'the guards cannot read the options'),
    ('--enable-ep-moe', 'launch_flag: --enable-ep-moe is not an option of sglang 0.5.9', ''),
    ('--enable-torch-symm', 'torch_symm_mem: --enable-torch-symm-mem', 'with patch 0002'),
]


def _check(site=None, **kwargs):
    """sf.check on SITE (or ``site``): keywords are call arguments and overrides of the site's alike.

    One merged dict, so no call passes a keyword both directly and through **site.
    """
    args = dict(SITE if site is None else site)
    args.update(kwargs)
    return sf.check(**args)


def _only(result):
    assert len(result['refusals']) == 1, [r['msg'] for r in result['refusals']]
    return result['refusals'][0]


@pytest.mark.parametrize('given,head,reason', CASES)
def test_refused_through_extra_args(given, head, reason):
    refusal = _only(sf.check(args_sources=[('sglang_service_extra_args', given.split())], **SITE))
    assert refusal['msg'].startswith('NCCL_GUARD ' + head)
    assert '(from sglang_service_extra_args)' in refusal['msg'] and reason in refusal['msg']
    assert 'To make it work: ' in refusal['msg'] or refusal['guard'] == 'launch_flag'


@pytest.mark.parametrize('given,head,reason', CASES)
def test_refused_through_a_profile(given, head, reason):
    # A profile's extra args come after sglang_service_extra_args (service_qualification merges them so).
    sources = [('sglang_service_extra_args', ['--mem-fraction-static', '0.88']),
               ('qualification profile fast extra_args', given.split())]
    refusal = _only(sf.check(args_sources=sources, **SITE))
    assert refusal['msg'].startswith('NCCL_GUARD ' + head) and reason in refusal['msg']
    assert refusal['source'] == 'qualification profile fast extra_args'


@pytest.mark.parametrize('source', ['nccl_patches_nccl_env', 'sglang_service_environment',
                                    'qualification profile custom-allreduce-pcie environment'])
def test_custom_ar_opt_in_refused_through_an_env_file(source):
    refusal = _only(sf.check(env_sources=[(source, {'NCCL_P2P_LEVEL': 'SYS', 'SGLANG_CUSTOM_AR_ALLOW_PCIE': '1'})], **SITE))
    assert refusal['msg'].startswith('NCCL_GUARD custom_allreduce_pcie: SGLANG_CUSTOM_AR_ALLOW_PCIE (from %s)' % source)
    assert 'should_custom_ar() still returns False for world size 8 without full NVLink (custom_all_reduce.py:340-343)' in refusal['msg']
    assert 'launch no kernel for 4 or 8 ranks' in refusal['msg']
    # "0", two GPUs, or NVLink: nothing to refuse.
    assert sf.check(env_sources=[(source, {'SGLANG_CUSTOM_AR_ALLOW_PCIE': '0'})], **SITE)['refusals'] == []
    assert _check(env_sources=[(source, {'SGLANG_CUSTOM_AR_ALLOW_PCIE': '1'})], base_args=['--tp-size', '2'])['refusals'] == []
    assert _check(env_sources=[(source, {'SGLANG_CUSTOM_AR_ALLOW_PCIE': '1'})], full_nvlink=True)['refusals'] == []


@pytest.mark.parametrize('switch,flag', sorted(sf.SWITCHES.items()))
def test_switches_become_flags_and_pass_the_same_guards(switch, flag):
    result = sf.check(switches={switch: True}, **SITE)
    refusal = _only(result)
    assert result['flags'] == [flag]
    assert refusal['msg'].startswith('NCCL_GUARD %s: %s (from role variable %s): ' % (sf.GUARD[flag], flag, switch))
    # On SM90 with NVLink both work: the switch becomes the flag and nothing is refused.
    hopper = _check(switches={switch: True}, compute_capability='9.0', full_nvlink=True)
    assert hopper['refusals'] == [] and hopper['flags'] == [flag]
    assert sf.check(switches={switch: False}, **SITE)['flags'] == []


def test_torch_symm_mem_without_patch_0002_names_the_keyerror():
    site = dict(SITE, patches=['0003-nccl-log-allreduce-path.patch'])
    refusal = _only(_check(site, switches={'nccl_patches_enable_torch_symm_mem': True}))
    assert ('NCCL_GUARD torch_symm_mem: --enable-torch-symm-mem (from role variable nccl_patches_enable_torch_symm_mem): '
            'sglang 0.5.9 raises "KeyError: 12" at start-up') in refusal['msg']
    assert 'torch_symm_mem.py:83' in refusal['msg']
    # SM90 GPUs on PCIe: no multicast, the communicator disables itself.
    pcie_hopper = _only(_check(site, switches={'nccl_patches_enable_torch_symm_mem': True}, compute_capability='9.0'))
    assert 'multicast_ptr == 0' in pcie_hopper['msg']
    odd = _only(_check(site, switches={'nccl_patches_enable_torch_symm_mem': True},
                       compute_capability='10.0', full_nvlink=True, base_args=['--tp-size', '3']))
    assert 'world size 3' in odd['msg']


def test_fusion_refused_whatever_the_flashinfer_version():
    # flashinfer 0.6.17 builds the fusion for SM12x, but sglang 0.5.9 still applies it only on SM90/SM100.
    refusal = _only(_check(args_sources=[('x', ['--enable-flashinfer-allreduce-fusion'])], flashinfer_version='0.6.17'))
    assert 'on SM120 the flag changes nothing' in refusal['msg'] and 'flashinfer 0.6.17 also builds' in refusal['msg']
    for cc in ('9.0', '10.0'):
        assert _check(args_sources=[('x', ['--enable-flashinfer-allreduce-fusion'])], compute_capability=cc)['refusals'] == []


def test_mscclpp_needs_world_size_8_or_16():
    assert sf.check(args_sources=[('x', ['--enable-mscclpp'])], **SITE)['refusals'] == []
    refusal = _only(sf.check(args_sources=[('x', ['--tp-size', '4', '--enable-mscclpp'])], **SITE))
    assert refusal['msg'].startswith('NCCL_GUARD mscclpp: --enable-mscclpp (from x): PyMscclppCommunicator disables itself for world size 4')


def test_accepted_options_and_the_later_tp_size_wins():
    line = ['--disable-custom-all-reduce', '--enable-symm-mem', '--moe-a2a-backend', 'none', '--ep-size', '8',
            '--enable-nccl-nvls', '--tp-size', '2']
    ok = sf.check(args_sources=[('sglang_service_extra_args', line)], **SITE)
    assert ok['refusals'] == [] and ok['world_size'] == 2
    assert ok['path'][0] == 'pynccl symm-mem'


def test_other_sglang_version_refused():
    with pytest.raises(sf.FlagError, match='written for sglang 0.5.9.*the stack declares sglang 0.5.10'):
        _check(sglang_version='0.5.10')


def test_every_refusal_of_a_line_is_reported():
    result = sf.check(args_sources=[('sglang_service_extra_args', ['--enable-ep-moe', '--enable-torch-symm-mem', 'stray'])],
                      env_sources=[('sglang_service_environment', {'SGLANG_CUSTOM_AR_ALLOW_PCIE': '1'})], **SITE)
    guards = sorted(r['guard'] for r in result['refusals'])
    assert guards == ['custom_allreduce_pcie', 'launch_flag', 'launch_flag', 'torch_symm_mem']


# -- the decision of patch 0003, on the real parallel_state.py --------------------------------------


def patched_decision(tmp_path):
    """gpuops_allreduce_path as patch 0003 adds it to the real parallel_state.py (applied with the series engine)."""
    site = make_site(tmp_path)
    patches = [ps.read_patch_file(name, os.path.join(PATCH_DIR, name)) for name in NAMES]
    ps.apply_series(site, patches, 'site-nccl', 'sglang', '0.5.9')
    source = _read(site, 'sglang', 'srt', 'distributed', 'parallel_state.py')
    tree = ast.parse(source)
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == 'gpuops_allreduce_path')
    namespace = {}
    exec(compile(ast.Module(body=[func], type_ignores=[]), 'parallel_state.py', 'exec'), namespace)  # pylint: disable=exec-used
    return namespace['gpuops_allreduce_path'], source


def test_patch_0003_decision(tmp_path):
    decide, source = patched_decision(tmp_path)
    # The log line calls it with the communicators' state, after they are set up.
    assert source.index('self.torch_symm_mem_comm = TorchSymmMemCommunicator(') < source.index('_path, _why = gpuops_allreduce_path(')
    # World 8 without NVLink: custom AR is disabled at set-up (gate 1) -> NCCL.
    assert decide(8, **sf.predict({}, 8, 12, False))[0] == 'NCCL'
    # A communicator left enabled on 8 PCIe GPUs (what the old 0001 did): should_custom_ar() is False -> NCCL, said so.
    path, why = decide(8, ca_enabled=True, ca_world_size=8, ca_full_nvlink=False, ca_max_size=sf.CUSTOM_AR_MAX_SIZE)
    assert path == 'NCCL' and 'should_custom_ar() is False: world size 8 without full NVLink' in why
    # World 2: custom AR when enabled, NCCL with --disable-custom-all-reduce.
    assert decide(2, **sf.predict({}, 2, 12, False))[0] == 'custom AR'
    assert decide(2, **sf.predict({'--disable-custom-all-reduce': True}, 2, 12, False))[0] == 'NCCL'
    # --enable-symm-mem: pynccl with NCCL symmetric memory, before custom AR.
    assert decide(2, **sf.predict({'--enable-symm-mem': True}, 2, 12, False))[0] == 'pynccl symm-mem'
    assert decide(8, **sf.predict({'--enable-symm-mem': True}, 8, 12, False))[0] == 'pynccl symm-mem'
    # --enable-torch-symm-mem: only where it sets up (SM90/SM100, multicast); on SM120 the path stays NCCL.
    assert decide(8, **sf.predict({'--enable-torch-symm-mem': True}, 8, 12, False))[0] == 'NCCL'
    assert decide(4, **sf.predict({'--enable-torch-symm-mem': True, '--disable-custom-all-reduce': True}, 4, 9, True))[0] == 'torch symm-mem'
    # mscclpp: world 8 in CUDA graphs, not eager.
    assert decide(8, **sf.predict({'--enable-mscclpp': True}, 8, 12, False))[0] == 'mscclpp'
    assert decide(8, cuda_graph=False, **sf.predict({'--enable-mscclpp': True}, 8, 12, False))[0] == 'NCCL'
    assert decide(1) == ('none', 'world size 1: no all-reduce')


def test_patch_0003_and_the_rules_decide_alike(tmp_path):
    decide, dummy = patched_decision(tmp_path)
    flags = ['--disable-custom-all-reduce', '--enable-symm-mem', '--enable-mscclpp', '--enable-torch-symm-mem',
             '--enable-deterministic-inference']
    count = 0
    for world, cc, nvlink, graph in itertools.product((1, 2, 3, 4, 8, 16), (9, 10, 12), (False, True), (True, False)):
        for chosen in itertools.product((False, True), repeat=len(flags)):
            settings = dict((flag, True) for flag, on in zip(flags, chosen) if on)
            state = sf.predict(settings, world, cc, nvlink)
            for nbytes in (16384, 16 + 2 * 1024 * 1024, 9 * 1024 * 1024):
                ours = sf.allreduce_path(world, nbytes=nbytes, cuda_graph=graph, **state)
                assert decide(world, nbytes=nbytes, cuda_graph=graph, **state)[0] == ours[0]
                count += 1
    assert count == 6 * 3 * 2 * 2 * 32 * 3


@pytest.mark.parametrize('given', [['--api-key', 'sk-live-0123'], ['--admin-api-key=sk-live-0123'],
                                   ['--mem-fraction-static', '0.88', '--api-key', 'sk-live-0123']])
@pytest.mark.parametrize('source', ['sglang_service_extra_args', 'qualification profile fast extra_args'])
def test_api_keys_on_the_launch_line_are_refused_without_their_value(given, source):
    result = sf.check(args_sources=[(source, given)], **SITE)
    refusal = _only(result)
    assert refusal['guard'] == 'secret' and refusal['msg'].startswith('SECRET_GUARD: --')
    assert '(from %s)' % source in refusal['msg'] and 'sglang_service_api_key' in refusal['msg']
    assert 'sk-live-0123' not in repr(result)  # not in the message, the refusal or the settings


@pytest.mark.parametrize('name', ['HF_TOKEN', 'HUGGING_FACE_HUB_TOKEN', 'OPENAI_API_KEY', 'WANDB_APIKEY',
                                  'db_password', 'AWS_SECRET_ACCESS_KEY'])
def test_secret_looking_environment_is_refused_without_its_value(name):
    result = sf.check(env_sources=[('sglang_service_environment', {name: 'hf_live_0123', 'NCCL_ALGO': 'Tree'})], **SITE)
    refusal = _only(result)
    assert refusal['msg'].startswith('SECRET_GUARD: %s (from sglang_service_environment) looks like a secret' % name)
    assert 'sglang_service_secret_environment' in refusal['msg'] and 'hf_live_0123' not in repr(result)


def test_ordinary_environment_passes():
    # TOKENIZERS_PARALLELISM (Hugging Face tokenizers) holds "TOKEN" but not as a word of its own.
    env = {'NCCL_ALGO': 'Tree', 'NCCL_MAX_NCHANNELS': '2', 'HOME': '/var/lib/sglang', 'TOKENIZERS_PARALLELISM': 'false'}
    assert sf.check(env_sources=[('sglang_service_environment', env)], **SITE)['refusals'] == []
    refused = sf.check(env_sources=[('sglang_service_environment', {'HF_TOKEN': 'x'})], secret_env_names=False, **SITE)
    assert refused['refusals'] == []
