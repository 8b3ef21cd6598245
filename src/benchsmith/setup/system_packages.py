"""Which Debian package provides a missing C header, build tool or shared library."""

from __future__ import annotations

import re

from benchsmith.setup.knowledge.debian import (
    DEV_PACKAGES,
    HEADER_PACKAGES,
    LIBRARY_PACKAGES,
    TOOL_PACKAGES,
)

__all__ = ["DEV_PACKAGES", "HEADER_PACKAGES", "LIBRARY_PACKAGES", "TOOL_PACKAGES",
           "debian_packages_for", "missing_headers", "missing_system_parts", "missing_tools"]

_LINK = re.compile(r"cannot find -l([\w.+-]+)")
_PKG_CONFIG = re.compile(r"Package '?([\w.+-]+)'?(?:,| was not found in the pkg-config search path)"
                         r"(?:[^\n]*not found)?")
_BUILD_SCRIPT = re.compile(r"(?:Could not|Cannot|Unable to) find (?:the )?([\w.+-]+) "
                           r"(?:lib(?:rary|raries)?|headers?|development files)"
                           # ctypes bindings: "Unable to find libfuse" (find_library found none)
                           r"|(?:Could not|Cannot|Unable to) find (lib[\w+-]+)\b(?!\.)",
                           re.IGNORECASE)

# gcc's and clang's words for a missing header
_HEADER = re.compile(r"fatal error: (?:([\w/.+-]+\.h): No such file or directory|'([\w/.+-]+\.h)' "
                     r"file not found)")
_TOOL = re.compile(
    r"(?:(?:^|[\s:'\"])([\w.+-]+): (?:command )?not found"
    r"|command '([\w.+-]+)' failed: No such file or directory"
    r"|No such file or directory: '([\w.+-]+)'"
    r"|failed to execute (?:PosixPath\()?'([\w.+-]+)'"
    r"|([\w.+-]+) executable not found"
    r"|Did not find ([\w.+-]+) on PATH"
    r"|The '([\w.+-]+)' command is not available)",
    re.MULTILINE,
)
_LIBRARY = re.compile(r"([\w.+-]+\.so)(?:\.[\d.]+)?: cannot open shared object file")


def debian_packages_for(output: str) -> list[str]:
    """Debian packages whose absence explains `output` (missing headers, tools, libraries)."""
    wanted: list[str] = []
    for header in missing_headers(output):
        if header in HEADER_PACKAGES:
            wanted.append(HEADER_PACKAGES[header])
    for groups in _TOOL.findall(output):
        tool = next((g for g in groups if g), "")
        if tool in TOOL_PACKAGES:
            wanted.append(TOOL_PACKAGES[tool])
    for library in _LIBRARY.findall(output):
        for prefix, package in LIBRARY_PACKAGES.items():
            if library.startswith(prefix.removesuffix(".so")) and library.endswith(".so"):
                wanted.append(package)
                break
    for pattern in (_LINK, _PKG_CONFIG, _BUILD_SCRIPT):
        for found in pattern.findall(output):
            key = (found if isinstance(found, str) else next(g for g in found if g)).lower()
            dev = DEV_PACKAGES.get(key) or DEV_PACKAGES.get(key.removeprefix("lib"))
            if dev:
                wanted.append(dev)
    if "Please make sure the libxml2 and libxslt development packages are installed" in output:
        wanted += ["libxml2-dev", "libxslt1-dev"]
    return list(dict.fromkeys(wanted))


def missing_tools(output: str) -> list[str]:
    """Programs `output` says are not there and no Debian package of ours provides."""
    tools = (next((g for g in groups if g), "") for groups in _TOOL.findall(output))
    return list(dict.fromkeys(t for t in tools if t and t not in TOOL_PACKAGES))


def missing_headers(output: str) -> list[str]:
    """Header names reported missing by the C compiler."""
    return list(dict.fromkeys(gcc or clang for gcc, clang in _HEADER.findall(output)))


def missing_system_parts(output: str) -> list[str]:
    """What a build says the system lacks, named as it names it (``header fuse.h``,
    ``pkg-config module fuse3``, ``library -lfoo``): also what no table here maps."""
    parts = [f"header {h}" for h in missing_headers(output)]
    parts += [f"pkg-config module {m}" for m in _PKG_CONFIG.findall(output)]
    parts += [f"library -l{name}" for name in _LINK.findall(output)]
    return list(dict.fromkeys(parts))
