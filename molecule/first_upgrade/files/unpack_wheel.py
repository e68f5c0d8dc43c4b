"""Test bed (molecule/first_upgrade): unpack part of a real wheel where a host keeps it.

    unpack_wheel.py WHEEL PREFIX DEST [--skip-package-markers]

Every entry under PREFIX goes to DEST (PREFIX taken off), with its mode bits. --skip-package-markers leaves out
the empty __init__.py files that only make NVIDIA's wheels importable (a toolkit prefix has none).
"""
import os
import sys
import zipfile


def main(argv):
    wheel, prefix, dest = argv[:3]
    skip_markers = "--skip-package-markers" in argv[3:]
    count = 0
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if not info.filename.startswith(prefix) or info.is_dir():
                continue
            rel = info.filename[len(prefix):]
            if skip_markers and os.path.basename(rel) == "__init__.py" and info.file_size == 0:
                continue
            target = os.path.join(dest, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with archive.open(info) as src, open(target, "wb") as out:
                out.write(src.read())
            mode = (info.external_attr >> 16) & 0o777
            os.chmod(target, mode if mode else 0o644)
            count += 1
    if count == 0:
        sys.exit("unpack_wheel.py: no entry under %s in %s" % (prefix, wheel))
    print("%d files from %s under %s" % (count, os.path.basename(wheel), dest))


if __name__ == "__main__":
    main(sys.argv[1:])
