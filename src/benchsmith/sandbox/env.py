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

# In a process's environment (value "1"): a server a command started on purpose, in a session
# of its own, for later commands too (a local stand-in of a public host). The sweep of what a
# command left running spares it; closing the sandbox ends it.
SERVICE_MARKER = "BENCHSMITH_SERVICE"

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


# Where the host's network cannot be taken away (the local backend), commands that must run
# without it get these: package managers offline or pointed at a closed loopback port, model
# hubs offline, and every proxy variable (:data:`PROXY_NAMES`) at a proxy that reaches loopback
# only (:mod:`benchsmith.sandbox.loopback_proxy`). A program that opens its own sockets and
# ignores proxies still reaches the network.
NOWHERE = "http://127.0.0.1:9"
PROXY_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
               "FTP_PROXY", "ftp_proxy")
OFFLINE_ENV = {
    "NO_PROXY": "localhost,127.0.0.1,::1", "no_proxy": "localhost,127.0.0.1,::1",
    "PIP_INDEX_URL": f"{NOWHERE}/simple", "PIP_NO_INDEX": "1", "UV_OFFLINE": "1",
    "UV_INDEX_URL": f"{NOWHERE}/simple", "UV_DEFAULT_INDEX": f"{NOWHERE}/simple",
    "npm_config_registry": NOWHERE, "npm_config_offline": "true", "YARN_REGISTRY": NOWHERE,
    "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
    "GIT_TERMINAL_PROMPT": "0", "GIT_ALLOW_PROTOCOL": "file",
}


def offline_env(proxy: str) -> dict[str, str]:
    """:data:`OFFLINE_ENV` with every proxy variable set to `proxy`."""
    return {**OFFLINE_ENV, **dict.fromkeys(PROXY_NAMES, proxy)}


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
