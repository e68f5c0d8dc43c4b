# The import gate's runner (tasks/import_gate.yml), run with the new stack's interpreter as the service user with the
# unit's environment. Standard library only. argv: PYTHON N CHECKS_JSON, CHECKS_JSON {"import": [module, ...],
# "run": [module, ...]}. Prints every check's rc and stderr as one JSON list, imports first, in the order given.
#
# - The modules of "import" are imported one after another, in the order given, in ONE interpreter: each is reported
#   on its own (the traceback of its failure, as the interpreter prints an uncaught one). Each of them imports torch;
#   one interpreter per module cost a minute per gate on 2 cores (issue 15's sglang-only upgrade).
#   If that interpreter dies without a verdict for every module (a crash in native code, an exit at import), the
#   modules left are checked again each in its own interpreter, so the one that kills it is named.
# - Each module of "run" is its own fresh interpreter, `python -m M --help`, as the service starts one: what a start
#   imports, in a start's order, with nothing imported before it.
# - Up to N interpreters run at once.
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

MARK = '\x00python_stack_gate '
# Run with -c in the checked interpreter: imports each module of argv[1:] and writes one marked line per module.
IMPORTER = r'''
import json, sys, traceback
for module in sys.argv[1:]:
    try:
        __import__(module)
        verdict = {'rc': 0, 'stderr': ''}
    except BaseException:
        verdict = {'rc': 1, 'stderr': traceback.format_exc()}
    sys.stdout.flush()
    sys.stdout.write(%r + json.dumps(dict(verdict, module=module)) + '\n')
    sys.stdout.flush()
''' % MARK


def result(check, proc_rc, stdout, stderr):
    stderr = stderr[-30000:]
    if proc_rc != 0 and not stderr.strip():
        stderr = 'the interpreter exited with status %d and printed nothing on stderr' % proc_rc
    return dict(check, rc=proc_rc, stderr=stderr, stderr_lines=stderr.splitlines(), stdout=stdout[-2000:])


def run_one(check):
    check = dict(check, cmd=[sys.argv[1], '-c', 'import ' + check['__python_stack_module']] if check['kind'] == 'import'
                 else [sys.argv[1], '-m', check['__python_stack_module'], '--help'])
    proc = subprocess.run(check['cmd'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    return [result(check, proc.returncode, proc.stdout.decode('utf-8', 'replace'), proc.stderr.decode('utf-8', 'replace'))]


def import_all(modules):
    proc = subprocess.run([sys.argv[1], '-c', IMPORTER] + modules, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          check=False)
    stdout = proc.stdout.decode('utf-8', 'replace')
    verdicts = {}
    for line in stdout.splitlines():
        if line.startswith(MARK):
            verdict = json.loads(line[len(MARK):])
            verdicts[verdict['module']] = verdict
    done = []
    for module in modules:
        if module not in verdicts:
            break
        check = {'__python_stack_module': module, 'kind': 'import', 'cmd': [sys.argv[1], '-c', 'import ' + module]}
        done.append(result(check, verdicts[module]['rc'], '', verdicts[module]['stderr']))
    # The interpreter died in the middle: each module left in its own interpreter.
    for module in modules[len(done):]:
        done += run_one({'__python_stack_module': module, 'kind': 'import'})
    return done


checks = json.loads(sys.argv[3])
jobs = []
if checks.get('import'):
    jobs.append((import_all, list(checks['import'])))
jobs += [(run_one, {'__python_stack_module': module, 'kind': 'run'}) for module in checks.get('run') or []]
with ThreadPoolExecutor(max(1, int(sys.argv[2]))) as pool:
    print(json.dumps([r for rs in pool.map(lambda job: job[0](job[1]), jobs) for r in rs]))
