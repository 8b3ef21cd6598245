"""`benchsmith mine --from-git` then `benchsmith build` on a self-built repository with PR history."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from benchsmith.testing.fake_github import FakeGitHub, FakeRepo

from .test_cli_batch import run_cli
from .test_mining_build import BUGGY, FIXED, NEW_TESTS, OLD_TESTS
from .test_setup_engine import PYPROJECT_TEST_EXTRA

pytestmark = pytest.mark.slow

FLAKY_TEST = '''
import os
from calc import parse


def test_flaky_counter():
    path = os.path.expanduser("~/flaky-counter")
    count = int(open(path).read()) if os.path.exists(path) else 0
    open(path, "w").write(str(count + 1))
    assert count % 2 == 0


def test_empty():
    assert parse("") == []
'''


def git(repo: Path, *args: str, date: str = "2023-05-01T12:00:00+00:00") -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
           "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com",
           "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def merge_pr(repo, number: int, files: dict[str, str], message: str, date: str) -> None:
    """Commit `files` on a branch and merge it the way GitHub does."""
    git(repo.path, "checkout", "-q", "-b", f"pr{number}")
    repo.commit(files, message, date=date)
    git(repo.path, "checkout", "-q", "main")
    git(repo.path, "merge", "-q", "--no-ff", f"pr{number}", "-m",
        f"Merge pull request #{number} from dev/pr{number}\n\n{message}", date=date)


def test_mine_then_build_end_to_end(make_repo, tmp_path: Path) -> None:
    repo = make_repo("calc", {"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": BUGGY,
                              "tests/test_calc.py": OLD_TESTS})
    merge_pr(repo, 2, {"src/calc/__init__.py": FIXED, "tests/test_calc.py": NEW_TESTS},
             "Strip spaces\n\nFixes #1", "2023-05-10T12:00:00+00:00")
    merge_pr(repo, 4, {"README.md": "docs\n"}, "Document parse, closes #3", "2023-05-11T12:00:00+00:00")
    merge_pr(repo, 6, {"src/calc/__init__.py": FIXED + "\n# faster\n",
                       "tests/test_calc.py": NEW_TESTS + "\ndef test_one():\n    assert parse('a') == ['a']\n"},
             "Speed up parse, fixes #5", "2023-05-12T12:00:00+00:00")
    empty_fix = FIXED.replace("return [", "if not text:\n        return []\n    return [")
    merge_pr(repo, 8, {"src/calc/__init__.py": empty_fix + "\n# faster\n", "tests/test_flaky.py": FLAKY_TEST},
             "Empty input gives an empty list, fixes #7", "2023-05-13T12:00:00+00:00")
    repos = tmp_path / "repos.txt"
    repos.write_text(f"{repo.path} fixture/calc\n")
    prs = tmp_path / "prs.jsonl"
    mined = run_cli("mine", str(repos), "--from-git", "--out", str(prs))
    assert mined.returncode == 0, mined.stderr
    numbers = [json.loads(line)["number"] for line in prs.read_text().splitlines()]
    assert numbers == [8, 6, 2]  # newest first; the docs-only PR #4 is not valid

    out = tmp_path / "instances.jsonl"
    built = run_cli("build", str(prs), "--out", str(out), "--refdb", str(tmp_path / "ref.sqlite"))
    assert built.returncode == 0, built.stderr
    instances = {r["instance_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert set(instances) == {"fixture__calc-8", "fixture__calc-2"}
    flaky = instances["fixture__calc-8"]
    assert json.loads(flaky["FAIL_TO_PASS"]) == ["tests/test_flaky.py::test_empty"]
    assert flaky["flaky"] == ["tests/test_flaky.py::test_flaky_counter"]
    assert json.loads(instances["fixture__calc-2"]["FAIL_TO_PASS"]) == ["tests/test_calc.py::test_spaces"]
    log = [json.loads(line) for line in (tmp_path / "instances.log.jsonl").read_text().splitlines()]
    assert {o["instance_id"]: o["stage"] for o in log}["fixture__calc-6"] == "no_fail_to_pass"
    funnel = json.loads((tmp_path / "instances.funnel.json").read_text())
    assert funnel["pr_stages"] == {"valid PRs": 3, "setup succeeds": 3, "valid instances": 2}

    verified = run_cli("verify", str(out), "--source", f"fixture/calc={repo.path}")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.count("ok ") == 2
    tampered = instances["fixture__calc-2"]
    tampered["FAIL_TO_PASS"] = json.dumps(["tests/test_calc.py::test_plain"])  # passes before the fix
    out.write_text(json.dumps(tampered) + "\n")
    rejected = run_cli("verify", str(out), "--source", f"fixture/calc={repo.path}")
    assert rejected.returncode == 1 and "not FAIL_TO_PASS any more" in rejected.stdout


def _rev(repo: Path, rev: str) -> str:
    return subprocess.run(["git", "rev-parse", rev], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()


def _serve_pr(fake: FakeRepo, repo: Path, number: int, issue: int, merged_at: str) -> None:
    """What GitHub's API says of a PR merged by `merge_pr`: its real commits and diff."""
    diff = subprocess.run(["git", "diff", "main^1", "main^2"], cwd=repo, check=True,
                          capture_output=True, text=True).stdout
    fake.add_issue(issue, f"Bug {issue}", "parse() is wrong", created_at="2023-05-01T00:00:00Z")
    fake.add_pull(number, f"Fix {issue}", f"Fixes #{issue}", diff=diff, created_at=merged_at,
                  merged_at=merged_at, commits=((merged_at, f"Fix #{issue}"),),
                  shas={"base": _rev(repo, "main^1"), "head": _rev(repo, "main^2"),
                        "merge": _rev(repo, "main")})


def test_refresh_from_the_github_api_builds_from_the_mirror(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """`refresh --github --mirrors DIR`: PRs are read from the API (a fake on 127.0.0.1) and
    built from the repository's mirror, never cloned from github.com; a second run after the
    history grew adds only the newer PR."""
    from .conftest import RepoBuilder

    mirror = RepoBuilder(tmp_path / "mirrors" / "acme+calc" / "repo")
    mirror.commit({"pyproject.toml": PYPROJECT_TEST_EXTRA, "src/calc/__init__.py": BUGGY,
                   "tests/test_calc.py": OLD_TESTS}, "initial")
    fake = FakeRepo(full_name="acme/calc")
    merge_pr(mirror, 2, {"src/calc/__init__.py": FIXED, "tests/test_calc.py": NEW_TESTS},
             "Strip spaces", "2023-05-10T12:00:00+00:00")
    _serve_pr(fake, mirror.path, 2, 1, "2023-05-10T12:00:00Z")
    repos = tmp_path / "repos.txt"
    repos.write_text("acme/calc\n")
    dataset = tmp_path / "dataset"
    with FakeGitHub(fake) as github:
        monkeypatch.setenv("BENCHSMITH_GITHUB_API", github.url)
        first = run_cli("refresh", str(dataset), "--repos", str(repos), "--github",
                        "--mirrors", str(tmp_path / "mirrors"), "--until", "2023-05-11")
        assert first.returncode == 0, first.stderr
        prs = [json.loads(line) for line in (dataset / "2023-05" / "prs.jsonl").read_text().splitlines()]
        assert [(pr["number"], pr["origin"], pr["source"]) for pr in prs] == [
            (2, "github", str(mirror.path))]
        before = (dataset / "2023-05" / "instances.jsonl").read_bytes()
        instance = json.loads(before)
        assert instance["instance_id"] == "acme__calc-2"
        assert json.loads(instance["FAIL_TO_PASS"]) == ["tests/test_calc.py::test_spaces"]
        assert instance["problem_statement"].startswith("Bug 1")

        empty_fix = FIXED.replace("return [", "if not text:\n        return []\n    return [")
        merge_pr(mirror, 4, {"src/calc/__init__.py": empty_fix,
                             "tests/test_calc.py": NEW_TESTS + "\ndef test_empty():\n    assert parse('') == []\n"},
                 "Empty input", "2023-05-12T12:00:00+00:00")
        _serve_pr(fake, mirror.path, 4, 3, "2023-05-12T12:00:00Z")
        second = run_cli("refresh", str(dataset), "--since", "last", "--until", "2023-05-13")
        assert second.returncode == 0, second.stderr
    assert (dataset / "2023-05" / "instances.jsonl").read_bytes() == before
    added = [json.loads(line) for line in (dataset / "2023-05-13" / "instances.jsonl").read_text().splitlines()]
    assert [(i["instance_id"], json.loads(i["FAIL_TO_PASS"])) for i in added] == [
        ("acme__calc-4", ["tests/test_calc.py::test_empty"])]
    asked = {r.path for r in github.requests}
    assert "/repos/acme/calc/pulls/2" in asked and "/repos/acme/calc/pulls/4" in asked
