"""Services the tests need: found in CI and compose files or in refused connections, started
from Debian's packages in Docker (real PostgreSQL and Redis), named as the failure locally."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from benchsmith.core import ExecResult, Plan, Service
from benchsmith.harness.render import plan_spec, render, render_spec
from benchsmith.harness.services import listening, service_env, start_script
from benchsmith.parsing import network_failures, service_failures
from benchsmith.sandbox import DockerSandboxConfig, LocalSandboxConfig
from benchsmith.setup.context import gather_context
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.diagnose import diagnose_tests
from benchsmith.setup.engine import SetupEngine, SetupOptions
from benchsmith.setup.planner import RulePlanner
from benchsmith.setup.pyversion import PythonChoice
from benchsmith.setup.repair import RuleRepairer
from benchsmith.setup.sources.services import image_kind, url_kind

from .conftest import PIN_DATE

WORKFLOW = """
name: tests
on: [push]
env:
  CACHE_URL: redis://localhost:6379/1
jobs:
  lint:
    runs-on: ubuntu-latest
    env:
      UNRELATED_URL: postgres://nowhere/db
    steps:
      - run: flake8
  test:
    runs-on: ubuntu-latest
    services:
      db:
        image: postgres:13-alpine
        env:
          POSTGRES_USER: app
          POSTGRES_PASSWORD: secret
          POSTGRES_DB: app_test
        ports: ["5432:5432"]
    env:
      DATABASE_URL: postgresql://app:secret@localhost:${{ job.services.db.ports[5432] }}/app_test
      TOKEN: ${{ secrets.TOKEN }}
      APP_TESTDB: app_test
      APP_TESTDB_HOST: db
      PGUSER: db
      REDIS_HOST: 172.17.0.1
      APP_DB_PASSWORD: ${{ secrets.DB_PASSWORD }}
      LOG_LEVEL: debug
    steps:
      - uses: actions/setup-python@v4
        with:
          python-version: "3.11"
      - run: pip install -e .[test]
      - run: pytest tests
"""

COMPOSE = """
services:
  cache:
    image: redis:7
  sql:
    image: mariadb:10.11
    environment:
      - MYSQL_ROOT_PASSWORD=rootpw
      - MYSQL_DATABASE=shop
"""

PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "0.1.0"
requires-python = ">=3.8"
dependencies = [{deps}]

[project.optional-dependencies]
test = ["pytest"]
"""


def _context(tmp_path: Path, files: dict[str, str]):
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return gather_context(tmp_path)


def test_services_and_their_addresses_come_from_ci_and_compose_files(tmp_path: Path) -> None:
    context = _context(tmp_path, {
        "pyproject.toml": PYPROJECT.format(name="app", deps=""),
        ".github/workflows/ci.yml": WORKFLOW, "docker-compose.yml": COMPOSE,
    })
    by_kind = {s.kind: s for s in context.services}
    assert sorted(by_kind) == ["mysql", "postgresql", "redis"]
    pg = by_kind["postgresql"]
    assert (pg.user, pg.password, pg.database, pg.source) == ("app", "secret", "app_test",
                                                              ".github/workflows/ci.yml")
    assert (by_kind["mysql"].user, by_kind["mysql"].password, by_kind["mysql"].database) == (
        "root", "rootpw", "shop")
    env = {h.value for h in context.service_env}
    # The job's own port expression resolves to the port; the lint job's URL is not the tests'.
    # Plain connection settings of that job too, every host made loopback (a user named like
    # the service is not a host).
    assert env == {"DATABASE_URL=postgresql://app:secret@localhost:5432/app_test",
                   "CACHE_URL=redis://localhost:6379/1", "APP_TESTDB=app_test", "PGUSER=db",
                   "APP_TESTDB_HOST=127.0.0.1", "REDIS_HOST=127.0.0.1"}
    plan = RulePlanner().plan(context, PythonChoice(version="3.11", reason="test"),
                              "2023-06-01T00:00:00Z")
    assert sorted(s.kind for s in plan.services) == ["mysql", "postgresql", "redis"]
    assert plan.env["DATABASE_URL"].endswith("@localhost:5432/app_test")
    assert plan.env["APP_TESTDB_HOST"] == "127.0.0.1"
    assert ".github/workflows/ci.yml" in plan.sources["services"]


def test_image_and_url_kinds() -> None:
    assert image_kind("postgres:15") == "postgresql" and image_kind("postgis/postgis:13-3.1") == "postgresql"
    assert image_kind("docker.io/library/redis") == "redis" and image_kind("bitnami/mariadb:10") == "mysql"
    assert image_kind("nginx:latest") is None and image_kind("") is None
    assert url_kind("postgresql+psycopg2://u@h/db") == "postgresql"
    assert url_kind("mysql+pymysql://root@127.0.0.1/test") == "mysql"
    assert url_kind("rediss://h:6380") == "redis" and url_kind("https://example.org") is None


def test_services_render_into_install_and_test_commands_where_apt_is_allowed() -> None:
    plan = Plan(python="3.11", exclude_newer="2023-06-01T00:00:00Z", extras=["test"],
                services=[Service(kind="redis"), Service(kind="postgresql", user="app", password="s")],
                env={"PGUSER": "mine"})
    install, test = render(plan, apt=True)
    assert "postgresql redis-server" in install[0] and install[0].startswith("apt-get update")
    assert "/usr/local/bin/benchsmith-services" in install[1]
    assert test[0].startswith("benchsmith-services && ")
    assert "PGUSER=mine " in test[0] and "REDIS_URL=redis://127.0.0.1:6379/0 " in test[0]
    local_install, local_test = render(plan, apt=False)
    assert not any("apt-get" in c or "benchsmith-services" in c for c in local_install + local_test)
    assert "PGHOST=127.0.0.1 " in local_test[0]  # a server already on the machine is found
    spec = plan_spec(plan, ["tests/test_db.py"], services=True)
    assert spec.services == ["postgresql", "redis"]
    assert render_spec(spec).startswith("benchsmith-services && ")
    assert not render_spec(plan_spec(plan, [], services=False)).startswith("benchsmith-services")
    # The script is one line for a Dockerfile RUN, and valid shell.
    script = start_script(plan.services)
    assert "CREATE ROLE \\\"app\\\"" in script and "redis-server --daemonize yes" in script
    assert subprocess.run(["sh", "-n"], input=script, text=True).returncode == 0
    assert "\n" not in install[1]
    assert service_env([Service(kind="mysql", user="u")])["MYSQL_USER"] == "u"


POSTGRES_REFUSED = """\
E   psycopg2.OperationalError: connection to server at "127.0.0.1", port 5432 failed: Connection refused
=========================== short test summary info ============================
FAILED tests/test_db.py::test_insert - psycopg2.OperationalError: connection to server at "127.0.0.1", port 5432 failed: Connection refused
FAILED tests/test_web.py::test_fetch - requests.exceptions.ConnectionError: HTTPSConnectionPool(host='example.org', port=443)
========================= 2 failed in 0.31s =========================
"""
REDIS_REFUSED = ("FAILED tests/test_q.py::test_push - redis.exceptions.ConnectionError: "
                 "Error 111 connecting to localhost:6379. Connection refused.")
MYSQL_REFUSED = ("E   pymysql.err.OperationalError: (2003, \"Can't connect to MySQL server on "
                 "'127.0.0.1' ([Errno 111] Connection refused)\")")


def test_refused_service_connections_are_a_service_need_not_the_network() -> None:
    assert network_failures(POSTGRES_REFUSED, "pytest") == {"tests/test_web.py::test_fetch"}
    assert service_failures(POSTGRES_REFUSED) == ["postgresql"]
    assert service_failures(REDIS_REFUSED) == ["redis"] and service_failures(MYSQL_REFUSED) == ["mysql"]
    assert service_failures("E   ConnectionRefusedError: [Errno 111] Connection refused") == []
    # a cluster node or a server with modules on a port of its own: not one we can start
    elsewhere = ("=========================== short test summary info ============================\n"
                 + REDIS_REFUSED + "\nFAILED tests/test_json.py::test_set - redis.exceptions.ConnectionError: "
                 "Error 111 connecting to localhost:36379. Connection refused.\n"
                 "========================= 2 failed in 0.31s =========================\n")
    assert network_failures(elsewhere, "pytest") == {"tests/test_json.py::test_set"}
    diagnosis = diagnose_tests(ExecResult(command="pytest", returncode=1, output=POSTGRES_REFUSED,
                                          duration_s=1), ["app"], "pytest")
    assert diagnosis.kind == "needs_service" and diagnosis.facts["services"] == ["postgresql"]
    plan = Plan(python="3.11", exclude_newer="2023-06-01T00:00:00Z")
    repaired = RuleRepairer(apt=True).repair(plan, diagnosis, RepoContext())
    assert repaired is not None and [s.kind for s in repaired[0].services] == ["postgresql"]
    assert "start postgresql" in repaired[1]
    assert RuleRepairer(apt=False).repair(plan, diagnosis, RepoContext()) is None
    down = diagnose_tests(ExecResult(command="benchsmith-services && pytest", returncode=1, duration_s=90,
                                     output="benchsmith-services: no answer from: pg_isready -h 127.0.0.1"),
                          ["app"], "pytest")
    assert down.kind == "needs_service" and "did not come up: pg_isready" in down.reason
    assert RuleRepairer(apt=True).repair(plan, down, RepoContext()) is None  # nothing to add: stop


REDIS_TESTS = """
import redis


def test_roundtrip():
    client = redis.Redis(host="localhost", port=6379)
    client.set("benchsmith", "ok")
    assert client.get("benchsmith") == b"ok"


def test_counter():
    client = redis.Redis.from_url("redis://localhost:6379/0")
    assert client.incr("counter") >= 1
"""


def _redis_repo(make_repo):
    return make_repo("queue", {
        "pyproject.toml": PYPROJECT.format(name="queue", deps='"redis==4.5.5"'),
        "src/queue_app/__init__.py": "", "tests/test_queue.py": REDIS_TESTS,
    })


@pytest.mark.slow
def test_local_backend_names_the_missing_service(make_repo, tmp_path: Path) -> None:
    if listening("redis"):
        pytest.skip("a Redis server already listens on this machine")
    repo = _redis_repo(make_repo)
    options = SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")), max_iterations=1)
    record = SetupEngine(options).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "failed" and record.failure_category == "testing"
    assert "needs service redis: nothing listens on 127.0.0.1:6379" in (record.failure_reason or "")
    assert len(record.iterations) == 1  # no Python switch, no other walk


POSTGRES_TESTS = """
import os

import psycopg2


def connect():
    return psycopg2.connect(os.environ["DATABASE_URL"])


def test_insert_and_select():
    with connect() as db, db.cursor() as cur:
        cur.execute("CREATE TABLE IF NOT EXISTS items (name text)")
        cur.execute("INSERT INTO items VALUES ('one')")
        cur.execute("SELECT count(*) FROM items")
        assert cur.fetchone()[0] >= 1


def test_server_version():
    with connect() as db:
        assert db.server_version >= 100000
"""


@pytest.mark.slow
@pytest.mark.docker
def test_docker_starts_postgresql_from_ci_and_redis_from_refused_connections(make_repo, tmp_path: Path) -> None:
    from benchsmith.sandbox.docker.base import docker_client

    pg_repo = make_repo("shop", {
        "pyproject.toml": PYPROJECT.format(name="shop", deps='"psycopg2-binary==2.9.6"'),
        "src/shop/__init__.py": "", "tests/test_db.py": POSTGRES_TESTS,
        ".github/workflows/ci.yml": WORKFLOW,
    })
    options = SetupOptions(sandbox=DockerSandboxConfig(), refdb=str(tmp_path / "ref.sqlite"))
    record = SetupEngine(options).setup(str(pg_repo.path), on_date=PIN_DATE)
    assert record.status == "validated", (record.failure_reason, record.iterations[-1].commands[-1].log_tail)
    assert len(record.iterations) == 1 and record.tests is not None and record.tests.PASSED == 2
    assert sorted(s.kind for s in record.plan.services) == ["postgresql", "redis"]  # CACHE_URL too
    assert record.test[0].startswith("benchsmith-services && ")
    assert "postgresql" in record.install[0] and "benchsmith-services" in (record.dockerfile or "")
    # The environment image starts its database again when its tests run, months later.
    client = docker_client()
    try:
        rerun = client.containers.run(record.image, ["sh", "-c", record.test[0]],
                                      remove=True, network_mode="host", stdout=True, stderr=True)
        assert b"2 passed" in rerun, rerun[-2000:]
    finally:
        client.images.remove(record.image, force=True)

    redis_repo = _redis_repo(make_repo)
    record = SetupEngine(options).setup(str(redis_repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    first = record.iterations[0]
    assert first.diagnosis is not None and first.diagnosis.kind == "needs_service"
    assert "start redis" in (first.repair or "")
    assert [s.kind for s in record.plan.services] == ["redis"] and record.tests.PASSED == 2
    client.images.remove(record.image, force=True)


MYSQL_WORKFLOW = """
name: tests
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    services:
      mysql:
        image: mysql:8
        env:
          MYSQL_ROOT_PASSWORD: secret
        ports: ["3306:3306"]
    env:
      DB_BACKEND: mysql
      DB_PORT: 3306
    steps:
      - run: pip install -e .[test]
      - run: pytest tests
"""
# Like a Django project's test settings: the CI's variable picks MySQL, the default is SQLite.
DEFAULT_SQLITE_TESTS = """
import os
import socket
import sqlite3


def connect():
    if os.environ.get("DB_BACKEND", "sqlite3") == "mysql":
        socket.create_connection(("127.0.0.1", int(os.environ.get("DB_PORT", "3306"))), timeout=2)
    return sqlite3.connect(":memory:")


def test_insert_and_select():
    db = connect()
    db.execute("CREATE TABLE items (name text)")
    db.execute("INSERT INTO items VALUES ('one')")
    assert db.execute("SELECT count(*) FROM items").fetchone()[0] == 1


def test_connects():
    assert connect() is not None
"""


@pytest.mark.slow
def test_local_backend_runs_the_tests_on_the_projects_defaults_without_the_ci_services(
        make_repo, tmp_path: Path) -> None:
    if listening("mysql"):
        pytest.skip("a MySQL server already listens on this machine")
    repo = make_repo("store", {
        "pyproject.toml": PYPROJECT.format(name="store", deps=""),
        "src/store_app/__init__.py": "", "tests/test_store.py": DEFAULT_SQLITE_TESTS,
        ".github/workflows/tests.yml": MYSQL_WORKFLOW,
    })
    options = SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")))
    record = SetupEngine(options).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", record.failure_reason
    assert record.iterations[0].origin == "rules, without services"
    assert record.plan is not None and record.plan.services == []
    assert "DB_BACKEND" not in record.plan.env and "DB_BACKEND" not in record.test[0]


MARIADB_COMPOSE = """
services:
  db:
    image: mariadb:10.11
    environment:
      MARIADB_USER: blog
      MARIADB_PASSWORD: 1234
      MARIADB_DATABASE: blog_test
      MARIADB_ALLOW_EMPTY_ROOT_PASSWORD: yes
"""
URL_WORKFLOW = """
on: [push]
jobs:
  test:
    services:
      db:
        image: mysql:5.7
        env:
          MYSQL_ALLOW_EMPTY_PASSWORD: "yes"
    env:
      DATABASE_URL: mysql+pymysql://app:s%40cret@127.0.0.1:3306/app_db?charset=utf8mb4
    steps:
      - run: pytest
"""
DJANGO_TEST_SETTINGS = """
import os

SECRET_KEY = "not secret"
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.mysql",
        "NAME": "wiki",
        "USER": os.environ.get("DB_USER", "wiki"),
        "PASSWORD": os.environ.get("DB_PASSWORD", "wikipw"),
        "HOST": "127.0.0.1",
    }
}
"""


def test_mysql_credentials_come_from_ci_compose_urls_and_django_settings(tmp_path: Path) -> None:
    def mysql(files: dict[str, str]) -> Service:
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        context = _context(root, {"pyproject.toml": PYPROJECT.format(name="app", deps=""), **files})
        return next(s for s in context.services if s.kind == "mysql")

    ci = mysql({".github/workflows/ci.yml": MYSQL_SERVICE_WORKFLOW})
    assert (ci.user, ci.password, ci.database, ci.root_password) == ("shop", "shoppw", "shop_test",
                                                                     "rootpw")
    compose = mysql({"docker-compose.yml": MARIADB_COMPOSE})  # YAML reads yes and 1234 as others
    assert (compose.user, compose.password, compose.database, compose.root_password) == (
        "blog", "1234", "blog_test", "")
    # the job's connection URL fills in what its service's settings leave out
    url = mysql({".github/workflows/ci.yml": URL_WORKFLOW})
    assert (url.user, url.password, url.database) == ("app", "s@cret", "app_db")
    settings = mysql({"tests/settings.py": DJANGO_TEST_SETTINGS})
    assert (settings.user, settings.password, settings.database, settings.source) == (
        "wiki", "wikipw", "wiki", "tests/settings.py")
    script = start_script([ci])
    assert "IDENTIFIED BY '\"'\"'shoppw'\"'\"'" in script and "CREATE DATABASE IF NOT EXISTS `shop_test`" in script
    assert subprocess.run(["sh", "-n"], input=script, text=True).returncode == 0
    env = service_env([ci])
    assert (env["MYSQL_USER"], env["MYSQL_PASSWORD"], env["MYSQL_DATABASE"]) == ("shop", "shoppw", "shop_test")


MYSQL_SERVICE_WORKFLOW = """
name: tests
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    services:
      mysql:
        image: mysql:8.0
        env:
          MYSQL_USER: shop
          MYSQL_PASSWORD: shoppw
          MYSQL_DATABASE: shop_test
          MYSQL_ROOT_PASSWORD: rootpw
        ports: ["3306:3306"]
    steps:
      - run: pip install -e .[test]
      - run: pytest tests
"""
MYSQL_TESTS = """
import pymysql


def test_create_and_select_in_the_expected_database():
    db = pymysql.connect(host="127.0.0.1", port=3306, user="shop", password="shoppw",
                         database="shop_test")
    with db.cursor() as cur:
        cur.execute("CREATE TABLE IF NOT EXISTS items (name varchar(20))")
        cur.execute("INSERT INTO items VALUES ('one')")
        db.commit()
        cur.execute("SELECT count(*) FROM items")
        assert cur.fetchone()[0] >= 1


def test_root_with_the_ci_password():
    db = pymysql.connect(host="127.0.0.1", user="root", password="rootpw")
    with db.cursor() as cur:
        cur.execute("SELECT VERSION()")
        assert "MariaDB" in cur.fetchone()[0]


def test_the_socket():
    db = pymysql.connect(unix_socket="/run/mysqld/mysqld.sock", user="shop", password="shoppw",
                         database="shop_test")
    with db.cursor() as cur:
        cur.execute("SELECT DATABASE()")
        assert cur.fetchone()[0] == "shop_test"
"""


@pytest.mark.slow
@pytest.mark.docker
def test_docker_starts_mariadb_with_the_ci_users_and_database(make_repo, tmp_path: Path) -> None:
    repo = make_repo("mysqlshop", {
        "pyproject.toml": PYPROJECT.format(name="mysqlshop", deps='"PyMySQL==1.0.3"'),
        "src/mysqlshop/__init__.py": "", "tests/test_db.py": MYSQL_TESTS,
        ".github/workflows/ci.yml": MYSQL_SERVICE_WORKFLOW,
    })
    options = SetupOptions(sandbox=DockerSandboxConfig(), use_refdb=False, commit_images=False)
    record = SetupEngine(options).setup(str(repo.path), on_date=PIN_DATE)
    assert record.status == "validated", (record.failure_reason, record.iterations[-1].commands[-1].log_tail)
    assert len(record.iterations) == 1 and record.tests.PASSED == 3
    assert [s.kind for s in record.plan.services] == ["mysql"]
    assert "mariadb-server" in record.install[0] and "mariadb-server" in record.system_packages
    assert record.test[0].startswith("benchsmith-services && ")


@pytest.mark.slow
def test_local_backend_starts_mariadb_on_the_host_with_system_packages(make_repo, tmp_path: Path) -> None:
    import os

    if os.geteuid() != 0:
        pytest.fail("this test installs and starts MariaDB on the host: run it as root on Debian")
    if listening("mysql"):
        pytest.skip("a MySQL server already listens on this machine")
    before = subprocess.run(["dpkg-query", "-W", "-f=${db:Status-Status}", "mariadb-server"],
                            capture_output=True, text=True).stdout.strip()
    repo = make_repo("mysqlshop", {
        "pyproject.toml": PYPROJECT.format(name="mysqlshop", deps='"PyMySQL==1.0.3"'),
        "src/mysqlshop/__init__.py": "", "tests/test_db.py": MYSQL_TESTS,
        ".github/workflows/ci.yml": MYSQL_SERVICE_WORKFLOW,
    })
    options = SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes"),
                                                      system_packages=True), use_refdb=False)
    try:
        record = SetupEngine(options).setup(str(repo.path), on_date=PIN_DATE)
        assert record.status == "validated", (record.failure_reason,
                                              record.iterations[-1].commands[-1].log_tail)
        assert record.iterations[0].origin == "rules" and record.tests.PASSED == 3
        assert record.test[0].startswith("benchsmith-services && ")
        assert ("mariadb-server" in record.system_packages) == (before != "installed")
    finally:  # the package stays; its server does not keep running on the host
        subprocess.run(["service", "mariadb", "stop"], capture_output=True)
