"""The environment a sandboxed command sees: an allow-list, never the user's secrets."""

from __future__ import annotations

import os

# Host variables that are passed through: locale, proxies, CA bundles, index settings.
ALLOWED_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TERM",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "PIP_CERT",
    "GIT_SSL_CAINFO",
    "UV_CACHE_DIR",
    "UV_NATIVE_TLS",
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_INDEX",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
)

# Fixed settings that make runs comparable between machines.
FIXED_ENV = {
    "LC_ALL": "C.UTF-8",
    "LANG": "C.UTF-8",
    "TZ": "UTC",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "UV_NO_PROGRESS": "1",
    "CI": "true",
}


def sandbox_base_env(pass_env: list[str], home: str) -> dict[str, str]:
    """Allow-listed host variables, plus `pass_env` names, plus fixed settings."""
    env = {name: os.environ[name] for name in ALLOWED_ENV if name in os.environ}
    for name in pass_env:
        if name in os.environ:
            env[name] = os.environ[name]
    if "UV_CACHE_DIR" not in env:
        # Share the user's uv cache even though HOME is private: repeated installs stay fast.
        env["UV_CACHE_DIR"] = os.path.join(os.path.expanduser("~"), ".cache", "uv")
    env.update(FIXED_ENV)
    env["HOME"] = home
    return env
