"""Which Django settings a project's tests run with: tox's `setenv`, a test command's
environment prefix (recorded as commands are read), or the default that `manage.py` /
`runtests.py` set with ``os.environ.setdefault``."""

from __future__ import annotations

import re

from benchsmith.setup.sources.collector import Collector

_SETDEFAULT = re.compile(
    r"""os\.environ\.setdefault\(\s*["'](DJANGO_SETTINGS_MODULE|DJANGO_CONFIGURATION)["']\s*,"""
    r"""\s*["']([\w.]+)["']""")
_SCRIPTS = ("manage.py", "runtests.py", "tests/runtests.py", "tests/manage.py")


def read_django_settings(c: Collector) -> None:
    """Settings modules that scripts at the root or in tests/ default to."""
    for path in _SCRIPTS:
        for key, value in _SETDEFAULT.findall(c.files.text(path) or ""):
            c.hint(c.ctx.settings_env, f"{key}={value}", path)
