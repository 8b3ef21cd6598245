"""Local stand-ins for public test hosts (httpbin.org): found in what the test sources say,
installed in an environment of their own, started before every test run (offline too), spared
by the sweep of leftover processes, named in every record; and a suite whose tests all need an
unreachable host is diagnosed as such. Real git repositories, real installs from PyPI, a real
server on loopback, and for Docker a real engine."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchsmith.core import Plan
from benchsmith.evaluation.environment import Environments
from benchsmith.evaluation.run import EvalOptions, Evaluation
from benchsmith.harness.render import render_install, render_test
from benchsmith.instance import Prediction, TaskInstance
from benchsmith.mining.build import InstanceBuilder
from benchsmith.parsing import network_failures, unreachable_hosts
from benchsmith.sandbox import DockerSandboxConfig, LocalSandboxConfig
from benchsmith.sandbox.config import SandboxConfig, make_sandbox
from benchsmith.setup.context import gather_context
from benchsmith.setup.context_model import RepoContext
from benchsmith.setup.engine import SetupEngine, SetupOptions
from benchsmith.setup.planner import RulePlanner
from benchsmith.setup.pyversion import PythonChoice

from .conftest import PIN_DATE
from .test_mining_build import pr_from

PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "webclient"
version = "0.1.0"

[project.optional-dependencies]
test = ["pytest"]
"""

CLIENT = '''
import json
from urllib.parse import urlencode
from urllib.request import Request, urlopen


def get_json(url, **params):
    if params:
        url += "?" + urlencode(params)
    with urlopen(url, timeout=10) as response:
        return json.loads(response.read().decode("utf-8"))


def post_form(url, fields):
    request = Request(url, data=urlencode(fields).encode("ascii"), method="POST")
    with urlopen(request, timeout=10) as response:
        return json.loads(response.read().decode("utf-8"))


def header(url, name):
    request = Request(url, headers={name: "benchsmith"})
    with urlopen(request, timeout=10) as response:
        return json.loads(response.read().decode("utf-8"))["headers"].get(name)
'''

# The pattern of requests' suites of 2012-2016: a public host, overridable by a variable.
TESTS = '''
import os
from urllib.parse import urljoin

from webclient import get_json, header, post_form

HTTPBIN = os.environ.get("HTTPBIN_URL", "http://httpbin.org/")


def httpbin(*suffix):
    return urljoin(HTTPBIN, "/".join(suffix))


def test_get_with_params():
    assert get_json(httpbin("get"), q="1")["args"] == {"q": "1"}


def test_post_form():
    assert post_form(httpbin("post"), {"a": "b"})["form"] == {"a": "b"}


def test_custom_header():
    assert header(httpbin("headers"), "X-Probe") == "benchsmith"
'''


def webclient(make_repo, tests: str = TESTS, extra: dict[str, str] | None = None):
    return make_repo("webclient", {"pyproject.toml": PYPROJECT, "src/webclient/__init__.py": CLIENT,
                                   "tests/test_client.py": tests, **(extra or {})})


class WithoutStandIns(RulePlanner):
    """The rule planner with the stand-ins left out: the suite as it was set up before."""

    def plan(self, context: RepoContext, python: PythonChoice, exclude_newer: str) -> Plan:
        plan = super().plan(context, python, exclude_newer)
        plan.stand_ins = []
        return plan


def _setup(repo, tmp_path: Path, config: SandboxConfig, planner: RulePlanner | None = None):
    options = SetupOptions(sandbox=config, commit_images=False, refdb=str(tmp_path / "ref.sqlite"),
                           use_refdb=False)
    return SetupEngine(options, planner=planner).setup(str(repo.path), on_date=PIN_DATE)


def test_the_test_sources_say_which_stand_ins_a_suite_needs(make_repo, tmp_path: Path) -> None:
    repo = webclient(make_repo)
    found = gather_context(repo.path).stand_ins
    assert [(h.value, h.source) for h in found] == [("httpbin.org", "tests/test_client.py")]
    # only the variable, at the repository's root (requests' old layout)
    variable = make_repo("variable", {"setup.py": "from setuptools import setup\nsetup(name='v')\n",
                                      "test_v.py": "import os\nURL = os.environ['HTTPBIN_URL']\n"})
    assert [h.value for h in gather_context(variable.path).stand_ins] == ["httpbin.org"]
    # a suite that serves its own httpbin (pytest-httpbin) gets none
    own = make_repo("own", {"pyproject.toml": PYPROJECT, "src/webclient/__init__.py": CLIENT,
                            "tests/test_client.py": TESTS,
                            "requirements-test.txt": "pytest\npytest-httpbin==1.0.0\n"})
    assert gather_context(own.path).stand_ins == []
    # the host in a module that is no test says nothing about the suite
    docs = make_repo("docs", {"pyproject.toml": PYPROJECT,
                              "src/webclient/__init__.py": 'EXAMPLE = "http://httpbin.org/get"\n'})
    assert gather_context(docs.path).stand_ins == []


def test_a_plan_with_a_stand_in_installs_it_apart_and_starts_it_before_the_tests() -> None:
    plan = Plan(python="2.7", exclude_newer="2015-01-01T00:00:00Z", stand_ins=["httpbin.org"])
    install = render_install(plan)
    [stand_in] = [c for c in install if "httpbin waitress" in c]
    assert "--exclude-newer 2024-06-01T00:00:00Z" in stand_in and "$HOME/.benchsmith/stand-ins/httpbin" in stand_in
    assert not any("httpbin" in c for c in install if c != stand_in)  # never the project's environment
    [test] = render_test(plan)
    assert test.startswith('eval "$(sh "$HOME/.benchsmith/stand-ins/httpbin/start")" && python -m pytest')


REQUESTS_FAILURE = """
=================================== FAILURES ===================================
_________________________________ test_get _________________________________
E   requests.exceptions.ConnectionError: HTTPConnectionPool(host='httpbin.org', port=80): Max retries exceeded
E   urllib3.exceptions.NameResolutionError: Failed to resolve 'files.example.net' ([Errno -2])
E   curl: (6) Could not resolve host: cdn.example.com
E   urlopen error for http://127.0.0.1:8080/local and http://data.example.org/x.json
=========================== short test summary info ============================
FAILED tests/test_get.py::test_get - see https://docs.pytest.org/en/stable/
"""


def test_the_hosts_failures_name_are_read_from_the_failures_only() -> None:
    assert unreachable_hosts(REQUESTS_FAILURE) == ["httpbin.org", "files.example.net",
                                                   "cdn.example.com", "data.example.org"]


# The shape of pytest 2's output (the era of suites that called httpbin.org): a summary line
# without a message, the exception only in the FAILURES section.
OLD_PYTEST = """
test_client.py::ClientTestCase::test_get FAILED
test_client.py::ClientTestCase::test_parse PASSED

=================================== FAILURES ===================================
___________________________ ClientTestCase.test_get ____________________________
>           raise ConnectionError(e, request=request)
E           ConnectionError: HTTPConnectionPool(host='httpbin.org', port=80): Max retries exceeded with url: /get (Caused by ProtocolError('Connection aborted.', gaierror(-2, 'Name or service not known')))
requests/adapters.py:424: ConnectionError
=========================== short test summary info ============================
FAIL test_client.py::ClientTestCase::()::test_get
================ 1 failed, 1 passed in 0.31 seconds ================
"""


def test_a_summary_line_without_a_message_still_tells_a_test_that_needed_the_network() -> None:
    assert network_failures(OLD_PYTEST, "pytest") == {"test_client.py::ClientTestCase::test_get"}
    assert unreachable_hosts(OLD_PYTEST) == ["httpbin.org"]
    # pytest before 2.9 knows neither "a" nor "p" of -rap: no summary at all
    without_summary = re.sub(r"=+ short test summary info =+\n.*\n", "", OLD_PYTEST)
    assert "short test summary" not in without_summary
    assert network_failures(without_summary, "pytest") == {"test_client.py::ClientTestCase::test_get"}


@pytest.mark.slow
def test_locally_a_suite_calling_httpbin_validates_with_the_stand_in_and_not_without(
        make_repo, tmp_path: Path) -> None:
    repo = webclient(make_repo)
    config = LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes"))
    record = _setup(repo, tmp_path, config)
    assert record.status == "validated", record.failure_reason
    assert record.tests.PASSED == 3 and record.tests.FAILED == 0
    assert record.stand_ins == ["httpbin.org"] and record.plan and record.plan.stand_ins == ["httpbin.org"]
    assert record.plan.sources["stand_ins"] == ["tests/test_client.py"]
    assert any("httpbin waitress" in command for command in record.install)
    # planned without it (what the test sources say missed): every test fails reaching the
    # host, and the repair the diagnosis names starts the stand-in
    without = _setup(repo, tmp_path / "without", config, WithoutStandIns())
    first = without.iterations[0]
    assert not first.validated and first.diagnosis is not None, first
    assert first.diagnosis.kind == "needs_network" and first.diagnosis.facts["hosts"] == ["httpbin.org"]
    assert "ran no tests" not in first.diagnosis.reason and len(first.needs_network) == 3
    assert without.status == "validated", without.failure_reason
    assert first.repair == "start a local stand-in for httpbin.org before the tests"
    assert without.stand_ins == ["httpbin.org"] and without.tests.PASSED == 3


@pytest.mark.docker
@pytest.mark.slow
def test_in_docker_the_suite_validates_offline_with_the_stand_in(make_repo, tmp_path: Path) -> None:
    record = _setup(webclient(make_repo), tmp_path, DockerSandboxConfig())
    assert record.status == "validated", record.failure_reason
    assert record.tests_offline  # the tests were cut off the network: only loopback answered
    assert record.tests.PASSED == 3 and record.needs_network == []
    assert record.stand_ins == ["httpbin.org"]


PROBE = ('python -c "import os, urllib.request; url = os.environ[\'HTTPBIN_URL\']; '
         'print(url, urllib.request.urlopen(url + \'get\').status)"')


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_the_sweep_spares_the_stand_in_and_closing_the_sandbox_ends_it(
        backend: str, tmp_path: Path) -> None:
    config: SandboxConfig = (LocalSandboxConfig(tmp_dir=str(tmp_path)) if backend == "local"
                             else DockerSandboxConfig())
    plan = Plan(python="3.11", exclude_newer="2023-06-01T00:00:00Z", install_project=False,
                stand_ins=["httpbin.org"])
    prefix = render_test(plan)[0].split("python -m pytest")[0]
    sandbox = make_sandbox(config)
    try:
        sandbox.setup_python("3.11")
        for command in render_install(plan):
            assert sandbox.exec(command, timeout=600).ok
        sandbox.set_network(False)  # started before tests that run offline too
        first = sandbox.exec(prefix + PROBE, timeout=120, sweep=True)
        assert first.ok and first.contained == [], first.output
        url = re.search(r"(http://127\.0\.0\.1:\d+/) 200", first.output)
        assert url, first.output
        again = sandbox.exec(prefix + PROBE, timeout=120, sweep=True)
        assert again.ok and f"{url.group(1)} 200" in again.output  # the same server, still up
        listening = sandbox.exec("cat $HOME/.benchsmith/stand-ins/httpbin/port", timeout=60).output.strip()
    finally:
        sandbox.close()
    if backend == "local":  # the container went with its processes; a local server must too
        import socket

        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", int(listening)), timeout=2)


BUGGY_CLIENT = CLIENT.replace('"?" + urlencode(params)', '"?" + urlencode(params).upper()')
NEW_TEST = TESTS + '''

def test_lowercase_params():
    assert get_json(httpbin("get"), name="value")["args"] == {"name": "value"}
'''


def _built_instance(make_repo, tmp_path: Path) -> tuple[Path, TaskInstance]:
    """A fix whose FAIL_TO_PASS test calls httpbin, built into an instance by `build`."""
    upper = {"q=\"1\"": "Q=\"1\"", "{\"q\": \"1\"}": "{\"Q\": \"1\"}"}
    old_tests, new_tests = TESTS, NEW_TEST
    for lower, capital in upper.items():  # a parameter whose case the bug keeps
        old_tests, new_tests = old_tests.replace(lower, capital), new_tests.replace(lower, capital)
    repo = make_repo("webclient", {"pyproject.toml": PYPROJECT, "src/webclient/__init__.py": BUGGY_CLIENT,
                                   "tests/test_client.py": old_tests})
    base = repo.commit({"README.md": "webclient\n"}, date="2023-05-10T12:00:00+00:00")
    fix = repo.commit({"src/webclient/__init__.py": CLIENT, "tests/test_client.py": new_tests},
                      "Keep the case of parameters (#2)", date="2023-05-16T12:00:00+00:00")
    engine = SetupEngine(SetupOptions(sandbox=LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")),
                                      refdb=str(tmp_path / "ref.sqlite")))
    out, log = tmp_path / "instances.jsonl", tmp_path / "build-log.jsonl"
    pr = pr_from(repo, 2, base, fix)
    pr.repo = "fixture/webclient"
    [outcome] = InstanceBuilder(engine).build([pr], out, log)
    assert outcome.stage == "valid", outcome.reason
    [line] = out.read_text().splitlines()
    record = json.loads(line)
    assert json.loads(record["FAIL_TO_PASS"]) == ["tests/test_client.py::test_lowercase_params"]
    assert record["test_spec"]["stand_ins"] == ["httpbin.org"]
    return repo.path, TaskInstance.model_validate(record)


def _evaluate_gold(repo: Path, instance: TaskInstance, config: SandboxConfig, run_dir: Path):
    environments = Environments(config, {"fixture/webclient": str(repo)}, timeout=600)
    options = EvalOptions(mode="fix", run_dir=run_dir, timeout_s=300)  # the network off: the default
    gold = Prediction(instance_id=instance.instance_id, model_name_or_path="gold",
                      model_patch=instance.patch)
    try:
        [report] = Evaluation(options, environments).run({instance.instance_id: instance}, [gold])
    finally:
        environments.close()
    assert not report.infrastructure_failure, report.infrastructure_reason
    return report


@pytest.mark.slow
def test_build_and_an_offline_evaluation_resolve_a_fix_whose_test_calls_the_stand_in(
        make_repo, tmp_path: Path) -> None:
    repo, instance = _built_instance(make_repo, tmp_path)
    report = _evaluate_gold(repo, instance, LocalSandboxConfig(), tmp_path / "run")
    assert report.network["tests"] == "host (package indexes offline, proxies reach loopback only)"
    assert report.resolved and report.stand_ins == ["httpbin.org"]


@pytest.mark.docker
@pytest.mark.slow
def test_in_docker_an_evaluation_cut_off_the_network_resolves_it_too(make_repo, tmp_path: Path) -> None:
    repo, instance = _built_instance(make_repo, tmp_path)
    report = _evaluate_gold(repo, instance, DockerSandboxConfig(), tmp_path / "run")
    assert report.network["tests"] == "none (loopback only)"
    assert report.resolved and report.stand_ins == ["httpbin.org"]


UNREACHABLE = '''
from webclient import get_json

API = "http://api.example.invalid/"


def test_status():
    assert get_json(API + "status")["ok"]


def test_version():
    assert get_json(API + "version")["version"]
'''

AT_COLLECTION = '''
from webclient import get_json

SCHEMA = get_json("http://schema.example.invalid/v1.json")


def test_schema_has_fields():
    assert SCHEMA["fields"]
'''


IN_CONFTEST = {"tests/conftest.py": AT_COLLECTION.replace("def test_", "def check_"),
               "tests/test_client.py": "def test_nothing():\n    pass\n"}


@pytest.mark.slow
@pytest.mark.parametrize(("files", "host"), [({"tests/test_client.py": UNREACHABLE}, "api.example.invalid"),
                                             ({"tests/test_client.py": AT_COLLECTION}, "schema.example.invalid"),
                                             (IN_CONFTEST, "schema.example.invalid")],
                         ids=["tests", "collection", "conftest"])
def test_a_suite_whose_tests_all_need_an_unreachable_host_is_diagnosed_so(
        make_repo, tmp_path: Path, files: dict[str, str], host: str) -> None:
    record = _setup(webclient(make_repo, extra=files), tmp_path,
                    LocalSandboxConfig(tmp_dir=str(tmp_path / "boxes")))
    assert record.status != "validated" and record.stand_ins == []
    diagnosis = record.iterations[-1].diagnosis
    assert diagnosis is not None and diagnosis.kind == "needs_network", diagnosis
    assert diagnosis.facts["hosts"] == [host] and host in diagnosis.reason
    assert "ran no tests" not in (record.failure_reason or "")


HTTPS_PROBE = """python - <<'PY'
import os, socket, ssl, time
url = os.environ["HTTPBIN_URL"]
host, port = url.split("//")[1].rstrip("/").split(":")
start = time.monotonic()
try:
    with socket.create_connection((host, int(port)), timeout=90) as raw:
        ssl.create_default_context().wrap_socket(raw, server_hostname=host)
    print("handshake?")
except socket.timeout:
    print("timed out")
except (ssl.SSLError, OSError) as exc:
    print("refused after", round(time.monotonic() - start), type(exc).__name__)
PY"""


@pytest.mark.slow
def test_an_https_call_to_the_stand_in_fails_in_seconds_instead_of_stalling(tmp_path: Path) -> None:
    """A suite that calls the stand-in over https:// (its host with another scheme): the plain
    HTTP server never answers the handshake; it closes the idle connection soon, and the test
    fails long before a stall limit."""
    plan = Plan(python="3.11", exclude_newer="2023-06-01T00:00:00Z", install_project=False,
                stand_ins=["httpbin.org"])
    prefix = render_test(plan)[0].split("python -m pytest")[0]
    sandbox = make_sandbox(LocalSandboxConfig(tmp_dir=str(tmp_path)))
    try:
        sandbox.setup_python("3.11")
        for command in render_install(plan):
            assert sandbox.exec(command, timeout=600).ok
        probe = sandbox.exec(prefix + HTTPS_PROBE, timeout=180)
    finally:
        sandbox.close()
    refused = re.search(r"refused after (\d+) ", probe.output)
    assert refused and int(refused.group(1)) <= 30, probe.output
