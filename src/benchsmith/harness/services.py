"""Services a test suite needs (PostgreSQL, MySQL/MariaDB, Redis): how they are installed from
Debian's packages, started and waited for inside a sandbox, and how tests find them.

A plan that needs services installs their packages and a start script, ``benchsmith-services``,
and every test command begins with that script, so an environment image started months later
starts its services again before its tests run. Each service listens on loopback on its usual
port; tests find it through the usual variables (``PGHOST``, ``REDIS_URL``, ``MYSQL_HOST``, ...).
"""

from __future__ import annotations

import shlex
import socket

from benchsmith.core import Service, ServiceKind

START_SCRIPT = "/usr/local/bin/benchsmith-services"
START_COMMAND = "benchsmith-services"

PORTS: dict[ServiceKind, int] = {"postgresql": 5432, "mysql": 3306, "redis": 6379}
DEBIAN_PACKAGES: dict[ServiceKind, list[str]] = {
    "postgresql": ["postgresql"],
    "mysql": ["mariadb-server"],
    "redis": ["redis-server"],
}
_WAIT = ('wait_for() { i=0; until "$@" >/dev/null 2>&1; do i=$((i+1)); '
         'if [ $i -ge 90 ]; then echo "benchsmith-services: no answer from: $*" >&2; exit 1; fi; '
         'sleep 1; done; }')


def _sql(text: str) -> str:
    return text.replace("'", "''")


def _postgresql(service: Service) -> list[str]:
    user = service.user or "postgres"
    password = _sql(service.password or "postgres")
    lines = [
        "if ! pg_isready -q -h 127.0.0.1 -p 5432; then",
        # Trust on loopback and the socket: tests connect with whatever user and password
        # their CI configured.
        "  for f in /etc/postgresql/*/main/pg_hba.conf; do printf '%s\\n' 'local all all trust'"
        " 'host all all 127.0.0.1/32 trust' 'host all all ::1/128 trust' > \"$f\"; done",
        "  service postgresql start >/dev/null",
        "fi",
        "wait_for pg_isready -h 127.0.0.1 -p 5432",
        f"psql -q -h 127.0.0.1 -U postgres -c \"ALTER USER postgres PASSWORD '{password}'\"",
    ]
    if user != "postgres":
        lines.append(
            f"psql -tA -h 127.0.0.1 -U postgres -c \"SELECT 1 FROM pg_roles WHERE rolname='{_sql(user)}'\""
            f" | grep -q 1 || psql -q -h 127.0.0.1 -U postgres -c "
            f"\"CREATE ROLE \\\"{user}\\\" LOGIN SUPERUSER PASSWORD '{password}'\"")
    if service.database and service.database != "postgres":
        lines.append(
            f"psql -tA -h 127.0.0.1 -U postgres -c \"SELECT 1 FROM pg_database WHERE "
            f"datname='{_sql(service.database)}'\" | grep -q 1 || createdb -h 127.0.0.1 -U postgres "
            f"-O {shlex.quote(user)} {shlex.quote(service.database)}")
    return lines


def _mysql(service: Service) -> list[str]:
    """MariaDB as the official MySQL/MariaDB images set it up: root with its password (or
    none), from the socket and from any host; the database; the user, granted everything (a
    Django suite creates ``test_<name>`` databases)."""
    user = service.user if service.user != "root" else None
    root = service.root_password
    if root is None:
        root = (service.password or "") if service.user == "root" else ""
    accounts = [("root", _sql(root))] + ([(user, _sql(service.password or ""))] if user else [])
    statements = ["ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR "
                  f"mysql_native_password USING PASSWORD('{_sql(root)}')"]
    for name, password in accounts:
        for host in ("%",) if name == "root" else ("localhost", "%"):
            account = f"'{_sql(name)}'@'{host}'"
            statements += [f"CREATE USER IF NOT EXISTS {account}",
                           f"ALTER USER {account} IDENTIFIED BY '{password}'",
                           f"GRANT ALL ON *.* TO {account} WITH GRANT OPTION"]
    database = (service.database or "test").replace("`", "``")
    statements.append(f"CREATE DATABASE IF NOT EXISTS `{database}`")
    return [
        "if ! mysqladmin ping -s >/dev/null 2>&1; then service mariadb start >/dev/null; fi",
        "wait_for mysqladmin ping -s",
        f"mysql -uroot -e {shlex.quote('; '.join(statements))}",
    ]


def _redis(service: Service) -> list[str]:
    return [
        "if ! redis-cli -p 6379 ping >/dev/null 2>&1; then "
        "redis-server --daemonize yes --port 6379 --bind 127.0.0.1 --save '' >/dev/null; fi",
        "wait_for redis-cli -p 6379 ping",
    ]


_STARTERS = {"postgresql": _postgresql, "mysql": _mysql, "redis": _redis}


def start_script(services: list[Service]) -> str:
    """A POSIX shell script that starts `services` and waits until each answers (idempotent)."""
    lines = ["#!/bin/sh", "# Written by benchsmith: start the services the tests need.", "set -e",
             _WAIT]
    for service in unique(services):
        lines.append(f"# {service.kind}")
        lines += _STARTERS[service.kind](service)
    return "\n".join(lines) + "\n"


def install_command(services: list[Service]) -> str:
    """One shell line that writes the start script (one line, so it fits a Dockerfile RUN)."""
    body = " ".join(shlex.quote(line) for line in start_script(services).splitlines())
    return f"printf '%s\\n' {body} > {START_SCRIPT} && chmod +x {START_SCRIPT}"


def debian_packages(services: list[Service]) -> list[str]:
    """The Debian packages that provide `services`."""
    return [p for s in unique(services) for p in DEBIAN_PACKAGES[s.kind]]


def service_env(services: list[Service]) -> dict[str, str]:
    """Where tests find the services: the variables their client libraries and CI configs read."""
    env: dict[str, str] = {}
    for service in unique(services):
        if service.kind == "postgresql":
            env.update(PGHOST="127.0.0.1", PGPORT="5432", PGUSER=service.user or "postgres",
                       PGPASSWORD=service.password or "postgres")
            if service.database:
                env["PGDATABASE"] = service.database
        elif service.kind == "mysql":
            env.update(MYSQL_HOST="127.0.0.1", MYSQL_TCP_PORT="3306", MYSQL_PORT="3306",
                       MYSQL_UNIX_PORT="/run/mysqld/mysqld.sock")
            env.update({key: value for key, value in (
                ("MYSQL_USER", service.user), ("MYSQL_PASSWORD", service.password),
                ("MYSQL_DATABASE", service.database)) if value is not None})
        elif service.kind == "redis":
            env.update(REDIS_HOST="127.0.0.1", REDIS_PORT="6379",
                       REDIS_URL="redis://127.0.0.1:6379/0")
    return env


def unique(services: list[Service]) -> list[Service]:
    """One service per kind (the first wins), in a stable order."""
    seen: dict[str, Service] = {}
    for service in services:
        seen.setdefault(service.kind, service)
    return [seen[kind] for kind in PORTS if kind in seen]


def listening(kind: ServiceKind, host: str = "127.0.0.1", timeout: float = 1.0) -> bool:
    """Whether something accepts connections on `kind`'s usual port on this machine."""
    try:
        with socket.create_connection((host, PORTS[kind]), timeout=timeout):
            return True
    except OSError:
        return False


def local_reason(kinds: list[str]) -> str:
    """Why the host could not give the tests their services, one clause per service."""
    parts = []
    for kind in (k for k in PORTS if k in kinds):
        port = PORTS[kind]
        if listening(kind):
            parts.append(f"a server listens on 127.0.0.1:{port} but refused the tests: "
                         f"check its credentials")
        else:
            parts.append(f"needs service {kind}: nothing listens on 127.0.0.1:{port}")
    return "; ".join(parts + ["this backend starts no services (allow it with --system-packages "
                              "as root on a Debian-like host, or use --backend docker)"])
