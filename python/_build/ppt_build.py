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

The wheel is tagged for the platform its library loads on, read from the
library itself (an ELF file): its machine, and the newest GLIBC_ symbol
version it needs (the version needs of .gnu.version_r, which is what
`readelf -V` lists), e.g. py3-none-manylinux_2_34_x86_64; pip then refuses
it on another architecture or an older glibc instead of installing a
library that cannot load. A wheel without a library is py3-none-any.
"""
import base64
import hashlib
import os
import re
import struct
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


# ELF e_machine values (the System V ABI's registry) and pip's names for them.
_MACHINES = {3: "i686", 62: "x86_64", 40: "armv7l", 183: "aarch64", 21: "ppc64le",
             22: "s390x", 243: "riscv64"}
_SHT_GNU_VERNEED = 0x6FFFFFFE


def elf_platform(path):
    """(machine, (glibc major, minor) or None) of the ELF library at `path`,
    or None when it is not a little-endian 64-bit ELF file pip can tag."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    machine = _MACHINES.get(struct.unpack_from("<H", data, 18)[0])
    if machine is None:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = []
    for i in range(shnum):
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info
        sections.append(struct.unpack_from("<IIQQQQII", data, shoff + i * shentsize))
    newest = None
    for _, kind, _, _, offset, _, link, count in sections:
        if kind != _SHT_GNU_VERNEED:
            continue
        strtab = sections[link][4]
        entry = offset
        for _ in range(count):
            _, aux_count, _, aux, following = struct.unpack_from("<HHIII", data, entry)
            at = entry + aux
            for _ in range(aux_count):
                _, _, _, name, next_aux = struct.unpack_from("<IHHII", data, at)
                end = data.index(b"\0", strtab + name)
                m = re.match(rb"GLIBC_(\d+)\.(\d+)$", data[strtab + name:end])
                if m:
                    version = (int(m.group(1)), int(m.group(2)))
                    newest = version if newest is None else max(newest, version)
                at += next_aux
            entry += following
    return machine, newest


def platform_tag():
    """The wheel's platform tag, from the library it ships."""
    lib = _library()
    found = elf_platform(lib) if lib is not None else None
    if found is None:
        return "any"
    machine, glibc = found
    if glibc is None:
        return "linux_" + machine
    return "manylinux_%d_%d_%s" % (glibc[0], glibc[1], machine)


def _wheel_file():
    return ("Wheel-Version: 1.0\nGenerator: ppt_build\nRoot-Is-Purelib: false\n"
            "Tag: py3-none-%s\n" % platform_tag())


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
    name = "%s-%s-py3-none-%s.whl" % (DIST, VERSION, platform_tag())
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
