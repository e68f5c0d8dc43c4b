"""Test bed (molecule/first_upgrade): what a first upgrade must leave alone, as one JSON object on stdout.

    snapshot.py CONFIG_JSON

CONFIG_JSON: {"files": [paths], "trees": [dirs], "links": [paths], "unit": "name"}. Each file: its sha256
(null when absent); each tree: one sha256 over every entry's relative path, type, mode and content (a link's
target), __pycache__ directories left out (Python writes them at import time; they are not the baseline's
files); each link: its target; the unit: MainPID, ActiveState, NRestarts and the start time, which change if it
was restarted.
"""
import hashlib
import json
import os
import stat
import subprocess
import sys


def file_sha256(path):
    if not os.path.lexists(path):
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_sha256(root):
    if not os.path.isdir(root):
        return None
    digest = hashlib.sha256()
    count = 0
    stack = [""]
    while stack:
        rel = stack.pop()
        for name in sorted(os.listdir(os.path.join(root, rel)), reverse=True):
            if name == "__pycache__":
                continue
            entry = os.path.join(rel, name)
            full = os.path.join(root, entry)
            info = os.lstat(full)
            mode = stat.S_IMODE(info.st_mode)
            count += 1
            if stat.S_ISLNK(info.st_mode):
                digest.update(("L %s %s\n" % (entry, os.readlink(full))).encode())
            elif stat.S_ISDIR(info.st_mode):
                digest.update(("D %s %o\n" % (entry, mode)).encode())
                stack.append(entry)
            elif stat.S_ISREG(info.st_mode):
                digest.update(("F %s %o %s\n" % (entry, mode, file_sha256(full))).encode())
            else:
                digest.update(("O %s %o\n" % (entry, info.st_mode)).encode())
    return "%s (%d entries)" % (digest.hexdigest(), count)


def unit_state(name):
    props = ["MainPID", "ActiveState", "SubState", "NRestarts", "ExecMainStartTimestampMonotonic"]
    out = subprocess.run(["systemctl", "show", name, "--property=" + ",".join(props)],
                         capture_output=True, text=True, check=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def main(argv):
    config = json.loads(argv[0])
    result = {
        "files": {path: file_sha256(path) for path in config.get("files", [])},
        "trees": {path: tree_sha256(path) for path in config.get("trees", [])},
        "links": {path: os.readlink(path) if os.path.islink(path) else None for path in config.get("links", [])},
    }
    if config.get("unit"):
        result["unit"] = unit_state(config["unit"])
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
