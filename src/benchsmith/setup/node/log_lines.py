"""The one line of a failed Node install or test run that says what went wrong: npm's error
code and message, yarn's or pnpm's error, a test runner's failing summary; not the log's last
line ("A complete log of this run can be found in: ...")."""

from __future__ import annotations

import re

__all__ = ["failure_line"]

WIDTH = 200
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_NPM = re.compile(r"^npm (?:ERR!|error) ?(.*)$")
_NPM_CODE = re.compile(r"^code (\S+)$")
# npm's lines around the message: where the log is, the environment, advice
_NPM_NOISE = re.compile(
    r"^(?:$|errno |path |syscall |signal |argv |node v|npm +v|Linux |Darwin |A complete log|"
    r"Log files were not written|/|[A-Z]:\\|This is probably not|There is likely|If you need help|"
    r"Please include|<https?://|Tell the author|You can get (?:their|information)|npm owner|"
    r"Exit status|Failed at the|command failed$|A complete log|Verbose stack|code \S+$|"
    r"(?:node-pre-)?gyp ERR! (?:cwd|stack|System|command|node -v|node-gyp -v|node-pre-gyp -v|"
    r"not ok))")
# yarn classic's error lines, less its closing advice
_YARN = re.compile(r"^error (?!Command failed with exit code|Found incompatible module\.?$)(.+)$")
# yarn 2+: errors only (the console's colours that set them apart are gone)
_BERRY = re.compile(r"(?:Unknown Syntax Error: .+|Usage Error: .+|"
                    r"YN00(?:01|09|18|27|28|35|41|46|71|78|80|82|83)\b.*)")
_PNPM = re.compile(r"(?:ERR_PNPM_\w+|ERROR)\s+.+")
# runners' summaries of a failing run (jest, vitest, mocha, ava, tap, tape, uvu, karma, node)
_SUMMARY = re.compile(
    r"^\s*(?:Tests?:.*\bfailed\b.*|Test (?:Suites|Files):.*\bfailed\b.*|\d+ failing\b.*|"
    r"\d+ tests? failed\b.*|# fail(?:ed)?\s+[1-9]\d*.*|# failed \d+ of \d+ tests.*|"
    r"Executed \d+ of \d+ .*FAILED.*|ℹ fail [1-9]\d*|"
    r"No test files found.*|Error: No test files found.*|No tests found.*)$", re.MULTILINE)
_UVU = re.compile(r"^\s*Total:\s+(\d+)\s*\n\s*Passed:\s+(\d+)", re.MULTILINE)
_ERROR = re.compile(r"^\s*(?:\w*Error(?:\s\[\w+\])?: .+|FATAL ERROR: .+)$", re.MULTILINE)


def _clean(text: str) -> list[str]:
    return [_ANSI.sub("", line).rstrip() for line in text.splitlines()]


def _npm(lines: list[str]) -> str | None:
    messages = [m.group(1).strip() for line in lines if (m := _NPM.match(line.strip()))]
    if not messages:
        return None
    codes = [c.group(1) for m in messages if (c := _NPM_CODE.match(m))]
    useful = [m for m in messages if not _NPM_NOISE.match(m)]
    if useful and useful[0].endswith(":") and len(useful) > 1:
        useful[:2] = [f"{useful[0]} {useful[1]}"]
    message = useful[0] if useful else ""
    if codes and message:
        return f"npm error {codes[0]}: {message}"
    return f"npm error {codes[0]}" if codes else (f"npm error: {message}" if message else None)


def _managers(lines: list[str], text: str) -> str | None:
    """yarn classic's first error, yarn 2+'s or pnpm's."""
    yarn = [m.group(1) for line in lines if (m := _YARN.match(line.strip()))]
    if yarn:
        return f"yarn error {yarn[0]}"
    found = _BERRY.search(text) or _PNPM.search(text)
    return found.group(0) if found else None


def failure_line(output: str, phase: str = "install") -> str:
    """The line of `output` (a failed command of `phase`, "install" or "test") that names the
    failure, shortened to one line."""
    lines = _clean(output)
    text = "\n".join(lines)
    found: str | None = None
    if phase == "test" and (summaries := _SUMMARY.findall(text)):
        found = summaries[-1].strip()
    elif phase == "test" and (uvu := _UVU.search(text)):
        found = f"Total: {uvu.group(1)}, Passed: {uvu.group(2)}"
    errors = _ERROR.findall(text)
    if found is None and phase == "test" and errors:
        found = errors[0].strip()
    found = found or _npm(lines) or _managers(lines, text)
    if found is None and errors:
        found = errors[0].strip()
    if found is None:
        found = next((line.strip() for line in reversed(lines) if line.strip()), "(no output)")
    found = " ".join(found.split())
    return found if len(found) <= WIDTH else found[:WIDTH - 1] + "…"
