"""Which Django settings a project's tests run with: tox's `setenv`, a test command's
environment prefix (recorded as commands are read), or the default that `manage.py` /
`runtests.py` set with ``os.environ.setdefault``; and the database servers those settings use."""

from __future__ import annotations

import ast
import re

from benchsmith.core import Service, ServiceKind
from benchsmith.setup.sources.collector import Collector
from benchsmith.setup.sources.services import add_service

_SETDEFAULT = re.compile(
    r"""os\.environ\.setdefault\(\s*["'](DJANGO_SETTINGS_MODULE|DJANGO_CONFIGURATION)["']\s*,"""
    r"""\s*["']([\w.]+)["']""")
_SCRIPTS = ("manage.py", "runtests.py", "tests/runtests.py", "tests/manage.py")


def read_django_settings(c: Collector) -> None:
    """Settings modules that scripts at the root or in tests/ default to."""
    for path in _SCRIPTS:
        for key, value in _SETDEFAULT.findall(c.files.text(path) or ""):
            c.hint(c.ctx.settings_env, f"{key}={value}", path)


# Settings modules tests run with, by name, besides those the scripts above name.
_TEST_SETTINGS = ("*test*settings*.py", "*settings*test*.py", "*/*test*settings*.py",
                  "*/*settings*test*.py", "tests/settings.py", "*/tests/settings.py",
                  "tests/*/settings.py")
_ENGINES: dict[str, ServiceKind] = {"mysql": "mysql", "postgresql": "postgresql",
                                    "postgis": "postgresql"}


def _literal(node: ast.expr | None) -> str | None:
    """A string the settings give: a literal, or the default of ``os.environ.get("X", "d")``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)):
        return str(node.value)
    if isinstance(node, ast.Call) and len(node.args) == 2:
        return _literal(node.args[1])
    return None


def database_services(text: str, source: str) -> list[Service]:
    """The database servers a Django settings module's ``DATABASES`` uses, with the name,
    user and password it gives them (``'ENGINE': 'django.db.backends.mysql'``)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    services = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        entries = {k.value: v for k, v in zip(node.keys, node.values, strict=True)
                   if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        engine = (_literal(entries.get("ENGINE")) or "").rsplit(".", 1)[-1].split("_")[0]
        if kind := _ENGINES.get(engine):
            user, password, name = (_literal(entries.get(key)) for key in ("USER", "PASSWORD", "NAME"))
            services.append(Service(kind=kind, source=source, user=user or None, password=password,
                                    database=name if name and "/" not in name else None))
    return services


def read_database_settings(c: Collector) -> None:
    """Database servers the tests' Django settings use (the modules the scripts or tox name,
    and test settings by their usual names)."""
    modules = [h.value.partition("=")[2] for h in c.ctx.settings_env
               if h.value.startswith("DJANGO_SETTINGS_MODULE=")]
    paths = [p for m in modules for p in (m.replace(".", "/") + ".py",
                                          "src/" + m.replace(".", "/") + ".py") if c.files.exists(p)]
    paths += sorted({p for pattern in _TEST_SETTINGS for p in c.files.glob(pattern)})
    for path in dict.fromkeys(paths):
        for service in database_services(c.files.text(path) or "", path):
            add_service(c, service)
