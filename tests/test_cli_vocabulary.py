"""One option vocabulary across the CLI, read from the Typer app itself: the shared options have
one spelling and one default everywhere; deprecated spellings still work and warn once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer

from benchsmith.cli import app

from .test_cli_batch import run_cli

SHARED = ("--timeout", "--stall-timeout", "--jobs", "--backend", "--mirrors", "--instance-ids",
          "--network", "--cpus", "--memory")
INSTANCE_COMMANDS = ("prepare", "evaluate", "verify", "export", "generate")
SELECTING = (*INSTANCE_COMMANDS, "setupbench run", "setupbench check")
OLD = ("--output-dir", "--test-timeout", "--only", "--success-timeout-s")


def _commands(group: Any, prefix: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {}
    context = group.context_class(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None
        if hasattr(command, "list_commands"):
            found.update(_commands(command, f"{prefix}{name} "))
        else:
            found[f"{prefix}{name}"] = command
    return found


COMMANDS = _commands(typer.main.get_command(app))


def _visible(command: Any) -> dict[str, Any]:
    return {opt: param for param in command.params for opt in param.opts
            if not getattr(param, "hidden", False)}


def test_each_shared_option_has_one_default_in_every_command() -> None:
    defaults: dict[str, dict[Any, list[str]]] = {}
    for name, command in COMMANDS.items():
        for option, param in _visible(command).items():
            if option in SHARED:
                defaults.setdefault(option, {}).setdefault(repr(param.default), []).append(name)
    assert set(defaults) == set(SHARED)
    for option, seen in defaults.items():
        assert len(seen) == 1, f"{option} has several defaults: {seen}"
    assert len(defaults["--timeout"]) == 1 and "1800.0" in defaults["--timeout"]
    users = {name for names in defaults["--timeout"].values() for name in names}
    assert {"setup", "setup-batch", "build", "refresh", "prepare", "verify", "evaluate"} <= users


def test_instances_are_given_one_way_everywhere() -> None:
    for name in INSTANCE_COMMANDS:
        params = COMMANDS[name].params
        positional = [p for p in params if p.param_type_name == "argument"]
        assert [p.metavar for p in positional] == ["INSTANCES"], name
        assert not positional[0].required, name
        assert "--instances" in _visible(COMMANDS[name]), name
    for name in SELECTING:
        assert "--instance-ids" in _visible(COMMANDS[name]), name


def test_what_a_command_writes_is_out_and_old_spellings_are_hidden() -> None:
    for name, command in COMMANDS.items():
        visible = _visible(command)
        assert not set(visible) & {*OLD, "--output", "-o"}, name
        assert not [o for o in visible if o != "--out" and o.startswith("--out")], name
        shown = command.get_params(command.context_class(command))
        flags = [p for p in shown if getattr(p, "is_flag", False)]
        assert all(p.metavar == "" for p in flags if not p.hidden), name  # no <bool>


def test_commands_are_listed_in_workflow_order() -> None:
    names = [name.split()[0] for name in COMMANDS]
    order = list(dict.fromkeys(names))
    for earlier, later in (("setup", "setup-batch"), ("setup-batch", "mine"), ("mine", "build"),
                           ("build", "verify"), ("verify", "prepare"), ("prepare", "evaluate"),
                           ("evaluate", "generate"), ("generate", "export"), ("export", "analyze"),
                           ("analyze", "setupbench"), ("setupbench", "refresh"),
                           ("refresh", "docker"), ("docker", "report")):
        assert order.index(earlier) < order.index(later), (earlier, later)


def test_version_and_help_texts() -> None:
    from benchsmith import __version__

    version = run_cli("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"benchsmith {__version__}"
    mine = run_cli("mine", "--help")
    assert "PATH [owner/name]" in mine.stdout
    assert "offline only with --mirrors" in " ".join(mine.stdout.replace("│", " ").split())
    verify = run_cli("verify", "--help")
    assert "--test-network" not in verify.stdout and "<bool>" not in verify.stdout


def test_output_to_a_file_is_not_wrapped_at_80_columns(tmp_path: Path) -> None:
    bad = tmp_path / ("a-rather-long-folder-name-" * 3) / "prs.jsonl"
    bad.parent.mkdir()
    bad.write_text(json.dumps({"repo": "a/b"}) + "\n")
    result = run_cli("build", str(bad))
    line = result.stderr.strip()
    assert len(line) > 80 and "\n" not in line and line.endswith("`benchsmith mine`)")


@pytest.mark.parametrize(
    ("args", "old", "new", "effect"),
    [
        (["setup", "{tmp}/no-such-repo", "--test-timeout", "30"], "--test-timeout", "--timeout",
         "repository path does not exist"),
        (["setupbench", "run", "--builtin", "--only", "nope"], "--only", "--instance-ids",
         "--instance-ids names no task"),
        (["setupbench", "check", "--builtin", "--only", "nope", "--timeout", "9"], "--timeout",
         "--agent-timeout", "--instance-ids names no task"),
    ],
)
def test_deprecated_spellings_warn_once_and_are_read(tmp_path: Path, args: list[str], old: str,
                                                     new: str, effect: str) -> None:
    result = run_cli(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert result.stderr.count(f"warning: {old} is deprecated; use {new}\n") == 1, result.stderr
    assert effect in result.stderr and "Traceback" not in result.stderr


def test_output_dir_still_works_with_a_warning(tmp_path: Path) -> None:
    instances = tmp_path / "instances.jsonl"
    patch = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-A = 1\n+A = 2\n"
    instances.write_text(json.dumps({"instance_id": "a__b-1", "repo": "a/b", "base_commit": "0" * 40,
                                     "python": "3.11", "exclude_newer": "2023-06-01T00:00:00Z",
                                     "patch": patch, "test": ["pytest"]}) + "\n")
    result = run_cli("evaluate", str(instances), "--predictions", "gold", "--source",
                     f"a/b={tmp_path / 'gone'}", "--output-dir", str(tmp_path / "old"))
    assert result.stderr.count("warning: --output-dir is deprecated; use --out\n") == 1
    report = tmp_path / "old/fix-gold/gold/a__b-1/report.json"
    assert report.is_file()
    # the reason of the infrastructure failure, and the real paths in the closing line
    assert f"INFRASTRUCTURE FAILURE a__b-1: repository path does not exist: {tmp_path / 'gone'}" \
        in result.stderr
    assert f"(e.g. {report})" in result.stdout and "<model>" not in result.stdout
    same = run_cli("evaluate", "--instances", str(instances), "--predictions", "gold", "--source",
                   f"a/b={tmp_path / 'gone'}", "--out", str(tmp_path / "new"))
    assert "deprecated" not in same.stderr and (tmp_path / "new/fix-gold/gold/a__b-1").is_dir()


def test_analyze_takes_one_plain_file(tmp_path: Path) -> None:
    missing = run_cli("analyze", str(tmp_path / "lite.jsonl"), "--out", str(tmp_path / "report"))
    assert "expected NAME=FILE" not in missing.stderr
    assert missing.returncode != 0 and "lite.jsonl" in missing.stderr


def test_report_on_a_file_says_what_it_expects(tmp_path: Path) -> None:
    file = tmp_path / "instances.jsonl"
    file.write_text("{}\n")
    result = run_cli("report", str(file))
    assert result.returncode == 2 and "report expects the run directory" in result.stderr


def test_evaluate_without_test_commands_says_to_prepare_first(tmp_path: Path) -> None:
    published = tmp_path / "published.jsonl"
    published.write_text(json.dumps({"instance_id": "a__b-1", "repo": "a/b",
                                     "base_commit": "0" * 40, "patch": ""}) + "\n")
    result = run_cli("evaluate", str(published), "--predictions", "gold")
    assert result.returncode == 2 and "run `benchsmith prepare" in result.stderr
