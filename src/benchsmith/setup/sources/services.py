"""Servers the tests need: GitHub Actions ``services:``, docker-compose files, and environment
values that point at a database or cache (``DATABASE_URL=postgres://...``)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote, urlsplit

from benchsmith.core import Service, ServiceKind
from benchsmith.setup.sources.coerce import as_dict, as_list, as_str
from benchsmith.setup.sources.collector import Collector
from benchsmith.setup.sources.github_actions import WORKFLOW_GLOBS

COMPOSE_GLOBS = ("docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml",
                 "*/docker-compose.yml", "*/docker-compose.yaml", "docker-compose.*.yml")
# Image names (the part before the tag) and URL schemes, to a service kind.
_IMAGES: dict[str, ServiceKind] = {
    "postgres": "postgresql", "postgis/postgis": "postgresql", "bitnami/postgresql": "postgresql",
    "mysql": "mysql", "mariadb": "mysql", "bitnami/mysql": "mysql", "bitnami/mariadb": "mysql",
    "redis": "redis", "bitnami/redis": "redis", "redis/redis-stack-server": "redis",
    "redis/redis-stack": "redis", "valkey/valkey": "redis",
}
_URL = re.compile(r"\b(postgres(?:ql)?(?:\+\w+)?|mysql(?:\+\w+)?|mariadb(?:\+\w+)?|rediss?)://")
_SCHEMES: dict[str, ServiceKind] = {"postgres": "postgresql", "postgresql": "postgresql",
                                    "mysql": "mysql", "mariadb": "mysql", "redis": "redis",
                                    "rediss": "redis"}
# ${{ job.services.NAME.ports[5432] }} / ['5432'] -> the port itself (services listen on it).
_SERVICE_PORT = re.compile(r"\$\{\{\s*job\.services\.[\w-]+\.ports\[['\"]?(\d+)['\"]?\]\s*\}\}")
# A variable that configures how tests reach a database or cache (not a URL).
_CONNECTION_KEY = re.compile(r"DB|DATABASE|SQL|PG|POSTGRES|MARIA|REDIS")
# a user, password or database name that happens to equal a service's name is not a host
_CREDENTIAL_SUFFIXES = ("USER", "USERNAME", "PASSWORD", "PASS", "PWD", "NAME", "DB", "DATABASE")
# user, password, database: the variables the official images (and MariaDB's own names) read
_CREDENTIALS = {
    "postgresql": (("POSTGRES_USER",), ("POSTGRES_PASSWORD",), ("POSTGRES_DB",)),
    "mysql": (("MYSQL_USER", "MARIADB_USER"), ("MYSQL_PASSWORD", "MARIADB_PASSWORD"),
              ("MYSQL_DATABASE", "MARIADB_DATABASE")),
}
_ROOT_PASSWORD = ("MYSQL_ROOT_PASSWORD", "MARIADB_ROOT_PASSWORD")
_EMPTY_ROOT = ("MYSQL_ALLOW_EMPTY_PASSWORD", "MARIADB_ALLOW_EMPTY_ROOT_PASSWORD")


def image_kind(image: str) -> ServiceKind | None:
    """The service an image provides: ``postgres:13`` -> postgresql; None for other images."""
    name = image.split("@", 1)[0].rsplit(":", 1)[0] if ":" in image.split("/")[-1] else image
    name = name.removeprefix("docker.io/").removeprefix("library/").lower()
    return _IMAGES.get(name)


def url_kind(value: str) -> ServiceKind | None:
    """The service a connection URL points at: ``postgres://u:p@localhost/db`` -> postgresql."""
    match = _URL.search(value)
    return _SCHEMES[match.group(1).split("+")[0]] if match else None


def _scalar(value: Any) -> str | None:
    """An environment value as the container sees it (YAML reads ``yes`` and ``1234`` as others)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value) if isinstance(value, (str, int, float)) else None


def _first(env: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    return next((value for key in keys if (value := _scalar(env.get(key))) is not None), None)


def _service(kind: ServiceKind, env: dict[str, Any], source: str) -> Service:
    service = Service(kind=kind, source=source)
    if kind in _CREDENTIALS:
        user, password, database = (_first(env, keys) for keys in _CREDENTIALS[kind])
        if kind == "mysql":
            root = _first(env, _ROOT_PASSWORD)
            if root is None and _first(env, _EMPTY_ROOT) not in (None, "", "no", "false", "0"):
                root = ""
            if not user and root:
                user, password = "root", root
            service.root_password = root
        service.user, service.password, service.database = user, password, database
    return service


def url_service(url: str, source: str) -> Service | None:
    """The service a connection URL points at, with the credentials and database it names."""
    match = _URL.search(url)
    if match is None:
        return None
    kind = _SCHEMES[match.group(1).split("+")[0]]
    try:
        parts = urlsplit(url[match.start():])
        user, password = parts.username, parts.password
    except ValueError:
        return Service(kind=kind, source=source)
    database = unquote(parts.path.strip("/")) if kind != "redis" else ""
    return Service(kind=kind, source=source, user=unquote(user) if user else None,
                   password=unquote(password) if password is not None else None,
                   database=database if re.fullmatch(r"[\w$-]+", database) else None)


def _env_items(value: Any) -> dict[str, Any]:
    """A compose/Actions environment, as a mapping or a list of KEY=VALUE strings."""
    if isinstance(value, list):
        return dict(str(item).partition("=")[::2] for item in value if "=" in str(item))
    return as_dict(value)


def add_service(c: Collector, service: Service) -> None:
    """Note the tests need `service`; for a kind already noted, fill in what it lacked
    (credentials a URL or a settings file names)."""
    known = next((s for s in c.ctx.services if s.kind == service.kind), None)
    if known is None:
        c.ctx.services.append(service)
    else:
        for field in ("user", "password", "database", "root_password"):
            if getattr(known, field) is None and getattr(service, field) is not None:
                setattr(known, field, getattr(service, field))
    c.mark(service.source)


def _env_values(c: Collector, env: dict[str, Any], source: str,
                hosts: frozenset[str] = frozenset()) -> None:
    """Keep environment entries that point at a service (and note the service). In a job with
    services, also the plain connection settings its tests read (``PSYCOPG2_TESTDB_HOST:
    127.0.0.1``, ``DB_PASSWORD: secret``). A host (a service's own name in container jobs, the
    Docker bridge's address) becomes the loopback address, where the sandbox's services
    listen; a socket folder stays."""
    for key, value in env.items():
        text = str(value) if isinstance(value, (str, int)) else ""
        text = _SERVICE_PORT.sub(r"\1", text)
        if "${{" in text or not re.fullmatch(r"[A-Za-z_]\w*", key):
            continue
        if (service := url_service(text, source)) is not None:
            c.hint(c.ctx.service_env, f"{key}={text}", source)
            add_service(c, service)
        elif hosts and _CONNECTION_KEY.search(key.upper()) and re.fullmatch(r"[\w.@:/+-]{1,200}", text):
            credential = key.upper().endswith(_CREDENTIAL_SUFFIXES)  # `PGUSER: postgres`
            loopback = not credential and (text in hosts or (
                key.upper().endswith(("HOST", "HOSTNAME")) and not text.startswith("/")))
            c.hint(c.ctx.service_env, f"{key}={'127.0.0.1' if loopback else text}", source)


def read_services(c: Collector) -> None:
    """Services of workflow jobs and compose files, and service URLs in their environments."""
    paths = sorted({path for pattern in WORKFLOW_GLOBS for path in c.files.glob(pattern)})
    for path in paths:
        doc = as_dict(c.files.yaml(path))
        workflow_env = _env_items(doc.get("env"))
        for job in as_dict(doc.get("jobs")).values():
            job = as_dict(job)
            services = as_dict(job.get("services"))
            for spec in services.values():
                spec = as_dict(spec)
                kind = image_kind(as_str(spec.get("image")) or "")
                if kind:
                    add_service(c, _service(kind, _env_items(spec.get("env")), path))
            if services:  # the job that talks to them says where they are
                hosts = frozenset(str(name) for name in services)
                _env_values(c, {**workflow_env, **_env_items(job.get("env"))}, path, hosts)
                for step in as_list(job.get("steps")):
                    _env_values(c, _env_items(as_dict(step).get("env")), path, hosts)
    for path in sorted({p for pattern in COMPOSE_GLOBS for p in c.files.glob(pattern)}):
        for spec in as_dict(as_dict(c.files.yaml(path)).get("services")).values():
            spec = as_dict(spec)
            kind = image_kind(as_str(spec.get("image")) or "")
            if kind:
                add_service(c, _service(kind, _env_items(spec.get("environment")), path))
