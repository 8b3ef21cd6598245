"""Classify a failed install or test run into the paper's categories, with facts to act on."""

from __future__ import annotations

import re

from benchsmith.core import Diagnosis, ExecResult
from benchsmith.harness.testrun import MAX_HUNG
from benchsmith.parsing import (
    running_test,
    service_failures,
)
from benchsmith.parsing.failure_groups import (
    bintest_failure_groups,
    collection_errors,
    failure_groups,
)
from benchsmith.setup.knowledge.removed_apis import REMOVED_APIS
from benchsmith.setup.metadata_repairs import diagnose_invalid_metadata
from benchsmith.setup.resolution import diagnose_resolution
from benchsmith.setup.resolution import line_with as _line_with
from benchsmith.setup.system_packages import (
    debian_packages_for,
    missing_headers,
    missing_system_parts,
    missing_tools,
)
from benchsmith.setup.test_environment import environment_causes
from benchsmith.setup.test_signals import (
    COLLECTION_INTERRUPTED,
    collection_needs_network,
    log_tail,
    no_tests_ran,
    runner_failure,
    steps_asked_for,
)

_NETWORK = re.compile(
    r"(dns error|failed to lookup address|Connection refused|tcp connect error|"
    r"Network is unreachable|error sending request for url|Temporary failure in name resolution|"
    r"Could not resolve host|unable to access '|"
    r"certificate verify failed|invalid peer certificate|UnknownIssuer)",
    re.IGNORECASE,
)
# The project's own build fetched a URL and name resolution or the connection failed.
_BUILD_FETCH = re.compile(
    r"(?P<url>https?://[^\s'\"<>]*[^\s'\"<>:,])[^\n]*?(?:Name or service not known|"
    r"Temporary failure in name resolution|urlopen error|Network is unreachable|"
    r"Connection refused|Max retries exceeded)")
# A fetch that failed for a URL that is not a package index: a VCS or archive requirement.
_DIRECT_URL = re.compile(
    r"Failed to (?:fetch|download|clone)[^`\n]*?`?(?:[\w.\[\],-]+ @ )?"
    r"((?:git\+https?://|https?://(?!pypi\.org|files\.pythonhosted\.org)"
    r"(?=[^`\s()]*(?:\.zip|\.tar\.gz|\.git|/archive/|@)))[^`\s()]+)"
)
# uv's words for lines pip of old accepted: legacy specifiers, editable VCS requirements.
_INVALID_REQUIREMENT = re.compile(
    r"(?:Couldn't parse requirement|Unsupported editable requirement) in `([^`]+)`")
_NO_PEP660 = re.compile(
    r"has no attribute 'build_editable'|does not support editable|"
    r"missing the `build_editable` hook|Editable installs? (?:is|are) not supported",
    re.IGNORECASE,
)
_NO_PIP = re.compile(r"No module named '?pip'?$", re.MULTILINE)
_MISSING_MODULE = re.compile(
    r"(?:ModuleNotFoundError|ImportError): No module named ['\"]?([A-Za-z_][\w.]*)['\"]?"
)
# setup.py checking a build dependency itself: "ImportError: Numpy version 1.13.0 or later
# must be installed to use Astropy" (astropy 3.0 computes its setup_requires)
_MUST_BE_INSTALLED = re.compile(
    r"(?:ImportError|RuntimeError|Exception): ([A-Za-z][\w-]*)(?: version [\w.]+(?: or (?:later|newer))?)?"
    r" (?:must|needs to|has to) be installed")
# an installed package's frame in pytest's INTERNALERROR traceback: the plugin that crashed it
_INTERNAL_FRAME = re.compile(r'^INTERNALERROR>\s+File "[^"]*/site-packages/(\w+)/', re.MULTILINE)
_PYTEST_ITSELF = {"_pytest", "pytest", "pluggy", "py", "_py"}
# pytest 7 and later: a plugin's pytest_configure raising is one "ERROR:" line, no traceback
_PLUGIN_CONFIGURE_ERROR = re.compile(r"^ERROR: (?P<plugin>pytest[-_][\w-]+) requires\b", re.MULTILINE)
# `setup.py develop` resolving setup_requires through easy_install, from the index of today
_EASY_INSTALL_SEARCH = re.compile(r"^Searching for (?P<name>[A-Za-z0-9][\w.-]*)", re.MULTILINE)
_EASY_INSTALL_BUILD = re.compile(r"/easy_install-\w+/(?P<name>[A-Za-z][\w.]*?)-\d[\w.]*/setup\.py")
# uv: "Failed to build `calc @ file:///...`" (a path), "Failed to download and build `x==1.0`"
_FAILED_BUILD = re.compile(r"Failed to (?:download and )?build `([^`@ =]+)(?:==[^`]*)?(?: @ (file://[^`]+))?")
# uv builds the checkout itself (without isolation) and says only which hook failed:
# "Call to `setuptools.build_meta.get_requires_for_build_editable`
# failed", under "The build backend returned an error" (no "Failed to build" line)
_OWN_BUILD_HOOK = re.compile(r"Call to `[\w.:]+\.(?:get_requires_for_build|prepare_metadata_for_build|"
                             r"build)_(?:wheel|editable|sdist)` failed")
_TRACEBACK_FRAME = re.compile(r'^\s*File "(?P<path>/[^"]+\.py)", line \d+, in <module>$', re.MULTILINE)
# A package versioned by setuptools_scm, built without isolation where setuptools_scm is absent:
# setuptools ignores `use_scm_version` and the version comes out as 0.0.0.
_SCM_VERSION_MISSING = re.compile(r"metadata version `0\.0\.0` does not match given version")
_PY_SPEC = re.compile(
    r"(?:current|requested) Python version \(([\d.]+)\) does not satisfy Python([<>=!~][^ ,]*(?:,[<>=!~][^ ,]*)*)"
)
_MISSING_FILE = re.compile(r"(?:File not found|No such file or directory).*?`?([\w./-]*requirements[\w./-]*\.txt)")
_COLLECTING = re.compile(r"^_+ ERROR collecting (\S+) _+$", re.MULTILINE)
_SERVICE_DOWN = re.compile(r"benchsmith-services: no answer from: (\S+)")
_EXPECTED_VALUE = re.compile(r"error: argument (--?[\w-]+)(?:/--?[\w-]+)*: expected (?:one|\d+) arguments?")
_UNRECOGNIZED = re.compile(r"error: unrecognized arguments: (.+)")
_UNKNOWN_MARK = re.compile(r"'([\w]+)' not found in `markers` configuration option")
_FIXTURE = re.compile(r"fixture '([\w]+)' not found")
_INI_KEY = re.compile(r"Unknown config option: ([\w-]+)")
_MISSING_PATH = re.compile(r"ERROR: (?:file or directory|file|module or package) not found: (\S+)")
# A C extension's build that fails on the Python it builds for: a header CPython no longer
# ships, a C API it removed or changed (old Cython output on a newer Python).
_PYTHON_BUILD = re.compile(
    r"fatal error: (?:longintrepr|cStringIO|pymem|eval)\.h: No such file|"
    r"error: [^\n]*\b_?Py\w+\b[^\n]*(?:undeclared|has no member|incomplete type|implicit declaration)|"
    r"implicit declaration of function '_?Py\w+'|error: too (?:few|many) arguments to function '_?Py\w+'|"
    r"error: [^\n]*'(?:tp_print|ob_shash|recursion_depth|curexc_\w+|exc_type|use_tracing)'")
_WARNING_ERROR = re.compile(r"^E\s+(?:\w+\.)*(Deprecation|PendingDeprecation|Resource|Future|User)Warning:",
                            re.MULTILINE)



def _own_modules_imported(out: str) -> list[str]:
    """The checkout's modules a failed build hook's traceback went through (never the build
    environment's): the package setup.py imported, as paths relative to where it was found."""
    paths = [frame["path"] for frame in _TRACEBACK_FRAME.finditer(out)
             if "site-packages" not in frame["path"] and "/lib/python" not in frame["path"]]
    return list(dict.fromkeys("/".join(path.split("/")[-2:]) for path in paths))


def _easy_install_fetches(out: str) -> list[str]:
    """The distributions setuptools' easy_install went looking for ("Searching for jinja2>=2.7")
    or built from a download of its own (``/tmp/easy_install-x/markupsafe-3.0.4/setup.py``)."""
    names = [m["name"] for m in _EASY_INSTALL_SEARCH.finditer(out)]
    names += [m["name"] for m in _EASY_INSTALL_BUILD.finditer(out)]
    return list(dict.fromkeys(name.lower() for name in names))


def _removed_api(out: str) -> Diagnosis | None:
    """Code that predates the Python it runs on (an API or behaviour since removed)."""
    for pattern, newest in REMOVED_APIS:
        if newest and (removed := pattern.search(out)):
            return Diagnosis(category="python", kind="removed_api",
                             reason=f"code needs Python <= {newest}: {removed.group(0)[:120]}",
                             facts={"max_python": [newest]}, evidence=_line_with(out, removed))
    return None


def diagnose_install(result: ExecResult, project_packages: list[str]) -> Diagnosis:
    """Why an install command failed."""
    out = result.output
    if result.timed_out:
        return Diagnosis(category="undecidable", kind="timeout", reason="install timed out",
                         evidence=log_tail(out))
    if (direct := _DIRECT_URL.search(out)) and _NETWORK.search(out):
        return Diagnosis(category="installation", kind="direct_url_unreachable",
                         reason=f"a requirement points at an unreachable URL: {direct.group(1)}",
                         facts={"urls": [direct.group(1)]}, evidence=log_tail(out))
    if invalid := _INVALID_REQUIREMENT.search(out):
        return Diagnosis(category="installation", kind="invalid_requirement",
                         reason=f"uv rejects a requirement of {invalid.group(1)}: "
                                f"{_line_with(out, invalid)[:160]}",
                         facts={"files": [invalid.group(1)]}, evidence=log_tail(out, 6))
    if unreadable := diagnose_invalid_metadata(out):
        return unreadable
    if network := _NETWORK.search(out):
        return Diagnosis(category="undecidable", kind="network", infrastructure=True,
                         reason=f"package index unreachable: {_line_with(out, network)[:200]}",
                         evidence=log_tail(out))
    if _NO_PEP660.search(out):
        return Diagnosis(category="installation", kind="no_pep660",
                         reason="the build backend of that date cannot do editable installs",
                         evidence=log_tail(out))
    if spec := _PY_SPEC.search(out):
        return Diagnosis(category="python", kind="python_incompatible",
                         reason=f"a requirement needs Python{spec.group(2)}",
                         facts={"specifier": [spec.group(2)]}, evidence=_line_with(out, spec))
    if missing_file := _MISSING_FILE.search(out):
        return Diagnosis(category="installation", kind="missing_requirement_file",
                         reason=f"requirement file {missing_file.group(1)} does not exist",
                         facts={"files": [missing_file.group(1)]}, evidence=_line_with(out, missing_file))
    if resolution := diagnose_resolution(out):
        return resolution
    if system := _system_packages(out):
        return system
    if fetched := _easy_install_fetches(out):
        # `setup.py develop` fetched its setup_requires itself, newest first, past the date
        return Diagnosis(category="installation", kind="build_dependency_missing",
                         reason=f"setup.py fetched {', '.join(fetched)} itself (setup_requires, "
                                "through easy_install, not pinned to the date)",
                         facts={"modules": fetched}, evidence=log_tail(out))
    build = _FAILED_BUILD.search(out)
    if build or _OWN_BUILD_HOOK.search(out):
        # without "Failed to build `x`", a build hook's failure is the project's own build
        name, own = (build.group(1), bool(build.group(2))) if build else (
            project_packages[0] if project_packages and project_packages[0] else "the project", True)
        modules = [m.split(".")[0] for m in _MISSING_MODULE.findall(out)]
        modules += [m.lower() for m in _MUST_BE_INSTALLED.findall(out)]
        if "invalid command 'bdist_wheel'" in out:
            modules.append("wheel")
        if _SCM_VERSION_MISSING.search(out):
            modules.append("setuptools_scm")
        if modules:
            facts = {"modules": list(dict.fromkeys(modules)), "package": [name]}
            reason = f"building {name} needs {', '.join(facts['modules'])}"
            if own and (imported := _own_modules_imported(out)):
                # setup.py imports its own package (for __version__), and with it the
                # package's run-time dependencies, before anything is installed
                facts["own_import"] = imported
                reason += f" (setup.py imports {imported[0]}, which imports them)"
            return Diagnosis(category="installation", kind="build_dependency_missing",
                             reason=reason, facts=facts, evidence=log_tail(out))
        if removed := _removed_api(out):  # the build runs code older than this Python
            return removed
        if not own and (python := _PYTHON_BUILD.search(out)):  # it blames this Python's C API
            return Diagnosis(category="python", kind="dependency_build_failed",
                             reason=f"{name} does not build on this Python: "
                                    f"{_line_with(out, python)[:160]}",
                             facts={"package": [name]}, evidence=log_tail(out))
        if parts := missing_system_parts(out):
            # A header, pkg-config module or library no Debian package here is known for: the
            # system lacks it, and another Python would lack it too.
            return Diagnosis(category="installation", kind="system_packages",
                             reason=f"building {name} needs what the system lacks: "
                                    f"{', '.join(parts)} (no Debian package known for it)",
                             facts={"missing": parts, "package": [name],
                                    "headers": missing_headers(out)}, evidence=log_tail(out))
        if not own and name.lower() not in {p.lower() for p in project_packages}:
            # A dependency without a wheel for this Python: older Pythons had wheels.
            return Diagnosis(category="python", kind="dependency_build_failed",
                             reason=f"dependency {name} does not build on this Python (its "
                                    "log names no missing system part; an older Python may "
                                    "have its wheel)",
                             facts={"package": [name]}, evidence=log_tail(out))
        if own and (fetch := _BUILD_FETCH.search(out)):
            # a build hook that downloads assets from a host the sandbox cannot reach
            return Diagnosis(category="installation", kind="build_needs_network",
                             reason=f"building the project downloads {fetch['url']}, and that "
                                    "host cannot be reached from the sandbox",
                             facts={"urls": [fetch["url"]]}, evidence=_line_with(out, fetch))
        imported = _own_modules_imported(out) if own else []
        return Diagnosis(category="installation", kind="project_build_failed",
                         reason=f"building the project failed: {log_tail(out, 1)[:200]}"
                                + (f" (setup.py imports {imported[0]})" if imported else ""),
                         facts={"own_import": imported} if imported else {},
                         evidence=log_tail(out, 25))
    if programs := missing_tools(out) + (["pip"] if _NO_PIP.search(out) else []):
        # a step after the install (a cache the tests need) runs a program: often pip, which
        # every virtualenv has and uv's lack
        return Diagnosis(category="installation", kind="missing_programs",
                         reason=f"a setup step runs programs that are not installed: "
                                f"{', '.join(dict.fromkeys(programs))}",
                         facts={"programs": list(dict.fromkeys(programs))}, evidence=log_tail(out, 6))
    return Diagnosis(category="undecidable", kind="install_failed",
                     reason=f"install failed: {log_tail(out, 1)[:200]}", evidence=log_tail(out))


def diagnose_tests(result: ExecResult, project_packages: list[str], runner: str,
                   local_names: frozenset[str] = frozenset()) -> Diagnosis:
    """Why a test run failed or passed too few tests. Rules are tried most specific first.

    `local_names`: the repository's own top-level directories and modules; a missing module
    under one of them (``test.linter_test`` with a ``test/`` directory) is a collection clash
    between two test packages of one name, never a distribution to install.
    """
    out = result.output
    if result.stalled:
        if named := running_test(out, runner):
            return Diagnosis(category="testing", kind="stalled",
                             reason=f"more tests hang than a run leaves out ({MAX_HUNG}); the "
                                    f"last was {named}", evidence=log_tail(out))
        return Diagnosis(category="testing", kind="stalled",
                         reason="the test run stopped making progress before any test could be "
                                "named (collection hangs, e.g. on network access)",
                         evidence=log_tail(out))
    if result.timed_out:
        return Diagnosis(category="undecidable", kind="timeout", reason="test run timed out",
                         evidence=log_tail(out))
    if result.returncode in (137, -9):
        return Diagnosis(category="undecidable", kind="killed",
                         reason="the test run was killed (SIGKILL: most likely out of memory; "
                                "raise the memory limit)", evidence=log_tail(out))
    if "can't start new thread" in out:
        return Diagnosis(category="undecidable", kind="killed",
                         reason="tests could not start threads: the sandbox's process limit was "
                                "reached (raise pids_limit)", evidence=log_tail(out))
    if down := _SERVICE_DOWN.search(out):
        return Diagnosis(category="testing", kind="needs_service",
                         reason=f"a service did not come up: {down.group(1)} got no answer",
                         evidence=log_tail(out))
    if expected := _EXPECTED_VALUE.search(out):
        return Diagnosis(category="testing", kind="unknown_options",
                         reason=f"pytest option {expected.group(1)} lost its value",
                         facts={"options": [expected.group(1)]}, evidence=_line_with(out, expected))
    if unrecognized := _UNRECOGNIZED.search(out):
        options = [w for w in unrecognized.group(1).split() if w.startswith("-")]
        return Diagnosis(category="testing", kind="unknown_options",
                         reason=f"pytest does not know {' '.join(options)}",
                         facts={"options": options}, evidence=_line_with(out, unrecognized))
    if system := _system_packages(out):
        return system
    if removed := _removed_api(out):
        return removed
    if runner == "pytest" and (crash := runner_failure(out)):
        return Diagnosis(category="python", kind="pytest_internal_error",
                         reason=f"pytest of this date fails in its own code on this Python: {crash}",
                         facts={"error": [crash]}, evidence=log_tail(out))
    if services := service_failures(out):
        return Diagnosis(category="testing", kind="needs_service",
                         reason=f"tests need {' and '.join(services)}: no server answered",
                         facts={"services": services}, evidence=log_tail(out))
    modules = [m for m in dict.fromkeys(_MISSING_MODULE.findall(out))
               if m.split(".")[0] not in local_names or m.split(".")[0] in project_packages]
    if not modules and (network := collection_needs_network(out, result.returncode, runner)):
        return network
    if not modules and (interrupted := COLLECTION_INTERRUPTED.search(out)):
        files = list(dict.fromkeys(_COLLECTING.findall(out)))
        errors = collection_errors(out)
        first = (f"{errors[0].path}: {errors[0].error}" if errors
                 else files[0] if files else "unknown")
        broken = [e.location for e in errors if e.location and "site-packages" not in e.location]
        if broken:  # the project's own code does not parse or import: no install repairs that
            first += f" (an error in the project itself, at {broken[0]})"
        return Diagnosis(category="testing", kind="collection_errors",
                         reason=f"{interrupted.group(1)} test files fail to import and stop the run "
                                f"(e.g. {first})",
                         facts={"files": files, "errors": [f"{e.path}: {e.error}" for e in errors]},
                         evidence=log_tail(out))
    if modules:
        own = [m for m in modules if m.split(".")[0] in project_packages]
        if own and len(own) == len(modules):
            return Diagnosis(category="installation", kind="project_not_importable",
                             reason=f"the project itself cannot be imported ({own[0]})",
                             facts={"modules": own}, evidence=log_tail(out))
        return Diagnosis(category="installation", kind="missing_modules",
                         reason=f"tests import modules that are not installed: {', '.join(modules)}",
                         facts={"modules": [m for m in modules if m not in own]}, evidence=log_tail(out))
    steps, places = steps_asked_for(out)
    if steps:
        return Diagnosis(category="testing", kind="prepare_step",
                         reason=f"the tests ask for a step of the project's own first: {steps[0]}",
                         facts={"commands": steps, "places": places}, evidence=log_tail(out, 6))
    if programs := missing_tools(out):
        return Diagnosis(category="installation", kind="missing_programs",
                         reason=f"tests run programs that are not installed: {', '.join(programs)}",
                         facts={"programs": programs}, evidence=log_tail(out, 6))
    facts: dict[str, list[str]] = {}
    if marks := _UNKNOWN_MARK.findall(out):
        facts["markers"] = list(dict.fromkeys(marks))
    if fixtures := _FIXTURE.findall(out):
        facts["fixtures"] = list(dict.fromkeys(fixtures))
    if "async def functions are not natively supported" in out or (
            "coroutine" in out and "was never awaited" in out and "PytestUnhandledCoroutineWarning" in out):
        facts["async"] = ["pytest-asyncio"]
    if keys := _INI_KEY.findall(out):
        facts["ini_keys"] = list(dict.fromkeys(keys))
    if facts:
        return Diagnosis(category="installation", kind="missing_plugins",
                         reason="tests need pytest plugins: "
                                + "; ".join(f"{k} {', '.join(v)}" for k, v in facts.items()),
                         facts=facts, evidence=log_tail(out))
    if paths := _MISSING_PATH.findall(out):
        return Diagnosis(category="testing", kind="missing_path",
                         reason=f"test path does not exist: {paths[0]}",
                         facts={"paths": paths}, evidence=log_tail(out))
    if no_tests_ran(out, result.returncode, runner):
        return Diagnosis(category="testing", kind="no_tests", reason="the test command ran no tests",
                         evidence=log_tail(out))
    if len(_WARNING_ERROR.findall(out)) >= 1:
        return Diagnosis(category="testing", kind="warnings_as_errors",
                         reason="tests fail on warnings raised as errors", evidence=log_tail(out))
    if "SyntaxError" in out and "site-packages" in out:
        return Diagnosis(category="python", kind="syntax_error_in_dependency",
                         reason="an installed package does not parse on this Python", evidence=log_tail(out))
    configure = _PLUGIN_CONFIGURE_ERROR.search(out)
    if "INTERNALERROR" in out or configure:
        plugins = [m for m in _INTERNAL_FRAME.findall(out) if m not in _PYTEST_ITSELF] or (
            [configure["plugin"]] if configure else [])
        return Diagnosis(category="python", kind="pytest_internal_error",
                         reason="pytest crashed (often a pytest too old for this Python)"
                                + (f"; in the plugin {plugins[-1]}" if plugins else ""),
                         facts={"plugin_modules": [plugins[-1]]} if plugins else {},
                         evidence=log_tail(out))
    groups = failure_groups(out) if runner == "pytest" else (
        bintest_failure_groups(out) if runner == "bintest" else [])
    listed = [f"{g.count} x {g.error} (e.g. {g.example})" for g in groups]
    shown = f"; failing tests by error: {'; '.join(listed[:3])}" if listed else ""
    if causes := environment_causes(groups):
        return Diagnosis(category="testing", kind="test_environment",
                         reason=f"tests fail for a cause of their environment: "
                                f"{', '.join(k for k in causes if k != 'warning_kinds')}{shown}",
                         facts={**causes, "failure_groups": listed}, evidence=log_tail(out))
    return Diagnosis(category="undecidable", kind="tests_failing",
                     reason="too many tests fail and no rule explains why" + shown,
                     facts={"failure_groups": listed} if listed else {}, evidence=log_tail(out))


def _system_packages(out: str) -> Diagnosis | None:
    packages = debian_packages_for(out)
    if not packages:
        return None
    return Diagnosis(category="installation", kind="system_packages",
                     reason=f"needs Debian packages: {' '.join(packages)}",
                     facts={"apt": packages}, evidence=log_tail(out))
