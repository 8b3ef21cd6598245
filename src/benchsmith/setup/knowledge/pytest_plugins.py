"""pytest plugins: which distribution provides an option, a `-p` name, an ini key, a fixture or a
marker a project uses."""

from __future__ import annotations

from benchsmith.setup.knowledge.imports import distribution_for_import

# Keys ending in "-" are prefixes ("--benchmark-" covers "--benchmark-skip"); all other keys
# must equal the option name. Options that pytest itself defines are deliberately absent.
PYTEST_OPTION_PLUGINS: dict[str, str] = {
    "--cov": "pytest-cov",
    "--cov-": "pytest-cov",
    "--no-cov": "pytest-cov",
    "--no-cov-on-fail": "pytest-cov",
    "--benchmark-": "pytest-benchmark",
    "--timeout": "pytest-timeout",
    "--timeout-method": "pytest-timeout",
    "--timeout_method": "pytest-timeout",
    "-n": "pytest-xdist",
    "--numprocesses": "pytest-xdist",
    "--maxprocesses": "pytest-xdist",
    "--max-worker-restart": "pytest-xdist",
    "--dist": "pytest-xdist",
    "--tx": "pytest-xdist",
    "--rsyncdir": "pytest-xdist",
    "--rsyncignore": "pytest-xdist",
    "--looponfail": "pytest-xdist",
    "--boxed": "pytest-xdist",  # only xdist < 2.0 had it; pytest-forked alone never did
    "--forked": "pytest-forked",
    "--reruns": "pytest-rerunfailures",
    "--reruns-delay": "pytest-rerunfailures",
    "--only-rerun": "pytest-rerunfailures",
    "--rerun-except": "pytest-rerunfailures",
    "--flake8": "pytest-flake8",
    "--mypy": "pytest-mypy",
    "--mypy-": "pytest-mypy",
    "--black": "pytest-black",
    "--isort": "pytest-isort",
    "--pep8": "pytest-pep8",
    "--flakes": "pytest-flakes",
    "--codestyle": "pytest-codestyle",
    "--pycodestyle": "pytest-pycodestyle",
    "--pydocstyle": "pytest-pydocstyle",
    "--pylint": "pytest-pylint",
    "--pylint-": "pytest-pylint",
    "--ruff": "pytest-ruff",
    "--ruff-": "pytest-ruff",
    "--mpl": "pytest-mpl",
    "--mpl-": "pytest-mpl",
    "--asyncio-mode": "pytest-asyncio",
    "--hypothesis-": "hypothesis",
    "--randomly-": "pytest-randomly",
    "--random-order": "pytest-random-order",
    "--random-order-": "pytest-random-order",
    "--ds": "pytest-django",
    "--dc": "pytest-django",
    "--reuse-db": "pytest-django",
    "--create-db": "pytest-django",
    "--nomigrations": "pytest-django",
    "--no-migrations": "pytest-django",
    "--migrations": "pytest-django",
    "--liveserver": "pytest-django",
    "--html": "pytest-html",
    "--self-contained-html": "pytest-html",
    "--json-report": "pytest-json-report",
    "--json-report-": "pytest-json-report",
    "--metadata": "pytest-metadata",
    "--snapshot-update": "syrupy",  # also snapshottest and pytest-snapshot; syrupy is most common
    "--snapshot-warn-unused": "syrupy",
    "--snapshot-details": "syrupy",
    "--instafail": "pytest-instafail",
    "--memray": "pytest-memray",
    "--memray-": "pytest-memray",
    "--disable-socket": "pytest-socket",
    "--allow-hosts": "pytest-socket",
    "--allow-unix-socket": "pytest-socket",
    "--record-mode": "pytest-recording",
    "--block-network": "pytest-recording",
    "--vcr-record": "pytest-vcr",
    "--vcr-record-mode": "pytest-vcr",
    "--doctest-plus": "pytest-doctestplus",
    "--doctest-rst": "pytest-doctestplus",
    "--remote-data": "pytest-remotedata",
    "--testmon": "pytest-testmon",
    "--testmon-": "pytest-testmon",
    "--count": "pytest-repeat",
    "--repeat-scope": "pytest-repeat",
    "--order-": "pytest-order",
    "--picked": "pytest-picked",
    "--nbval": "nbval",
    "--nbval-": "nbval",
    "--nbmake": "nbmake",
    "--typeguard-packages": "typeguard",
    "--alluredir": "allure-pytest",
    "--base-url": "pytest-base-url",
    "--headed": "pytest-playwright",
    "--splinter-": "pytest-splinter",
    "--no-xvfb": "pytest-xvfb",
    "--aiohttp-": "pytest-aiohttp",
}


def plugin_for_option(option: str) -> str | None:
    """Return the plugin that defines a command-line `option`, or None if unknown or builtin.

    Accepts the option as pytest reported it: "--cov=src", "-n auto", "-n4", "-n=auto".
    """
    stripped = option.strip()
    if not stripped:
        return None
    name = stripped.split(None, 1)[0].split("=", 1)[0]
    if name in PYTEST_OPTION_PLUGINS and not name.endswith("-"):
        return PYTEST_OPTION_PLUGINS[name]
    if name.startswith("--"):
        prefixes = [k for k in PYTEST_OPTION_PLUGINS if k.endswith("-") and name.startswith(k)]
        return PYTEST_OPTION_PLUGINS[max(prefixes, key=len)] if prefixes else None
    # A short option with its value attached, e.g. "-n4" or "-nauto".
    if len(name) > 2 and name[0] == "-":
        return PYTEST_OPTION_PLUGINS.get(name[:2])
    return None


# Names given to `-p NAME` that are a plugin's entry-point name rather than an importable
# module of the same distribution; `-p some_module` otherwise resolves like an import.
PYTEST_PLUGIN_MODULES: dict[str, str] = {
    "xdist": "pytest-xdist",
    "xdist.looponfail": "pytest-xdist",
    "randomly": "pytest-randomly",
    "timeout": "pytest-timeout",
    "rerunfailures": "pytest-rerunfailures",
    "benchmark": "pytest-benchmark",
    "hypothesispytest": "hypothesis",
    "pytest_cov": "pytest-cov",
    "pytest_mock": "pytest-mock",
    "pytestqt": "pytest-qt",
}


def plugin_for_module(name: str) -> str:
    """Return the distribution to install for a failing `-p NAME` plugin import."""
    return PYTEST_PLUGIN_MODULES.get(name.strip()) or distribution_for_import(name)


# "Unknown config option: KEY" -> plugin that registers KEY. pytest's own ini keys
# (markers, filterwarnings, addopts, log_cli, xfail_strict, junit_family, ...) are absent.
PYTEST_INI_KEY_PLUGINS: dict[str, str] = {
    "asyncio_mode": "pytest-asyncio",
    "asyncio_default_fixture_loop_scope": "pytest-asyncio",
    "asyncio_default_test_loop_scope": "pytest-asyncio",
    "timeout": "pytest-timeout",
    "timeout_method": "pytest-timeout",
    "timeout_func_only": "pytest-timeout",
    "DJANGO_SETTINGS_MODULE": "pytest-django",
    "DJANGO_CONFIGURATION": "pytest-django",
    "django_find_project": "pytest-django",
    "django_debug_mode": "pytest-django",
    "env": "pytest-env",
    "env_files": "pytest-dotenv",  # pytest-env added the same key in 2024; pytest-dotenv is older
    "env_override_existing_values": "pytest-dotenv",
    "flake8-ignore": "pytest-flake8",
    "flake8-max-line-length": "pytest-flake8",
    "flake8-max-complexity": "pytest-flake8",
    "flake8-show-source": "pytest-flake8",
    "flake8-statistics": "pytest-flake8",
    "pep8ignore": "pytest-pep8",
    "pep8maxlinelength": "pytest-pep8",
    "flakes-ignore": "pytest-flakes",
    "isort_ignore": "pytest-isort",
    "mock_use_standalone_module": "pytest-mock",
    "mock_traceback_monkeypatch": "pytest-mock",
    "qt_api": "pytest-qt",
    "qt_no_exception_capture": "pytest-qt",
    "qt_default_raising": "pytest-qt",
    "qt_log_level_fail": "pytest-qt",
    "qt_log_ignore": "pytest-qt",
    "mpl-baseline-path": "pytest-mpl",
    "mpl-results-path": "pytest-mpl",
    "doctest_plus": "pytest-doctestplus",
    "doctest_rst": "pytest-doctestplus",
    "doctest_norecursedirs": "pytest-doctestplus",
    "doctest_plus_atol": "pytest-doctestplus",
    "doctest_plus_rtol": "pytest-doctestplus",
    "text_file_format": "pytest-doctestplus",
    "remote_data_strict": "pytest-remotedata",
    "rsyncdirs": "pytest-xdist",
    "rsyncignore": "pytest-xdist",
    "looponfailroots": "pytest-xdist",
    "trio_mode": "pytest-trio",
    "trio_run": "pytest-trio",
    "render_collapsed": "pytest-html",
    "bdd_features_base_dir": "pytest-bdd",
    "python_paths": "pytest-pythonpath",
    "site_dirs": "pytest-pythonpath",
    "xvfb_width": "pytest-xvfb",
    "xvfb_height": "pytest-xvfb",
    "xvfb_colordepth": "pytest-xvfb",
    "xvfb_args": "pytest-xvfb",
    "base_url": "pytest-base-url",
}

# "fixture 'NAME' not found" -> plugin that provides NAME. A value starting with "-p " names a
# plugin that ships with pytest but is off by default: enable it, install nothing.
# Left out on purpose: `client` and `live_server` (pytest-django and pytest-flask both
# provide them) and `snapshot`-style names whose owner the repo's own deps must decide.
PYTEST_FIXTURE_PLUGINS: dict[str, str] = {
    "pytester": "-p pytester",
    "testdir": "-p pytester",
    "mocker": "pytest-mock",
    "class_mocker": "pytest-mock",
    "module_mocker": "pytest-mock",
    "package_mocker": "pytest-mock",
    "session_mocker": "pytest-mock",
    "benchmark": "pytest-benchmark",
    "benchmark_weave": "pytest-benchmark",
    "httpserver": "pytest-httpserver",
    "make_httpserver": "pytest-httpserver",
    "httpserver_listen_address": "pytest-httpserver",
    "httpbin": "pytest-httpbin",
    "httpbin_secure": "pytest-httpbin",
    "httpbin_both": "pytest-httpbin",
    "requests_mock": "requests-mock",
    "httpx_mock": "pytest-httpx",
    "respx_mock": "respx",
    "event_loop": "pytest-asyncio",
    "event_loop_policy": "pytest-asyncio",
    "unused_tcp_port": "pytest-asyncio",
    "unused_tcp_port_factory": "pytest-asyncio",
    "unused_udp_port": "pytest-asyncio",
    "unused_udp_port_factory": "pytest-asyncio",
    "aiohttp_client": "pytest-aiohttp",
    "aiohttp_server": "pytest-aiohttp",
    "aiohttp_raw_server": "pytest-aiohttp",
    "aiohttp_unused_port": "pytest-aiohttp",
    "loop": "pytest-aiohttp",
    "anyio_backend": "anyio",
    "anyio_backend_name": "anyio",
    "anyio_backend_options": "anyio",
    "nursery": "pytest-trio",
    "autojump_clock": "pytest-trio",
    "mock_clock": "pytest-trio",
    "io_loop": "pytest-tornado",
    "http_server": "pytest-tornado",
    "http_client": "pytest-tornado",
    # pytest-freezegun (2017) resolves at every historical date; pytest-freezer is its 2022 fork.
    "freezer": "pytest-freezegun",
    "time_machine": "time-machine",
    "fs": "pyfakefs",
    "fs_module": "pyfakefs",
    "fs_class": "pyfakefs",
    "fs_session": "pyfakefs",
    "datadir": "pytest-datadir",
    "shared_datadir": "pytest-datadir",
    "original_datadir": "pytest-datadir",
    "datafiles": "pytest-datafiles",
    "snapshot": "syrupy",  # snapshottest and pytest-snapshot also use this name
    "data_regression": "pytest-regressions",
    "file_regression": "pytest-regressions",
    "num_regression": "pytest-regressions",
    "dataframe_regression": "pytest-regressions",
    "image_regression": "pytest-regressions",
    "qtbot": "pytest-qt",
    "qapp": "pytest-qt",
    "qapp_args": "pytest-qt",
    "qtlog": "pytest-qt",
    "qtmodeltester": "pytest-qt",
    "xprocess": "pytest-xprocess",
    "subtests": "pytest-subtests",  # builtin from pytest 9.0; a plugin at every earlier date
    "celery_app": "pytest-celery",
    "celery_worker": "pytest-celery",
    "celery_config": "pytest-celery",
    "celery_session_app": "pytest-celery",
    "celery_session_worker": "pytest-celery",
    "settings": "pytest-django",
    "admin_client": "pytest-django",
    "admin_user": "pytest-django",
    "db": "pytest-django",
    "transactional_db": "pytest-django",
    "rf": "pytest-django",
    "async_rf": "pytest-django",
    "async_client": "pytest-django",
    "django_user_model": "pytest-django",
    "django_username_field": "pytest-django",
    "django_db_setup": "pytest-django",
    "django_db_blocker": "pytest-django",
    "django_assert_num_queries": "pytest-django",
    "django_assert_max_num_queries": "pytest-django",
    "django_capture_on_commit_callbacks": "pytest-django",
    "mailoutbox": "pytest-django",
    "virtualenv": "pytest-virtualenv",
    "faker": "Faker",
    "cov": "pytest-cov",
    "no_cover": "pytest-cov",
    "mongodb": "pytest-mongodb",
    "redisdb": "pytest-redis",
    "redis_proc": "pytest-redis",
    "redis_nooproc": "pytest-redis",
    "postgresql": "pytest-postgresql",
    "postgresql_proc": "pytest-postgresql",
    "postgresql_noproc": "pytest-postgresql",
    "mysql": "pytest-mysql",
    "mysql_proc": "pytest-mysql",
    "docker_services": "pytest-docker",
    "docker_ip": "pytest-docker",
    "docker_compose_file": "pytest-docker",
    "fake_process": "pytest-subprocess",
    "script_runner": "pytest-console-scripts",
    "check": "pytest-check",
    "vcr_cassette": "pytest-vcr",
    "default_cassette_name": "pytest-recording",
    "selenium": "pytest-selenium",
}

# "'NAME' not found in `markers` configuration option" (under --strict-markers) -> plugin.
PYTEST_MARKER_PLUGINS: dict[str, str] = {
    "asyncio": "pytest-asyncio",
    "trio": "pytest-trio",
    "anyio": "anyio",
    "django_db": "pytest-django",
    "urls": "pytest-django",
    "ignore_template_errors": "pytest-django",
    "benchmark": "pytest-benchmark",
    "timeout": "pytest-timeout",
    "flaky": "flaky",  # pytest-rerunfailures also reads it, with reruns= instead of max_runs=
    "order": "pytest-order",
    "run": "pytest-ordering",
    "dependency": "pytest-dependency",
    "freeze_time": "pytest-freezegun",  # same choice as the `freezer` fixture
    "httpx_mock": "pytest-httpx",
    "respx": "respx",
    "vcr": "pytest-recording",
    "default_cassette": "pytest-recording",
    "block_network": "pytest-recording",
    "enable_socket": "pytest-socket",
    "disable_socket": "pytest-socket",
    "allow_hosts": "pytest-socket",
    "mpl_image_compare": "pytest-mpl",
    "remote_data": "pytest-remotedata",
    "repeat": "pytest-repeat",
    "forked": "pytest-forked",
    "xdist_group": "pytest-xdist",
    "datafiles": "pytest-datafiles",
    "gen_test": "pytest-tornado",
    "qt_no_exception_capture": "pytest-qt",
    "qt_log_level_fail": "pytest-qt",
    "qt_log_ignore": "pytest-qt",
    "random_order": "pytest-random-order",
    "no_cover": "pytest-cov",
    "celery": "pytest-celery",
}

# Installed when pytest says "async def functions are not natively supported".
ASYNC_TEST_PLUGIN = "pytest-asyncio"
