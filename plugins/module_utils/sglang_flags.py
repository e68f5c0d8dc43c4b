# -*- coding: utf-8 -*-
# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one place that decides which SGLang launch options and environment may reach the service.

Every option that selects an all-reduce path or a feature known to fail on the declared GPUs goes
through ``check()``: the role switches (``nccl_patches_enable_*``) become launch flags here, and the
same rules read the flags of ``sglang_service_extra_args``, of each qualification profile and the
variables of the environment files. A refusal names the flag, where it came from, the reason on this
stack with the SGLang (or flashinfer) source file and line, and what would make it work.

The rules are written against the real sglang 0.5.9 wheel (sha256 8a936c4d...64d1): the option table
below is every option string ``ServerArgs.add_cli_args`` defines there (srt/server_args.py l.2890-5067),
and ``parse_args`` resolves a command line as that argparse parser does (exact option, ``--opt=value``,
unique abbreviation, last occurrence wins). ``allreduce_path`` is the same decision as the one patch 0003
adds to parallel_state.py; the unit tests hold the two together.
"""

from __future__ import annotations

import re

SGLANG_VERSION = '0.5.9'

# Every option string of sglang 0.5.9's ServerArgs.add_cli_args, by how many values argparse takes:
# flag (store_true or DeprecatedAction, none), value (one), many (nargs '+' or '*'), optional (nargs '?').
_OPTIONS_0_5_9 = {
    'flag': '''
        --abort-on-priority-when-disabled --allow-auto-truncate --checkpoint-engine-wait-weights-before-ready
        --collect-tokens-histogram --constrained-json-disable-any-whitespace --delete-ckpt-after-loading
        --disable-chunked-prefix-cache --disable-cuda-graph --disable-cuda-graph-padding
        --disable-custom-all-reduce --disable-fast-image-processor --disable-flashinfer-autotune
        --disable-flashinfer-cutlass-moe-fp4-allgather --disable-hicache-numa-detect --disable-hybrid-swa-memory
        --disable-outlines-disk-cache --disable-overlap-schedule --disable-radix-cache
        --disable-shared-experts-fusion --disable-tokenizer-batch-decode
        --disaggregation-decode-enable-offload-kvcache --enable-attn-tp-input-scattered
        --enable-broadcast-mm-inputs-process --enable-cache-report --enable-cudagraph-gc
        --enable-custom-logit-processor --enable-deterministic-inference --enable-double-sparsity
        --enable-dp-attention --enable-dp-lm-head --enable-draft-weights-cpu-backup
        --enable-dynamic-batch-tokenizer --enable-dynamic-chunking --enable-eplb
        --enable-expert-distribution-metrics --enable-flashinfer-allreduce-fusion --enable-fp32-lm-head
        --enable-fused-qk-norm-rope --enable-hierarchical-cache --enable-layerwise-nvtx-marker --enable-lmcache
        --enable-lora --enable-lora-overlap-loading --enable-memory-saver --enable-metrics
        --enable-metrics-for-all-schedulers --enable-mixed-chunk --enable-mscclpp --enable-multi-layer-eagle
        --enable-multimodal --enable-nan-detection --enable-nccl-nvls --enable-nsa-prefill-context-parallel
        --enable-p2p-check --enable-pdmux --enable-piecewise-cuda-graph --enable-precise-embedding-interpolation
        --enable-prefill-delayer --enable-prefix-mm-cache --enable-priority-scheduling --enable-profile-cuda-graph
        --enable-request-time-stats-logging --enable-return-hidden-states --enable-return-routed-experts
        --enable-single-batch-overlap --enable-symm-mem --enable-tokenizer-batch-encode --enable-torch-compile
        --enable-torch-compile-debug-mode --enable-torch-symm-mem --enable-trace --enable-two-batch-overlap
        --enable-weights-cpu-backup --encoder-only --export-metrics-to-file --flashinfer-mla-disable-ragged
        --grpc-mode --hybrid-kvcache-ratio --is-embedding --keep-mm-feature-on-device --language-only
        --log-requests --mm-enable-dp-encoder --prefill-round-robin-balance --quantize-and-serve
        --remote-instance-weight-loader-start-seed-via-transfer-engine --schedule-low-priority-values-first
        --show-time-cost --skip-server-warmup --skip-tokenizer-init --sleep-on-idle --stream-output
        --triton-attention-reduce-in-fp32 --trust-remote-code --weight-loader-disable-mmap
    ''',
    'value': '''
        --admin-api-key --api-key --attention-backend --attention-context-parallel-size --attn-cp-size
        --base-gpu-id --chat-template --chunked-prefill-size --completion-template --config
        --constrained-json-whitespace-pattern --context-length --cpu-offload-gb --crash-dump-folder
        --cuda-graph-max-bs --custom-sigquit-handler --data-parallel-size --debug-tensor-dump-inject
        --debug-tensor-dump-input-file --debug-tensor-dump-output-folder --decode-attention-backend
        --decode-log-interval --decrypted-config-file --decrypted-draft-config-file --deepep-config --deepep-mode
        --device --disaggregation-bootstrap-port --disaggregation-decode-dp
        --disaggregation-decode-polling-interval --disaggregation-decode-tp --disaggregation-ib-device
        --disaggregation-mode --disaggregation-prefill-pp --disaggregation-transfer-backend --dist-init-addr
        --dist-timeout --dllm-algorithm --dllm-algorithm-config --download-dir --dp-size --ds-channel-config-path
        --ds-heavy-channel-num --ds-heavy-channel-type --ds-heavy-token-num --ds-sparse-decode-threshold --dtype
        --dynamic-batch-tokenizer-batch-size --dynamic-batch-tokenizer-batch-timeout --elastic-ep-backend
        --encoder-transfer-backend --ep --ep-dispatch-algorithm --ep-num-redundant-experts --ep-size
        --eplb-algorithm --eplb-min-rebalancing-utilization-threshold --eplb-rebalance-layers-per-chunk
        --eplb-rebalance-num-iterations --expert-distribution-recorder-buffer-size
        --expert-distribution-recorder-mode --expert-parallel-size --export-metrics-to-file-dir
        --extra-metric-labels --fastapi-root-path --file-storage-path --flashinfer-mxfp4-moe-precision
        --forward-hooks --fp4-gemm-backend --fp8-gemm-backend --gc-warning-threshold-secs --gpu-id-step
        --grammar-backend --hf-chat-template-name --hicache-io-backend --hicache-mem-layout --hicache-ratio
        --hicache-size --hicache-storage-backend --hicache-storage-backend-extra-config
        --hicache-storage-prefetch-policy --hicache-write-policy --hierarchical-sparse-attention-extra-config
        --host --init-expert-location --json-model-override-args --kt-cpuinfer --kt-max-deferred-experts-per-token
        --kt-method --kt-num-gpu-experts --kt-threadpool-count --kt-weight-path --kv-cache-dtype
        --kv-events-config --limit-mm-data-per-request --load-balance-method --load-format --log-level
        --log-level-http --log-requests-format --log-requests-level --lora-backend --lora-eviction-policy
        --mamba-backend --mamba-full-memory-ratio --mamba-scheduler-strategy --mamba-ssm-dtype
        --mamba-track-interval --max-loaded-loras --max-lora-chunk-size --max-lora-rank --max-loras-per-batch
        --max-mamba-cache-size --max-prefill-tokens --max-queued-requests --max-running-requests
        --max-total-tokens --mem-fraction-static --mm-attention-backend --mm-max-concurrent-calls
        --mm-per-request-timeout --mm-process-config --model --model-impl --model-loader-extra-config --model-path
        --modelopt-checkpoint-restore-path --modelopt-checkpoint-save-path --modelopt-export-path --modelopt-quant
        --moe-a2a-backend --moe-data-parallel-size --moe-dense-tp-size --moe-dp-size --moe-runner-backend
        --mooncake-ib-device --multi-item-scoring-delimiter --nccl-init-addr --nccl-port --nnodes --node-rank
        --nsa-decode-backend --nsa-prefill-backend --nsa-prefill-cp-mode --num-continuous-decode-steps
        --num-reserved-decode-tokens --offload-group-size --offload-mode --offload-num-in-group
        --offload-prefetch-step --otlp-traces-endpoint --page-size --pdmux-config-path
        --piecewise-cuda-graph-compiler --piecewise-cuda-graph-max-tokens --pipeline-parallel-size --port
        --pp-async-batch-depth --pp-max-micro-batch-size --pp-size --preferred-sampling-params
        --prefill-attention-backend --prefill-delayer-max-delay-passes --prefill-delayer-token-usage-low-watermark
        --prefill-max-requests --priority-scheduling-preemption-threshold --quantization --quantization-param-path
        --radix-eviction-policy --random-seed --reasoning-parser --remote-instance-weight-loader-backend
        --remote-instance-weight-loader-seed-instance-ip
        --remote-instance-weight-loader-seed-instance-service-port
        --remote-instance-weight-loader-send-weights-group-ports --revision --rl-on-policy-target
        --rl-quant-profile --sampling-backend --sampling-defaults --schedule-conservativeness --schedule-policy
        --scheduler-recv-interval --served-model-name --sm-group-num --soft-watchdog-timeout
        --speculative-accept-threshold-acc --speculative-accept-threshold-single --speculative-algorithm
        --speculative-attention-mode --speculative-draft-attention-backend --speculative-draft-load-format
        --speculative-draft-model --speculative-draft-model-path --speculative-draft-model-quantization
        --speculative-draft-model-revision --speculative-eagle-topk --speculative-moe-a2a-backend
        --speculative-moe-runner-backend --speculative-ngram-branch-length --speculative-ngram-capacity
        --speculative-ngram-match-type --speculative-ngram-max-bfs-breadth
        --speculative-ngram-max-match-window-size --speculative-ngram-min-bfs-breadth
        --speculative-ngram-min-match-window-size --speculative-num-draft-tokens --speculative-num-steps
        --speculative-token-map --stream-interval --swa-full-tokens-ratio --tbo-token-distribution-threshold
        --tensor-parallel-size --tokenizer-metrics-custom-labels-header --tokenizer-mode --tokenizer-path
        --tokenizer-worker-num --tool-call-parser --tool-server --torch-compile-max-bs --torchao-config --tp-size
        --triton-attention-num-kv-splits --triton-attention-split-tile-size --warmups --watchdog-timeout
        --weight-version
    ''',
    'many': '''
        --bucket-e2e-request-latency --bucket-inter-token-latency --bucket-time-to-first-token --cuda-graph-bs
        --custom-weight-loader --debug-tensor-dump-layers --encoder-urls --generation-tokens-buckets
        --log-requests-target --lora-paths --lora-target-modules --numa-node --piecewise-cuda-graph-tokens
        --prefill-delayer-forward-passes-buckets --prefill-delayer-wait-seconds-buckets --prompt-tokens-buckets
        --tokenizer-metrics-allowed-custom-labels --uvicorn-access-log-exclude-prefixes
    ''',
    'optional': '''
        --model-checksum
    ''',
}

OPTIONS = {}
for _kind, _text in _OPTIONS_0_5_9.items():
    for _opt in _text.split():
        OPTIONS[_opt] = _kind

# Aliases argparse maps to one destination (server_args.py l.2894, l.3301, l.4077).
ALIASES = {
    '--tp-size': '--tensor-parallel-size',
    '--expert-parallel-size': '--ep-size',
    '--ep': '--ep-size',
    '--model': '--model-path',
}

# Flags of earlier SGLang releases that 0.5.9 no longer defines, with what replaces them.
REMOVED = {
    '--enable-ep-moe': 'sglang 0.5.9 sets expert parallelism with --ep-size N (--expert-parallel-size, server_args.py:4077-4083)',
    '--enable-deepep-moe': 'sglang 0.5.9 selects DeepEP with --moe-a2a-backend deepep (server_args.py:4085-4091), refused on this stack too',
}

# The role switches and the launch flag each one becomes.
SWITCHES = {
    'nccl_patches_enable_flashinfer_allreduce_fusion': '--enable-flashinfer-allreduce-fusion',
    'nccl_patches_enable_torch_symm_mem': '--enable-torch-symm-mem',
}

# The guard name each refusal carries (NCCL_GUARD <name>: ...).
GUARD = {
    '--enable-flashinfer-allreduce-fusion': 'flashinfer_allreduce_fusion',
    '--enable-torch-symm-mem': 'torch_symm_mem',
    '--enable-mscclpp': 'mscclpp',
    '--moe-a2a-backend': 'moe_a2a_backend',
    '--speculative-moe-a2a-backend': 'moe_a2a_backend',
    '--config': 'config_file',
    'SGLANG_CUSTOM_AR_ALLOW_PCIE': 'custom_allreduce_pcie',
}

# Sizes of sglang 0.5.9 the decision uses.
CUSTOM_AR_WORLD_SIZES = (2, 4, 6, 8)                 # custom_all_reduce.py:53
CUSTOM_AR_MAX_SIZE = 8192 * 1024                     # custom_all_reduce.py:54
MSCCLPP_WORLD_SIZES = (8, 16)                        # pymscclpp.py:92
MSCCLPP_MAX_BYTES = 1024 * 1024                      # pymscclpp.py:93 (SGLANG_MSCCLPP_MAX_BYTES, default 1MB)
TORCH_SYMM_MEM_MAX_SIZES = {                         # all_reduce_utils.py:3-16
    9: {2: 64 << 20, 4: 64 << 20, 6: 128 << 20, 8: 128 << 20},
    10: {2: 64 << 20, 4: 64 << 20, 6: 128 << 20, 8: 128 << 20},
}
DECODE_NBYTES = 16384                                # what patch 0003 logs: a 16 KiB bf16 message in a CUDA graph


class FlagError(Exception):
    """A command line sglang 0.5.9's parser would not accept."""


def resolve(token):
    """The option string ``token`` (``--name`` or ``--name=value``) stands for, as argparse resolves it.

    Returns (option, explicit_value or None). Raises FlagError for an unknown or ambiguous option.
    """
    if token in OPTIONS:
        return token, None
    name, sep, value = token.partition('=')
    explicit = value if sep else None
    if sep and name in OPTIONS:
        return name, explicit
    # argparse's allow_abbrev (on by default, prepare_server_args does not turn it off): a unique prefix.
    matches = sorted(opt for opt in OPTIONS if opt.startswith(name))
    if len(matches) == 1:
        return matches[0], explicit
    if len(matches) > 1:
        raise FlagError('%s is ambiguous for sglang %s (could match %s): argparse exits with "ambiguous option"'
                        % (name, SGLANG_VERSION, ', '.join(matches[:6]) + (', ...' if len(matches) > 6 else '')))
    if name in REMOVED:
        raise FlagError('%s is not an option of sglang %s (argparse exits with "unrecognized arguments"): %s'
                        % (name, SGLANG_VERSION, REMOVED[name]))
    raise FlagError('%s is not an option of sglang %s: launch_server exits with "unrecognized arguments" '
                    '(its options: srt/server_args.py ServerArgs.add_cli_args)' % (name, SGLANG_VERSION))


def parse_args(argv, errors=None):
    """Walk a launch_server command line: a list of (option, value) in order, value True for a flag.

    What sglang 0.5.9's argparse parser would refuse (an unknown or ambiguous option, a word that belongs
    to no option, a missing value) raises FlagError, or, with a list ``errors``, is appended there as a
    FlagError and skipped so that the rest of the line is still read.
    """
    argv = [str(word) for word in argv]
    result = []
    i = 0
    while i < len(argv):
        word = argv[i]
        i += 1
        try:
            if not word.startswith('-') or word == '-' or _is_number(word):
                raise FlagError('%r belongs to no option: launch_server takes no positional arguments '
                                '(argparse exits with "unrecognized arguments")' % word)
            option, explicit = resolve(word)
            kind = OPTIONS[option]
            canonical = ALIASES.get(option, option)
            if kind == 'flag':
                if explicit is not None:
                    raise FlagError('%s takes no value (got %r): argparse exits with "ignored explicit argument"'
                                    % (option, explicit))
                result.append((canonical, True))
            elif explicit is not None:
                result.append((canonical, explicit))
            elif kind == 'value':
                if i >= len(argv) or _looks_like_option(argv[i]):
                    raise FlagError('%s needs a value: argparse exits with "expected one argument"' % option)
                result.append((canonical, argv[i]))
                i += 1
            else:
                values = []
                while i < len(argv) and not _looks_like_option(argv[i]):
                    values.append(argv[i])
                    i += 1
                if kind == 'many' and not values and option not in _STAR:
                    raise FlagError('%s needs at least one value: argparse exits with "expected at least one argument"'
                                    % option)
                if kind == 'optional' and len(values) > 1:
                    i -= len(values) - 1
                    values = values[:1]
                # nargs '?' without a value takes its const: "" for --model-checksum, the only such option.
                result.append((canonical, values if kind == 'many' else (values[0] if values else '')))
        except FlagError as exc:
            if errors is None:
                raise
            errors.append(exc)
    return result


def _looks_like_option(word):
    return word.startswith('-') and word != '-' and not _is_number(word)


# nargs '*' options (may be given without a value); the others of 'many' are nargs '+'.
_STAR = frozenset(['--uvicorn-access-log-exclude-prefixes', '--lora-target-modules', '--custom-weight-loader',
                   '--lora-paths'])


def _is_number(word):
    try:
        float(word)
    except ValueError:
        return False
    return True


def allreduce_path(world_size, symm_mem=False, ca_enabled=False, ca_world_size=0, ca_full_nvlink=False,
                   ca_max_size=0, mscclpp_ready=False, mscclpp_max_bytes=0, torch_symm_mem_enabled=False,
                   torch_symm_mem_max_size=0, nbytes=DECODE_NBYTES, cuda_graph=True):
    """The path GroupCoordinator.all_reduce of sglang 0.5.9 takes for one bf16 message: (path, why).

    The same decision as ``gpuops_allreduce_path`` of patch 0003 (parallel_state.py l.584-626, and
    CustomAllreduce.should_custom_ar, custom_all_reduce.py l.328-350); only the wording of ``why`` differs.
    """
    if world_size <= 1:
        return 'none', 'world size 1: no all-reduce'
    if symm_mem:
        return 'pynccl symm-mem', '--enable-symm-mem sends every all-reduce to pynccl with NCCL symmetric memory (parallel_state.py:584)'
    notes = []
    if not ca_enabled:
        notes.append('custom AR off')
    elif not (ca_world_size == 2 or ca_full_nvlink):
        notes.append('custom AR set up but should_custom_ar() is False for world size %d without full NVLink '
                     '(custom_all_reduce.py:340-343)' % ca_world_size)
    elif nbytes % 16 != 0 or nbytes > ca_max_size:
        notes.append('custom AR: message of %d bytes not a multiple of 16 or above %d' % (nbytes, ca_max_size))
    else:
        return 'custom AR', 'custom AR for world size %d%s' % (ca_world_size, ' with full NVLink' if ca_full_nvlink else '')
    if not mscclpp_ready:
        notes.append('mscclpp off')
    elif not cuda_graph:
        notes.append('mscclpp only inside CUDA graphs')
    elif nbytes > mscclpp_max_bytes:
        notes.append('mscclpp: message of %d bytes above %d' % (nbytes, mscclpp_max_bytes))
    else:
        return 'mscclpp', 'mscclpp for world size %d, messages up to %d bytes in CUDA graphs' % (world_size, mscclpp_max_bytes)
    if not torch_symm_mem_enabled:
        notes.append('torch symm-mem off')
    elif nbytes % 4 != 0 or nbytes >= torch_symm_mem_max_size:
        notes.append('torch symm-mem: message of %d bytes not a multiple of 4 or not below %d' % (nbytes, torch_symm_mem_max_size))
    else:
        return 'torch symm-mem', 'torch symmetric memory, messages below %d bytes' % torch_symm_mem_max_size
    return 'NCCL', '; '.join(notes)


def predict(settings, world_size, cc_major, full_nvlink):
    """The communicator state sglang 0.5.9 sets up for the TP group from the effective launch settings,
    as keyword arguments of ``allreduce_path`` (the P2P test of custom AR is assumed to pass)."""
    custom = not settings.get('--disable-custom-all-reduce') and not settings.get('--enable-deterministic-inference')
    ca_enabled = custom and world_size in CUSTOM_AR_WORLD_SIZES and (world_size <= 2 or full_nvlink)
    table = TORCH_SYMM_MEM_MAX_SIZES.get(cc_major, {})
    symm_ok = bool(settings.get('--enable-torch-symm-mem')) and world_size in table and full_nvlink
    return dict(
        symm_mem=bool(settings.get('--enable-symm-mem')),
        ca_enabled=ca_enabled, ca_world_size=world_size if ca_enabled else 0, ca_full_nvlink=bool(full_nvlink and ca_enabled),
        ca_max_size=CUSTOM_AR_MAX_SIZE if ca_enabled else 0,
        mscclpp_ready=bool(settings.get('--enable-mscclpp')) and world_size in MSCCLPP_WORLD_SIZES,
        mscclpp_max_bytes=MSCCLPP_MAX_BYTES,
        torch_symm_mem_enabled=symm_ok, torch_symm_mem_max_size=table.get(world_size, 0) if symm_ok else 0)


def _cc_major(compute_capability):
    try:
        return int(str(compute_capability).split('.', 1)[0])
    except ValueError:
        raise FlagError('compute capability %r is not of the form MAJOR.MINOR' % (compute_capability,))


def _version_tuple(version):
    parts = []
    for part in str(version).split('+', 1)[0].split('.'):
        digits = ''.join(ch for ch in part if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _refusal(flag, source, reason, remedy):
    guard = GUARD.get(flag.split(' ')[0], 'launch_flag')
    return dict(guard=guard, flag=flag, source=source, reason=reason, remedy=remedy,
                msg='NCCL_GUARD %s: %s (from %s): %s. To make it work: %s.' % (guard, flag, source, reason, remedy))


def _rule_fusion(flag, source, ctx):
    if ctx['cc_major'] in (9, 10):
        return None
    fi = ctx.get('flashinfer_version') or 'of the stack'
    return _refusal(
        flag, source,
        'sglang 0.5.9 applies flashinfer all-reduce fusion only on SM90/SM100: apply_flashinfer_allreduce_fusion() '
        '(srt/layers/communicator.py:91-101) requires is_sm90_supported() or is_sm100_supported() '
        '(srt/utils/common.py:258-267, majors [10] and [9]), and the auto-enable in server_args.py:1672-1697 has the '
        'same test, so on SM%d the flag changes nothing and every all-reduce stays unfused; flashinfer %s also '
        'builds its all-reduce fusion (trtllm_comm) only for SM90 and SM100 (flashinfer/jit/comm.py:59-62)'
        % (ctx['cc_major'] * 10, fi),
        'an SGLang whose apply_flashinfer_allreduce_fusion() accepts SM12x together with flashinfer 0.6.17 or newer '
        '(SM12x in trtllm_comm, flashinfer PR #3903); leave nccl_patches_enable_flashinfer_allreduce_fusion off and '
        'remove the flag from sglang_service_extra_args and the qualification profiles')


def _rule_torch_symm_mem(flag, source, ctx):
    cc, ws = ctx['cc_major'], ctx['world_size']
    remedy = ('SM90 or SM100 GPUs joined by NVLink/NVSwitch (multicast) with a world size of 2, 4, 6 or 8; '
              'on these GPUs leave nccl_patches_enable_torch_symm_mem off and remove the flag')
    if cc not in TORCH_SYMM_MEM_MAX_SIZES:
        if not ctx['has_symm_mem_guard']:
            reason = ('sglang 0.5.9 raises "KeyError: %d" at start-up: TorchSymmMemCommunicator.__init__ indexes '
                      'TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES[%d] (srt/distributed/device_communicators/torch_symm_mem.py:83), '
                      'a table with compute capabilities 9 and 10 only (all_reduce_utils.py:3-16; fixed upstream by '
                      'sglang PR #24548); patch 0002-torch-symm-mem-guard is not in the series' % (cc, cc))
        else:
            reason = ('with patch 0002-torch-symm-mem-guard the communicator disables itself on compute capability %d '
                      '(no size table, torch_symm_mem.py:81-93), so the flag changes nothing and every all-reduce '
                      'stays on NCCL' % cc)
        return _refusal(flag, source, reason, remedy)
    if ws not in TORCH_SYMM_MEM_MAX_SIZES[cc]:
        return _refusal(flag, source, 'the communicator disables itself for world size %d (torch_symm_mem.py:81-90)' % ws, remedy)
    if not ctx['full_nvlink']:
        return _refusal(flag, source, 'the communicator disables itself when the GPUs have no multicast (handle.multicast_ptr == 0, '
                        'torch_symm_mem.py:100-107): PCIe-only GPUs have none, so every all-reduce stays on NCCL', remedy)
    return None


def _rule_mscclpp(flag, source, ctx):
    if ctx['world_size'] in MSCCLPP_WORLD_SIZES:
        return None
    return _refusal(flag, source, 'PyMscclppCommunicator disables itself for world size %d (pymscclpp.py:134-142: '
                    'world sizes 8 and 16 only), so the flag changes nothing' % ctx['world_size'],
                    'a tensor-parallel size of 8 (or 16)')


_A2A_REASONS = {
    'deepep': 'DeepEP is not in the stack (not in sglang 0.5.9\'s Requires-Dist; srt/layers/moe/token_dispatcher/deepep.py:41-50 '
              'imports deep_ep) and its intranode kernels need NVLink',
    'mooncake': 'Mooncake EP is not in the stack (srt/distributed/parallel_state.py:264 imports mooncake.ep)',
    'mori': 'MoRI is AMD ROCm only (srt/layers/moe/token_dispatcher/moriep.py)',
    'ascend_fuseep': 'the Ascend fused EP backend is for Huawei Ascend NPUs',
    'flashinfer': 'the flashinfer MoE all-to-all allocates its workspace over multi-node NVLink (MoeAlltoAll with MnnvlConfig, '
                  'srt/layers/moe/token_dispatcher/flashinfer.py:140-146) and needs --moe-runner-backend flashinfer_cutlass '
                  '(server_args.py:2213-2215); these GPUs have no NVLink',
}


def _rule_a2a(flag, source, ctx, value):
    if value in (None, 'none'):
        return None
    reason = _A2A_REASONS.get(value, '%r is not a choice of sglang 0.5.9 (MOE_A2A_BACKEND_CHOICES, server_args.py:188-195)' % value)
    return _refusal('%s %s' % (flag, value), source, reason,
                    'leave the MoE all-to-all backend at none (expert parallelism with --ep-size N uses the standard collectives)')


def _rule_config(flag, source, ctx, value):
    return _refusal('%s %s' % (flag, value), source,
                    'the guards cannot read the options inside a config file: prepare_server_args() merges it into the '
                    'command line on the host (server_args.py:5583-5589)',
                    'give the options in sglang_service_extra_args (or a qualification profile\'s extra_args) instead')


def _rule_secret_option(flag, source, ctx, value):
    # The value is a secret: the refusal names the option and its source, never the value.
    return dict(guard='secret', flag=flag, source=source,
                reason='a key on the command line is in the world-readable unit, in /proc/<pid>/cmdline and in '
                       'SGLang\'s start-up log (engine.py:1031 logs server_args)',
                remedy='set sglang_service_api_key / sglang_service_admin_api_key instead: the role passes them to '
                       'SGLang from a root-only environment file, inside the process',
                msg='SECRET_GUARD: %s (from %s) is refused: a key on the command line is in the world-readable unit, '
                    'in /proc/<pid>/cmdline and in SGLang\'s start-up log (engine.py:1031 logs server_args). Set '
                    'sglang_service_api_key / sglang_service_admin_api_key instead.' % (flag, source))


# Options whose value is a secret (server_args.py:3615-3627): never on the launch line, never echoed.
SECRET_OPTIONS = frozenset(['--api-key', '--admin-api-key'])
# Environment names that carry secrets (HF_TOKEN, OPENAI_API_KEY, ...): they belong in the secret environment,
# which no task shows, not in sglang_service_environment, which dry runs diff.
# A whole word of the name (split at "_"), so TOKENIZERS_PARALLELISM is not one.
SECRET_ENV_NAME = re.compile(r'(?:^|_)(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|CREDENTIALS?|PRIVATE_KEY)(?:_|$)', re.IGNORECASE)


def secret_env_refusal(name, source):
    """The refusal for a secret-looking environment name outside the secret environment (no value)."""
    return dict(guard='secret', flag=name, source=source,
                reason='its value would be shown by --diff, written to a world-readable place and logged',
                remedy='move it to sglang_service_secret_environment',
                msg='SECRET_GUARD: %s (from %s) looks like a secret: its value would be shown by --check --diff and '
                    'logged. Move it to sglang_service_secret_environment (written 0640 root:<service group>, never '
                    'shown).' % (name, source))


_FLAG_RULES = {
    '--enable-flashinfer-allreduce-fusion': _rule_fusion,
    '--enable-torch-symm-mem': _rule_torch_symm_mem,
    '--enable-mscclpp': _rule_mscclpp,
}
_VALUE_RULES = {
    '--moe-a2a-backend': _rule_a2a,
    '--speculative-moe-a2a-backend': _rule_a2a,
    '--config': _rule_config,
    '--api-key': _rule_secret_option,
    '--admin-api-key': _rule_secret_option,
}


def _rule_env_custom_ar(name, value, source, ctx):
    if str(value).strip() != '1' or ctx['world_size'] <= 2 or ctx['full_nvlink']:
        return None
    return _refusal(
        name, source,
        'no patch of the shipped series reads it any more (patch 0001 left the series), and a gate-1 bypass cannot help: '
        'with CustomAllreduce.__init__\'s gate bypassed (custom_all_reduce.py:146-152) should_custom_ar() still returns '
        'False for world size %d without full NVLink (custom_all_reduce.py:340-343), so every all-reduce stays on NCCL; '
        'removing that gate too makes the sgl-kernel dispatch (custom_all_reduce.cuh, REDUCE_CASE) launch no kernel for 4 '
        'or 8 ranks without NVLink and leave the output unreduced (stack-facts 10.4)' % ctx['world_size'],
        'a PCIe all-reduce kernel, not a gate bypass (sglang PR #34528 with flashinfer PR #4393); remove '
        'SGLANG_CUSTOM_AR_ALLOW_PCIE from the environment')


_ENV_RULES = {
    'SGLANG_CUSTOM_AR_ALLOW_PCIE': _rule_env_custom_ar,
}


def check(args_sources=None, env_sources=None, switches=None, sglang_version=SGLANG_VERSION, compute_capability='12.0',
          world_size=None, full_nvlink=False, patches=None, flashinfer_version=None, base_args=None,
          secret_env_names=True):
    """Check everything that may reach the service's launch line and environment.

    args_sources: list of (source, argv) in the order they reach the command line (later wins);
    env_sources: list of (source, {name: value}); switches: {role variable: bool} (SWITCHES);
    base_args: the launch line the role builds itself (model, --tp-size, ...), checked as 'the service role'.
    secret_env_names: refuse secret-looking names (SECRET_ENV_NAME) in env_sources: they belong in the secret
    environment. --api-key and --admin-api-key are always refused, and their values never returned.
    world_size: the tensor-parallel size (default: the --tp-size of the command line, else 1).

    Returns dict(refusals=[...], flags=[...] (the switches' launch flags), settings={option: value},
    path=(path, why) for the TP group's decode all-reduce). Raises FlagError for an SGLang version the
    rules are not written for.
    """
    if str(sglang_version) != SGLANG_VERSION:
        raise FlagError('the launch-flag rules are written for sglang %s (its server_args.py); the stack declares sglang %s: '
                        'add that version\'s options and rules to plugins/module_utils/sglang_flags.py first'
                        % (SGLANG_VERSION, sglang_version))
    refusals = []
    flags = []
    sources = []
    if base_args:
        sources.append(('the service role\'s launch line', list(base_args)))
    for name in sorted(switches or {}):
        if name not in SWITCHES:
            raise FlagError('unknown switch %s (known: %s)' % (name, ', '.join(sorted(SWITCHES))))
        if switches[name]:
            flags.append(SWITCHES[name])
            sources.append(('role variable %s' % name, [SWITCHES[name]]))
    sources.extend((source, list(argv or [])) for source, argv in (args_sources or []))

    parsed = []
    for source, argv in sources:
        errors = []
        parsed.extend((source, option, value) for option, value in parse_args(argv, errors))
        for exc in errors:
            refusals.append(dict(guard='launch_flag', flag=str(exc).split(' ', 1)[0], source=source, reason=str(exc),
                                 remedy='fix or remove the option',
                                 msg='NCCL_GUARD launch_flag: %s (from %s)' % (exc, source)))
    settings = {}
    for source, option, value in parsed:
        settings[option] = '<secret>' if option in SECRET_OPTIONS else value
    if world_size is None:
        try:
            world_size = int(settings.get('--tensor-parallel-size', 1))
        except ValueError:
            world_size = 1
    ctx = dict(cc_major=_cc_major(compute_capability), world_size=int(world_size), full_nvlink=bool(full_nvlink),
               flashinfer_version=flashinfer_version,
               has_symm_mem_guard=any('torch-symm-mem-guard' in str(p) for p in (patches or [])))
    seen = set()
    for source, option, value in parsed:
        rule = _FLAG_RULES.get(option)
        found = None
        if rule is not None:
            found = rule(option, source, ctx)
        elif option in _VALUE_RULES:
            found = _VALUE_RULES[option](option, source, ctx, value)
        if found is not None and (found['flag'], source) not in seen:
            seen.add((found['flag'], source))
            refusals.append(found)
    for source, env in env_sources or []:
        for name in sorted(env or {}):
            rule = _ENV_RULES.get(name)
            found = rule(name, env[name], source, ctx) if rule else None
            if found is None and secret_env_names and SECRET_ENV_NAME.search(str(name)):
                found = secret_env_refusal(name, source)
            if found is not None:
                refusals.append(found)
    path = allreduce_path(ctx['world_size'], **predict(settings, ctx['world_size'], ctx['cc_major'], ctx['full_nvlink']))
    return dict(refusals=refusals, flags=flags, settings=settings, path=list(path), world_size=ctx['world_size'])
