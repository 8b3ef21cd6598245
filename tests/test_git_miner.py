"""The offline PR miner on real git repositories built by the tests."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from benchsmith.core import BenchsmithError
from benchsmith.mining.closing import closing_links_in
from benchsmith.mining.git_miner import load_issues, mine_git
from tests.conftest import RepoBuilder

REPO = "acme/proj"
PARSE_V1 = "def parse(text):\n    return text.split(',')\n"
PARSE_V2 = "def parse(text):\n    return text.split(',') if text else []\n"


def run_git(cwd: Path, *args: str, date: str = "2023-05-01T12:00:00+00:00",
            stdin: bytes | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Fixture", "GIT_AUTHOR_EMAIL": "fixture@example.com",
           "GIT_COMMITTER_NAME": "Fixture", "GIT_COMMITTER_EMAIL": "fixture@example.com",
           "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          input=stdin).stdout.decode().strip()


def merge(repo: RepoBuilder, branch: str, message: str, date: str) -> str:
    run_git(repo.path, "checkout", "-q", "main")
    run_git(repo.path, "merge", "-q", "--no-ff", "-m", message, branch, date=date)
    return run_git(repo.path, "rev-parse", "HEAD")


def branch(repo: RepoBuilder, name: str) -> None:
    run_git(repo.path, "checkout", "-q", "-b", name, "main")


def build_project(make_repo: Callable[..., RepoBuilder]) -> dict[str, str]:
    """A history with every kind of candidate; returns the interesting commits by name."""
    repo = make_repo("proj", {"src/proj/__init__.py": "", "src/proj/parse.py": PARSE_V1,
                              "tests/test_parse.py": "def test_parse():\n    pass\n",
                              "README.md": "proj\n"}, date="2023-01-01T10:00:00+00:00")
    shas = {"path": str(repo.path)}
    branch(repo, "fix-split")  # PR #3, a merge commit fixing issue #2
    shas["pr3_first"] = repo.commit({"src/proj/parse.py": PARSE_V2}, "Handle empty input",
                                    date="2023-02-01T09:00:00+00:00")
    shas["pr3_head"] = repo.commit({"tests/test_parse.py": "def test_empty():\n    pass\n"},
                                   "Test empty input\n\nFixes #2", date="2023-02-02T09:00:00+00:00")
    run_git(repo.path, "checkout", "-q", "main")
    shas["pr3_base"] = repo.commit({"README.md": "proj, the parser\n"}, "Tweak readme",
                                   date="2023-02-03T09:00:00+00:00")
    shas["pr3_merge"] = merge(repo, "fix-split",
                              "Merge pull request #3 from alice/fix-split\n\nHandle empty input",
                              "2023-02-05T09:00:00+00:00")
    run_git(repo.path, "update-ref", "refs/pull/3/head", shas["pr3_head"])
    branch(repo, "docs")  # PR #14: docs only
    repo.commit({"README.md": "proj docs\n", "docs/index.rst": "Proj\n"}, "Docs",
                date="2023-02-10T09:00:00+00:00")
    merge(repo, "docs", "Merge pull request #14 from bob/docs\n\nCloses #13",
          "2023-02-11T09:00:00+00:00")
    for name in ("oct-a", "oct-b"):  # an octopus merge of branches that are not PRs
        branch(repo, name)
        repo.commit({f"src/proj/{name}.py": "X = 1\n"}, f"Add {name}", date="2023-02-12T09:00:00+00:00")
    run_git(repo.path, "checkout", "-q", "main")
    run_git(repo.path, "merge", "-q", "-m", "Merge branches 'oct-a' and 'oct-b'", "oct-a", "oct-b",
            date="2023-02-13T09:00:00+00:00")
    repo.commit({"tests/test_parse.py": "def test_more():\n    pass\n"}, "Add tests (#16)\n\nfixes #15",
                date="2023-02-20T09:00:00+00:00")
    repo.commit({"src/proj/extra.py": "Y = 1\n", "tests/data/sample.txt": "x\n"},
                "Sample data (#22)\n\nFixes #21", date="2023-02-21T09:00:00+00:00")
    repo.commit({"src/proj/parse.py": PARSE_V1, "tests/test_parse.py": "def test_x():\n    pass\n"},
                "Refactor (#18)\n\nSee #17 for context", date="2023-02-25T09:00:00+00:00")
    branch(repo, "parse-fix")  # the branch GitHub squashed into the PR #12 commit
    shas["pr12_head"] = repo.commit({"src/proj/parse.py": "WIP\n"}, "WIP parse",
                                    date="2023-02-26T09:00:00+00:00")
    run_git(repo.path, "update-ref", "refs/pull/12/head", shas["pr12_head"])
    run_git(repo.path, "checkout", "-q", "main")
    run_git(repo.path, "branch", "-q", "-D", "parse-fix")
    shas["pr12_squash"] = repo.commit(
        {"src/proj/parse.py": PARSE_V2, "tests/test_parse.py": "def test_y():\n    pass\n"},
        "Fix parsing (#12)\n\nFixes #7", date="2023-03-01T09:00:00+00:00")
    branch(repo, "unmerged")  # PR #20 never lands
    run_git(repo.path, "update-ref", "refs/pull/20/head", repo.commit(
        {"src/proj/parse.py": "X = 2\n", "tests/test_parse.py": "Y = 2\n"}, "Fix it\n\nFixes #19"))
    run_git(repo.path, "checkout", "-q", "main")
    run_git(repo.path, "branch", "-q", "-D", "unmerged")
    (repo.path / "src/proj/parse.py").write_text(PARSE_V1)
    (repo.path / "tests/test_parse.py").write_text("def test_z():\n    pass\n")
    repo.commit({}, "Cafe fix (#24)\n\nResolves #23", date="2023-03-05T09:00:00+00:00")
    # Rewrite it with a Latin-1 message (git commit would convert it to UTF-8).
    raw = subprocess.run(["git", "cat-file", "commit", "HEAD"], cwd=repo.path, check=True,
                         capture_output=True).stdout.replace(b"Cafe", b"Caf\xe9")
    run_git(repo.path, "update-ref", "refs/heads/main",
            run_git(repo.path, "hash-object", "-t", "commit", "-w", "--stdin", stdin=raw))
    return shas


def issues_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "issues.jsonl"
    path.write_text(json.dumps({"number": 2, "title": "Empty input crashes", "body": "parse('') fails",
                                "comments": [
                                    {"created_at": "2023-01-15T00:00:00Z", "body": "Seen it too"},
                                    {"created_at": "2023-02-10T00:00:00Z", "body": "Fixed by #3"}]})
                    + "\n")
    return path


def mine(source: str, issues_file: Path | None = None, **kwargs: object) -> tuple[list, dict[int, str]]:
    skipped: dict[int, str] = {}
    issues = load_issues(issues_file) if issues_file else None
    prs = list(mine_git(source, REPO, issues=issues,
                        on_skip=lambda number, why: skipped.setdefault(number, why),
                        **kwargs))  # type: ignore[arg-type]
    return prs, skipped


def test_mines_merge_and_squash_prs_newest_first(make_repo: Callable[..., RepoBuilder]) -> None:
    shas = build_project(make_repo)
    prs, skipped = mine(shas["path"])
    # Only a closing keyword links an issue: "See #17" (PR 18) does not.
    assert [pr.number for pr in prs] == [24, 12, 3]
    assert skipped == {14: "no test change", 16: "only test changes", 18: "no issue reference",
                       20: "not merged", 22: "the test changes touch no test module (only test "
                       "data, fixtures or helpers)"}
    pr3 = prs[2]
    assert (pr3.base_commit, pr3.merge_commit, pr3.head_commit) == (
        shas["pr3_base"], shas["pr3_merge"], shas["pr3_head"])
    assert "src/proj/parse.py" in pr3.patch and "tests/" not in pr3.patch
    assert "README" not in pr3.patch  # the readme changed on main, not in the PR
    assert "tests/test_parse.py" in pr3.test_patch and "parse.py" not in pr3.test_patch.replace(
        "test_parse.py", "")
    assert pr3.issue_numbers == [2] and pr3.problem_source == "pr"
    assert pr3.title == "Handle empty input" and pr3.problem_statement.startswith("Handle empty input")
    assert pr3.created_at == "2023-02-01T09:00:00+00:00"
    assert pr3.merged_at == "2023-02-05T09:00:00+00:00"
    assert (pr3.origin, pr3.source, pr3.repo) == ("git", shas["path"], REPO)


def test_squash_commit_is_a_pr_with_commit_problem(make_repo: Callable[..., RepoBuilder]) -> None:
    shas = build_project(make_repo)
    prs, _ = mine(shas["path"])
    pr12 = next(pr for pr in prs if pr.number == 12)
    assert pr12.merge_commit == shas["pr12_squash"]
    assert pr12.base_commit == run_git(Path(shas["path"]), "rev-parse", f"{shas['pr12_squash']}^")
    assert pr12.issue_numbers == [7] and pr12.problem_source == "commit"
    assert pr12.title == "Fix parsing" and pr12.problem_statement == "Fix parsing\nFixes #7\n"
    assert pr12.head_commit == shas["pr12_head"]  # from refs/pull/12/head
    assert pr12.created_at == "2023-02-26T09:00:00+00:00"  # its first commit
    assert pr12.merged_at == "2023-03-01T09:00:00+00:00"
    latin = prs[0]
    assert latin.number == 24 and latin.issue_numbers == [23] and latin.title == "Caf\ufffd fix"


def test_problem_statement_and_hints_from_issues_file(make_repo: Callable[..., RepoBuilder],
                                                      tmp_path: Path) -> None:
    shas = build_project(make_repo)
    prs, skipped = mine(shas["path"], issues_file=issues_jsonl(tmp_path))
    pr3 = next(pr for pr in prs if pr.number == 3)
    assert pr3.problem_source == "issue"
    assert pr3.problem_statement == "Empty input crashes\nparse('') fails\n"
    assert pr3.hints_text == "Seen it too"  # the later comment is after the PR's first commit
    assert skipped[12] == "issue #7 is not in the issues file"  # the file is the authority


def test_max_prs_caps_valid_prs(make_repo: Callable[..., RepoBuilder]) -> None:
    shas = build_project(make_repo)
    assert [pr.number for pr in mine(shas["path"], max_prs=2)[0]] == [24, 12]
    assert mine(shas["path"], max_prs=0)[0] == []


def test_source_is_left_unchanged(make_repo: Callable[..., RepoBuilder]) -> None:
    shas = build_project(make_repo)
    path = Path(shas["path"])
    before = [run_git(path, "for-each-ref"), run_git(path, "status", "--porcelain"),
              sorted(p.name for p in (path / ".git").iterdir())]
    mine(shas["path"], issues_file=None)
    after = [run_git(path, "for-each-ref"), run_git(path, "status", "--porcelain"),
             sorted(p.name for p in (path / ".git").iterdir())]
    assert after == before


def test_bare_mirror_and_working_clone(make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    shas = build_project(make_repo)
    run_git(tmp_path, "clone", "-q", "--mirror", shas["path"], "bare.git")
    prs, skipped = mine(str(tmp_path / "bare.git"))
    assert [pr.number for pr in prs] == [24, 12, 3] and skipped[20] == "not merged"
    # A working clone on a feature branch still mines the default branch (origin/HEAD).
    run_git(tmp_path, "clone", "-q", shas["path"], "work")
    run_git(tmp_path / "work", "checkout", "-q", "-b", "feature", f"{shas['pr3_base']}")
    assert [pr.number for pr in mine(str(tmp_path / "work"))[0]] == [24, 12, 3]


def test_pr_merged_by_a_plain_branch_merge_is_found_through_its_ref(
        make_repo: Callable[..., RepoBuilder]) -> None:
    repo = make_repo("proj", {"src/m.py": "A = 1\n", "tests/test_m.py": "", "CHANGES": ""})
    branch(repo, "feature")
    head = repo.commit({"src/m.py": "A = 2\n", "tests/test_m.py": "B = 1\n"}, "Fix A\n\nfix #4",
                       date="2023-05-02T00:00:00+00:00")
    run_git(repo.path, "checkout", "-q", "main")
    fork = repo.commit({"CHANGES": "later\n"}, "Changelog", date="2023-05-03T00:00:00+00:00")
    merge(repo, "feature", "Merge branch 'feature'", "2023-05-04T00:00:00+00:00")
    run_git(repo.path, "update-ref", "refs/pull/5/head", head)
    prs, _ = mine(str(repo.path))
    assert len(prs) == 1 and prs[0].number == 5 and prs[0].head_commit == head
    assert prs[0].base_commit == run_git(repo.path, "merge-base", head, fork)
    assert "CHANGES" not in prs[0].patch and prs[0].issue_numbers == [4]


def test_fast_forwarded_pr_needs_its_merge_ref(make_repo: Callable[..., RepoBuilder]) -> None:
    repo = make_repo("proj", {"src/m.py": "A = 1\n", "tests/test_m.py": ""})
    old_tip = run_git(repo.path, "rev-parse", "HEAD")
    branch(repo, "feature")
    head = repo.commit({"src/m.py": "A = 2\n", "tests/test_m.py": "B = 1\n"}, "Fix A\n\nfix #4")
    test_merge = merge(repo, "feature", "Merge abc into def", "2023-05-02T00:00:00+00:00")
    run_git(repo.path, "reset", "-q", "--hard", old_tip)
    run_git(repo.path, "merge", "-q", "--ff-only", "feature")
    run_git(repo.path, "update-ref", "refs/pull/6/head", head)
    assert mine(str(repo.path)) == ([], {6: "fast-forwarded without refs/pull/N/merge: base unknown"})
    run_git(repo.path, "update-ref", "refs/pull/6/merge", test_merge)
    prs, _ = mine(str(repo.path))
    assert [(pr.number, pr.base_commit, pr.merge_commit) for pr in prs] == [(6, old_tip, head)]


def test_root_commit_candidate_and_not_a_repository(make_repo: Callable[..., RepoBuilder],
                                                    tmp_path: Path) -> None:
    repo = make_repo("proj", {"src/m.py": "A = 1\n"})
    run_git(repo.path, "commit", "-q", "--amend", "-m", "Import (#1)\n\nfixes #9")
    assert mine(str(repo.path)) == ([], {1: "no parent commit"})
    (tmp_path / "plain").mkdir()
    with pytest.raises(BenchsmithError, match="not a git repository"):
        list(mine_git(str(tmp_path / "plain"), REPO))


def test_closing_keywords() -> None:
    text = ("Fixes #1, #2 and #3. closes acme/proj#4, resolved: https://github.com/acme/proj/issues/5\n"
            "fix other/repo#6; prefixes #7; see #8; Fixed #10 (#10)")
    assert list(closing_links_in([text], REPO, own_number=10)) == [1, 2, 3, 4, 5]
    links = closing_links_in(["FIXES ACME/PROJ#11\n#12 is related", "Fix #13 & #14"], REPO, 0)
    assert list(links.items()) == [(11, "FIXES ACME/PROJ#11"), (13, "Fix #13 & #14"),
                                   (14, "Fix #13 & #14")]


def test_references_inside_code_or_commands_link_nothing() -> None:
    message = ("Send CAN frames with the right ID (#40)\n\n"
               "Reproduce with:\n\n    cansend vcan0 00012332#12\n"
               "$ fix #5 && cansend vcan0 1#12345678\n"
               "The log says `fixes #6`.\n\n```\nfixes #7\n```\n")
    assert closing_links_in([message], REPO, own_number=40) == {}
    assert closing_links_in([message + "\nFixes #3"], REPO, own_number=40) == {3: "Fixes #3"}


def test_with_an_issues_file_the_issue_must_be_there_and_older(
        make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    shas = build_project(make_repo)
    issues = tmp_path / "issues.jsonl"
    issues.write_text(json.dumps({"number": 2, "title": "Empty input", "body": "crash",
                                  "created_at": "2023-01-01T00:00:00Z"}) + "\n"
                      + json.dumps({"number": 7, "title": "Parsing", "body": "wrong",
                                    "created_at": "2023-12-01T00:00:00Z"}) + "\n")
    prs, skipped = mine(shas["path"], issues_file=issues)
    assert [pr.number for pr in prs] == [3]
    assert prs[0].issue_link.startswith("#2: ")
    assert skipped[12] == "issue #7 was opened after the PR"
    assert skipped[24] == "issue #23 is not in the issues file"


def test_bad_issue_lines_and_huge_messages_are_one_line_each_and_mining_goes_on(
        make_repo: Callable[..., RepoBuilder], tmp_path: Path) -> None:
    from .test_cli_batch import run_cli

    shas = build_project(make_repo)
    repo = make_repo("huge", {"src/proj/__init__.py": "", "src/proj/parse.py": PARSE_V1,
                              "tests/test_parse.py": "def test_parse():\n    pass\n"})
    repo.commit({"src/proj/parse.py": PARSE_V2, "tests/test_parse.py": "def test_y():\n    pass\n"},
                "Fix parse (#31)\n\nFixes #30\n\n" + "log line\n" * 12_000, date="2023-03-01T00:00:00Z")
    issues = tmp_path / "issues.jsonl"
    issues.write_text(issues_jsonl(tmp_path).read_text() + "{not json\n" + json.dumps({"title": "no number"})
                      + "\n" + json.dumps({"number": 30, "title": "Parse", "body": "broken",
                                            "created_at": "2023-01-01T00:00:00Z"}) + "\n")
    repos = tmp_path / "repos.txt"
    repos.write_text(f"{shas['path']} {REPO}\n")
    out = tmp_path / "prs.jsonl"
    result = run_cli("mine", str(repos), "--from-git", "--issues", str(issues), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "issues.jsonl:2: not an issue record" in result.stderr
    assert "issues.jsonl:3: not an issue record (no number): skipped" in result.stderr
    assert [json.loads(line)["number"] for line in out.read_text().splitlines()] == [3]
    # without issue texts, a 100 KB commit message is no problem statement: skipped, one reason
    repos.write_text(f"{repo.path} fixture/huge\n")
    result = run_cli("mine", str(repos), "--from-git", "--out", str(tmp_path / "huge.jsonl"))
    assert result.returncode == 0, result.stderr
    [log] = map(json.loads, (tmp_path / "huge.jsonl.repos.jsonl").read_text().splitlines())
    assert not log["error"] and log["kept"] == 0
    assert any(reason.startswith("problem statement of 108,") for reason in log["skipped"])


def _blob(text: str) -> str:
    return f"data {len(text.encode())}\n{text}\n"


def test_scans_5000_commits_in_seconds(tmp_path: Path) -> None:
    stream = ["commit refs/heads/main\nmark :1\ncommitter F <f@x> 1600000000 +0000\n"
              + _blob("root") + "M 644 inline README\n" + _blob("r")]
    for n in range(1, 2501):  # 2500 PR merges, each with one side commit
        stamp = 1_600_000_000 + n * 100
        files = (f"M 644 inline src/m{n % 7}.py\n" + _blob(str(n))
                 + f"M 644 inline tests/test_m{n % 5}.py\n" + _blob(str(n)))
        stream.append(f"commit refs/heads/side\nmark :{2 * n}\ncommitter F <f@x> {stamp} +0000\n"
                      + _blob(f"side {n}") + f"from :{2 * n - 1}\n" + files)
        message = f"Merge pull request #{n} from f/b{n}\n\nChange {n}"
        stream.append(f"commit refs/heads/main\nmark :{2 * n + 1}\ncommitter F <f@x> {stamp + 50} +0000\n"
                      + _blob(message + (" fixes #9999" if n % 500 == 0 else ""))
                      + f"from :{2 * n - 1}\nmerge :{2 * n}\n" + files)
    repo = tmp_path / "big"
    run_git(tmp_path, "init", "-q", "-b", "main", "big")
    run_git(repo, "fast-import", "--quiet", stdin="".join(stream).encode())
    started = time.perf_counter()
    prs, skipped = mine(str(repo))
    elapsed = time.perf_counter() - started
    assert [pr.number for pr in prs] == [2500, 2000, 1500, 1000, 500]
    assert len(skipped) == 2495 and set(skipped.values()) == {"no issue reference"}
    assert elapsed < 10, f"mining 5001 commits took {elapsed:.1f}s"
