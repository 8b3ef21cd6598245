"""A self-written npm workspace whose package needs its own node_modules (it pins another
version of a dependency than the root): mined and built on Docker, its instance image keeps
the package's node_modules, and `benchsmith export --build` makes a Node image whose eval.sh
grades the gold patch and the empty patch as the harness does."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from benchsmith.datasets.export import END, START, eval_script
from benchsmith.instance import TaskInstance
from benchsmith.parsing.node_reports import parse_node_report

from .conftest import RepoBuilder
from .test_mining_e2e import merge_pr
from .test_node_instances import _cli

REPO = "fixture/mono"
UNITS = """const ms = require('ms');
function seconds(text) {{
  return ms(text){fix};
}}
module.exports = {{ seconds }};
"""
TESTS = """const {{ describe, it }} = require('node:test');
const assert = require('node:assert');
const {{ seconds }} = require('../index.js');

describe('units', () => {{
  it('uses its own ms', () => {{ assert.strictEqual(require('ms/package.json').version, '2.0.0'); }});
  it('reads zero', () => {{ assert.strictEqual(seconds('0s'), 0); }});{new}
}});
"""
NEW_TEST = """
  it('counts seconds', () => { assert.strictEqual(seconds('2m'), 120); });"""
TEST_FILE = "packages/units/test/units.test.js"
F2P = f"{TEST_FILE}::units > counts seconds"
OWN_MS = "packages/units/node_modules/ms/package.json"


def _workspace(tmp_path: Path) -> Path:
    """The workspace as a git repository with one merged pull request."""
    repo = RepoBuilder(tmp_path / "mono")
    root = {"name": "mono", "version": "1.0.0", "private": True, "workspaces": ["packages/*"],
            "scripts": {"test": "node --test"}, "dependencies": {"ms": "2.1.3"}}
    units = {"name": "units", "version": "1.0.0", "dependencies": {"ms": "2.0.0"}}
    repo.commit({"package.json": json.dumps(root, indent=2), ".nvmrc": "18\n",
                 ".gitignore": "node_modules/\n",
                 "packages/units/package.json": json.dumps(units, indent=2),
                 "packages/units/index.js": UNITS.format(fix=""),
                 TEST_FILE: TESTS.format(new="")}, "initial", date="2023-05-01T12:00:00+00:00")
    merge_pr(repo, 2, {"packages/units/index.js": UNITS.format(fix=" / 1000"),
                       TEST_FILE: TESTS.format(new=NEW_TEST)},
             "Count seconds, not milliseconds\n\nFixes #1", "2023-05-10T12:00:00+00:00")
    return repo.path


def _docker_run(image: str, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", "run", "--rm", image, "sh", "-c", command],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
@pytest.mark.docker
def test_a_workspace_instance_image_keeps_package_node_modules_and_exports(
        tmp_path: Path, shared_node: None) -> None:  # noqa: F811
    from benchsmith.sandbox.docker.base import docker_client
    from benchsmith.sandbox.docker.images import start_from_image

    repo = _workspace(tmp_path)
    (tmp_path / "repos.txt").write_text(f"{repo} {REPO}\n")
    prs, instances = tmp_path / "prs.jsonl", tmp_path / "instances.jsonl"
    assert _cli("mine", str(tmp_path / "repos.txt"), "--from-git", "--out", str(prs)).returncode == 0
    built = _cli("build", str(prs), "--out", str(instances), "--refdb", str(tmp_path / "ref.sqlite"),
                 "--backend", "docker")
    assert built.returncode == 0 and instances.read_text().strip(), built.stdout[-3000:] + built.stderr[-3000:]
    instance = TaskInstance.model_validate(json.loads(instances.read_text().splitlines()[0]))
    assert instance.FAIL_TO_PASS == [F2P] and f"{TEST_FILE}::units > uses its own ms" in instance.PASS_TO_PASS
    assert instance.image and instance.node is not None

    # The instance image replaced the environment's checkout but kept every node_modules.
    kept = _docker_run(instance.image, f"cat {OWN_MS} node_modules/ms/package.json")
    assert kept.returncode == 0 and '"2.0.0"' in kept.stdout and '"2.1.3"' in kept.stdout, kept.stderr

    mirrors = tmp_path / "mirrors"
    (mirrors / "fixture+mono").mkdir(parents=True)
    (mirrors / "fixture+mono" / "repo").symlink_to(repo)
    exported = _cli("export", str(instances), "--out", str(tmp_path / "export"), "--mirrors",
                    str(mirrors), "--build")
    assert exported.returncode == 0, exported.stdout[-2000:] + exported.stderr[-3000:]
    target = tmp_path / "export" / instance.instance_id
    recipe = (target / "Dockerfile").read_text()
    assert f"COPY node /work/.benchsmith-node/node-{instance.node.version}" in recipe
    assert all(f"benchsmith-run {shlex.quote(command)}" in recipe for command in instance.install)
    script = (target / "eval.sh").read_text()
    assert script == eval_script(instance)
    image = exported.stdout.split("(image ", 1)[1].split(")", 1)[0]
    sandbox = start_from_image(image)
    try:
        assert sandbox.exec("node --version").output.strip() == f"v{instance.node.version}"
        assert sandbox.exec(f"test -f {OWN_MS}").returncode == 0
        sandbox.write_file("/tmp/eval.sh", script.encode())
        sandbox.write_file("/tmp/gold.diff", instance.patch.encode())

        def graded(*args: str) -> dict[str, str]:
            output = sandbox.exec("bash /tmp/eval.sh " + " ".join(args), timeout=600).output
            between = output.split(START, 1)[1].split(END, 1)[0]
            return {t.name: t.status.value for t in parse_node_report("tap-files", between)}

        empty, gold = graded(), graded("/tmp/gold.diff")
        assert empty[F2P] == "FAILED" and gold[F2P] == "PASSED", (empty, gold)
        assert all(gold[test] == "PASSED" for test in instance.PASS_TO_PASS), gold
    finally:
        sandbox.close()
        docker_client().images.remove(image, force=True)
