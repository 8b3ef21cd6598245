"""Context building, patch extraction, prompts and the gold-to-custom-diff rewrite, without a
model; and the guarantee that nothing reaches the LLM layer without --model."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from benchsmith.evaluation.custom_diff import apply_custom_diff
from benchsmith.generation.context import build_context, render_file
from benchsmith.generation.extract import ExtractionError, extract_patch, extract_unified
from benchsmith.generation.gold import as_custom_diff, patched_texts
from benchsmith.generation.prompts import generation_prompt, judge_prompt
from benchsmith.generation.repo import RepoSnapshot
from benchsmith.instance import TaskInstance

SRC = Path(__file__).resolve().parent.parent / "src" / "benchsmith"
UNIFIED = "--- a/x.py\n+++ b/x.py\n@@ -1 +1,2 @@\n a = 1\n+b = 2\n"
MODULE = "import os\n\n\ndef first():\n    return 1\n\n\ndef second():\n    return 2\n"


def test_a_unified_diff_is_found_fenced_or_bare_and_prose_is_refused() -> None:
    assert extract_unified(f"Here:\n```diff\n{UNIFIED}```\nDone.") == UNIFIED
    assert extract_unified(f"Sure.\n{UNIFIED}") == UNIFIED
    assert extract_patch(f"```python\n{UNIFIED}```", "custom") == (UNIFIED, "unified")
    custom = "```custom-diff\ndiff\nx.py\ninsert\nEOF\ndef t():\n    pass\nend diff\n```"
    assert extract_patch(custom, "unified") == (
        "diff\nx.py\ninsert\nEOF\ndef t():\n    pass\nend diff\n", "custom")
    with pytest.raises(ExtractionError, match="no custom diff block"):
        extract_patch("I cannot do that. --- sorry", "custom")
    with pytest.raises(ExtractionError, match="no unified diff"):
        extract_patch("```diff\n--- a/x.py\nnot a hunk\n```", "unified")


def test_a_file_over_budget_is_cut_between_whole_functions() -> None:
    whole = render_file("m.py", MODULE)
    assert whole is not None and whole.startswith("[start of m.py]\n1 import os\n")
    cut = render_file("m.py", MODULE, keep_tokens=32)
    assert cut is not None and "5     return 1" in cut and "def second" not in cut
    assert "(4 more lines not shown)" in cut
    assert render_file("m.py", MODULE, keep_tokens=5) is None


def test_bm25_finds_the_file_the_issue_is_about_and_the_oracle_the_gold_files(make_repo) -> None:
    repo = make_repo("ctx", {"src/pkg/parser.py": "def parse_tokens(text):\n    return text.split()\n",
                             "src/pkg/render.py": "def render_html(page):\n    return '<p>' + page\n",
                             "tests/test_parser.py": "from pkg.parser import parse_tokens\n",
                             "README.md": "A package.\n"})
    snapshot = RepoSnapshot(str(repo.path / ".git"), "HEAD")
    patch = "diff --git a/src/pkg/render.py b/src/pkg/render.py\n--- a/src/pkg/render.py\n+++ b/src/pkg/render.py\n"
    instance = TaskInstance(instance_id="i", repo="o/ctx", base_commit="HEAD", patch=patch,
                            problem_statement="parse_tokens splits wrongly on tabs in the parser")
    bm25 = build_context(instance, "test", "bm25", snapshot, budget=10_000)
    assert bm25.files[0] == "src/pkg/parser.py" and "tests/test_parser.py" in bm25.files
    assert bm25.files.index("tests/test_parser.py") > bm25.files.index("src/pkg/parser.py")
    oracle = build_context(instance, "fix", "oracle", snapshot, budget=10_000)
    assert oracle.files == ["src/pkg/render.py"] and "1 def render_html(page):" in oracle.text
    tight = build_context(instance, "fix", "bm25", snapshot, budget=30)
    assert tight.tokens <= 30 and len(tight.files) == 1


def test_gold_patches_rewritten_in_the_custom_format_apply_to_the_same_text() -> None:
    old = MODULE
    new = MODULE.replace("import os\n", "import os\nimport sys\n").replace(
        "return 2", "return 22") + "\n\ndef third():\n    return 3\n"
    import difflib

    patch = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                         "a/m.py", "b/m.py"))
    assert patched_texts(patch, {"m.py": old}.get) == {"m.py": new}
    blocks = as_custom_diff(patch, {"m.py": old}.get)
    assert blocks.count("diff\nm.py\n") == 3  # the import, the rewrite, the new function
    applied = apply_custom_diff(blocks, {"m.py": old}.get).files["m.py"]
    assert "import sys" in applied and "return 22" in applied and "def third" in applied


def test_prompts_are_versioned_files() -> None:
    text, version = generation_prompt("test", "custom", "the issue", "[start of a.py]\n")
    assert "<issue>\nthe issue\n</issue>" in text and "end diff" in text and "$" not in text
    assert version.startswith("test+custom_diff_format.v1@")
    fix, fix_version = generation_prompt("fix", "unified", "x", "")
    assert "```diff" in fix and fix_version != version
    assert judge_prompt("x", "boom")[1].startswith("libro_judge.v1@")


def test_no_llm_code_is_reachable_without_the_model_option() -> None:
    """Only `benchsmith generate` and the setup engine's model loader (called only with
    --model) import the LLM layer, the loader inside the function; nothing at import time loads
    it or an LLM SDK, and the setup engine repairs by rules unless given a model."""
    heavy = ("benchsmith.llm", "benchsmith.generation", "openai", "anthropic", "bm25s")
    importers = set()
    for path in SRC.rglob("*.py"):
        relative = path.relative_to(SRC).parts
        if relative[0] in ("llm", "generation") or relative[:2] == ("testing", "fake_openai.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == h or n.startswith(h + ".") for n in names for h in heavy):
                importers.add("/".join(relative))
    assert importers == {"cli/generate.py", "setup/model_repair.py"}
    loader = next(node for node in ast.parse((SRC / "setup" / "model_repair.py").read_text()).body
                  if isinstance(node, ast.FunctionDef) and node.name == "load_llm")
    assert any(isinstance(n, ast.ImportFrom) and n.module == "benchsmith.llm" for n in ast.walk(loader))
    from benchsmith.setup.engine import SetupEngine
    from benchsmith.setup.repair import RuleRepairer

    assert type(SetupEngine().repairer) is RuleRepairer
    probe = ("import sys, benchsmith.cli, benchsmith.testing; "
             f"print([m for m in {heavy!r} if m in sys.modules])")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"
    refused = subprocess.run([sys.executable, "-m", "benchsmith.cli", "generate", "--instances",
                              "i.jsonl", "--out", "p.jsonl"], capture_output=True, text=True)
    assert refused.returncode == 2 and refused.stderr.strip() == (
        "error: generate needs a model: --model PROVIDER:MODEL (e.g. openai:gpt-4o-mini)")


def test_failures_are_recorded_per_instance_and_redone_on_resume(
        make_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from benchsmith.generation import GenerateOptions, Generator
    from benchsmith.llm import LLM, CallCache, OpenAIConfig, Prices, Script
    from benchsmith.testing.fake_openai import FakeLLMServer

    repo = make_repo("budget", {"calc.py": "def add(a, b):\n    return a - b\n"})
    commit = repo.commit({"README.md": "x\n"})
    issues = ["add subtracts", "add is wrong again", "add fails a third time"]
    instances = [TaskInstance(instance_id=f"i{n}", repo="o/budget", base_commit=commit,
                              problem_statement=text) for n, text in enumerate(issues)]
    answer = "```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n```"
    table = tmp_path / "prices.toml"
    table.write_text('["openai:m"]\ninput = 1000.0\noutput = 1000.0\n')
    monkeypatch.setenv("BENCHSMITH_PRICES", str(table))
    with FakeLLMServer(Script(rules=[], default=answer)) as server:
        def generator(max_cost: float | None) -> Generator:
            config = OpenAIConfig(model="m", base_url=server.openai_url, max_retries=1, timeout_s=5)
            llm = LLM(config, CallCache(tmp_path / "llm.sqlite"), Prices.load())
            llm.provider.sleep = lambda s: None
            options = GenerateOptions(method="zeroshot", mode="fix", context="oracle",
                                      max_cost_usd=max_cost)
            return Generator(llm, options, tmp_path / "fixes.jsonl", {"o/budget": str(repo.path)})

        server.add_fault("server_error", times=2)  # the first instance's call and its retry
        first = generator(max_cost=0.01).run(instances)
        assert [r.failure for r in first] == ["provider", None, "budget"]
        assert "HTTP 500" in first[0].error and first[1].model_patch.startswith("--- a/calc.py")
        assert "cost budget of $0.01 is spent" in first[2].error and first[2].llm_calls == 0
        assert first[1].llm_cost_usd > 0.01
        second = generator(max_cost=None).run(instances)  # resumed: the two failures redone
        assert [r.instance_id for r in second] == ["i0", "i2"]
        assert all(r.failure is None for r in second)
        assert server.answered() == 3


def test_parallel_generation_keeps_each_instances_usage_to_itself(
        make_repo, tmp_path: Path) -> None:
    from benchsmith.generation import GenerateOptions, Generator
    from benchsmith.llm import LLM, CallCache, OpenAIConfig, Script
    from benchsmith.testing.fake_openai import FakeLLMServer

    repo = make_repo("par", {"calc.py": "def add(a, b):\n    return a - b\n"})
    commit = repo.commit({"README.md": "x\n"})
    instances = [TaskInstance(instance_id=f"p{n}", repo="o/par", base_commit=commit,
                              problem_statement=f"issue {n}: " + "add subtracts " * n)
                 for n in range(1, 5)]
    answer = "```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n```"
    with FakeLLMServer(Script(default=answer)) as server:
        server.add_fault("slow", times=4, delay_s=0.5)
        llm = LLM(OpenAIConfig(model="m", base_url=server.openai_url, timeout_s=5),
                  CallCache(tmp_path / "llm.sqlite"))
        options = GenerateOptions(method="zeroshot", mode="fix", context="oracle")
        records = Generator(llm, options, tmp_path / "par.jsonl", {"o/par": str(repo.path)}).run(
            instances, jobs=4)
    assert sorted(r.instance_id for r in records) == ["p1", "p2", "p3", "p4"]
    assert all(r.llm_calls == 1 and not r.error for r in records)
    prompts = {call.messages[0]: call for call in server.calls}
    assert len(prompts) == 4
    tokens = sorted(r.llm_tokens for r in records)
    assert len(set(tokens)) == 4  # each record counts its own (longer issue, more tokens)
    assert sum(tokens) == llm.usage.llm_tokens
