# Copyright (c) 2026, gpuops.sglang_stack maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fault harness of the upgrade (issue 8): interrupt it at each phase, inject each fault, check what it leaves.

Run by molecule/faults/converge.yml after stack fault-base serves on the fault host (the uninterrupted
reference build). Every run is `ansible-playbook gpuops.sglang_stack.upgrade` against the scenario's
inventory, as an operator runs it. Per case:

1. snapshot of the serving state (tests/faults/probe.py in the container: sha256 manifest of the
   serving stack, the current link, the unit, the service's MainPID, GET /health_generate, ...);
2. the fault: an injected one (host side: a GPU stand-in profile; controller side: extra vars of the
   declaration), or an interrupt: the run's output is watched for the phase's task, the host-side
   process of that task is awaited, then the controller (its whole process group) gets SIGKILL and so
   does what `docker exec` still runs in the container (an operator's lost connection takes both);
3. snapshot again: the serving stack, its current link and the running service must be untouched,
   and the failure must name its cause (asserted texts);
4. the fault removed, a plain re-run. Interrupts are chained: the run after an interrupt is the next
   case's run, which must get past the interrupted phase; the last run is plain and must complete.
   Injected faults that leave the host as it was are re-run by that chain as well (same state).
   The end state is compared with the uninterrupted reference: the same content digest in the stack id,
   bom.json and a normalised checksum manifest of the whole stack equal to fault-base's, the stack
   serving behind a healthy service, dpkg clean.

Writes the results as JSON (--results) and renders docs/reliability.md (--doc). Exits 1 when a case
did not behave as required.
"""
import argparse
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, 'probe.py')
PLAYBOOK = 'gpuops.sglang_stack.upgrade'
TARGET = 'fault-b'
STALE_PATCH = '9999-stale-context.patch'
# Differences from the reference build that the harness knows and reports instead of failing on.
KNOWN_DIFFERENCES = {}

# A patch written against code that sglang 0.5.9 does not have (its context lines do not match).
STALE_PATCH_TEXT = """# fault harness: a site patch whose context no longer matches the installed sglang
--- a/sglang/srt/distributed/parallel_state.py
+++ b/sglang/srt/distributed/parallel_state.py
@@ -10,3 +10,4 @@
 this line is not in sglang 0.5.9
 nor is this one
+# added by a patch that no longer applies
 and the context ends here
"""


def layers_with(expr):
    """The test declaration's layers with one change, templated on the controller (extra vars are trusted)."""
    return '{{ %s }}' % expr


# Injected faults: how to inject, which texts the failure must carry. All target stack TARGET.
INJECTIONS = [
    {
        'id': 'python-missing', 'title': 'missing Python 3.12 (declared 3.12 on Debian 12, which has 3.11)',
        'vars': {'stack_declaration_python': {'version': '3.12', 'tag': 'cp312'}, 'testbed_sgl_kernel_abi': 'cp312'},
        'expect': ['PREFLIGHT python: no python3.12 with the venv module on this host', 'Fix: install python3.12 and python3.12-venv'],
    },
    {
        'id': 'driver-too-old', 'title': 'driver too old (host driver 575.57.08, CUDA 13.0 Update 2 needs 580.95.05)',
        'host_profile': {'name': 'fault-old-driver', 'replace': [['580.95.05', '575.57.08'], ['"580.95"', '"575.57"']]},
        # The floor is the declaration's table entry for the declared toolkit release (13.0.2-1).
        'expect': ['PREFLIGHT driver: driver 575.57.08 is below 580.95.05, the minimum for cuda-toolkit-13-0=13.0.2-1 (CUDA 13.0;'],
    },
    {
        'id': 'wrong-gpu-arch', 'title': 'wrong GPU architecture (8 GPUs of compute capability 9.0, SM120 declared)',
        'host_profile': {'name': 'fault-sm90', 'replace': [['"compute_cap": "12.0"', '"compute_cap": "9.0"']]},
        'expect': ['PREFLIGHT compute_capability: 8 GPU(s) are not compute capability 12.0', 'This stack is built and verified for sm_120'],
    },
    {
        'id': 'disk-full', 'title': 'full disk for the new stack (sglang layer declared at 100 TB, far above the free space)',
        'vars': {'stack_declaration_layers': layers_with("testbed_layers[:3] + [testbed_layers[3] | combine({'disk_mb': 100000000})]")},
        'expect': ['PREFLIGHT disk:', 'the new stack needs', 'Fix: free space there'],
    },
    {
        'id': 'sgl-kernel-sdist', 'title': 'only an sdist offered for sgl-kernel (declared as the .tar.gz)',
        'vars': {'stack_declaration_layers': layers_with(
            "testbed_layers[:2] + [testbed_layers[2] | combine({'packages': [testbed_layers[2].packages[0]"
            " | combine({'file_path': 'releases/download/v0.3.21/sgl_kernel-0.3.21+cu130.tar.gz',"
            " 'filename': 'sgl_kernel-0.3.21+cu130.tar.gz'})]})] + testbed_layers[3:]")},
        'expect': ['sgl_kernel-0.3.21+cu130.tar.gz" is a source distribution; only prebuilt wheels are installed (no build on GPU hosts)'],
    },
    {
        'id': 'upstream-unreachable', 'title': 'unreachable upstream (the mirror URL names a host that does not resolve)',
        'vars': {'stack_declaration_mirror_url': 'http://upstream-mirror.invalid:8080'},
        'expect': ['PREFLIGHT upstream: not reachable from sglang-fault-1: '
                   'http://upstream-mirror.invalid:8080/nvidia/cuda/repos/debian12/x86_64/InRelease -> -1', 'Nothing was changed'],
    },
    {
        'id': 'sha256-mismatch', 'title': 'sha256 mismatch (the torch wheel declared with another sha256)',
        'vars': {'stack_declaration_layers': layers_with(
            "[testbed_layers[0] | combine({'packages': [testbed_layers[0].packages[0] | combine({'sha256': 'f' * 64})]"
            " + testbed_layers[0].packages[1:]})]"
            " + testbed_layers[1:]")},
        # Refused by the lock step on the controller, after the fleet-wide preflight gate: the index publishes the hash.
        'expect': ['LOCK: torch-2.11.0.dev20251231+cu130-cp311-cp311-manylinux_2_28_x86_64.whl: the index publishes sha256',
                   'the declaration says ' + 'f' * 64, 'Nothing was written and no host was changed'],
    },
]

# The chain of runs towards TARGET. Interrupts: 'after' = task headers that must have been printed, in
# order (the phase), 'host' = a regex for the host-side process of that phase to wait for (or a shell
# test), then SIGKILL. The patch fault is the injection that needs a built stack.
CHAIN = [
    {'id': 'int-cuda-apt', 'title': 'interrupt during the CUDA apt install', 'prepare': 'purge_cuda',
     'after': [r'TASK \[gpuops\.sglang_stack\.cuda_toolkit : Install the toolkit cuda-toolkit-'],
     'host': r'apt-get|dpkg'},
    {'id': 'int-layer-torch', 'title': 'interrupt during Python layer torch',
     'after': [r'Install the packages of layer torch\]'], 'host': r'pip install'},
    {'id': 'int-layer-flashinfer', 'title': 'interrupt during Python layer flashinfer',
     'after': [r'Install the packages of layer flashinfer\]'], 'host': r'pip install'},
    {'id': 'int-layer-sgl_kernel', 'title': 'interrupt during Python layer sgl_kernel',
     'after': [r'Install the packages of layer sgl_kernel\]'], 'host': r'pip install'},
    {'id': 'int-layer-sglang', 'title': 'interrupt during Python layer sglang (its requirements)',
     'after': [r'Install the packages of layer sglang\]'], 'host': r'pip install'},
    {'id': 'patch-stale', 'title': 'a patch that no longer applies (a site patch whose context does not match)',
     'stale_patch': True,
     'expect': ['patch %s does not apply to sglang 0.5.9: sglang/srt/distributed/parallel_state.py line 10' % STALE_PATCH,
                "expected 'this line is not in sglang 0.5.9'", 'nothing was changed']},
    {'id': 'int-patching', 'title': 'interrupt during patching',
     'after': [r'TASK \[gpuops\.sglang_stack\.nccl_patches : Apply the patch series to the installed SGLang\]'], 'host': r'python3'},
    # The switch's outage is one module call on the host (stop, flip, start, health gate): cut inside it.
    {'id': 'int-switch-stopped', 'title': 'interrupt at the switch: service down (stopped, or started and not healthy yet)',
     'after': [r'Stop the service, flip the links, start it and wait for the health gate\]'], 'host_test': 'health_down', 'switch': True},
    {'id': 'int-switch-flipped', 'title': 'interrupt at the switch: links flipped, the new stack not through its gates yet',
     'after': [r'Stop the service, flip the links, start it and wait for the health gate\]'],
     'host_test': 'current_is_target', 'switch': True},
    # The re-run after that cut: current already names the new stack and the service is stopped. The new
    # stack fails its health gate (the stand-in's fault file), so the run must still go back to the stack
    # that served before the cut (gated_switch's journal), not keep the new one as if it had served.
    {'id': 'resume-health-fails', 'title': 're-run after the cut switch, the new stack failing its health gate',
     'prepare': 'health_fault', 'resume': True,
     'expect': ['ROLLED BACK on sglang-fault-1: the health gate failed', 'Serving again, healthy: /opt/sglang/stacks/fault-base-']},
]


class Harness:
    def __init__(self, args):
        self.args = args
        self.host = args.host
        self.log_dir = os.path.join(args.workdir, 'fault-runs')
        os.makedirs(self.log_dir, exist_ok=True)
        self.ansible_playbook = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
        # One output format whatever ansible.cfg says: YAML results (messages unescaped, read by flat()).
        self.env = dict(os.environ, ANSIBLE_NOCOLOR='1', ANSIBLE_FORCE_COLOR='0', PYTHONUNBUFFERED='1',
                        ANSIBLE_STDOUT_CALLBACK='ansible.builtin.default', ANSIBLE_CALLBACK_RESULT_FORMAT='yaml')
        self.runs = 0

    # -- the container ---------------------------------------------------------------------------
    def probe(self, *argv):
        with open(PROBE, 'rb') as handle:
            proc = subprocess.run(['docker', 'exec', '-i', self.host, 'python3', '-'] + list(argv), stdin=handle,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
        return json.loads(proc.stdout.decode())

    def sh(self, script, check=True):
        proc = subprocess.run(['docker', 'exec', self.host, 'bash', '-c', script], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True, check=False)
        if check and proc.returncode != 0:
            raise RuntimeError('%s: %s' % (script, proc.stdout))
        return proc.stdout.strip()

    def snapshot(self):
        return self.probe('snapshot')

    # -- runs ------------------------------------------------------------------------------------
    def upgrade(self, name, extra, interrupt=None):
        """Run the upgrade on the fault host; with interrupt, SIGKILL it at the phase. Returns a dict."""
        self.runs += 1
        extra = dict({'stack_declaration_name': TARGET, 'sglang_upgrade_hosts': self.host}, **extra)
        argv = [self.ansible_playbook] + ['-i%s' % i for i in self.args.inventory] + [PLAYBOOK, '-e', json.dumps(extra)]
        log_path = os.path.join(self.log_dir, '%02d-%s.log' % (self.runs, name))
        started = time.time()
        out = []
        result = {'log': os.path.relpath(log_path, self.args.workdir), 'killed': False}
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=self.env,
                                universal_newlines=True, start_new_session=True)
        wanted = list(interrupt['after']) if interrupt else []
        for line in proc.stdout:
            out.append(line)
            if wanted and re.search(wanted[0], line):
                wanted.pop(0)
                if not wanted:
                    result.update(self.kill(proc, interrupt))
                    break
        out.extend(proc.stdout.read().splitlines(True) if not result['killed'] else [])
        proc.wait()
        result['rc'] = proc.returncode
        result['seconds'] = round(time.time() - started, 1)
        result['output'] = ''.join(out)
        with open(log_path, 'w') as handle:
            handle.write(' '.join(argv) + '\n' + result['output'])
        recap = re.search(r'^%s\s+: (ok=.*)$' % re.escape(self.host), result['output'], re.M)
        result['recap'] = re.sub(r'\s+', ' ', recap.group(1)) if recap else ''
        return result

    def kill(self, proc, interrupt):
        """Wait for the phase's host-side process, then SIGKILL the controller and the host side."""
        seen, deadline = '', time.time() + (0 if interrupt.get('kill_on_header') else 20)
        if interrupt.get('kill_on_header'):
            os.killpg(proc.pid, signal.SIGKILL)
        while time.time() < deadline or interrupt.get('kill_on_header') and not seen:
            if 'host' in interrupt:
                procs = self.probe('procs')
                match = [p for p in procs if re.search(interrupt['host'], p)]
                if match:
                    seen = match[0][:160]
                    break
            elif interrupt['host_test'] == 'service_down':
                state = self.sh('systemctl is-active sglang', check=False)
                if state != 'active':
                    seen = 'service %s' % state
                    break
            elif interrupt['host_test'] == 'health_down':
                code = self.sh('python3 -c "import urllib.request as u; print(u.urlopen(\'http://127.0.0.1:30000/health_generate\', '
                               'timeout=1).status)" 2>/dev/null || echo down', check=False)
                if code != '200':
                    seen = 'health %s' % code
                    break
            elif interrupt['host_test'] == 'current_is_target':
                link = self.sh('readlink /opt/sglang/current', check=False)
                if '/%s-' % TARGET in link:
                    seen = 'current -> %s' % link
                    break
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # killed on the header already, and reaped
            pass
        host_killed = self.probe('killtree')
        return {'killed': True, 'host_seen': seen or 'not seen before the kill', 'host_killed': [k[:160] for k in host_killed]}

    # -- checks ----------------------------------------------------------------------------------
    @staticmethod
    def untouched(before, after, switch=False):
        """Differences that break the rule: serving stack, current link, running service."""
        problems = []
        for key in ('current', 'serving_manifest', 'serving_files', 'unit'):
            # At a switch the links may have flipped: the old stack is then checked by its path (record()).
            flipped = switch and before['current'] != after['current']
            if before[key] != after[key] and not (switch and key != 'serving_manifest') and not flipped:
                problems.append('%s %s -> %s' % (key, before[key], after[key]))
        if not switch:
            if before['pid'] != after['pid']:
                problems.append('service MainPID %s -> %s' % (before['pid'], after['pid']))
            if after['health'] != '200':
                problems.append('health %s' % after['health'])
        return problems

    def resumed(self, after):
        """After the resumed switch failed its gate: the reference stack serves again, healthy, unchanged."""
        problems = []
        if after['current'] != self.reference['current']:
            problems.append('current %s, expected the stack that served before the cut switch (%s)' % (after['current'], self.reference['current']))
        if after['active'] != 'active' or after['health'] != '200':
            problems.append('service %s, health %s' % (after['active'], after['health']))
        digest = self.probe('stackdigest', self.reference['current'])
        if digest != self.reference['serving_manifest']:
            problems.append('the stack that served changed: %s -> %s' % (self.reference['serving_manifest'], digest))
        return problems

    @staticmethod
    def host_notes(before, after):
        notes = []
        new = sorted(set(after['stacks']) - set(before['stacks']))
        if new:
            notes.append('new stack directory left (not serving): %s' % ', '.join(new))
        if before['apt_sources'] != after['apt_sources']:
            notes.append('apt sources changed')
        if after['dpkg_audit']:
            notes.append('dpkg --audit: %s' % after['dpkg_audit'].splitlines()[0][:120])
        if before['cuda_toolkit'] != after['cuda_toolkit']:
            notes.append('cuda-toolkit-13-0: "%s" -> "%s"' % (before['cuda_toolkit'], after['cuda_toolkit']))
        return notes

    @staticmethod
    def flat(output):
        """The output with the result printer's wrapped YAML lines joined and its quote doubling undone."""
        return re.sub(r'\n[ \t]+', ' ', output).replace("''", "'")

    @staticmethod
    def failure_line(output):
        """The run's failure message, as an operator reads it (the first failed task's msg)."""
        for line in re.sub(r'\n[ \t]+', ' ', output).splitlines():
            if line.startswith(('fatal:', 'failed:')):
                quoted = re.search(r" msg: '((?:[^']|'')*)'", line)
                if quoted:
                    return quoted.group(1).replace("''", "'")[:400]
                plain = re.search(r' msg: (?:\|-?\s*)?(.*)$', line)
                return (plain.group(1) if plain else line)[:400]
        return ''

    # -- injections ------------------------------------------------------------------------------
    def set_profile(self, spec):
        if spec is None:
            self.sh('echo rtx-pro-6000-x8 > /etc/gpu-standin/profile && rm -rf /usr/share/gpu-standin/profiles/fault-*')
            return
        seds = ' '.join("-e 's/%s/%s/g'" % (re.escape(a).replace('/', r'\/'), b) for a, b in spec['replace'])
        self.sh('set -e; d=/usr/share/gpu-standin/profiles; rm -rf $d/{0}; cp -a $d/rtx-pro-6000-x8 $d/{0}; '
                'find $d/{0} -type f -exec sed -i {1} {{}} +; echo {0} > /etc/gpu-standin/profile'.format(spec['name'], seds))

    def stale_patch_vars(self):
        path = os.path.join(self.args.workdir, STALE_PATCH)
        with open(path, 'w') as handle:
            handle.write(STALE_PATCH_TEXT)
        defaults = ['0002-torch-symm-mem-guard.patch', '0003-nccl-log-allreduce-path.patch']
        return {'nccl_patches_files': defaults + [path]}

    def run_injection(self, case):
        if case.get('host_profile'):
            self.set_profile(case['host_profile'])
        try:
            run = self.upgrade(case['id'], case.get('vars', {}))
        finally:
            if case.get('host_profile'):
                self.set_profile(None)
        return run

    # -- the whole sequence ----------------------------------------------------------------------
    def main(self):
        results = {'host': self.host, 'target': TARGET, 'started': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'),
                   'cases': []}
        t0 = time.time()
        reference = self.snapshot()
        self.reference = reference
        ref_stack = reference['current']
        results['reference'] = {'stack': ref_stack}
        before = reference
        ok = True
        for case in INJECTIONS if not self.args.chain_only else []:
            run = self.run_injection(case)
            after = self.snapshot()
            ok &= self.record(results, case, 'injected', run, before, after)
            before = after
        if self.args.only:
            with open(self.args.results, 'w') as handle:
                json.dump(results, handle, indent=2)
            return 0 if ok else 1
        # The chain towards TARGET (with --scope injected: only its injected cases, no interrupt).
        started = not self.args.start_at
        for case in CHAIN:
            started = started or case['id'] == self.args.start_at
            if not started or self.args.scope == 'injected' and ('after' in case or case.get('prepare')):
                continue
            if case.get('prepare') == 'purge_cuda':
                # The converge installed the toolkit; remove it so that this run installs it again.
                self.sh('apt-get purge -y -q cuda-toolkit-13-0 >/dev/null')
                before = self.snapshot()
            if case.get('prepare') == 'health_fault':
                self.sh('echo \'{"health_status": 503}\' > "$(readlink /opt/sglang/current)/standin-faults.json"')
                before = self.snapshot()
            if 'after' in case:
                run = self.upgrade(case['id'], {}, interrupt=case)
            else:
                run = self.upgrade(case['id'], self.stale_patch_vars() if case.get('stale_patch') else {})
            if case.get('prepare') == 'health_fault':
                self.sh('rm -f /opt/sglang/stacks/%s-*/standin-faults.json' % TARGET)
            after = self.snapshot()
            ok &= self.record(results, case, 'interrupt' if 'after' in case else 'injected', run, before, after)
            before = after
        final = self.upgrade('plain-rerun', {})
        after = self.snapshot()
        ok &= self.check_final(results, final, reference, after)
        results['seconds'] = round(time.time() - t0, 1)
        results['ok'] = bool(ok)
        self.mark_reruns(results)
        with open(self.args.results, 'w') as handle:
            json.dump(results, handle, indent=2)
        results['scope'] = self.args.scope
        if self.args.doc and self.args.scope == 'all' and not (self.args.chain_only or self.args.start_at):
            with open(self.args.doc, 'w') as handle:
                handle.write(render(results))
        return 0 if ok else 1

    def record(self, results, case, kind, run, before, after):
        problems = []
        if run['rc'] == 0:
            problems.append('the run did not fail (rc 0)')
        missing = [t for t in case.get('expect', []) if t not in self.flat(run['output'])]
        if missing:
            problems.append('message lacks %s' % missing)
        broken = self.resumed(after) if case.get('resume') else self.untouched(before, after, switch=case.get('switch', False))
        if case.get('switch') and after['current'] != before['current']:
            # The links flipped: the stack that served must still be byte for byte what it was.
            digest = self.probe('stackdigest', before['current'])
            if digest != before['serving_manifest']:
                broken.append('the stack that served (%s) changed: %s -> %s' % (before['current'], before['serving_manifest'], digest))
        if case.get('switch'):
            if after['current'] != before['current'] and '/%s-' % TARGET not in after['current']:
                broken.append('current points at neither stack: %s' % after['current'])
        problems.extend(broken)
        if kind == 'injected' and before['apt_sources'] != after['apt_sources']:
            # A refused upgrade must leave the host as it found it, apt's sources included.
            problems.append('apt sources changed by a refused run')
        entry = {
            'id': case['id'], 'title': case['title'], 'kind': kind, 'rc': run['rc'], 'seconds': run['seconds'],
            'log': run['log'], 'recap': run['recap'], 'expect': case.get('expect', []), 'message': self.failure_line(run['output']),
            'interrupt': {k: run[k] for k in ('host_seen', 'host_killed') if k in run},
            'before': before, 'after': after, 'serving_untouched': not broken, 'notes': self.host_notes(before, after),
            'problems': problems, 'resume': bool(case.get('resume')),
        }
        if case.get('switch'):
            entry['notes'].append('service %s (health %s), current -> %s: the switch was cut between stop and start'
                                  % (after['active'], after['health'], os.path.basename(after['current'])))
        results['cases'].append(entry)
        return not problems

    def check_final(self, results, final, reference, after):
        problems = []
        if final['rc'] != 0:
            problems.append('plain re-run failed rc %s: %s' % (final['rc'], self.failure_line(final['output'])))
        ref_id = os.path.basename(reference['current'])
        digest = ref_id.rsplit('-', 1)[1]
        want = '/opt/sglang/stacks/%s-%s' % (TARGET, digest)
        if after['current'] != want:
            problems.append('current %s, expected %s' % (after['current'], want))
        if after['active'] != 'active' or after['health'] != '200':
            problems.append('service %s, health %s' % (after['active'], after['health']))
        if after['dpkg_audit'] or after['cuda_toolkit'] != reference['cuda_toolkit']:
            problems.append('dpkg: %s / cuda-toolkit-13-0 %s' % (after['dpkg_audit'], after['cuda_toolkit']))
        ref_files = self.probe('manifest', reference['current'])
        new_files = self.probe('manifest', want) if after['current'] == want else {}
        diff = sorted(k for k in set(ref_files) | set(new_files) if ref_files.get(k) != new_files.get(k))
        known = {k: v for k, v in KNOWN_DIFFERENCES.items() if k in diff}
        diff = [d for d in diff if d not in known]
        bom_new = json.loads(self.sh('cat %s/bom.json' % want, check=False) or '{}')
        bom_diff = [d for d in diff if d == 'bom.json']
        if bom_new.get('drift', True):
            problems.append('bom.json reports drift or is missing')
        if diff:
            problems.append('%d files differ from the reference build: %s' % (len(diff), diff[:8]))
        results['final'] = {
            'rc': final['rc'], 'seconds': final['seconds'], 'log': final['log'], 'recap': final['recap'], 'after': after,
            'expected_current': want, 'files_compared': len(ref_files), 'files_differing': diff[:20], 'bom_differs': bom_diff,
            'known_differences': known,
            'problems': problems,
        }
        return not problems

    @staticmethod
    def mark_reruns(results):
        """Who re-ran each case: the next run of the chain (it had to pass this case's phase) or the final run."""
        cases = results['cases']
        final_ok = not results['final']['problems']
        for index, case in enumerate(cases):
            nxt = cases[index + 1] if index + 1 < len(cases) else None
            if case['id'] == 'resume-health-fails':
                case['rerun'] = 'back on the stack that served before the cut switch, healthy; the plain re-run completed' \
                    if final_ok else 'the plain re-run FAILED'
            elif case['kind'] == 'injected' and case['id'] != 'patch-stale' and not case['notes']:
                case['rerun'] = 'host left as before the fault; the chain from the same state and the plain re-run completed' \
                    if final_ok else 'the plain re-run failed'
            elif case['id'] not in ('patch-stale', 'int-switch-flipped') and nxt is not None and (
                    nxt['id'] == 'patch-stale' or nxt['kind'] == 'interrupt' and nxt['interrupt'].get('host_seen')):
                # The next run reached a later phase, so it passed this case's point first.
                case['rerun'] = 'the next run (%s) got past this point%s' % (
                    nxt['id'], '; the plain re-run completed' if final_ok else '; the plain re-run FAILED')
            else:
                case['rerun'] = 'the plain re-run completed' if final_ok else 'the plain re-run FAILED'
            case['passed'] = not case['problems'] and final_ok


def render(results):
    lines = [
        '# Reliability of the upgrade: fault cases',
        '',
        'Generated by the fault harness (`molecule test -s faults`: molecule/faults drives',
        '`tests/faults/run_faults.py`); do not edit by hand. Run of %s on one Debian 12 test container'
        % results['started'],
        '(systemd, 8x RTX PRO 6000 GPU stand-in, the stand-in SGLang server); every artifact from the local mirror.',
        '',
        'Stack `fault-base` serves (built uninterrupted by the converge: the reference). Every case is an operator run',
        '(`ansible-playbook gpuops.sglang_stack.upgrade`) towards stack `%s`, which has the same content as the' % results['target'],
        'reference under another name. Before and after each run: a sha256 manifest of the serving stack, the',
        '`current` link, the unit, the service MainPID and `GET /health_generate`. An interrupt is SIGKILL of',
        'the controller (its process group) once the phase\'s task started and its process was seen on the host, and',
        'SIGKILL of what the task still ran on the host (a lost operator session takes both).',
        'The run after an interrupt is the next case\'s run, which had to get past the interrupted point;',
        'the last run is plain (no fault) and is compared with the reference.',
        '',
        '| # | case | kind | outcome of the faulty run (rc, message) | serving stack, current, service | re-run | s |',
        '|---|---|---|---|---|---|---|',
    ]
    for number, case in enumerate(results['cases'], 1):
        if case['kind'] == 'interrupt':
            killed = case['interrupt'].get('host_killed', [])
            programs = sorted(set(os.path.basename(k.split()[0]) for k in killed if k))
            what = 'rc %s: SIGKILL once seen on the host: `%s`; host side killed: %s' % (
                case['rc'], case['interrupt'].get('host_seen', '')[:90].replace('|', '\\|'),
                ('%d processes (%s)' % (len(killed), ', '.join(programs))) if killed else 'nothing left running')
        else:
            what = 'rc %s: `%s`' % (case['rc'], (case['message'] or '(no failure line)').replace('|', '\\|')[:300])
        held = '%s (%s, %d files, PID %s, health %s)' % (
            'serves again' if case.get('resume') else 'untouched', os.path.basename(case['after']['current']),
            case['after']['serving_files'], case['after']['pid'], case['after']['health']) \
            if case['serving_untouched'] else 'CHANGED'
        if case['notes']:
            held += '; ' + '; '.join(case['notes'])
        if case['problems']:
            held += '; **problems: %s**' % '; '.join(case['problems'])
        lines.append('| %d | %s | %s | %s | %s | %s | %s |' % (
            number, case['title'], case['kind'], what.replace('\n', ' '), held.replace('|', '\\|'),
            ('PASS: ' if case['passed'] else 'FAIL: ') + case['rerun'], case['seconds']))
    final = results['final']
    lines += [
        '',
        '## The plain re-run after the last fault',
        '',
        '- rc %s in %s s (%s)' % (final['rc'], final['seconds'], final['recap']),
        '- current -> `%s` (expected `%s`), service %s, health %s' % (
            final['after']['current'], final['expected_current'], final['after']['active'], final['after']['health']),
        '- against the uninterrupted reference (fault-base, same content digest): %d files of the stack compared by sha256'
        ' (bom.json included; the stack id normalised, no __pycache__, no verify.json), differing: %s' % (
            final['files_compared'], final['files_differing'] or 'none'),
        '- known differences, reported: %s' % ('; '.join('`%s`: %s' % kv for kv in final['known_differences'].items()) or 'none'),
        '- dpkg --audit: %s; cuda-toolkit-13-0: %s' % (final['after']['dpkg_audit'] or 'clean', final['after']['cuda_toolkit']),
        '- problems: %s' % ('; '.join(final['problems']) or 'none'),
        '',
        'All cases: %s; harness time %s s. Logs of every run: `fault-runs/` in the scenario\'s ephemeral directory.'
        % ('PASS' if results['ok'] else 'FAIL', results['seconds']),
        '',
    ]
    return '\n'.join(lines)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--inventory', action='append', required=True)
    parser.add_argument('--workdir', required=True)
    parser.add_argument('--results', required=True)
    parser.add_argument('--doc', default='')
    parser.add_argument('--host', default='sglang-fault-1')
    parser.add_argument('--chain-only', action='store_true', help='skip the injected faults before the chain (development)')
    parser.add_argument('--start-at', default='', help='chain case id to start the chain at (development; with --chain-only)')
    parser.add_argument('--only', default='', help='comma-separated injection ids to run alone (development)')
    parser.add_argument('--scope', choices=['all', 'injected'], default='all',
                        help='injected: the injected faults and the plain re-run, not the interrupt chain (the test command\'s '
                             'default, to keep it short); all: every case (renders docs/reliability.md)')
    return parser.parse_args()


if __name__ == '__main__':
    ARGS = parse_args()
    if ARGS.only:
        INJECTIONS[:] = [c for c in INJECTIONS if c['id'] in ARGS.only.split(',')]
    try:
        sys.exit(Harness(ARGS).main())
    except Exception:  # pylint: disable=broad-except
        # The scenario reads the results file: say there what broke the harness itself.
        with open(ARGS.results, 'w') as results_file:
            json.dump({'ok': False, 'cases': [], 'harness_error': traceback.format_exc()}, results_file, indent=2)
        raise
