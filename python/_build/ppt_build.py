"""The package's own PEP 517 build backend: it needs nothing to build.

`pip install ./python` then works where no package index is reachable (and
`--no-build-isolation` is not needed): there is no setuptools or wheel to
fetch. A wheel is a zip of the package's Python files, one copy of the
native library and the metadata (PEP 427); that is all this writes.

The library shipped is PPT_SHIM_LIBRARY (a path to libppt_shim.so, read at
build time) if set, else the first libppt_shim.so* already in
pp_timeline_shim/. Either way it is stored once, as
pp_timeline_shim/libppt_shim.so (a symlink chain such as .so -> .so.0 ->
.so.0.1.0 would otherwise be three copies of the same file).
"""
import base64
import hashlib
import os
import zipfile

NAME = "pp_timeline_shim"
DIST = "pp_timeline_shim"
VERSION = "0.1.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUMMARY = ("Times pipeline-parallel jobs on a CUDA stream and logs them as PaddlePaddle's job "
           "schedule profiler does (ctypes over libppt_shim.so)")


def _metadata():
    return ("Metadata-Version: 2.1\nName: pp-timeline-shim\nVersion: %s\nSummary: %s\n"
            "Requires-Python: >=3.8\n" % (VERSION, SUMMARY))


def _wheel_file():
    return ("Wheel-Version: 1.0\nGenerator: ppt_build\nRoot-Is-Purelib: false\n"
            "Tag: py3-none-any\n")


def _library():
    path = os.environ.get("PPT_SHIM_LIBRARY")
    if path:
        if not os.path.isfile(path):
            raise FileNotFoundError("PPT_SHIM_LIBRARY=%s: no such file" % path)
        return os.path.realpath(path)
    pkg = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.startswith("libppt_shim.so"):
            return os.path.realpath(os.path.join(pkg, name))
    return None


def _files():
    """(path in the wheel, path on disk) of every file shipped."""
    pkg = os.path.join(HERE, NAME)
    out = []
    for root, dirs, names in os.walk(pkg):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                full = os.path.join(root, name)
                out.append((os.path.relpath(full, HERE).replace(os.sep, "/"), full))
    lib = _library()
    if lib is not None:
        out.append((NAME + "/libppt_shim.so", lib))
    return out


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = "%s-%s.dist-info" % (DIST, VERSION)
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, "METADATA"), "w") as f:
        f.write(_metadata())
    with open(os.path.join(metadata_directory, info, "WHEEL"), "w") as f:
        f.write(_wheel_file())
    return info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = "%s-%s-py3-none-any.whl" % (DIST, VERSION)
    info = "%s-%s.dist-info" % (DIST, VERSION)
    records = []
    tmp = os.path.join(wheel_directory, name + ".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as whl:
        def add(arcname, data, mode=0o644):
            zi = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(zi, data)
            records.append(_record_line(arcname, data))

        for arcname, path in _files():
            with open(path, "rb") as f:
                add(arcname, f.read(), 0o755 if arcname.endswith(".so") else 0o644)
        add(info + "/METADATA", _metadata().encode())
        add(info + "/WHEEL", _wheel_file().encode())
        records.append(info + "/RECORD,,")
        zi = zipfile.ZipInfo(info + "/RECORD", date_time=(2020, 1, 1, 0, 0, 0))
        whl.writestr(zi, "\n".join(records) + "\n")
    os.replace(tmp, os.path.join(wheel_directory, name))
    return name


build_editable = None  # not offered: install a wheel, or use PYTHONPATH=python
del build_editable
