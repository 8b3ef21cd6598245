"""Licences: which SPDX expressions let a repository's code be redistributed in a benchmark,
and the SPDX expression of a PyPI project (licence expression, classifiers, free text)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

UNKNOWN_LICENSE = "unknown"

# "Permissive" here: redistribution and modification need at most keeping copyright and licence
# notices (no copyleft: GPL/LGPL/AGPL/MPL/EPL/EUPL/CDDL are out). BSD-4-Clause is out too: its
# advertising clause is an obligation beyond notices and makes it GPL-incompatible.
PERMISSIVE_LICENSES = frozenset({
    "0BSD", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "BSD-3-Clause-Clear", "BSL-1.0",
    "CC0-1.0", "HPND", "ISC", "MIT", "MIT-0", "MIT-CMU", "NCSA", "PSF-2.0", "Python-2.0",
    "Unlicense", "UPL-1.0", "X11", "Zlib", "WTFPL",
})
_COPYLEFT = ("GPL-2.0-only", "GPL-2.0-or-later", "GPL-3.0-only", "GPL-3.0-or-later",
             "LGPL-2.0-only", "LGPL-2.0-or-later", "LGPL-2.1-only", "LGPL-2.1-or-later",
             "LGPL-3.0-only", "LGPL-3.0-or-later", "AGPL-3.0-only", "AGPL-3.0-or-later",
             "MPL-2.0", "EPL-1.0", "EPL-2.0", "EUPL-1.2", "CDDL-1.0", "BSD-4-Clause")
_SPDX_IDS = {i.casefold(): i for i in (*PERMISSIVE_LICENSES, *_COPYLEFT)}

# Trove classifier tail → SPDX. "BSD License" and "Apache Software License" name no variant or
# version; BSD-3-Clause and Apache-2.0 are what nearly every such project on PyPI means.
_CLASSIFIERS = {
    "MIT License": "MIT", "MIT No Attribution License (MIT-0)": "MIT-0",
    "BSD License": "BSD-3-Clause", "Apache Software License": "Apache-2.0",
    "ISC License (ISCL)": "ISC", "Python Software Foundation License": "PSF-2.0",
    "The Unlicense (Unlicense)": "Unlicense", "zlib/libpng License": "Zlib",
    "Boost Software License 1.0 (BSL-1.0)": "BSL-1.0", "Universal Permissive License (UPL)": "UPL-1.0",
    "Historical Permission Notice and Disclaimer (HPND)": "HPND",
    "University of Illinois/NCSA Open Source License": "NCSA",
    "CC0 1.0 Universal (CC0 1.0) Public Domain Dedication": "CC0-1.0",
    "GNU General Public License v2 (GPLv2)": "GPL-2.0-only",
    "GNU General Public License v2 or later (GPLv2+)": "GPL-2.0-or-later",
    "GNU General Public License v3 (GPLv3)": "GPL-3.0-only",
    "GNU General Public License v3 or later (GPLv3+)": "GPL-3.0-or-later",
    "GNU Lesser General Public License v2 (LGPLv2)": "LGPL-2.0-only",
    "GNU Lesser General Public License v2 or later (LGPLv2+)": "LGPL-2.0-or-later",
    "GNU Lesser General Public License v3 (LGPLv3)": "LGPL-3.0-only",
    "GNU Lesser General Public License v3 or later (LGPLv3+)": "LGPL-3.0-or-later",
    "GNU Affero General Public License v3": "AGPL-3.0-only",
    "GNU Affero General Public License v3 or later (AGPLv3+)": "AGPL-3.0-or-later",
    "Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0", "Eclipse Public License 2.0 (EPL-2.0)": "EPL-2.0",
}
# Short free-text `license` values (lower-cased, "-"/"_"/"," as spaces) → SPDX.
_LICENSE_NAMES = {
    "mit": "MIT", "mit license": "MIT", "the mit license": "MIT", "expat": "MIT",
    "bsd": "BSD-3-Clause", "bsd license": "BSD-3-Clause", "new bsd": "BSD-3-Clause",
    "new bsd license": "BSD-3-Clause", "modified bsd": "BSD-3-Clause", "3 clause bsd": "BSD-3-Clause",
    "bsd 3 clause": "BSD-3-Clause", "simplified bsd": "BSD-2-Clause", "2 clause bsd": "BSD-2-Clause",
    "bsd 2 clause": "BSD-2-Clause", "apache": "Apache-2.0", "apache 2": "Apache-2.0",
    "apache 2.0": "Apache-2.0", "apache license 2.0": "Apache-2.0",
    "apache license version 2.0": "Apache-2.0", "apache software license": "Apache-2.0",
    "apache software license 2.0": "Apache-2.0", "asl 2.0": "Apache-2.0", "isc license": "ISC",
    "psf": "PSF-2.0", "psf license": "PSF-2.0", "python software foundation license": "PSF-2.0",
    "the unlicense": "Unlicense", "public domain (unlicense)": "Unlicense", "cc0": "CC0-1.0",
    "gpl": "GPL-3.0-or-later", "gplv2": "GPL-2.0-only", "gplv3": "GPL-3.0-only",
    "lgpl": "LGPL-3.0-or-later", "lgplv3": "LGPL-3.0-only", "mpl 2.0": "MPL-2.0",
}


def is_permissive(expression: str | None) -> bool:
    """Whether an SPDX expression is permissive: OR needs one permissive side, AND needs both."""
    tokens = re.findall(r"\(|\)|[^\s()]+", expression or "")
    try:
        result, rest = _or_expr(tokens)
    except (IndexError, ValueError):
        return False
    return result and not rest


def _or_expr(tokens: list[str]) -> tuple[bool, list[str]]:
    result, tokens = _and_expr(tokens)
    while tokens and tokens[0].upper() == "OR":
        right, tokens = _and_expr(tokens[1:])
        result = result or right
    return result, tokens


def _and_expr(tokens: list[str]) -> tuple[bool, list[str]]:
    result, tokens = _license_term(tokens)
    while tokens and tokens[0].upper() == "AND":
        right, tokens = _license_term(tokens[1:])
        result = result and right
    return result, tokens


def _license_term(tokens: list[str]) -> tuple[bool, list[str]]:
    token, tokens = tokens[0], tokens[1:]
    if token == "(":
        result, tokens = _or_expr(tokens)
        if tokens[0] != ")":
            raise ValueError("unbalanced parenthesis")
        tokens = tokens[1:]
    elif token == ")" or token.upper() in {"AND", "OR", "WITH"}:
        raise ValueError(f"unexpected {token}")
    else:
        result = token.removesuffix("+").casefold() in _PERMISSIVE_FOLDED
    if tokens and tokens[0].upper() == "WITH":  # exceptions only grant more permissions
        if len(tokens) < 2 or tokens[1] in {"(", ")"}:
            raise ValueError("WITH without an exception")
        tokens = tokens[2:]
    return result, tokens


_PERMISSIVE_FOLDED = {i.casefold() for i in PERMISSIVE_LICENSES}


def license_of(info: Mapping[str, Any]) -> tuple[str | None, str]:
    """The SPDX licence of a project's metadata and where it was read from."""
    expression = (info.get("license_expression") or "").strip()
    if expression:
        return expression, "license_expression"
    found = [_CLASSIFIERS[tail] for c in info.get("classifiers") or []
             if (tail := c.split(" :: ")[-1]) in _CLASSIFIERS and c.startswith("License ::")]
    if found:  # several licence classifiers on PyPI nearly always mean a choice (dual licence)
        return " OR ".join(dict.fromkeys(found)), "classifiers"
    text = (info.get("license") or "").strip()
    if text and len(text) <= 40 and "\n" not in text:
        key = re.sub(r"[\s,_-]+", " ", text.lower()).strip()
        if key in _LICENSE_NAMES:
            return _LICENSE_NAMES[key], "license text"
        ids = [t for t in re.findall(r"[^\s()]+", text) if t.upper() not in {"AND", "OR", "WITH"}]
        if ids and all(i.casefold() in _SPDX_IDS for i in ids):
            spdx = re.sub(r"[^\s()]+", lambda m: _SPDX_IDS.get(m[0].casefold(), m[0].upper()), text)
            return spdx, "license text"
    return None, "no recognisable licence"


