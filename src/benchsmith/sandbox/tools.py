"""Locate the host tools benchsmith drives (uv, git) and the CA bundle."""

from __future__ import annotations

import os
import shutil
import ssl
from functools import lru_cache

from benchsmith.core import BenchsmithError

CA_ENV_VARS = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT")


@lru_cache(maxsize=1)
def uv_binary() -> str:
    """Path of the uv executable: the one shipped with the `uv` Python package, else PATH."""
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        pass
    found = shutil.which("uv")
    if not found:
        raise BenchsmithError("uv not found: install it with `pip install uv`")
    return found


def git_binary() -> str:
    """Path of git, or a clear error."""
    found = shutil.which("git")
    if not found:
        raise BenchsmithError("git not found: install git (e.g. `apt-get install -y git`)")
    return found


def host_ca_bundle() -> str | None:
    """The CA bundle the host trusts: from the usual variables, else OpenSSL's default file."""
    for var in CA_ENV_VARS:
        value = os.environ.get(var)
        if value and os.path.isfile(value):
            return value
    default = ssl.get_default_verify_paths().cafile
    return default if default and os.path.isfile(default) else None
