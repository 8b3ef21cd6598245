"""What the nose and `setup.py test` era's configuration says: setup.cfg's ``[nosetests]``
section and setup()'s ``test_suite`` (read with ``ast``, never run)."""

from __future__ import annotations

from benchsmith.parsing.pyast import ModuleValues, parse_python, setup_call
from benchsmith.setup.context_model import Hint
from benchsmith.setup.sources.coerce import as_str
from benchsmith.setup.sources.collector import Collector
from benchsmith.setup.sources.setuptools_files import setup_kwargs


def read_legacy_test_config(c: Collector) -> None:
    """[nosetests] of setup.cfg (it also means nose ran the tests) and the test_suite of
    setup.py or setup.cfg's [options]."""
    cfg = c.files.ini("setup.cfg")
    if cfg is not None and cfg.has_section("nosetests"):
        c.ctx.nose_config = {k.lower(): v.strip() for k, v in cfg["nosetests"].items()}
        c.ctx.uses_nose = True
        c.mark("setup.cfg")
    suites: list[tuple[str | None, str]] = []
    if cfg is not None and cfg.has_option("options", "test_suite"):
        suites.append((cfg.get("options", "test_suite", raw=True), "setup.cfg"))
    text = c.files.text("setup.py")
    tree = parse_python(text) if text else None
    call = setup_call(tree) if tree else None
    if tree is not None and call is not None:
        suites.append((as_str(setup_kwargs(call, ModuleValues(tree)).get("test_suite")), "setup.py"))
    for suite, source in suites:  # setup.py's own wins: setuptools reads setup.cfg first
        if suite and suite.strip():
            c.ctx.test_suite = Hint(value=suite.strip(), source=source)
