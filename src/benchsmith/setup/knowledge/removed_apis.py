"""Errors that say a project predates the Python it runs on, and the newest Python that still
has what it uses."""

from __future__ import annotations

import re

# Errors that mean "this code predates the Python it runs on"; value: newest Python that works.
REMOVED_APIS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"cannot import name '(\w+)' from 'collections'|module 'collections' has no attribute '(Mapping|MutableMapping|Sequence|Iterable|Callable|OrderedDict|Set|Hashable)'"), "3.9"),
    (re.compile(r"required field \"lineno\" missing from alias"), "3.9"),
    (re.compile(r"unexpected keyword argument 'loop'"), "3.9"),
    (re.compile(r"(module 'asyncio' has no attribute 'coroutine'|cannot import name 'coroutine' from 'asyncio')"), "3.10"),
    (re.compile(r"(module 'inspect' has no attribute '(getargspec|formatargspec)'|cannot import name '(getargspec|formatargspec)' from 'inspect')"), "3.10"),
    (re.compile(r"module 'ast' has no attribute '(Str|Num|NameConstant|Bytes|Ellipsis)'"), "3.11"),
    (re.compile(r"module 'pkgutil' has no attribute 'ImpImporter'"), "3.11"),
    (re.compile(r"module 'configparser' has no attribute 'SafeConfigParser'|cannot import name 'SafeConfigParser'"), "3.11"),
    (re.compile(r"module 'unittest' has no attribute 'makeSuite'|has no attribute 'assertEquals'|has no attribute 'assertRegexpMatches'"), "3.11"),
    (re.compile(r"object has no attribute 'isAlive'|module 'base64' has no attribute 'encodestring'|'array.array' object has no attribute 'tostring'|module 'fractions' has no attribute 'gcd'"), "3.8"),
    (re.compile(r"module 'time' has no attribute 'clock'|cannot import name 'escape' from 'cgi'"), "3.7"),
    # PEP 479 (3.7): a StopIteration inside a generator became a RuntimeError
    (re.compile(r"RuntimeError: generator raised StopIteration|module 'os' has no attribute 'errno'"), "3.6"),
    # re.LOCALE on str patterns: an error since 3.6
    (re.compile(r"cannot use LOCALE flag with a str pattern"), "3.5"),
]
