"""Python 2.7 in Docker sandboxes: ``benchsmith/base:py2.7``, chosen only for a plan that says
2.7.

No official image carries a CPython 2.7 that fits the others, so the image is the base image of
a Python 3 (which runs virtualenv, the local stand-ins and the harness's own tools) plus the
host's own 2.7 prefix (pyenv) copied in at its path, checked to find its shared libraries
there. Its virtualenv is made by virtualenv before 20.22 (the last that creates Python 2
environments, with pip), run by that Python 3: uv makes no Python 2 environments. Installs use
pip and the dated index (:mod:`benchsmith.sandbox.dated_index`), which the container reaches at
its network's gateway.
"""

from __future__ import annotations

import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from benchsmith.core import BenchsmithError
from benchsmith.sandbox.host_python import add_interpreter, buildable_pythons, check_command
from benchsmith.sandbox.pythons import version_key

PYTHON2 = "2.7"
# Pythons that run virtualenv<20.22 (3.7+, and before 3.12, whose lack of distutils it predates)
_HELPERS = ("3.11", "3.10", "3.9", "3.8", "3.7")


def host_python2() -> Path | None:
    """The host's relocatable CPython 2.7 prefix, if it has one."""
    prefix = buildable_pythons(python2=True).get(PYTHON2)
    return Path(prefix) if prefix else None


def helper_python(available: list[str]) -> str | None:
    """The Python 3 the 2.7 image is built on, among the `available` base image versions."""
    return next((v for v in _HELPERS if v in available), None)


def venv_command(interpreter: str, venv: str) -> str:
    """The shell command that creates a Python 2.7 virtualenv at `venv` (with pip)."""
    return (f"uv tool run --quiet --python python3 --from 'virtualenv<20.22' virtualenv --quiet "
            f"--no-periodic-update --python {interpreter} {venv}")


def dockerfile(helper_image: str, prefix: Path) -> str:
    """The Dockerfile of the 2.7 base image on `helper_image` (python3 stays the helper's)."""
    return f"""\
FROM {helper_image}
COPY python/ {prefix}/
RUN ln -sf {prefix}/bin/python{PYTHON2} /usr/local/bin/python{PYTHON2} \\
 && ln -sf python{PYTHON2} /usr/local/bin/python2 \\
 && {check_command(prefix, PYTHON2)} \\
 && python{PYTHON2} --version && python3 --version
CMD ["sleep", "infinity"]
"""


def build_python2_base(client: Any, name: str, nocache: bool, helper_image: str,
                       build: Any) -> str:
    """Build `name` from `helper_image` and the host's 2.7 (`build` runs the Docker build);
    one line saying how."""
    prefix = host_python2()
    if prefix is None:
        raise BenchsmithError("no base image for Python 2.7: the host has no relocatable CPython "
                              "2.7; install it with pyenv")
    started = time.monotonic()
    from benchsmith.sandbox.docker.base import _add_text

    with tempfile.TemporaryFile() as context:
        with tarfile.open(fileobj=context, mode="w") as tar:
            _add_text(tar, "Dockerfile", dockerfile(helper_image, prefix))
            add_interpreter(tar, prefix, PYTHON2, "python")
        build(client, context, name, PYTHON2, nocache)
    return (f"{helper_image} + host {prefix}; image built in "
            f"{time.monotonic() - started:.1f} s")


def with_python2(versions: set[str]) -> set[str]:
    """`versions` (base images a Docker sandbox can have) and 2.7 when it can be built."""
    if helper_python(sorted(versions, key=version_key)) and host_python2() is not None:
        return versions | {PYTHON2}
    return versions
