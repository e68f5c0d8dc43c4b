# The import gate's runner (tasks/import_gate.py), run with the new stack's interpreter as the service user with the
# unit's environment: each check is its own interpreter (`-c "import M"` or `-m M --help`), as before, but up to N of
# them run at once; every check's rc and stderr are printed as one JSON list, in the order given. Standard library only.
# argv: PYTHON N CHECKS_JSON, CHECKS_JSON {"import": [module, ...], "run": [module, ...]}.
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def run(check):
    check['cmd'] = [sys.argv[1], '-c', 'import ' + check['__python_stack_module']] if check['kind'] == 'import' \
        else [sys.argv[1], '-m', check['__python_stack_module'], '--help']
    proc = subprocess.run(check['cmd'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    stderr = proc.stderr.decode('utf-8', 'replace')[-30000:]
    return dict(check, rc=proc.returncode, stderr=stderr, stderr_lines=stderr.splitlines(),
                stdout=proc.stdout.decode('utf-8', 'replace')[-2000:])


with ThreadPoolExecutor(max(1, int(sys.argv[2]))) as pool:
    checks = json.loads(sys.argv[3])
    print(json.dumps(list(pool.map(run, [{'__python_stack_module': module, 'kind': kind}
                                         for kind in ('import', 'run') for module in checks.get(kind) or []]))))
