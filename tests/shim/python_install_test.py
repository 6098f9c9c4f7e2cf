#!/usr/bin/env python3
"""The Python package installs offline and works from where it was installed.

The wheel is tagged for the platform its library loads on (pip would
install a py3-none-any wheel on aarch64 or an older glibc, where the
library cannot load): its architecture and the newest GLIBC_ version the
library needs, as `readelf -V` lists them.

`pip install --no-index --no-build-isolation ./python` into a temporary
directory (nothing may be fetched), then, in a fresh interpreter that sees
only that directory, the package finds the one library it shipped and times
a job. argv: the python/ directory, libppt_shim.so.
"""
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

source, library = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
failures = []

with tempfile.TemporaryDirectory() as d:
    target = os.path.join(d, "site")
    env = dict(os.environ, PPT_SHIM_LIBRARY=library, PIP_NO_INDEX="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index",
                        "--no-build-isolation", "--target", target, source],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print(r.stdout)
        print("FAIL: pip install failed")
        sys.exit(1)
    wheels = os.path.join(d, "wheels")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-index", "--no-build-isolation",
                        "--no-deps", "-w", wheels, source],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    built = os.listdir(wheels) if r.returncode == 0 and os.path.isdir(wheels) else []
    if len(built) != 1:
        print(r.stdout)
        failures.append("pip wheel made %r" % built)
    else:
        tag = built[0][:-len(".whl")].split("-")[-1]
        machine = platform.machine()
        want = None
        if shutil.which("readelf"):
            versions = re.findall(r"GLIBC_(\d+)\.(\d+)", subprocess.run(
                ["readelf", "-V", library], stdout=subprocess.PIPE, text=True).stdout)
            newest = max((int(a), int(b)) for a, b in versions)
            want = "manylinux_%d_%d_%s" % (newest[0], newest[1], machine)
        else:
            print("readelf not found: the tag's glibc version is not checked")
        if (want is not None and tag != want) or not tag.endswith("_" + machine) or \
                not tag.startswith("manylinux_"):
            failures.append("the wheel %s is tagged %s, not for the platform its library loads "
                            "on (%s)" % (built[0], tag, want or machine))
        else:
            print("wheel", built[0])
    pkg = os.path.join(target, "pp_timeline_shim")
    libs = sorted(n for n in os.listdir(pkg) if n.startswith("libppt_shim"))
    if libs != ["libppt_shim.so"]:
        failures.append("the package ships %r, not one libppt_shim.so" % libs)
    elif os.path.islink(os.path.join(pkg, libs[0])):
        failures.append("the shipped library is a link")
    # The source tree is left as it was.
    leftovers = [n for n in os.listdir(os.path.join(source, "pp_timeline_shim"))
                 if n.startswith("libppt_shim") or n.endswith(".egg-info")]
    if leftovers or os.path.exists(os.path.join(source, "build")):
        failures.append("the install wrote into the source tree: %r" % leftovers)
    check = (
        "import os, pp_timeline_shim as ppt\n"
        "lines = []\n"
        "s = ppt.Shim(flags=ppt.HOST_CLOCK | ppt.IGNORE_ENV, sink=lines.append)\n"
        "with s.job('forward', 0):\n"
        "    pass\n"
        "s.flush(0)\n"
        "assert ppt.__file__.startswith(%r), ppt.__file__\n"
        "assert len(lines) == 1 and 'type = forward' in lines[0], lines\n"
        "print('imported from', os.path.dirname(ppt.__file__))\n" % target)
    run_env = {k: v for k, v in os.environ.items()
               if k not in ("PPT_SHIM_LIBRARY", "PYTHONPATH", "LD_LIBRARY_PATH")}
    run_env["PYTHONPATH"] = target
    r = subprocess.run([sys.executable, "-c", check], env=run_env, cwd=d,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(r.stdout.strip())
    if r.returncode != 0:
        failures.append("the installed package does not work")

for f in failures:
    print("FAIL:", f)
print("ok" if not failures else "%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
