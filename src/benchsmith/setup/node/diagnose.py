"""Classify a failed Node install or test run (npm, yarn, pnpm, node-gyp, node itself) into a
diagnosis with facts its repair rules act on."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from benchsmith.core import Diagnosis, ExecResult
from benchsmith.parsing import strip_ansi
from benchsmith.setup.node.crashes import crashed_runner
from benchsmith.setup.node.declared import git_source
from benchsmith.setup.node.install_scripts import diagnose_script_download
from benchsmith.setup.node.log_lines import failure_line
from benchsmith.setup.node.no_tests import diagnose_no_tests
from benchsmith.setup.system_packages import (
    TOOL_PACKAGES,
    debian_packages_for,
    missing_system_parts,
)
from benchsmith.setup.test_signals import log_tail

__all__ = ["BUILD_SCRIPTS", "diagnose_node"]

# Scripts whose output tests commonly load (in the order they are tried when none names the
# missing directory).
BUILD_SCRIPTS = ("build", "prepare", "compile", "pretest", "prepublish", "prepublishOnly")

_GYP = re.compile(r"gyp ERR!|node-gyp rebuild|gyp info it worked")
_GYP_VERSION = re.compile(r"node-gyp -v v?(\d+)\.")
# node-gyp before 5 ran gyp with Python 2 only: it looks for `python`, or runs a Python 3 on
# Python 2 syntax, or refuses it outright
_GYP_PY2 = re.compile(r"Can't find Python executable|Missing parentheses in call to 'print'|"
                      r"is not supported by gyp|Python >= v2\.\d+\.\d+ & < 3\.0\.0")
_GYP_NO_PYTHON = re.compile(r"Could not find any Python installation to use|"
                            r"Can't find Python executable")
# node-gyp's own lookup ("not found: make") and make's failure to start the compiler
_BUILD_TOOL = re.compile(r"Error: not found: ([\w.+-]+)|make(?:\[\d+\])?: ([\w.+-]+): "
                         r"(?:No such file or directory|[Cc]ommand not found)")
# autoconf's checks: a configure run an install script starts (a library built from its
# sources when its prebuilt binary cannot be downloaded) stops after a program it needs
_CHECKING = re.compile(r"checking (?:for |whether )?([^\n]*?)\.\.\. ([^\n]*)")

# errors only: npm and yarn also warn about engines (optional dependencies, no engine-strict)
_ENGINE = re.compile(r"code EBADENGINE|error \S+: The engine \"node\" is incompatible|"
                     r"ERR_PNPM_UNSUPPORTED_ENGINE|ERR! notsup Unsupported engine")
# npm 7+: `Required: {"node":">=18"}`; npm 6: `wanted: {"node":">=18"}`; yarn: `Expected
# version ">=18"`; pnpm: `Expected version: >=18`
_ENGINE_RANGE = re.compile(r"(?:Required|wanted): (\{[^\n}]*\})|Expected version:? \"?([^\"\n]+)\"?")
_ENGINE_PACKAGE = re.compile(r"Not compatible with your version of node/npm: (\S+)|"
                             r"error (\S+): The engine \"node\" is incompatible|"
                             r"Unsupported engine for (\S+?):")

_PEER = re.compile(r"code ERESOLVE|ERESOLVE (?:could not resolve|unable to resolve)|"
                   r"[Cc]onflicting peer dependency|ERR_PNPM_PEER_DEP_ISSUES")
_PEER_PACKAGE = re.compile(r"Could not resolve dependency:\s*\n[^\n]*peer (\S+)|"
                           r"[Cc]onflicting peer dependency: (\S+)")

# npm 3 to 5 breaking its own staging directory mid-install (its races, worst when installs
# run side by side, as a monorepo's bootstrap runs them)
_NPM_STAGING = re.compile(r"\b(?:ENOTDIR|ENOENT|EEXIST|EPERM)\b[^\n]*[/\\]node_modules[/\\]\.staging[/\\]")
_LOCK_STALE = re.compile(
    r"can only install packages when your package\.json and (?:package-lock\.json|"
    r"npm-shrinkwrap\.json)|Your lockfile needs to be updated|ERR_PNPM_OUTDATED_LOCKFILE|"
    r"ERR_PNPM_LOCKFILE_CONFIG_MISMATCH|because pnpm-lock\.yaml is not up to date|"
    r"lockfile would have been modified by this install|YN0028")
_LOCK_UNREADABLE = re.compile(
    r"ERR_PNPM_LOCKFILE_BREAKING_CHANGE|Ignoring not compatible lockfile|"
    r"(?:unsupported|unknown) lockfile ?version|lockfileVersion[^\n]*(?:not supported|unsupported)|"
    r"yarn\.lock[^\n]*(?:Unknown token|Invalid value type)", re.IGNORECASE)

# a git or GitHub source the install could not reach: npm's ls-remote and codeload requests,
# yarn's retries ending in ENOTFOUND codeload.github.com or in the tarball it never wrote, ssh,
# pnpm's git fetches (not an install script downloading a release asset from github.com)
_GIT_HOSTS = r"(?:codeload\.github\.com|github\.com|gitlab\.com|bitbucket\.org)"
_GIT_FETCH = re.compile(rf"git[^\n]*ls-remote[^\n]*{_GIT_HOSTS}|request to https://{_GIT_HOSTS}"
                        rf"\S* failed|(?:ENOTFOUND|EAI_AGAIN) codeload\.github\.com|"
                        r"Error: https://codeload\.github\.com/\S+?: |"
                        rf"Could not resolve hostname {_GIT_HOSTS}|"
                        rf"git clone[^\n]*{_GIT_HOSTS}[^\n]*|ERR_PNPM_(?:GIT|FETCH)\w*[^\n]*{_GIT_HOSTS}")
_GIT_URL = re.compile(rf"(?:ssh://git@|git\+?\w*://|https://)(?:[\w.-]+@)?{_GIT_HOSTS}[/:]"
                      r"[\w.-]+/[\w.-]+")
# a package or version the registry answers 404 for: npm (E404, ETARGET), yarn, pnpm
_REGISTRY_404 = re.compile(
    r"404 Not Found - GET https?://\S+?/(@[^/\s]+(?:/|%2[fF])[^/\s]+|[^@/\s][^/\s]*)"
    r"(?:/-/\S+?-(\d[^/\s]*?)\.tgz)?(?=[\s:\"]|$)|"
    r"https?://\S+?/(@[^/\s]+/[^/\s]+|[^@/\s][^/\s]*)/-/\S+?-(\d[^/\s]*?)\.tgz[^\n]*"
    r"(?:404 Not Found|Not Found - 404)|"
    r"No matching version found for (@?[^@\s]+)@(\d[^\s.]*\.[^\s]*?)\.?(?=\s|$)")

# TypeScript's compiler in a build step: an import it cannot resolve
_TS_MISSING = re.compile(r"error TS2307: Cannot find module '([^'\n]+)'")
# a type error tsc reports in a file: `src/a.ts(3,9): error TS2322:`, or pretty (colours
# removed) `src/a.ts:3:9 - error TS2322:`
_TS_ERROR = re.compile(r"^\s*([^\s(:][^\s(]*?\.[cm]?[jt]sx?)(?:\(\d+,\d+\)|:\d+:\d+ -):? "
                       r"error (TS\d+):", re.MULTILINE)
# an implicit type library (a directory of node_modules/@types) tsc finds no declarations in
_TS_LIBRARY = re.compile(r"error TS2688: Cannot find type definition file for '([^'\n/.][^'\n/]*)'")

_HEAP = re.compile(r"JavaScript heap out of memory|Reached heap limit")

_REQUIRE_ESM = re.compile(r"ERR_REQUIRE_ESM|require\(\) of ES Module|Must use import to load ES Module")
_IMPORT_IN_CJS = re.compile(r"Cannot use import statement outside a module")
# runners that load test files through their own module system: no Node release changes it
_OWN_LOADER = re.compile(r"Jest encountered an unexpected token|ts-jest\[|at Runtime\.createScriptFromCode")

# what only another Node release changes: syntax newer than its V8 parses (optional chaining,
# nullish and logical assignment, class fields, spread, optional catch binding, await), globals
# and `node:` built-ins it lacks -> a newer Node; a native addon compiled against a Node whose
# headers (V8, NAN) changed since -> an older Node
_NEWER_SYNTAX = re.compile(
    r"SyntaxError: (?:Unexpected token '?(?:\?|\.|\?\?=|\|\|=|&&=|#|=|\{|\.\.\.|\*\*)'?$|"
    r"Unexpected character '#'|Private field '#|Unexpected reserved word$|"
    r"Invalid regular expression flags$)", re.MULTILINE)
_NEWER_GLOBAL = re.compile(r"ReferenceError: (AbortController|AbortSignal|structuredClone|fetch|"
                           r"globalThis|TextEncoder|TextDecoder|queueMicrotask|EventTarget|Blob|"
                           r"FormData|Headers|BroadcastChannel|WeakRef|FinalizationRegistry) is "
                           r"not defined|Cannot find module '(node:[\w/]+)'|"
                           r"No such built-in module: (node:[\w/]+)")
_ABI = re.compile(r"compiled against a different Node\.js version using\s+NODE_MODULE_VERSION "
                  r"(\d+)\.\s+This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)")
_HEADERS_MOVED = re.compile(r"(?:include/node/(?:v8|node|uv)[\w-]*\.h|nan\.h|nan_\w+\.h)"
                            r":\d+:\d+: error: |error: [^\n]*\b(?:v8|Nan)::\w+[^\n]*"
                            r"(?:has no member|no matching function|is not a member|was not declared)")

_MISSING_MODULE = re.compile(r"Cannot find module '([^'\n]+)'")
_NOT_FOUND = re.compile(r"(?:^|\n)[^\n]*?sh: (?:\d+: )?([\w@.+-][\w@./+-]*): (?:command )?not found|"
                        r"(?:^|\n)[^\n]*?([\w.+-]+): command not found")


def diagnose_node(failed: ExecResult, phase: str, context: Any = None) -> Diagnosis:
    """Classify why `failed` (a command of `phase` "install" or "test") went wrong; `context`
    (a NodeContext) gives the checkout's root and scripts."""
    out = failed.output
    tail = log_tail(out)
    if failed.stalled:
        return Diagnosis(category="testing", kind="stalled", evidence=tail,
                         reason=f"the {phase} stopped making progress")
    if failed.timed_out:
        return Diagnosis(category="undecidable", kind="timeout", reason=f"{phase} timed out",
                         evidence=tail)
    if found := _HEAP.search(out):
        return Diagnosis(category="undecidable", kind="heap_exhausted", evidence=_line(out, found),
                         reason="node ran out of JavaScript heap (its old-space limit)")
    if phase == "install":
        if diagnosis := _install(out):
            return diagnosis
    elif diagnosis := _tests(out, context):
        return diagnosis
    if diagnosis := _node_at_fault(out):
        return diagnosis
    if diagnosis := _programs(out):
        return diagnosis
    if diagnosis := diagnose_no_tests(failed, phase):  # after what the output names
        return diagnosis
    if phase == "test" and (diagnosis := crashed_runner(out, failed.returncode, context)):
        return diagnosis  # what another Node or a build step would fix comes first
    if phase == "install":
        return Diagnosis(category="undecidable", kind="install_failed", evidence=tail,
                         reason=f"install failed: {failure_line(out, 'install')}")
    if failed.returncode in (137, -9):
        return Diagnosis(category="undecidable", kind="killed", evidence=tail,
                         reason="the test run was killed (SIGKILL: most likely out of memory)")
    return Diagnosis(category="undecidable", kind="tests_failing", evidence=tail,
                     reason=f"tests failed (no rule names the cause): {failure_line(out, 'test')}")


def _node_at_fault(out: str) -> Diagnosis | None:
    """What the Node release itself causes, and which way another release would help."""
    if found := _ABI.search(out):
        built, running = int(found.group(1)), int(found.group(2))
        return Diagnosis(category="installation", kind="node_version", evidence=_line(out, found),
                         facts={"direction": ["newer" if built > running else "older"]},
                         reason=f"a native addon was built for another Node (ABI {built}, this "
                                f"Node has {running})")
    if found := _HEADERS_MOVED.search(out):
        return Diagnosis(category="installation", kind="node_version", evidence=_line(out, found),
                         facts={"direction": ["older"]},
                         reason="a native addon does not compile against this Node's V8/NAN "
                                "headers (written for an older Node)")
    if found := _NEWER_SYNTAX.search(out) or _NEWER_GLOBAL.search(out):
        return Diagnosis(category="testing", kind="node_version", evidence=_line(out, found),
                         facts={"direction": ["newer"]},
                         reason=f"code needs a newer Node than this one: {found.group(0)[:120]}")
    return None


def _line(text: str, match: re.Match[str]) -> str:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start:end if end >= 0 else None].strip()[:300]


def _install(out: str) -> Diagnosis | None:
    if _GYP.search(out) and (diagnosis := _native_build(out)):
        return diagnosis
    if diagnosis := _configure_programs(out):
        return diagnosis
    if diagnosis := diagnose_script_download(out):
        return diagnosis
    if found := _ENGINE.search(out):
        ranges = []
        for json_text, plain in _ENGINE_RANGE.findall(out):
            if json_text:
                try:
                    node = json.loads(json_text).get("node")
                except (ValueError, AttributeError):
                    node = None
                if isinstance(node, str):
                    ranges.append(node)
            elif plain.strip():
                ranges.append(plain.strip())
        packages = [next(g for g in groups if g) for groups in _ENGINE_PACKAGE.findall(out)]
        ranges, packages = list(dict.fromkeys(ranges)), list(dict.fromkeys(packages))
        return Diagnosis(category="installation", kind="engine_mismatch", evidence=_line(out, found),
                         facts={"ranges": ranges, "packages": packages},
                         reason=f"{', '.join(packages) or 'a package'} needs Node "
                                f"{' and '.join(ranges) or 'of another release'}")
    if found := _PEER.search(out):
        packages = list(dict.fromkeys(next(g for g in groups if g)
                                      for groups in _PEER_PACKAGE.findall(out)))
        return Diagnosis(category="installation", kind="peer_conflict", evidence=_line(out, found),
                         facts={"packages": packages},
                         reason="peer dependencies conflict"
                                + (f" ({', '.join(packages[:3])})" if packages else ""))
    if found := _GIT_FETCH.search(out):
        sources = list(dict.fromkeys(s for url in _GIT_URL.findall(out) if (s := git_source(url))))
        return Diagnosis(category="installation", kind="direct_url_unreachable",
                         evidence=_line(out, found), facts={"sources": sources},
                         reason="a git dependency cannot be fetched"
                                + (f" ({', '.join(sources[:3])})" if sources else ""))
    if missing := _REGISTRY_404.findall(out):
        packages = list(dict.fromkeys(
            (a or c or e).replace("%2f", "/").replace("%2F", "/") + (f"@{v}" if (v := b or d or f)
                                                                    else "")
            for a, b, c, d, e, f in missing))
        return Diagnosis(category="installation", kind="not_in_registry",
                         evidence=_line(out, _REGISTRY_404.search(out)),  # type: ignore[arg-type]
                         facts={"packages": packages},
                         reason=f"the registry has no {', '.join(packages[:3])}")
    if modules := list(dict.fromkeys(_TS_MISSING.findall(out))):
        return Diagnosis(category="installation", kind="missing_modules",
                         evidence=_line(out, _TS_MISSING.search(out)),  # type: ignore[arg-type]
                         facts={"modules": modules, "compiler": ["tsc"]},
                         reason=f"the TypeScript build cannot find {', '.join(modules[:3])}")
    if own := _own_type_errors(out):
        return own
    if found := _NPM_STAGING.search(out):
        return Diagnosis(category="installation", kind="manager_defect", evidence=_line(out, found),
                         reason="npm's staging directory broke during the install (a defect of "
                                "npm 3 to 5)")
    unreadable = _LOCK_UNREADABLE.search(out)
    if found := unreadable or _LOCK_STALE.search(out):
        return Diagnosis(category="installation", kind="lockfile_unusable", evidence=_line(out, found),
                         facts={"unreadable": ["yes"]} if unreadable else {},
                         reason="the package manager cannot read the lockfile" if unreadable else
                         "the lockfile is out of step with package.json: a frozen install stops")
    return None


def _configure_programs(out: str) -> Diagnosis | None:
    """A configure run that ended on programs it did not find (the last few of its checks)."""
    last = _CHECKING.findall(out)[-3:]
    missing = [what for what, answer in last if answer.strip() == "no" and what in TOOL_PACKAGES]
    if not missing:
        return None
    return Diagnosis(category="installation", kind="system_packages", evidence=log_tail(out),
                     facts={"apt": list(dict.fromkeys(TOOL_PACKAGES[m] for m in missing)),
                            "parts": [f"program {m}" for m in missing]},
                     reason=f"a dependency's configure script lacks {', '.join(missing)}")


def _own_type_errors(out: str) -> Diagnosis | None:
    """tsc reports type errors in the project's own files, or only in those of its
    dependencies (in node_modules, which another compiler does not mend: kept apart as
    ``dependency_files``) or in type libraries without declarations (``type_libraries``)."""
    clean = strip_ansi(out)
    errors = _TS_ERROR.findall(clean)
    libraries = list(dict.fromkeys(_TS_LIBRARY.findall(clean)))
    if not errors and not libraries:
        return None
    own = [(file, code) for file, code in errors if "node_modules/" not in file]
    files = list(dict.fromkeys(file for file, _ in own))
    theirs = list(dict.fromkeys(file for file, _ in errors if "node_modules/" in file))
    first = next((line for line in clean.splitlines() if (found := _TS_ERROR.match(line))
                  and found.group(1) in (files or theirs)), None) or \
        _line(clean, _TS_LIBRARY.search(clean))  # type: ignore[arg-type]
    where = "the project's own sources" if own else "type declarations of its dependencies"
    codes = [code for _, code in own or errors] + ([] if own or not libraries else ["TS2688"])
    return Diagnosis(category="installation", kind="project_build_failed", evidence=first.strip(),
                     facts={"compiler": ["tsc"], "files": files, "dependency_files": theirs,
                            "type_libraries": libraries, "codes": list(dict.fromkeys(codes))},
                     reason=f"the TypeScript build fails on {where}: {first.strip()[:200]}")


def _native_build(out: str) -> Diagnosis | None:
    """node-gyp failed: a Python 2 it wants, or the system's Python, tools, headers."""
    gyp_major = [int(v) for v in _GYP_VERSION.findall(out)]
    old_gyp = bool(gyp_major) and min(gyp_major) < 5
    if old_gyp and (found := _GYP_PY2.search(out)):
        return Diagnosis(category="installation", kind="gyp_python", evidence=_line(out, found),
                         facts={"python": ["2.7"]},
                         reason=f"node-gyp {min(gyp_major)} builds native addons with Python 2 only")
    apt = debian_packages_for(out)
    parts = missing_system_parts(out)
    tools = [a or b for a, b in _BUILD_TOOL.findall(out)]
    if _GYP_NO_PYTHON.search(out):
        tools.append("python3")
    for tool in dict.fromkeys(tools):
        parts.append(f"program {tool}")
        if package := {**TOOL_PACKAGES, "python3": "python3"}.get(tool):
            apt.append(package)
    apt = list(dict.fromkeys(apt))
    if not parts and not apt:
        return None
    if apt:
        return Diagnosis(category="installation", kind="system_packages", evidence=log_tail(out),
                         facts={"apt": apt, "parts": parts},
                         reason=f"a native addon's build (node-gyp) lacks {', '.join(parts)}")
    return Diagnosis(category="installation", kind="dependency_build_failed", evidence=log_tail(out),
                     facts={"parts": parts},
                     reason=f"a native addon's build (node-gyp) lacks {', '.join(parts)}, which "
                            "no known Debian package provides")


def _tests(out: str, context: Any) -> Diagnosis | None:
    esm = _REQUIRE_ESM.search(out)
    syntax = _IMPORT_IN_CJS.search(out)
    if found := esm or syntax:
        own = _OWN_LOADER.search(out)
        if own:
            return Diagnosis(category="testing", kind="module_format", evidence=_line(out, found),
                             facts={"loader": ["runner"]},
                             reason="the test runner loads ES modules as CommonJS (its own module "
                                    "system: a transform or its ESM mode is needed, not another "
                                    "Node)")
        need = "require-esm" if esm else "module-detection"
        return Diagnosis(category="testing", kind="module_format", evidence=_line(out, found),
                         facts={"needs": [need]},
                         reason="CommonJS code requires an ES module" if esm else
                         "a file with ES module syntax is loaded as CommonJS")
    root = Path(getattr(context, "repo_root", "") or ".")
    missing: list[str] = []
    dirs: list[str] = []
    for module in dict.fromkeys(_MISSING_MODULE.findall(out)):
        directory = _output_dir(module, root)
        if directory:
            missing.append(module)
            dirs.append(directory)
    if missing:
        return Diagnosis(category="testing", kind="build_output_missing",
                         facts={"modules": missing, "dirs": list(dict.fromkeys(dirs))},
                         evidence=log_tail(out),
                         reason=f"the tests load {missing[0]}, which a build step makes")
    return None


def _output_dir(module: str, root: Path) -> str | None:
    """The top directory a relative (or checkout-absolute) module path lies in, when the
    checkout lacks it: the output of a build."""
    if module.startswith(str(root) + "/") and str(root) not in {".", ""}:
        parts = Path(module).relative_to(root).parts
    elif module.startswith(("./", "../")):
        parts = tuple(p for p in Path(module).parts if p not in {".", ".."})
    else:
        return None
    if len(parts) < 2 or parts[0] == "node_modules":
        return None
    return None if (root / parts[0]).exists() else parts[0]


def _programs(out: str) -> Diagnosis | None:
    programs = [a or b for a, b in _NOT_FOUND.findall(out)]
    programs = list(dict.fromkeys(p for p in programs if p and "/" not in p))
    if not programs:
        return None
    apt = [TOOL_PACKAGES[p] for p in programs if p in TOOL_PACKAGES]
    if apt:
        return Diagnosis(category="installation", kind="system_packages", evidence=log_tail(out),
                         facts={"apt": list(dict.fromkeys(apt)), "parts": programs},
                         reason=f"programs not installed: {', '.join(programs)}")
    return Diagnosis(category="installation", kind="missing_programs", evidence=log_tail(out),
                     facts={"programs": programs},
                     reason=f"scripts run programs that are not installed: {', '.join(programs)}")
