"""setup.cfg and setup.py (read with ``ast``, never run): name, Pythons, extras."""

from __future__ import annotations

import ast
import re
from typing import Any

from benchsmith.parsing.pyast import ModuleValues, parse_python, setup_call
from benchsmith.parsing.setuptools_config import cfg_interpolate, cfg_requirements, ini_lines
from benchsmith.setup.context_model import Hint
from benchsmith.setup.sources.coerce import as_dict, as_str, as_str_list, ini_list
from benchsmith.setup.sources.collector import Collector
from benchsmith.setup.sources.requirements import requirement_lines
from benchsmith.setup.sources.versions import classifier_pythons

TESTS_REQUIRE = "__tests_require__"


def _add_install_requires(c: Collector, requirements: list[str], source: str) -> None:
    known = {h.value for h in c.ctx.install_requires}
    c.ctx.install_requires += [Hint(value=r, source=source) for r in dict.fromkeys(requirements)
                               if r and r not in known]


# A requirement file setup.py reads for install_requires: open("requirements.txt"), a Path.
_READ_FILE = re.compile(r"""["']([\w./-]*requirements[\w./-]*)["']""")


def _read_requirement_files(c: Collector, text: str) -> None:
    for path in dict.fromkeys(p.removeprefix("./") for p in _READ_FILE.findall(text)):
        content = c.files.text(path)
        if content is not None:
            lines = [line for line in requirement_lines(content) if not line.startswith("-")]
            _add_install_requires(c, lines, path)


def _add_extras(c: Collector, extras: dict[str, list[str]], source: str) -> None:
    for extra, reqs in extras.items():
        c.extend_unique(c.ctx.extras.setdefault(extra, []), reqs, source)
        c.mark(source)


def read_setup_cfg(c: Collector) -> None:
    """[metadata], [options] and [options.extras_require] of setup.cfg."""
    source = "setup.cfg"
    cfg = c.files.ini(source)
    if cfg is None or not (cfg.has_section("metadata") or cfg.has_section("options")):
        return
    c.ctx.has_python_project = True
    c.mark(source)
    metadata = dict(cfg["metadata"]) if cfg.has_section("metadata") else {}
    options = dict(cfg["options"]) if cfg.has_section("options") else {}
    c.project_name(metadata.get("name"), source)
    classifiers = metadata.get("classifiers", "")
    if not classifiers.strip().startswith("file:"):
        c.extend_unique(
            c.ctx.classifier_pythons, classifier_pythons(ini_lines(classifiers)), source
        )
    if options.get("python_requires", "").strip():
        c.requires_python(options["python_requires"].strip(), source)
    extras = {}
    if cfg.has_section("options.extras_require"):
        section = dict(cfg["options.extras_require"])
        extras = {k: cfg_requirements(cfg_interpolate(section, v)) for k, v in section.items()}
    requires = cfg_requirements(cfg_interpolate(options, options.get("install_requires", "")))
    _add_install_requires(c, [r for r in requires if r and not r.startswith("file:")], source)
    if options.get("tests_require", "").strip():
        extras[TESTS_REQUIRE] = cfg_requirements(options["tests_require"])
    _add_extras(c, extras, source)
    packages = options.get("packages", "").strip()
    names = [] if packages.startswith("find") else ini_list(packages)
    names += ini_list(options.get("py_modules", ""))
    c.extend_unique(c.ctx.top_level_packages, [n.split(".")[0] for n in names], source)


def setup_kwargs(call: ast.Call, values: ModuleValues) -> dict[str, Any]:
    """The keyword arguments of `call` whose values can be read without running anything."""
    kwargs: dict[str, Any] = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            kwargs.update(as_dict(values.value_or(keyword.value, {})))
        else:
            kwargs[keyword.arg] = values.value_or(keyword.value, None)
    return kwargs


def read_setup_py(c: Collector) -> None:
    """Literal keyword arguments of the setup() call in setup.py."""
    source = "setup.py"
    text = c.files.text(source)
    if text is None:
        return
    c.ctx.has_python_project = True
    c.mark(source)
    tree = parse_python(text)
    call = setup_call(tree) if tree else None
    if tree is None or call is None:
        _regex_fallback(c, text, source)
        _read_requirement_files(c, text)
        return
    kwargs = setup_kwargs(call, ModuleValues(tree))
    c.project_name(kwargs.get("name"), source)
    requires = as_str(kwargs.get("python_requires"))
    if requires and requires.strip():
        c.requires_python(requires.strip(), source)
    c.extend_unique(
        c.ctx.classifier_pythons, classifier_pythons(as_str_list(kwargs.get("classifiers"))), source
    )
    extras = {}
    for extra, reqs in as_dict(kwargs.get("extras_require")).items():
        if isinstance(reqs, str):
            extras[extra] = cfg_requirements(reqs)
        elif isinstance(reqs, list) and all(isinstance(r, str) for r in reqs):
            extras[extra] = reqs
    install_requires = kwargs.get("install_requires")
    if isinstance(install_requires, str):
        _add_install_requires(c, cfg_requirements(install_requires), source)
    elif isinstance(install_requires, list) and all(isinstance(r, str) for r in install_requires):
        _add_install_requires(c, install_requires, source)
    else:
        _read_requirement_files(c, text)
    tests_require = kwargs.get("tests_require")
    if isinstance(tests_require, str):
        extras[TESTS_REQUIRE] = cfg_requirements(tests_require)
    elif isinstance(tests_require, list) and all(isinstance(r, str) for r in tests_require):
        extras[TESTS_REQUIRE] = tests_require
    _add_extras(c, extras, source)
    modules = as_str_list(kwargs.get("packages")) + as_str_list(kwargs.get("py_modules"))
    c.extend_unique(c.ctx.top_level_packages, [m.split(".")[0] for m in modules], source)


def _regex_fallback(c: Collector, text: str, source: str) -> None:
    requires = re.search(r"python_requires\s*=\s*['\"]([^'\"]+)['\"]", text)
    if requires:
        c.requires_python(requires.group(1), source)
    name = re.search(r"\bname\s*=\s*['\"]([\w.\-]+)['\"]", text)
    c.project_name(name.group(1) if name else None, source)
    classifiers = re.findall(r"['\"](Programming Language :: Python :: [\d.]+)['\"]", text)
    c.extend_unique(c.ctx.classifier_pythons, classifier_pythons(classifiers), source)
