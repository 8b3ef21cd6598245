"""A self-written JavaScript project (node:test, `.nvmrc` 18) with a merged pull request that
fixes a bug and adds a test: mined from git, built into an instance whose FAIL_TO_PASS comes
from real runs before and after the fix, verified, and evaluated (gold resolves it, an empty
patch does not) on the local backend and on Docker."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchsmith.harness.patches import runnable_test_files, task_patches
from benchsmith.harness.render import render_spec, report_format
from benchsmith.instance import TaskInstance

from .conftest import RepoBuilder
from .test_mining_e2e import merge_pr

REPO = "fixture/slugs"
SLUG = """function slug(text) {{
  return text.toLowerCase(){fix}.split(' ').join('-');
}}
module.exports = {{ slug }};
"""
TESTS = """const {{ describe, it }} = require('node:test');
const assert = require('node:assert');
const {{ slug }} = require('../index.js');

describe('slug', () => {{
  it('lowers case', () => {{ assert.strictEqual(slug('Hello'), 'hello'); }});
  it('joins words', () => {{ assert.strictEqual(slug('a b'), 'a-b'); }});{new}
}});
"""
NEW_TEST = """
  it('trims spaces', () => { assert.strictEqual(slug(' a b '), 'a-b'); });"""
F2P = "test/slug.test.js::slug > trims spaces"
P2P = ["test/slug.test.js::slug > joins words", "test/slug.test.js::slug > lowers case"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    import sys

    return subprocess.run([sys.executable, "-m", "benchsmith.cli", *args], capture_output=True,
                          text=True, timeout=1800)


def _built(tmp_path: Path, *backend: str) -> tuple[Path, Path]:
    """The fixture mined and built; (instances.jsonl, the repository)."""
    repo = RepoBuilder(tmp_path / "slugs")
    repo.commit({"package.json": json.dumps({"name": "slugs", "version": "1.0.0",
                                             "scripts": {"test": "node --test"}}),
                 ".nvmrc": "18\n", ".gitignore": "node_modules/\n",
                 "index.js": SLUG.format(fix=""), "test/slug.test.js": TESTS.format(new="")},
                "initial", date="2023-05-01T12:00:00+00:00")
    merge_pr(repo, 2, {"index.js": SLUG.format(fix=".trim()"),
                       "test/slug.test.js": TESTS.format(new=NEW_TEST)},
             "Trim spaces around a slug\n\nFixes #1", "2023-05-10T12:00:00+00:00")
    repos = tmp_path / "repos.txt"
    repos.write_text(f"{repo.path} {REPO}\n")
    prs, out = tmp_path / "prs.jsonl", tmp_path / "instances.jsonl"
    mined = _cli("mine", str(repos), "--from-git", "--out", str(prs))
    assert mined.returncode == 0 and prs.read_text().strip(), mined.stderr[-2000:]
    built = _cli("build", str(prs), "--out", str(out), "--refdb", str(tmp_path / "ref.sqlite"),
                 *backend)
    assert built.returncode == 0 and out.read_text().strip(), built.stdout[-3000:] + built.stderr[-3000:]
    return out, repo.path


def _evaluate(tmp_path: Path, instances: Path, repo: Path, predictions: str,
              *backend: str) -> dict[str, Any]:
    runs = tmp_path / "runs"
    evaluated = _cli("evaluate", "--instances", str(instances), "--predictions", predictions,
                     "--source", f"{REPO}={repo}", "--run-id", predictions,
                     "--output-dir", str(runs), *backend)
    assert evaluated.returncode == 0, evaluated.stdout[-2000:] + evaluated.stderr[-2000:]
    summary: dict[str, Any] = json.loads((runs / predictions / "summary.json").read_text())[0]
    return summary


def _check_instance(instances: Path) -> TaskInstance:
    instance = TaskInstance.model_validate(json.loads(instances.read_text().splitlines()[0]))
    assert instance.FAIL_TO_PASS == [F2P] and sorted(instance.PASS_TO_PASS) == P2P
    assert instance.runner == "node" and instance.node is not None
    assert instance.node.version.startswith("18.") and instance.test_files == ["test/slug.test.js"]
    assert instance.test_spec is not None and instance.test_spec.node is not None
    assert instance.test == [render_spec(instance.test_spec)]
    return instance


def test_a_node_test_patch_selects_its_javascript_test_files() -> None:
    diff = ("diff --git a/test/slug.test.js b/test/slug.test.js\n--- a/test/slug.test.js\n"
            "+++ b/test/slug.test.js\n@@ -1 +1 @@\n-a\n+b\n"
            "diff --git a/test/fixtures/data.js b/test/fixtures/data.js\n--- a/test/fixtures/data.js\n"
            "+++ b/test/fixtures/data.js\n@@ -1 +1 @@\n-a\n+b\n")
    assert runnable_test_files(diff, "node") == ["test/slug.test.js"]
    assert runnable_test_files(diff) == []
    code = "diff --git a/index.js b/index.js\n--- a/index.js\n+++ b/index.js\n@@ -1 +1 @@\n-a\n+b\n"
    assert task_patches(code + diff, "javascript") == (code, diff)


@pytest.mark.slow
def test_a_node_instance_is_mined_built_verified_and_evaluated_locally(
        tmp_path: Path, shared_node: None) -> None:  # noqa: F811
    instances, repo = _built(tmp_path)
    instance = _check_instance(instances)
    assert instance.test_spec is not None and report_format(instance.test_spec) == "tap-files"
    verified = _cli("verify", str(instances), "--source", f"{REPO}={repo}")
    assert verified.returncode == 0 and verified.stdout.count("ok ") == 1, verified.stdout + verified.stderr
    gold = _evaluate(tmp_path, instances, repo, "gold")
    assert gold["ids"].get("RESOLVED") == [instance.instance_id], gold
    empty = _evaluate(tmp_path, instances, repo, "empty")
    assert not empty["ids"].get("RESOLVED"), empty
    exported = _cli("export", str(instances), "--out", str(tmp_path / "export"), "--no-repo")
    assert exported.returncode == 0, exported.stderr
    target = tmp_path / "export" / instance.instance_id
    assert instance.node is not None and (target / "node" / "bin" / "node").is_file()
    recipe = (target / "Dockerfile").read_text()
    assert f"COPY node /work/.benchsmith-node/node-{instance.node.version}" in recipe
    assert "git clone" in recipe and "COPY repo" not in recipe


@pytest.mark.slow
@pytest.mark.docker
def test_a_node_instance_is_built_and_evaluated_on_docker(tmp_path: Path,
                                                          shared_node: None) -> None:  # noqa: F811
    instances, repo = _built(tmp_path, "--backend", "docker")
    instance = _check_instance(instances)
    assert instance.image, "the instance image on top of the environment image with Node"
    gold = _evaluate(tmp_path, instances, repo, "gold", "--backend", "docker")
    assert gold["ids"].get("RESOLVED") == [instance.instance_id], gold
    empty = _evaluate(tmp_path, instances, repo, "empty", "--backend", "docker")
    assert not empty["ids"].get("RESOLVED"), empty
