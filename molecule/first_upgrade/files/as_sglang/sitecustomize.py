"""TEST BED ONLY (molecule/first_upgrade): serve `python -m sglang.launch_server` with the stand-in server.

The baseline unit runs the real SGLang 0.5.9 checkout's interpreter as a site does,
`<venv>/bin/python -m sglang.launch_server ...`, so /proc/<pid>/cmdline is the real one. There is no GPU and no
model here, so the module that runs is the SGLang stand-in (molecule/resources/sglang_standin), found under the
real module name: runpy imports the real `sglang` package of the checkout, then asks the import system for
`sglang.launch_server`, and this finder answers with the stand-in's file. Only the unit's test bed drop-in puts
this directory on PYTHONPATH; nothing else on the host sees it.
"""
import importlib.abc
import importlib.util
import os
import sys

STANDIN_LAUNCH_SERVER = os.environ.get(
    "SGLANG_STANDIN_LAUNCH_SERVER", "/usr/local/lib/sglang-standin/sglang_standin/launch_server.py")


class _StandinLaunchServer(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "sglang.launch_server":
            return importlib.util.spec_from_file_location(fullname, STANDIN_LAUNCH_SERVER)
        return None


sys.meta_path.insert(0, _StandinLaunchServer())
