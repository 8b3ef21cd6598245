"""Tests for the pytest and unittest log parsers, on self-written logs shaped like real runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

import benchsmith.parsing
from benchsmith import core
from benchsmith.parsing import (
    PytestLogParser,
    UnittestLogParser,
    parse_test_output,
    strip_ansi,
)


def pairs(results: list[core.TestResult]) -> list[tuple[str, str]]:
    return [(result.name, result.status.value) for result in results]


def parse_pytest(log: str) -> list[tuple[str, str]]:
    return pairs(PytestLogParser().parse(textwrap.dedent(log)))


def parse_unittest(log: str) -> list[tuple[str, str]]:
    return pairs(UnittestLogParser().parse(textwrap.dedent(log)))


# --- pytest ------------------------------------------------------------------------------

PYTEST8_RA = """\
    ============================= test session starts ==============================
    platform linux -- Python 3.11.7, pytest-8.3.5, pluggy-1.5.0
    rootdir: /repo
    collected 9 items / 1 error

    tests/test_calc.py .FExXs                                                [ 66%]
    tests/test_params.py F..                                                 [100%]

    ==================================== ERRORS ====================================
    ______________________ ERROR collecting tests/test_bad.py ______________________
    ImportError while importing test module '/repo/tests/test_bad.py'.
    E   ModuleNotFoundError: No module named 'yaml'
    _________________________ ERROR at setup of test_setup _________________________

        @pytest.fixture
        def db():
    >       raise RuntimeError("no db")
    E       RuntimeError: no db
    =================================== FAILURES ===================================
    ___________________________________ test_sub ___________________________________

        def test_sub():
            print("PASSED tests/test_calc.py::test_fake")
    >       assert 1 - 1 == 1
    E       assert 0 == 1
    ----------------------------- Captured stdout call -----------------------------
    PASSED tests/test_calc.py::test_fake
    tests/test_calc.py::test_other PASSED                                    [ 50%]
    ________________________________ test_p[a - b] _________________________________
    E       AssertionError: assert 1 == 2
    ==================================== PASSES ====================================
    ___________________________________ test_add ___________________________________
    ----------------------------- Captured stdout call -----------------------------
    FAILED tests/test_calc.py::test_add - this line was printed by the test
    =========================== short test summary info ============================
    PASSED tests/test_calc.py::test_add
    PASSED tests/test_params.py::test_p[x[0]]
    PASSED tests/test_params.py::TestCls::test_m[c::d]
    SKIPPED [1] tests/test_calc.py:30: needs network
    XFAIL tests/test_calc.py::test_known - bug #12
    XPASS tests/test_calc.py::test_fixed - was bug #13
    ERROR tests/test_bad.py
    ERROR tests/test_calc.py::test_setup - RuntimeError: no db
    FAILED tests/test_calc.py::test_sub - assert 0 == 1
    FAILED tests/test_params.py::test_p[a - b] - AssertionError: assert 1 == 2
    !!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
    ==== 2 failed, 3 passed, 1 skipped, 1 xfailed, 1 xpassed, 2 errors in 0.31s ====
"""


def test_pytest8_short_summary() -> None:
    assert parse_pytest(PYTEST8_RA) == [
        ("tests/test_bad.py", "ERROR"),
        ("tests/test_calc.py::test_add", "PASSED"),
        ("tests/test_params.py::test_p[x[0]]", "PASSED"),
        ("tests/test_params.py::TestCls::test_m[c::d]", "PASSED"),
        ("tests/test_calc.py:30", "SKIPPED"),
        ("tests/test_calc.py::test_known", "XFAIL"),
        ("tests/test_calc.py::test_fixed", "XPASS"),
        ("tests/test_calc.py::test_setup", "ERROR"),
        ("tests/test_calc.py::test_sub", "FAILED"),
        ("tests/test_params.py::test_p[a - b]", "FAILED"),
    ]


PYTEST6_VERBOSE_RA = """\
    ============================= test session starts ==============================
    platform linux -- Python 3.9.18, pytest-6.2.5, py-1.11.0, pluggy-1.0.0 -- /venv/bin/python
    cachedir: .pytest_cache
    rootdir: /repo, configfile: setup.cfg
    collecting ... collected 7 items

    tests/test_io.py::test_read PASSED                                       [ 14%]
    tests/test_io.py::test_write FAILED                                      [ 28%]
    tests/test_io.py::test_flaky_teardown PASSED                             [ 42%]
    tests/test_io.py::test_flaky_teardown ERROR                              [ 42%]
    tests/test_io.py::test_known XFAIL (old parser)                          [ 57%]
    tests/test_io.py::test_fixed XPASS (was broken)                          [ 71%]
    tests/test_io.py::test_windows SKIPPED (only on windows)                 [ 85%]
    tests/test_io.py::TestPaths::test_join PASSED                            [100%]

    ==================================== ERRORS ====================================
    ___________________ ERROR at teardown of test_flaky_teardown ___________________
    E       OSError: disk full
    =================================== FAILURES ===================================
    __________________________________ test_write __________________________________
    E       assert False
    =========================== short test summary info ============================
    PASSED tests/test_io.py::test_read
    PASSED tests/test_io.py::test_flaky_teardown
    PASSED tests/test_io.py::TestPaths::test_join
    SKIPPED [1] tests/test_io.py:40: only on windows
    XFAIL tests/test_io.py::test_known
      old parser
    XPASS tests/test_io.py::test_fixed was broken
    ERROR tests/test_io.py::test_flaky_teardown - OSError: disk full
    FAILED tests/test_io.py::test_write - assert False
    ==== 1 failed, 3 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 error in 0.12s =====
"""


def test_pytest6_verbose_and_old_style_xfail_xpass_summary() -> None:
    assert parse_pytest(PYTEST6_VERBOSE_RA) == [
        ("tests/test_io.py::test_read", "PASSED"),
        ("tests/test_io.py::test_write", "FAILED"),
        ("tests/test_io.py::test_flaky_teardown", "ERROR"),
        ("tests/test_io.py::test_known", "XFAIL"),
        ("tests/test_io.py::test_fixed", "XPASS"),
        ("tests/test_io.py::test_windows", "SKIPPED"),
        ("tests/test_io.py::TestPaths::test_join", "PASSED"),
        # "SKIPPED [1] tests/test_io.py:40" repeats test_windows: not counted twice
    ]


def test_pytest4_seconds_footer_and_collection_error() -> None:
    log = """\
        ============================= test session starts ==============================
        platform linux -- Python 3.7.16, pytest-4.6.11, py-1.11.0, pluggy-0.13.1
        collected 2 items / 1 errors

        tests/test_ok.py::test_one PASSED                                        [ 50%]
        tests/test_ok.py::test_two FAILED                                        [100%]

        ==================================== ERRORS ====================================
        ____________________ ERROR collecting tests/test_broken.py _____________________
        tests/test_broken.py:1: in <module>
            import numpy
        E   ModuleNotFoundError: No module named 'numpy'
        =========================== short test summary info ============================
        FAILED tests/test_ok.py::test_two
        ERROR tests/test_broken.py
        = 1 failed, 1 passed, 1 error in 0.14 seconds =
    """
    assert parse_pytest(log) == [
        ("tests/test_ok.py::test_one", "PASSED"),
        ("tests/test_ok.py::test_two", "FAILED"),
        ("tests/test_broken.py", "ERROR"),
    ]


def test_collection_error_header_alone_counts() -> None:
    log = """\
        ==================================== ERRORS ====================================
        ___________________ ERROR collecting tests/unit/test_db.py ____________________
        E   ImportError: cannot import name 'connect'
        !!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
        =============================== 1 error in 0.20s ===============================
    """
    assert parse_pytest(log) == [("tests/unit/test_db.py", "ERROR")]


def test_xdist_verbose_lines_and_noise() -> None:
    log = "\n".join(
        [
            "============================= test session starts ==============================",
            "platform linux -- Python 3.11.7, pytest-8.3.5, pluggy-1.5.0",
            "created: 2/2 workers",
            "2 workers [4 items]",
            "",
            "scheduling tests via LoadScheduling",
            "",
            "tests/test_a.py::test_one ",
            "tests/test_a.py::test_two ",
            "[gw0] [ 25%] PASSED tests/test_a.py::test_one ",
            "[gw1] [ 50%] FAILED tests/test_a.py::test_two ",
            "tests/test_b.py::test_p[1 - 2] ",
            "[gw0] [ 75%] SKIPPED tests/test_b.py::test_p[1 - 2] ",
            "[gw1] [100%] XFAIL tests/test_b.py::TestK::test_k[x[0]] ",
            "",
            "=================================== FAILURES ===================================",
            "___________________________________ test_two ___________________________________",
            "[gw1] linux -- Python 3.11.7 /venv/bin/python",
            "E   assert 1 == 2",
            "=============== 1 failed, 1 passed, 1 skipped, 1 xfailed in 1.02s ===============",
        ]
    )
    assert pairs(PytestLogParser().parse(log)) == [
        ("tests/test_a.py::test_one", "PASSED"),
        ("tests/test_a.py::test_two", "FAILED"),
        ("tests/test_b.py::test_p[1 - 2]", "SKIPPED"),
        ("tests/test_b.py::TestK::test_k[x[0]]", "XFAIL"),
    ]


def test_xdist_without_progress_percentages() -> None:
    log = "[gw3] PASSED tests/test_a.py::test_one \n[gw2] ERROR tests/test_a.py::test_two\n"
    assert pairs(PytestLogParser().parse(log)) == [
        ("tests/test_a.py::test_one", "PASSED"),
        ("tests/test_a.py::test_two", "ERROR"),
    ]


def test_ansi_colours_are_ignored() -> None:
    log = (
        "\x1b[1m============================= test session starts ==============================\x1b[0m\n"
        "tests/test_c.py::test_a \x1b[32mPASSED\x1b[0m\x1b[31m                        [ 50%]\x1b[0m\n"
        "tests/test_c.py::test_s \x1b[33mSKIPPED\x1b[0m (no gpu)\x1b[31m              [100%]\x1b[0m\n"
        "\x1b[36m\x1b[1m=========================== short test summary info ============================\x1b[0m\n"
        "\x1b[31mFAILED\x1b[0m tests/test_c.py::\x1b[1mtest_p[a - b]\x1b[0m - assert [1] - 2\n"
        "\x1b[33mXFAIL\x1b[0m tests/test_c.py::\x1b[1mTestX::test_x\x1b[0m - flaky\n"
        "\x1b[31m==== \x1b[31m\x1b[1m1 failed\x1b[0m, \x1b[32m1 passed\x1b[0m\x1b[31m in 0.07s\x1b[0m\x1b[31m ====\x1b[0m\n"
    )
    assert pairs(PytestLogParser().parse(log)) == [
        ("tests/test_c.py::test_a", "PASSED"),
        ("tests/test_c.py::test_s", "SKIPPED"),
        ("tests/test_c.py::test_p[a - b]", "FAILED"),
        ("tests/test_c.py::TestX::test_x", "XFAIL"),
    ]


def test_nasty_parametrized_ids() -> None:
    log = """\
        =========================== short test summary info ============================
        FAILED tests/t.py::test_p[a - b] - assert 1 == 2
        FAILED tests/t.py::test_q[x] - assert [1] - [2] == [3] - x
        PASSED tests/t.py::TestCls::test_m[x[0]]
        PASSED tests/t.py::test_colons[c::d-e::f]
        PASSED tests/t.py::test_space[hello world]
        PASSED tests/t.py::test_unicode[café-ü-日本]
        PASSED tests/t.py::test_ünïcode_name
        ERROR tests/t.py::test_fix[a - b-[c]] - RuntimeError: x - y
        XPASS tests/t.py::test_xp[1 2] reason with [brackets]
        ========================= 2 failed, 6 passed, 1 error in 0.50s =========================
    """
    assert parse_pytest(log) == [
        ("tests/t.py::test_p[a - b]", "FAILED"),
        ("tests/t.py::test_q[x]", "FAILED"),
        ("tests/t.py::TestCls::test_m[x[0]]", "PASSED"),
        ("tests/t.py::test_colons[c::d-e::f]", "PASSED"),
        ("tests/t.py::test_space[hello world]", "PASSED"),
        ("tests/t.py::test_unicode[café-ü-日本]", "PASSED"),
        ("tests/t.py::test_ünïcode_name", "PASSED"),
        ("tests/t.py::test_fix[a - b-[c]]", "ERROR"),
        ("tests/t.py::test_xp[1 2]", "XPASS"),
    ]


def test_nasty_ids_in_verbose_lines() -> None:
    log = """\
        tests/t.py::test_p[a - b] FAILED                                         [ 20%]
        tests/t.py::test_p[x PASSED y] PASSED                                    [ 40%]
        tests/t.py::TestCls::test_m[x[0]] PASSED                                 [ 60%]
        tests/t.py::test_s[1] SKIPPED (needs PASSED (sic) [really])              [ 80%]
        tests/t.py::test_ü[é] XFAIL                                              [100%]
    """
    assert parse_pytest(log) == [
        ("tests/t.py::test_p[a - b]", "FAILED"),
        ("tests/t.py::test_p[x PASSED y]", "PASSED"),
        ("tests/t.py::TestCls::test_m[x[0]]", "PASSED"),
        ("tests/t.py::test_s[1]", "SKIPPED"),
        ("tests/t.py::test_ü[é]", "XFAIL"),
    ]


def test_summary_beats_verbose_and_last_rerun_wins_in_first_seen_order() -> None:
    log = """\
        ============================= test session starts ==============================
        tests/t.py::test_a PASSED                                                [ 33%]
        tests/t.py::test_b RERUN                                                 [ 66%]
        tests/t.py::test_b RERUN                                                 [ 66%]
        tests/t.py::test_b PASSED                                                [ 66%]
        tests/t.py::test_c FAILED                                                [100%]
        tests/t.py::test_c PASSED                                                [100%]
        =========================== short test summary info ============================
        ERROR tests/t.py::test_a - ValueError: teardown
        PASSED tests/t.py::test_b
        FAILED tests/t.py::test_c - assert 0
        =================== 1 failed, 1 passed, 1 error, 2 rerun in 0.40s ===================
    """
    assert parse_pytest(log) == [
        ("tests/t.py::test_a", "ERROR"),
        ("tests/t.py::test_b", "PASSED"),
        ("tests/t.py::test_c", "FAILED"),
    ]


def test_later_session_overrides_earlier_one() -> None:
    log = """\
        ============================= test session starts ==============================
        tests/t.py::test_a FAILED                                                [ 50%]
        tests/t.py::test_b PASSED                                                [100%]
        =========================== short test summary info ============================
        FAILED tests/t.py::test_a - assert 0
        ========================= 1 failed, 1 passed in 0.10s ==========================
        ============================= test session starts ==============================
        tests/t.py::test_a PASSED                                                [100%]
        ============================== 1 passed in 0.05s ===============================
    """
    assert parse_pytest(log) == [
        ("tests/t.py::test_a", "PASSED"),
        ("tests/t.py::test_b", "PASSED"),
    ]


def test_quiet_mode_summary_ends_at_bare_stats_line() -> None:
    log = """\
        ..F.                                                                     [100%]
        =================================== FAILURES ===================================
        ___________________________________ test_x ____________________________________
        E   assert 0
        =========================== short test summary info ============================
        FAILED tests/t.py::test_x - assert 0
        1 failed, 3 passed in 0.11s
        PASSED tests/t.py::printed_by_a_later_command
    """
    assert parse_pytest(log) == [("tests/t.py::test_x", "FAILED")]


def test_lines_printed_by_tests_outside_the_summary_are_ignored() -> None:
    log = """\
        =================================== FAILURES ===================================
        _________________________________ test_nested __________________________________
        ----------------------------- Captured stdout call -----------------------------
        tests/inner.py::test_inner PASSED                                        [100%]
        FAILED tests/inner.py::test_other - assert 0
        =========================== short test summary info ============================
        FAILED tests/t.py::test_nested - assert 0
        ============================== 1 failed in 0.30s ===============================
    """
    assert parse_pytest(log) == [("tests/t.py::test_nested", "FAILED")]


def test_capture_disabled_splits_verbose_line() -> None:
    log = """\
        ============================= test session starts ==============================
        collecting ... collected 3 items

        tests/t.py::test_a hello from test_a
        more output
        PASSED
        tests/t.py::test_b FAILED
        tests/t.py::test_c SKIPPED (later)
        tests/t.py::test_d some output
        XFAIL (known)
    """
    assert parse_pytest(log) == [
        ("tests/t.py::test_a", "PASSED"),
        ("tests/t.py::test_b", "FAILED"),
        ("tests/t.py::test_c", "SKIPPED"),
        ("tests/t.py::test_d", "XFAIL"),
    ]


def test_unfolded_skips_and_inherited_tests_and_count_progress() -> None:
    log = """\
        tests/test_b.py::TestB::test_base <- tests/base.py PASSED                 [ 1/3]
        tests/test_b.py::test_w SKIPPED (win32)                                   [ 2/3]
        tests/test_b.py::test_v PASSED 1.50ms
        =========================== short test summary info ============================
        SKIPPED tests/test_b.py::test_w - win32 only
        SKIPPED [2] tests/test_b.py: module skipped
        ============================ 1 passed, 3 skipped in 0.02s ============================
    """
    assert parse_pytest(log) == [
        ("tests/test_b.py::TestB::test_base", "PASSED"),
        ("tests/test_b.py::test_w", "SKIPPED"),
        ("tests/test_b.py::test_v", "PASSED"),
        ("tests/test_b.py", "SKIPPED"),
    ]


def test_windows_line_endings_and_empty_output() -> None:
    log = "tests/t.py::test_a PASSED  [ 50%]\r\ntests/t.py::test_b FAILED  [100%]\r\n"
    assert pairs(PytestLogParser().parse(log)) == [
        ("tests/t.py::test_a", "PASSED"),
        ("tests/t.py::test_b", "FAILED"),
    ]
    assert PytestLogParser().parse("") == []
    assert PytestLogParser().parse("no tests ran in 0.01s\n") == []


# --- unittest ----------------------------------------------------------------------------

UNITTEST_PY38 = """\
    ERROR
    test_add (tests.test_calc.TestCalc) ... ok
    test_div (tests.test_calc.TestCalc) ... ERROR
    test_documented (tests.test_calc.TestCalc)
    Adds two numbers ... ok
    test_loop (tests.test_calc.TestCalc) ... test_mul (tests.test_calc.TestCalc) ... ok
    test_noisy (tests.test_calc.TestCalc) ... starting the server
    server ... listening
    ok
    test_skip (tests.test_calc.TestCalc) ... skipped 'needs network'
    test_sub (tests.test_calc.TestCalc) ... FAIL
    test_xf (tests.test_calc.TestCalc) ... expected failure
    test_xp (tests.test_calc.TestCalc) ... unexpected success
    test_bad (unittest.loader._FailedTest) ... ERROR

    ======================================================================
    ERROR: setUpClass (tests.test_calc.TestBroken)
    ----------------------------------------------------------------------
    Traceback (most recent call last):
    ValueError: class setup broke

    ======================================================================
    ERROR: test_div (tests.test_calc.TestCalc)
    ----------------------------------------------------------------------
    ZeroDivisionError: division by zero
    test_printed (fake.Fake) ... ok

    ======================================================================
    ERROR: test_bad (unittest.loader._FailedTest)
    ----------------------------------------------------------------------
    ImportError: Failed to import test module: test_bad

    ======================================================================
    FAIL: test_loop (tests.test_calc.TestCalc) (i=1)
    ----------------------------------------------------------------------
    AssertionError: 1 == 1

    ======================================================================
    FAIL: test_sub (tests.test_calc.TestCalc)
    ----------------------------------------------------------------------
    AssertionError: 1 != 2

    ----------------------------------------------------------------------
    Ran 11 tests in 0.004s

    FAILED (failures=2, errors=3, skipped=1, expected failures=1, unexpected successes=1)
"""


def test_unittest_py38_style() -> None:
    assert parse_unittest(UNITTEST_PY38) == [
        ("tests.test_calc.TestCalc.test_add", "PASSED"),
        ("tests.test_calc.TestCalc.test_div", "ERROR"),
        ("tests.test_calc.TestCalc.test_documented", "PASSED"),
        ("tests.test_calc.TestCalc.test_mul", "PASSED"),
        ("tests.test_calc.TestCalc.test_noisy", "PASSED"),
        ("tests.test_calc.TestCalc.test_skip", "SKIPPED"),
        ("tests.test_calc.TestCalc.test_sub", "FAILED"),
        ("tests.test_calc.TestCalc.test_xf", "XFAIL"),
        ("tests.test_calc.TestCalc.test_xp", "XPASS"),
        ("test_bad", "ERROR"),
        ("tests.test_calc.TestBroken.setUpClass", "ERROR"),
        ("tests.test_calc.TestCalc.test_loop", "FAILED"),
    ]


UNITTEST_PY311 = """\
    setUpClass (tests.test_calc.TestBroken) ... ERROR
    test_add (tests.test_calc.TestCalc.test_add) ... ok
    test_documented (tests.test_calc.TestCalc.test_documented)
    Adds two numbers ... ok
    test_loop (tests.test_calc.TestCalc.test_loop) ...
      test_loop (tests.test_calc.TestCalc.test_loop) (i=1) ... FAIL
      test_loop (tests.test_calc.TestCalc.test_loop) [odd] (i=3) ... ERROR
    test_noisy (tests.test_calc.TestCalc.test_noisy) ... INFO starting
    test_fake (fake.Fake) ... ok
    ok
    test_skip (tests.test_calc.TestCalc.test_skip) ... skipped 'needs network'
    test_xf (tests.test_calc.TestCalc.test_xf) ... expected failure
    test_xp (tests.test_calc.TestCalc.test_xp) ... unexpected success
    tests.test_bad (unittest.loader._FailedTest.tests.test_bad) ... ERROR

    ======================================================================
    ERROR: setUpClass (tests.test_calc.TestBroken)
    ----------------------------------------------------------------------
    ValueError: class setup broke

    ======================================================================
    ERROR: tests.test_bad (unittest.loader._FailedTest.tests.test_bad)
    ----------------------------------------------------------------------
    ImportError: Failed to import test module: tests.test_bad

    ======================================================================
    FAIL: test_loop (tests.test_calc.TestCalc.test_loop) (i=1)
    ----------------------------------------------------------------------
    AssertionError: 1 == 1

    ======================================================================
    UNEXPECTED SUCCESS: test_xp (tests.test_calc.TestCalc.test_xp)
    ----------------------------------------------------------------------
    Ran 9 tests in 0.010s

    FAILED (failures=1, errors=3, skipped=1, expected failures=1, unexpected successes=1)
"""


def test_unittest_py311_style() -> None:
    assert parse_unittest(UNITTEST_PY311) == [
        ("tests.test_calc.TestBroken.setUpClass", "ERROR"),
        ("tests.test_calc.TestCalc.test_add", "PASSED"),
        ("tests.test_calc.TestCalc.test_documented", "PASSED"),
        ("tests.test_calc.TestCalc.test_loop", "FAILED"),
        ("fake.Fake.test_fake", "PASSED"),  # printed by test_noisy; indistinguishable
        ("tests.test_calc.TestCalc.test_noisy", "PASSED"),
        ("tests.test_calc.TestCalc.test_skip", "SKIPPED"),
        ("tests.test_calc.TestCalc.test_xf", "XFAIL"),
        ("tests.test_calc.TestCalc.test_xp", "XPASS"),
        ("tests.test_bad", "ERROR"),
    ]


def test_unittest_status_alone_after_multiline_output() -> None:
    log = """\
        test_a (pkg.tests.TestA.test_a) ...
        line one
        line two ... still output
        FAIL
        test_b (pkg.tests.TestA.test_b) ... ok
    """
    assert parse_unittest(log) == [
        ("pkg.tests.TestA.test_a", "FAILED"),
        ("pkg.tests.TestA.test_b", "PASSED"),
    ]


def test_unittest_reports_set_final_status_and_ignore_their_output() -> None:
    log = """\
        test_a (pkg.tests.TestA) ... ok

        ======================================================================
        ERROR: test_a (pkg.tests.TestA)
        ----------------------------------------------------------------------
        Traceback (most recent call last):
        Stdout:
        test_hidden (pkg.tests.TestA) ... ok
        ERROR: test_not_a_header (pkg.tests.TestA)

        ----------------------------------------------------------------------
        Ran 1 test in 0.001s

        FAILED (errors=1)
        test_next_run (pkg.tests.TestB) ... ok
    """
    assert parse_unittest(log) == [
        ("pkg.tests.TestA.test_a", "ERROR"),
        ("pkg.tests.TestB.test_next_run", "PASSED"),
    ]


def test_nose_verbose() -> None:
    log = """\
        Failure: ImportError (No module named 'yaml') ... ERROR
        tests.test_funcs.test_func ... ok
        tests.test_funcs.test_gen(1,) ... ok
        tests.test_funcs.test_gen(2,) ... FAIL
        tests.test_funcs.test_skipped ... SKIP: no network
        test_a (tests.test_mod.TestX) ... ok
        test_b (tests.test_mod.TestX) ... SKIP
        A test with a docstring ... ok

        ======================================================================
        ERROR: Failure: ImportError (No module named 'yaml')
        ----------------------------------------------------------------------
        ImportError: No module named 'yaml'

        ======================================================================
        FAIL: tests.test_funcs.test_gen(2,)
        ----------------------------------------------------------------------
        AssertionError

        ----------------------------------------------------------------------
        Ran 7 tests in 0.003s

        FAILED (SKIP=2, errors=1, failures=1)
    """
    assert parse_unittest(log) == [
        ("Failure: ImportError (No module named 'yaml')", "ERROR"),
        ("tests.test_funcs.test_func", "PASSED"),
        ("tests.test_funcs.test_gen(1,)", "PASSED"),
        ("tests.test_funcs.test_gen(2,)", "FAILED"),
        ("tests.test_funcs.test_skipped", "SKIPPED"),
        ("tests.test_mod.TestX.test_a", "PASSED"),
        ("tests.test_mod.TestX.test_b", "SKIPPED"),
        ("A test with a docstring", "PASSED"),
    ]


def test_django_verbose() -> None:
    log = """\
        Found 3 test(s).
        Creating test database for alias 'default' ('file:memorydb_default?mode=memory')...
        Operations to perform:
          Apply all migrations: admin, auth, contenttypes, sessions
        Running migrations:
          Applying contenttypes.0001_initial... OK
          Applying auth.0001_initial... OK
        System check identified no issues (0 silenced).
        test_fail (shop.tests.CartTests.test_fail) ... FAIL
        test_ok (shop.tests.CartTests.test_ok) ... ok
        test_skip (shop.tests.PlainTests.test_skip) ... skipped 'nope'

        ======================================================================
        FAIL: test_fail (shop.tests.CartTests.test_fail)
        ----------------------------------------------------------------------
        AssertionError: 1 != 2

        ----------------------------------------------------------------------
        Ran 3 tests in 0.012s

        FAILED (failures=1, skipped=1)
        Destroying test database for alias 'default' ('file:memorydb_default?mode=memory')...
    """
    assert parse_unittest(log) == [
        ("shop.tests.CartTests.test_fail", "FAILED"),
        ("shop.tests.CartTests.test_ok", "PASSED"),
        ("shop.tests.PlainTests.test_skip", "SKIPPED"),
    ]


def test_unittest_colours_and_failed_test_ids() -> None:
    log = (
        "test_a (m.T.test_a) ... \x1b[32mok\x1b[0m\n"
        "unittest.loader._FailedTest.tests.test_gone ... \x1b[31mERROR\x1b[0m\n"
    )
    assert pairs(UnittestLogParser().parse(log)) == [
        ("m.T.test_a", "PASSED"),
        ("tests.test_gone", "ERROR"),
    ]


# --- the public surface ----------------------------------------------------------------


def test_parse_test_output_dispatches_on_runner() -> None:
    assert pairs(parse_test_output("tests/t.py::test_a PASSED [100%]\n", "pytest")) == [
        ("tests/t.py::test_a", "PASSED")
    ]
    assert pairs(parse_test_output("test_a (m.T) ... FAIL\n", "unittest")) == [
        ("m.T.test_a", "FAILED")
    ]
    with pytest.raises(ValueError, match="nose"):
        parse_test_output("", "nose")


def test_strip_ansi() -> None:
    coloured = "\x1b[1m\x1b[31mFAILED\x1b[0m x \x1b]8;;http://e.x\x07link\x1b]8;;\x07 \x1b[2K"
    assert strip_ansi(coloured) == "FAILED x link "
    assert strip_ansi("plain [ 50%]") == "plain [ 50%]"


def test_exported_names() -> None:
    assert sorted(benchsmith.parsing.__all__) == [
        "BintestLogParser",
        "PytestLogParser",
        "UnittestLogParser",
        "network_failures",
        "parse_test_output",
        "reaches_network",
        "running_test",
        "service_failures",
        "strip_ansi",
        "unreachable_hosts",
    ]


def test_the_running_test_is_the_one_that_started_last_without_a_result() -> None:
    from benchsmith.parsing import running_test

    started = ("=== test session starts ===\ncollected 3 items\n\n"
               "tests/test_a.py::test_one PASSED  [ 33%]\ntests/test_a.py::test_hang[x-1] ")
    assert running_test(started, "pytest") == "tests/test_a.py::test_hang[x-1]"
    assert running_test(started + "PASSED  [ 66%]\n", "pytest") is None  # it finished
    assert running_test("=== test session starts ===\ncollecting ... ", "pytest") is None
    unittest = "test_ok (pkg.test_t.T) ... ok\ntest_hang (pkg.test_t.T.test_hang) ... "
    assert running_test(unittest, "unittest") == "pkg.test_t.T.test_hang"


UNITTEST_NETWORK = """\
test_fetch (pkg.tests.test_web.WebTest.test_fetch) ... ERROR
test_local (pkg.tests.test_web.WebTest.test_local) ... FAIL
test_cache (pkg.tests.test_web.WebTest.test_cache) ... ERROR
test_ok (pkg.tests.test_web.WebTest.test_ok) ... ok

======================================================================
ERROR: test_fetch (pkg.tests.test_web.WebTest.test_fetch)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/x/pkg/tests/test_web.py", line 5, in test_fetch
    urlopen("https://example.org")
urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>

======================================================================
FAIL: test_local (pkg.tests.test_web.WebTest.test_local)
----------------------------------------------------------------------
Traceback (most recent call last):
AssertionError: 1 != 2

======================================================================
ERROR: test_cache (pkg.tests.test_web.WebTest.test_cache)
----------------------------------------------------------------------
redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused.

----------------------------------------------------------------------
Ran 4 tests in 0.010s

FAILED (failures=1, errors=2)
"""


def test_unittest_tests_that_needed_the_network_are_named() -> None:
    from benchsmith.parsing import network_failures

    names = {t.name for t in parse_test_output(UNITTEST_NETWORK, "unittest")}
    # The assertion failure and the refused local service are the environment's business.
    assert network_failures(UNITTEST_NETWORK, "unittest") == {"pkg.tests.test_web.WebTest.test_fetch"}
    assert network_failures(UNITTEST_NETWORK, "unittest") <= names


def test_junit_report_confirms_console_passes() -> None:
    from benchsmith.parsing.junit import confirm, junit_key, junit_statuses

    TestStatus = core.TestStatus

    assert junit_key("tests/a/test_b.py::TestC::test_d[x::y-1]") == ("tests.a.test_b.TestC",
                                                                      "test_d[x::y-1]")
    assert junit_key("src/pkg/mod.py::pkg.mod.func") == ("src.pkg.mod", "pkg.mod.func")
    xml = b"""<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
      <testcase classname="tests.test_a" name="test_ok" time="0.1"/>
      <testcase classname="tests.test_a.TestK" name="test_p[a b]" time="0.1"/>
      <testcase classname="tests.test_a" name="test_xf"><skipped type="pytest.xfail" message=""/></testcase>
      <testcase classname="tests.test_a" name="test_skip"><skipped type="pytest.skip" message=""/></testcase>
      <testcase classname="tests.test_a" name="test_bad"><failure message="boom"/></testcase>
      <testcase classname="tests.test_a" name="test_td"/>
      <testcase classname="tests.test_a" name="test_td"><error message="teardown"/></testcase>
    </testsuite></testsuites>"""
    report = junit_statuses(xml)
    assert report[("tests.test_a", "test_td")] is TestStatus.ERROR  # the worst of its entries
    console = {"tests/test_a.py::test_ok": TestStatus.PASSED,
               "tests/test_a.py::TestK::test_p[a b]": TestStatus.PASSED,
               "tests/test_a.py::test_xf": TestStatus.XFAIL,
               "tests/test_a.py::test_bad": TestStatus.PASSED,  # printed by the code under test
               "tests/test_a.py::test_ghost": TestStatus.PASSED,  # never ran
               "tests/test_a.py::test_skip": TestStatus.SKIPPED}
    statuses, refuted = confirm(console, report)
    assert refuted == ["tests/test_a.py::test_bad", "tests/test_a.py::test_ghost"]
    assert statuses["tests/test_a.py::test_bad"] is TestStatus.FAILED
    assert statuses["tests/test_a.py::test_ghost"] is TestStatus.FAILED
    assert statuses["tests/test_a.py::TestK::test_p[a b]"] is TestStatus.PASSED
    # No report at all (the process ended before pytest wrote it): no pass is confirmed.
    statuses, refuted = confirm(console, None)
    assert sorted(refuted) == sorted(n for n, s in console.items() if s is not TestStatus.SKIPPED)
    with pytest.raises(ValueError, match="unreadable"):
        junit_statuses(b"<testsuites><testcase")


def test_tests_a_module_declares_flaky() -> None:
    from benchsmith.parsing.python_source import declared_flaky

    source = (
        "import pytest\nfrom flaky import flaky\n\n"
        "@pytest.mark.flaky(reruns=2)\ndef test_a(): pass\n\n"
        "@flaky\ndef test_b(): pass\n\n"
        "def test_c(): pass\n\n"
        "class TestX:\n    @pytest.mark.flaky\n    def test_d(self): pass\n"
        "    def test_e(self): pass\n\n"
        "@flaky(max_runs=3)\nclass TestY:\n    def test_f(self): pass\n")
    assert declared_flaky(source, "t/test_m.py") == [
        "t/test_m.py::test_a", "t/test_m.py::test_b", "t/test_m.py::TestX::test_d", "t/test_m.py::TestY"]
    assert declared_flaky("import pytest\npytestmark = [pytest.mark.flaky]\n", "t/x.py") == ["t/x.py"]
    assert declared_flaky("def test(:\n", "t/broken.py") == []


def test_a_test_id_with_characters_xml_cannot_hold_is_confirmed(tmp_path: Path) -> None:
    """Old pytest versions printed a bytes parameter's ID raw (control characters included);
    the JUnit report writes those characters as ``#x01``. A real pytest run with such an ID
    (escaping turned off, as those versions had it) passes, confirmed by the report."""
    from benchsmith.harness.testrun import run_tests
    from benchsmith.sandbox import LocalSandboxConfig
    from benchsmith.sandbox.local import LocalSandbox

    with LocalSandbox(LocalSandboxConfig(tmp_dir=str(tmp_path))) as box:
        box.write_file("pytest.ini", b"[pytest]\n"
                       b"disable_test_id_escaping_and_forfeit_all_rights_to_community_support = true\n")
        box.write_file("test_ids.py", b"import pytest\n\n\n"
                       b"@pytest.mark.parametrize('raw', ['\\x01\\x02-end', 'plain', '\\u00e9'])\n"
                       b"def test_raw(raw):\n    assert raw\n")
        run = run_tests(box, [f"{sys.executable} -m pytest -rA -p no:cacheprovider test_ids.py"],
                        "pytest", timeout=120)
    assert run.statuses == {"test_ids.py::test_raw[\x01\x02-end]": core.TestStatus.PASSED,
                            "test_ids.py::test_raw[plain]": core.TestStatus.PASSED,
                            "test_ids.py::test_raw[\u00e9]": core.TestStatus.PASSED}
    assert not run.unconfirmed and not run.infrastructure


def test_a_run_past_its_timeout_keeps_the_results_of_the_tests_that_ran(tmp_path: Path) -> None:
    """A suite too slow for its timeout: pytest is interrupted, not killed, so its report
    confirms the tests that passed before the deadline (killed, every pass would count as
    failed for want of a report)."""
    from benchsmith.harness.testrun import run_tests
    from benchsmith.sandbox import LocalSandboxConfig
    from benchsmith.sandbox.local import LocalSandbox

    with LocalSandbox(LocalSandboxConfig(tmp_dir=str(tmp_path))) as box:
        box.write_file("test_slow.py", b"import time\n\n\ndef test_quick():\n    assert True\n\n\n"
                       b"def test_also_quick():\n    assert True\n\n\n"
                       b"def test_endless():\n    time.sleep(600)\n")
        run = run_tests(box, [f"{sys.executable} -m pytest -rA -v -p no:cacheprovider test_slow.py"],
                        "pytest", timeout=8)
    assert run.timed_out and not run.report_missing and not run.unconfirmed
    assert run.statuses["test_slow.py::test_quick"] is core.TestStatus.PASSED
    assert run.statuses["test_slow.py::test_also_quick"] is core.TestStatus.PASSED
    assert run.statuses.get("test_slow.py::test_endless") is not core.TestStatus.PASSED


def test_a_test_id_with_the_checkout_path_has_one_name_in_every_sandbox(tmp_path: Path) -> None:
    """A parametrization over the checkout's own paths puts the sandbox's path in the test ID;
    two local sandboxes (two paths) report the same names, spelled with the container's path."""
    from benchsmith.harness.testrun import run_tests
    from benchsmith.sandbox import LocalSandboxConfig
    from benchsmith.sandbox.local import LocalSandbox

    names = []
    # a short folder: pytest (9.2 and later) names a parameter over 100 characters by position
    short = Path(tempfile.mkdtemp(prefix="ids", dir="/tmp"))
    for _ in range(2):
        with LocalSandbox(LocalSandboxConfig(tmp_dir=str(short))) as box:
            box.write_file("test_where.py", b"import os\n\nimport pytest\n\n\n"
                           b"@pytest.mark.parametrize('where', [os.getcwd()])\n"
                           b"def test_here(where):\n    assert False\n")
            run = run_tests(box, [f"{sys.executable} -m pytest -rA -p no:cacheprovider test_where.py"],
                            "pytest", timeout=120)
        assert not run.infrastructure, run.infrastructure
        names.append(sorted(run.statuses))
    shutil.rmtree(short, ignore_errors=True)
    assert names[0] == names[1] == [f"test_where.py::test_here[{core.CHECKOUT_PATH}]"]


def test_a_stalled_import_in_network_code_is_told_from_a_slow_one() -> None:
    from benchsmith.harness.collection_probe import waits_on_network

    head = "collecting ... Fatal Python error: Aborted\n\nCurrent thread 0x1 (most recent call first):\n"
    retry = (head + '  File "/work/repo/pkg/data/retry.py", line 53 in f_retry\n'
             '  File "/work/repo/pkg/data/download.py", line 215 in data_path_with_download\n'
             '  File "/work/repo/pkg/tests/test_x.py", line 25 in <module>\n')
    socket = head + '  File "/usr/lib/python3.11/socket.py", line 294 in accept\n'
    fetching = head + '  File "/work/repo/tests/helpers.py", line 9 in fetch_remote_file\n'
    heavy = (head + '  File "<frozen importlib._bootstrap>", line 241 in _call_with_frames_removed\n'
             '  File "/work/repo/tests/test_heavy.py", line 3 in <module>\n')
    assert waits_on_network(retry) and waits_on_network(socket) and waits_on_network(fetching)
    assert not waits_on_network(heavy) and not waits_on_network(retry.replace("Fatal Python error", "x"))


@pytest.mark.parametrize(("config", "text", "expected"), [
    (None, "", ["test_a.py", "tests/test_b.py", "tests/c_test.py"]),
    ("pyproject.toml", '[tool.pytest.ini_options]\npython_files = ["check_*.py", "tests.py"]\n[tool.x]\n',
     ["check_d.py", "tests/tests.py"]),
    ("pyproject.toml", "[tool.pytest.ini_options]\npython_files = 'check_*.py'\n", ["check_d.py"]),
    ("pyproject.toml", "[tool.black]\npython_files = 'check_*.py'\n",  # not pytest's table
     ["test_a.py", "tests/test_b.py", "tests/c_test.py"]),
    ("setup.cfg", "[tool:pytest]\npython_files =\n    tests.py\n    check_*.py\n",
     ["check_d.py", "tests/tests.py"]),
    ("tox.ini", "[tox]\nenvlist = py\n[pytest]\npython_files = tests.py\n", ["tests/tests.py"]),
    ("pytest.ini", "", ["test_a.py", "tests/test_b.py", "tests/c_test.py"]),  # it wins, empty
])
def test_the_collection_probe_reads_the_projects_python_files(
        tmp_path: Path, config: str | None, text: str, expected: list[str]) -> None:
    from benchsmith.harness.collection_probe import _SCRIPT

    for name in ("test_a.py", "tests/test_b.py", "tests/c_test.py", "check_d.py",
                 "tests/tests.py", "helpers.py", ".venv/test_e.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    if config:
        (tmp_path / config).write_text(text)
    if config == "pytest.ini":
        (tmp_path / "setup.cfg").write_text("[tool:pytest]\npython_files = check_*.py\n")
    # At most 0 modules: the script lists what it found (instead of its count) and probes none.
    listed = subprocess.run([sys.executable, "-c", _SCRIPT.replace(
        'print("TOO MANY %d" % len(modules))', 'print("\\n".join(modules))'), "1", "1", "0"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert sorted(listed.stdout.split()) == sorted(expected), listed.stderr


NETWORK_IN_CAPTURED_OUTPUT = {
    "tests/test_cli.py": '''
import sys
import tempfile

import pytest

OFFLINE = ("WARNING: Retrying after connection broken by 'NewConnectionError: Failed to "
           "establish a new connection: [Errno -3] Temporary failure in name resolution'")


def install(name):
    print(OFFLINE, file=sys.stderr)
    return 1


def test_install():
    assert install("cowsay") == 0


def test_handles_errors():
    try:
        value = 1
    except ConnectionError:  # named in the source only
        value = 2
    assert value == 2


class TestApps:
    @pytest.mark.parametrize("name", ["a", "b"])
    def test_run(self, name):
        assert install(name) == 0 if name == "a" else False


@pytest.fixture
def server():
    print(OFFLINE)
    raise RuntimeError("no index")


def test_uses_server(server):
    pass


def test_same():
    print(OFFLINE)
    assert False
''',
    "tests/other/test_cli.py": "def test_same():\n    assert False\n",
    "tests/other/__init__.py": "",
    "tests/__init__.py": "",
}


def test_tests_whose_captured_output_shows_the_network_failing_are_named(tmp_path: Path) -> None:
    from benchsmith.parsing import network_failures

    for name, text in NETWORK_IN_CAPTURED_OUTPUT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    run = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-v", "-p", "no:cacheprovider",
                          "tests"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    statuses = {t.name: t.status for t in parse_test_output(run.stdout, "pytest")}
    assert len([s for s in statuses.values() if s != core.TestStatus.PASSED]) == 7, run.stdout
    # test_same exists twice with the same heading: which one printed is not told, so neither.
    assert network_failures(run.stdout, "pytest") == {
        "tests/test_cli.py::test_install", "tests/test_cli.py::TestApps::test_run[a]",
        "tests/test_cli.py::test_uses_server"}


def test_a_large_passing_suite_ends_without_a_silent_summary(tmp_path: Path) -> None:
    """Our pytest command lists every outcome without -rA's PASSES section, which pytest builds
    after the last test in time quadratic in the suite, writing nothing meanwhile: with -rA,
    6,000 passing tests go silent for longer than this stall limit and the run is stopped."""
    from benchsmith.harness.render import render_test
    from benchsmith.harness.testrun import run_tests
    from benchsmith.sandbox import LocalSandboxConfig
    from benchsmith.sandbox.local import LocalSandbox

    [command] = render_test(core.Plan(python="3.11", exclude_newer="2023-06-01T00:00:00Z", runner="pytest",
                                           test_args=["test_many.py"]))
    assert command.startswith("python -m pytest ")
    with LocalSandbox(LocalSandboxConfig(tmp_dir=str(tmp_path))) as box:
        box.write_file("test_many.py", b"import pytest\n\n\n@pytest.mark.parametrize('i', range(6000))\n"
                       b"def test_n(i):\n    assert i >= 0\n")
        run = run_tests(box, [sys.executable + command.removeprefix("python")], "pytest",
                        timeout=300, stall_timeout=6)
    assert not run.hung and not run.timed_out, run.commands[-1].log_tail
    assert len(run.statuses) == 6000
    assert set(run.statuses.values()) == {core.TestStatus.PASSED}


def test_pytest_3_summary_names_of_class_tests_are_the_verbose_names() -> None:
    """pytest 3's short summary (-rap) spells a class's test "Class::()::test"; its verbose
    line and JUnit spell it "Class::test": one test, one name, one status."""
    output = textwrap.dedent("""\
        ============================= test session starts ==============================
        platform linux -- Python 3.7.16, pytest-3.5.1, py-1.11.0, pluggy-0.6.0
        collected 2 items

        tests/test_a.py::TestA::test_one PASSED                                  [ 50%]
        tests/test_a.py::TestA::test_two FAILED                                  [100%]

        =================================== FAILURES ===================================
        _______________________________ TestA.test_two ________________________________
        E   requests.exceptions.ConnectionError: Failed to establish a new connection
        =========================== short test summary info ============================
        FAIL tests/test_a.py::TestA::()::test_two
        PASSED tests/test_a.py::TestA::()::test_one
        ====================== 1 failed, 1 passed in 0.05 seconds ======================
        """)
    results = {t.name: t.status for t in parse_test_output(output, "pytest")}
    assert results == {"tests/test_a.py::TestA::test_one": core.TestStatus.PASSED,
                       "tests/test_a.py::TestA::test_two": core.TestStatus.FAILED}


def test_pytest_before_2_6_verbose_lines_name_the_tests_location() -> None:
    """pytest 2.5 (the pytest of a 2014 commit on Python 2.7) printed "path:line: Class.test":
    the node IDs are the ones later pytest prints for the same tests."""
    log = """\
        ============================= test session starts ==============================
        platform linux2 -- Python 2.7.18 -- py-1.4.20 -- pytest-2.5.2 -- /venv/bin/python
        collecting ... collected 7 items

        test_sample.py:6: SampleCase.test_adds PASSED
        test_sample.py:11: TestGroup.test_in_class PASSED
        test_sample.py:14: TestGroup.test_fails FAILED
        test_sample.py:18: test_param[1] PASSED
        test_sample.py:18: test_param[a b] PASSED
        test_sample.py:23: test_skipped SKIPPED
        tests/test_sub.py <- tests/base.py:4: TestChild.test_inherited PASSED

        =================================== FAILURES ===================================
        _____________________________ TestGroup.test_fails _____________________________

            def test_fails(self):
        >       assert 1 == 2
        E       assert 1 == 2

        test_sample.py:15: AssertionError
        ================ 1 failed, 5 passed, 1 skipped in 0.03 seconds =================
        """
    assert parse_pytest(log) == [("test_sample.py::SampleCase::test_adds", "PASSED"),
                                 ("test_sample.py::TestGroup::test_in_class", "PASSED"),
                                 ("test_sample.py::TestGroup::test_fails", "FAILED"),
                                 ("test_sample.py::test_param[1]", "PASSED"),
                                 ("test_sample.py::test_param[a b]", "PASSED"),
                                 ("test_sample.py::test_skipped", "SKIPPED"),
                                 ("tests/test_sub.py::TestChild::test_inherited", "PASSED")]


def test_pytest_2_verbose_lines_name_the_line_after_the_file() -> None:
    log = """\
        ============================= test session starts ==============================
        platform linux2 -- Python 2.7.18 -- py-1.4.22 -- pytest-2.6.0 -- /venv/bin/python
        collecting ... collected 3 items

        test_http.py@12::HttpTestCase::test_get PASSED
        tests/test_x.py@40::test_y[a@1::b] FAILED
        test_http.py@30::HttpTestCase::test_post
        =========================== short test summary info ============================
        FAIL tests/test_x.py::test_y[a@1::b]
        """
    assert parse_pytest(log) == [("test_http.py::HttpTestCase::test_get", "PASSED"),
                                 ("tests/test_x.py::test_y[a@1::b]", "FAILED")]
    from benchsmith.parsing.pytest_log import started_test
    assert started_test("test_http.py@30::HttpTestCase::test_post ") == "test_http.py::HttpTestCase::test_post"
