"""A host CPython (pyenv, uv-managed) copied whole into a Debian root filesystem, at its own
path: which interpreters can be copied, the trimmed archive of one, the Debian libraries it
links to, and the shell checks that prove it runs there.

Docker base images are built this way when no ``python:3.X-slim`` can be pulled
(:mod:`benchsmith.sandbox.docker.base`), and the setup-agent benchmark's ``benchsmith`` agent
gives a stand-in container the system Python of the image a task names the same way.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

from benchsmith.sandbox.pythons import host_pythons, version_key

# Modules whose import proves the interpreter's shared libraries are all there.
IMPORT_CHECK = "import ssl, sqlite3, zlib, ctypes, bz2, lzma, readline, uuid, hashlib"
IMPORT_CHECK_2 = "import ssl, sqlite3, zlib, ctypes, bz2, readline, uuid, hashlib"  # no lzma
# The Debian 12 packages with the shared libraries a CPython built on this kind of host links to.
RUNTIME_LIBRARIES = (
    "libssl3", "libffi8", "libsqlite3-0", "libbz2-1.0", "liblzma5", "libreadline8",
    "libncursesw6", "libexpat1", "libnsl2", "libtirpc3", "libuuid1", "zlib1g",
)
# What stays of the prefix's bin/: the interpreter and its own tools, not the host's scripts.
_KEPT_PROGRAMS = ("python", "pydoc", "2to3", "idle")


def relocatable_prefix(interpreter: str, python: str) -> Path | None:
    """The installation prefix of `interpreter` if it can be copied whole into an image."""
    prefix = Path(interpreter).resolve().parent.parent
    if str(prefix) in ("/", "/usr", "/usr/local", "/opt"):
        return None  # a system Python: its prefix holds far more than Python
    if not (prefix / "lib" / f"python{python}").is_dir():
        return None
    return prefix if (prefix / "bin" / f"python{python}").exists() else None


def buildable_pythons(python2: bool = False) -> dict[str, str]:
    """Host CPython versions (3.6+, and 2.7 with `python2`) that can be copied into a container,
    mapped to their prefix."""
    found: dict[str, str] = {}
    for version, interpreter in host_pythons().items():
        if version_key(version) < (3, 6) and not (python2 and version == "2.7"):
            continue
        prefix = relocatable_prefix(interpreter, version)
        if prefix is not None:
            found[version] = str(prefix)
    return found


def add_interpreter(tar: tarfile.TarFile, prefix: Path, python: str, arcname: str) -> None:
    """Add the prefix of host Python `python` to `tar` under `arcname`, without the host's own
    packages and console scripts (a venv would not see them anyway), CPython's large test
    suite (``test.support`` stays: test helpers import it) and the static library."""
    lib = f"{arcname}/lib/python{python}/"
    programs = f"{arcname}/bin/"

    def trim(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
        path = member.name
        if path.startswith(lib + "site-packages/"):
            return None
        if path.startswith(lib + "test/") and not (
                path == lib + "test/__init__.py" or path.startswith(lib + "test/support")):
            return None
        if path.startswith(lib + "config-") and path.endswith(".a"):
            return None
        if path.startswith(programs) and not path[len(programs):].startswith(_KEPT_PROGRAMS):
            return None
        member.uid = member.gid = 0
        member.uname = member.gname = "root"
        return member

    tar.add(str(prefix), arcname=arcname, filter=trim)


def check_command(prefix: Path | str, python: str) -> str:
    """A shell command that fails, naming what is missing, unless the interpreter copied to
    `prefix` finds all its shared libraries and imports the modules that need them."""
    return (
        f'for f in {prefix}/bin/python{python} {prefix}/lib/*.so* '
        f'{prefix}/lib/python{python}/lib-dynload/*.so; do '
        'case "$f" in *_tkinter*) continue;; esac; '
        'ldd "$f" 2>/dev/null | grep "not found" | sed "s|^|$f: |"; done > /tmp/missing; '
        'if [ -s /tmp/missing ]; then echo "missing shared libraries:"; cat /tmp/missing; exit 1; fi; '
        f'rm /tmp/missing && {prefix}/bin/python{python} -c '
        f'"{IMPORT_CHECK_2 if version_key(python) < (3, 0) else IMPORT_CHECK}"'
    )
