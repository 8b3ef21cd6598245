"""The options of a test script that the rendered test command sets itself (watch modes,
coverage, the script's own reporters, early exits), taken out of the script's arguments."""

from __future__ import annotations

from collections.abc import Sequence

from benchsmith.harness.node_render import VALUE_OPTIONS

__all__ = ["strip_options"]

# Options removed from the script's arguments: watch modes, coverage, the script's own reporters
# (the rendered command sets its own). A trailing "=" means the option's "--x=value" form too.
_DROPPED: dict[str, frozenset[str]] = {
    "jest": frozenset({"--watch", "--watchAll", "--coverage", "--json", "--ci", "--outputFile",
                       "--reporters", "--colors", "--testResultsProcessor", "--bail", "-b"}),
    "vitest": frozenset({"--watch", "-w", "--ui", "--coverage", "--run", "--reporter",
                         "--outputFile", "--silent", "--bail"}),
    "mocha": frozenset({"--watch", "-w", "--reporter", "-R", "--reporter-option",
                        "--reporter-options", "-O", "--forbid-only", "--bail", "-b"}),
    "ava": frozenset({"--tap", "-t", "--verbose", "-v", "--watch", "-w", "--fail-fast"}),
    "tap": frozenset({"--watch", "-w", "--reporter", "-R", "--coverage-report", "-o",
                      "--reporter-file", "--check-coverage", "--100", "--bail", "-b"}),
    "node": frozenset({"--test", "--watch", "--test-reporter", "--test-reporter-destination",
                       "--experimental-test-coverage"}),
    "jasmine": frozenset({"--reporter"}),
    "karma": frozenset({"--watch", "--auto-watch", "--no-single-run", "--reporters",
                        "--browsers"}),
    "playwright": frozenset({"--ui", "--headed", "--reporter"}),
    "web-test-runner": frozenset({"--watch", "--browsers"}),
}


def strip_options(runner: str, args: Sequence[str]) -> list[str]:
    """`args` without the options the rendered command sets itself (watch, coverage, reporters)."""
    dropped, values = _DROPPED.get(runner, frozenset()), VALUE_OPTIONS.get(runner, frozenset())
    kept: list[str] = []
    skip = False
    bail = False
    for arg in args:
        if skip or (bail and arg.isdigit()):  # `--bail 1`: stop after one failure
            skip = bail = False
            continue
        option = arg.split("=", 1)[0]
        bail = False
        if option in dropped or option.startswith(("--coverage.", "--reporter-option")):
            skip = "=" not in arg and option in values
            bail = option in {"--bail", "-b"} and "=" not in arg
            continue
        kept.append(arg)
    return kept
