"""History that ends at the base commit: a checkout is cut so that nothing in it (refs, tags,
reflogs, stashes, notes, state files, packed or loose or borrowed objects) reaches a later
commit, and the audit finds every such trace. Real git throughout."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchsmith.core import BenchsmithError
from benchsmith.harness.checkout import materialize, resolve
from benchsmith.harness.history import _dir_run, audit, seal_dir

from .conftest import RepoBuilder, _git
from .leaks import tree_contains

SECRET = "FIX-FROM-THE-FUTURE-7f3a9c"


def history_repo(tmp_path: Path) -> tuple[RepoBuilder, str, str]:
    """A repository with a release before the base, the base commit, and a later commit that
    holds SECRET (with a release tag, a branch, a note, a stash and a remote pointing at it)."""
    repo = RepoBuilder(tmp_path / "origin")
    first = repo.commit({"pkg.py": "VALUE = 1\n"}, "first", date="2023-01-01T12:00:00+00:00")
    _git(repo.path, "tag", "-a", "v1.0", "-m", "release 1.0", first, date="2023-01-02T12:00:00+00:00")
    base = repo.commit({"pkg.py": "VALUE = 2\n"}, "base", date="2023-02-01T12:00:00+00:00")
    # a tag on an old commit, but made after the base commit: the base's developers had none
    _git(repo.path, "tag", "-a", "v1.0.1", "-m", "made later", first, date="2023-03-05T12:00:00+00:00")
    later = repo.commit({"pkg.py": f"VALUE = 3  # {SECRET}\n"}, f"fix {SECRET}",
                        date="2023-03-01T12:00:00+00:00")
    _git(repo.path, "tag", "v2.0", later)
    _git(repo.path, "branch", "feature", later)
    _git(repo.path, "notes", "add", "-m", f"note {SECRET}", base)
    (repo.path / "pkg.py").write_text(f"VALUE = 4  # stash {SECRET}\n")
    _git(repo.path, "stash")
    return repo, base, later


def leaky_checkout(tmp_path: Path, source: Path, base: str) -> Path:
    """A clone at `base` with every kind of trace a later commit leaves in a working clone."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", str(source), str(clone)], check=True)
    _git(clone, "fetch", "-q", "origin", "refs/stash:refs/stash", "refs/notes/*:refs/notes/*")
    _git(clone, "checkout", "-q", "--detach", base)
    _git(clone, "update-ref", "ORIG_HEAD", "origin/main")
    (clone / ".git" / "FETCH_HEAD").write_text(f"{_git(clone, 'rev-parse', 'origin/main')}\n")
    _git(clone, "commit-graph", "write", "--reachable")
    return clone


def everything_after(clone: Path, base: str) -> dict[str, str]:
    """What the usual commands show of history past `base`."""
    def run(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=clone, capture_output=True).stdout.decode(
            "utf-8", "replace")

    return {
        "log --all": run("log", "--all", "--format=%H %s", "--not", base),
        "rev-list --all": run("rev-list", "--all", "--not", base),
        "fsck --lost-found": run("fsck", "--lost-found", "--no-progress"),
        "tag": " ".join(t for t in run("tag").split() if t != "v1.0"),
        "cat-file": SECRET if SECRET in run("cat-file", "--batch-all-objects", "--batch") else "",
        "reflog": run("reflog", "--all"),
        "stash": run("stash", "list"),
    }


def test_a_cut_checkout_keeps_nothing_of_later_commits(tmp_path: Path) -> None:
    repo, base, later = history_repo(tmp_path)
    clone = leaky_checkout(tmp_path, repo.path, base)
    with pytest.raises(BenchsmithError, match="reaches past"):
        audit(_dir_run(clone), base, "the clone")
    assert tree_contains(repo.path / ".git", SECRET)  # the source itself holds it

    history = seal_dir(clone, base)

    assert tree_contains(clone, SECRET) == []
    assert not any(everything_after(clone, base).values()), everything_after(clone, base)
    assert history.base_commit == base and history.commits == 2
    assert history.newest_commit_date == "2023-02-01T12:00:00Z"
    assert history.refs == ["refs/tags/v1.0"]  # v2.0 names a later release, v1.0.1 was made later
    # what a build reads of the version is still there, and the checkout is whole
    assert _git(clone, "describe", "--tags") == f"v1.0-1-g{base[:7]}"
    assert _git(clone, "status", "--porcelain") == ""
    assert subprocess.run(["git", "fsck", "--strict"], cwd=clone, capture_output=True).returncode == 0
    assert not (clone / ".git" / "objects" / "info" / "alternates").exists()
    assert later not in _git(clone, "cat-file", "--batch-all-objects", "--batch-check")
    # cutting again changes nothing
    assert seal_dir(clone, base) == history


def test_the_audit_names_each_ref_past_the_commit_or_at_no_commit(tmp_path: Path) -> None:
    repo, base, later = history_repo(tmp_path)
    clone = leaky_checkout(tmp_path, repo.path, base)
    seal_dir(clone, base)
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=clone, input=b"note\n",
                          capture_output=True, check=True).stdout.decode().strip()
    _git(clone, "tag", "a-note", blob)
    _git(clone, "tag", "-a", "-m", "annotated", "an-annotated-note", blob)
    _git(clone, "tag", "-a", "-m", "kept", "kept-annotated", base)
    with pytest.raises(BenchsmithError) as found:
        audit(_dir_run(clone), base, "the clone")
    assert "refs/tags/a-note points at a blob" in str(found.value)
    assert "refs/tags/an-annotated-note points at a blob" in str(found.value)
    assert "kept-annotated" not in str(found.value)
    for tag in ("a-note", "an-annotated-note"):
        _git(clone, "tag", "-d", tag)
    with pytest.raises(BenchsmithError, match="object.s. no kept ref reaches"):
        audit(_dir_run(clone), base, "the clone")  # the notes themselves are still there
    assert seal_dir(clone, base).base_commit == base


def test_materialized_checkouts_of_any_kind_are_cut(tmp_path: Path) -> None:
    repo, base, _ = history_repo(tmp_path)
    checkout = resolve(str(repo.path), rev=base)
    for portable in (False, True):
        target = materialize(checkout, tmp_path / f"checkout-{portable}", portable=portable)
        seal_dir(target, base)
        assert tree_contains(target, SECRET) == []


def test_a_shallow_source_is_cut_at_the_base_and_a_missing_base_is_one_line(tmp_path: Path) -> None:
    repo, base, later = history_repo(tmp_path)
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{repo.path}", str(shallow)],
                   check=True)
    _git(shallow, "checkout", "-q", "--detach", base)
    history = seal_dir(shallow, base)
    assert history.commits == 1  # the graft stays at the base: nothing before it came along
    assert tree_contains(shallow, SECRET) == []
    with pytest.raises(BenchsmithError, match=r"cannot cut the history of .* at 0+: "
                                              r"commit 0+ is not in the checkout"):
        seal_dir(shallow, "0" * 40)
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(BenchsmithError, match="not a git checkout"):
        seal_dir(plain, base)


def test_submodules_are_cut_at_their_own_commit(tmp_path: Path) -> None:
    lib = RepoBuilder(tmp_path / "lib")
    pinned = lib.commit({"lib.py": "X = 1\n"}, "lib", date="2023-01-01T12:00:00+00:00")
    lib.commit({"lib.py": f"X = 2  # {SECRET}\n"}, "lib later", date="2023-04-01T12:00:00+00:00")
    app = RepoBuilder(tmp_path / "app")
    app.commit({"app.py": "import lib\n"}, "app", date="2023-01-02T12:00:00+00:00")
    subprocess.run(["git", "-c", "protocol.file.allow=always", "submodule", "add", "-q",
                    str(lib.path), "vendor/lib"], cwd=app.path, check=True)
    _git(app.path / "vendor" / "lib", "checkout", "-q", pinned)
    base = app.commit({}, "pin lib", date="2023-01-03T12:00:00+00:00")
    target = materialize(resolve(str(app.path), rev=base), tmp_path / "checkout", portable=True)
    assert tree_contains(target, SECRET)  # the submodule's clone has all of lib's history
    history = seal_dir(target, base)
    assert history.submodules == 1
    assert tree_contains(target, SECRET) == []
    assert (target / "vendor" / "lib" / "lib.py").read_text() == "X = 1\n"


@pytest.mark.slow
def test_an_instance_whose_base_is_not_in_its_source_is_one_line_and_the_rest_goes_on(
        make_repo, tmp_path: Path) -> None:
    import json

    from .evaluation_fixture import build_instances, write_instances
    from .test_cli_batch import run_cli

    repo, instances = build_instances(make_repo)
    missing = "0123456789abcdef" * 2 + "01234567"
    instances["fixture__calc-2"] = instances["fixture__calc-2"].model_copy(
        update={"base_commit": missing})
    file = write_instances(tmp_path / "instances.jsonl", instances)
    result = run_cli("evaluate", "--instances", str(file), "--predictions", "gold",
                     "--source", f"fixture/calc={repo}", "--out", str(tmp_path / "runs"))
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    runs = tmp_path / "runs" / "fix-gold" / "gold"
    good = json.loads((runs / "fixture__calc-1" / "report.json").read_text())
    bad = json.loads((runs / "fixture__calc-2" / "report.json").read_text())
    assert good["resolved"] and good["history"]["commits"] == 2
    assert bad["infrastructure_failure"] and not bad["resolved"]
    assert bad["infrastructure_reason"] == f"revision '{missing}' not found in {repo}"
    # a limit that makes no sense ends the command before anything runs, in one line
    nonsense = run_cli("evaluate", "--instances", str(file), "--predictions", "gold",
                       "--backend", "docker", "--memory", "plenty",
                       "--out", str(tmp_path / "other"))
    assert nonsense.returncode == 2
    assert nonsense.stderr.strip() == "error: 'plenty' is not a size (write e.g. 512m, 4g)"
    assert not (tmp_path / "other").exists()
