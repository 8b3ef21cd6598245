"""Tests for SWT-bench's custom diff format: parsing, in-place application, unified diff output."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchsmith.core import BenchsmithError
from benchsmith.evaluation.custom_diff import (
    CustomDiffError,
    CustomDiffResult,
    DiffBlock,
    apply_custom_diff,
    format_custom_diff,
    is_custom_diff,
    parse_custom_diff,
    unified_diff,
)
from benchsmith.evaluation.custom_diff_apply import SCAN_NOTE, analyze, scan


def src(text: str) -> str:
    """Dedent a triple-quoted source written as '''\\ (first line right after the quotes)."""
    return textwrap.dedent(text)


def block(path: str, action: str, location: int | str, code: str) -> str:
    return f"diff\n{path}\n{action}\n{location}\n{src(code).strip(chr(10))}\nend diff\n"


def run(prediction: str, files: dict[str, str | None]) -> CustomDiffResult:
    return apply_custom_diff(prediction, files.get)


@dataclass
class Case:
    originals: dict[str, str | None]
    prediction: str
    expected: dict[str, str]  # the changed files


CASES: dict[str, Case] = {
    "decorated function": Case(
        {"t.py": src('''\
            import pytest


            # helpers below
            @pytest.mark.slow
            @pytest.mark.parametrize("n", [1, 2])
            def test_a(n):  # old
                assert n


            def test_b():
                # untouched comment
                pass
            ''')},
        block("t.py", "rewrite", 6, '''\
            @pytest.mark.parametrize("n", [3])
            def test_a(n):
                assert n == 3
            '''),
        {"t.py": src('''\
            import pytest


            # helpers below
            @pytest.mark.parametrize("n", [3])
            def test_a(n):
                assert n == 3


            def test_b():
                # untouched comment
                pass
            ''')}),
    "method re-indented": Case(
        {"t.py": src('''\
            class TestFoo:
                x = 1

                def test_bar(self):
                    assert self.x == 1

                # trailing member comment
                def test_baz(self):
                    pass
            ''')},
        block("t.py", "rewrite", 4, '''\
            def test_bar(self):
                assert self.x == 2

                assert True
            '''),
        {"t.py": src('''\
            class TestFoo:
                x = 1

                def test_bar(self):
                    assert self.x == 2

                    assert True

                # trailing member comment
                def test_baz(self):
                    pass
            ''')}),
    "nested class": Case(
        {"t.py": src('''\
            class TestOuter:
                class TestInner:
                    def test_deep(self):
                        return 1

                def test_shallow(self):
                    return 2
            ''')},
        block("t.py", "rewrite", 3, '''\
                def test_deep(self):
                    return 3
            '''),
        {"t.py": src('''\
            class TestOuter:
                class TestInner:
                    def test_deep(self):
                        return 3

                def test_shallow(self):
                    return 2
            ''')}),
    "async def": Case(
        {"t.py": src('''\
            import asyncio


            async def test_async():
                await asyncio.sleep(0)


            def other():
                pass
            ''')},
        block("t.py", "rewrite", 4, '''\
            async def test_async():
                await asyncio.sleep(1)
            '''),
        {"t.py": src('''\
            import asyncio


            async def test_async():
                await asyncio.sleep(1)


            def other():
                pass
            ''')}),
    "whole class": Case(
        {"t.py": src('''\
            import unittest


            class TestThing(unittest.TestCase):
                def test_one(self):
                    self.assertTrue(True)


            if __name__ == "__main__":
                unittest.main()
            ''')},
        block("t.py", "Rewrite", 5, '''\
            class TestThing(unittest.TestCase):
                def test_one(self):
                    self.assertEqual(1, 1)

                def test_two(self):
                    self.assertEqual(2, 2)
            '''),
        {"t.py": src('''\
            import unittest


            class TestThing(unittest.TestCase):
                def test_one(self):
                    self.assertEqual(1, 1)

                def test_two(self):
                    self.assertEqual(2, 2)


            if __name__ == "__main__":
                unittest.main()
            ''')}),
    "insert BOF": Case(
        {"t.py": src('''\
            #!/usr/bin/env python
            # -*- coding: utf-8 -*-
            """Tests for things.

            More text.
            """
            from __future__ import annotations

            import os
            ''')},
        block("t.py", "insert", "bof", "import pytest"),
        {"t.py": src('''\
            #!/usr/bin/env python
            # -*- coding: utf-8 -*-
            """Tests for things.

            More text.
            """
            from __future__ import annotations

            import pytest

            import os
            ''')}),
    "insert EOF": Case(
        {"t.py": "def test_a():\n    pass\n"},
        block("t.py", "insert", "EOF", "def test_b():\n    assert 1"),
        {"t.py": "def test_a():\n    pass\n\n\ndef test_b():\n    assert 1\n"}),
    "insert in class": Case(
        {"t.py": src('''\
            import pytest


            class TestFoo:
                def test_a(self):
                    assert 1

                def test_b(self):
                    assert 2


            def test_module():
                pass
            ''')},
        block("t.py", "insert", 6, "def test_new(self):\n    assert 3")
        + block("t.py", "insert", 12, "@pytest.fixture\ndef value():\n    return 4")
        + block("t.py", "insert", 6, "def test_free():\n    assert 5"),
        {"t.py": src('''\
            import pytest


            class TestFoo:
                def test_a(self):
                    assert 1

                def test_new(self):
                    assert 3

                def test_b(self):
                    assert 2

                @pytest.fixture
                def value():
                    return 4


            def test_free():
                assert 5


            def test_module():
                pass
            ''')}),
    "insert in multi-line statement": Case(
        {"t.py": "DATA = [\n    1,\n    2,\n]\nVALUE = 3\n"},
        block("t.py", "insert", 2, "def test_data():\n    assert DATA"),
        {"t.py": "DATA = [\n    1,\n    2,\n]\n\n\ndef test_data():\n    assert DATA\n\n\n"
                 "VALUE = 3\n"}),
    "new file": Case(
        {"tests/new/test_new.py": None},
        block("tests/new/test_new.py", "insert", 1, "def test_x():\n    assert True"),
        {"tests/new/test_new.py": "def test_x():\n    assert True\n"}),
    "CRLF": Case(
        {"t.py": "import os\r\n\r\n\r\ndef test_a():\r\n    pass\r\n"},
        block("t.py", "rewrite", 4, "def test_a():\n    assert os\n\n    assert 1")
        + block("t.py", "insert", "EOF", "def test_b():\n    pass"),
        {"t.py": "import os\r\n\r\n\r\ndef test_a():\r\n    assert os\r\n\r\n    assert 1\r\n"
                 "\r\n\r\ndef test_b():\r\n    pass\r\n"}),
    "no trailing newline": Case(
        {"t.py": "def a():\n    return 1\n\n\ndef b():\n    return 2"},
        block("t.py", "rewrite", 5, "def b():\n    return 3")
        + block("t.py", "rewrite", 1, "def a():\n    return 0"),
        {"t.py": "def a():\n    return 0\n\n\ndef b():\n    return 3"}),
    "fenced with prose": Case(
        {"t.py": "def test_a():\n    assert False\n"},
        "Here is the fix for the test:\n\n```custom-diff\n"
        + block("t.py", "rewrite", 1, "def test_a():   \n    assert True")
        + "```\n\nThis makes the test pass.\n",
        {"t.py": "def test_a():\n    assert True\n"}),
    "two files": Case(
        {"a.py": "def f():\n    return 1\n", "b.py": "X = 1\n", "a/b.py": None},
        block("a.py", "rewrite", 1, "def f():\n    return 2")
        + block("a/b.py", "insert", "EOF", "Y = 2")
        + block("a.py", "insert", "EOF", "def g():\n    return 3"),
        {"a.py": "def f():\n    return 2\n\n\ndef g():\n    return 3\n",
         "b.py": "X = 1\n\nY = 2\n"}),
    "tabs and a class header": Case(
        {"t.py": "class TestA:\n\tx = 1\n\n\tdef test_m(self):\n\t\treturn 1\n"},
        block("t.py", "rewrite", 4, "def test_m(self):\n    return [\n        2]")
        + block("t.py", "insert", 1, "def test_first(self):\n    pass"),
        {"t.py": "class TestA:\n\tdef test_first(self):\n\t\tpass\n\n\tx = 1\n\n"
                 "\tdef test_m(self):\n\t\treturn [\n\t\t\t2]\n"}),
    "python 2 original": Case(
        {"t.py": src('''\
            import os

            def test_py2():
                print "old"

            class TestOld:
                def test_m(self):
                    print "m"
                    # the end
            ''')},
        block("t.py", "rewrite", 7, 'def test_m(self):\n    print "new"'),
        {"t.py": src('''\
            import os

            def test_py2():
                print "old"

            class TestOld:
                def test_m(self):
                    print "new"
                    # the end
            ''')}),
}


@pytest.mark.parametrize("name", CASES)
def test_case_gives_expected_text(name: str) -> None:
    case = CASES[name]
    result = run(case.prediction, case.originals)
    assert result.files == case.expected
    if "python 2" not in name:
        for new in result.files.values():
            ast.parse(new)


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("patch") is None,
                    reason="needs git and patch")
@pytest.mark.parametrize("name", CASES)
def test_unified_diff_applies_with_git_and_patch(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    result = run(case.prediction, case.originals)
    patch = tmp_path / "change.patch"
    patch.write_bytes(result.unified_diff.encode())
    for tool, command in (("git", ["git", "apply", str(patch)]),
                          ("patch", ["patch", "-p1", "--batch", "-i", str(patch)])):
        repo = tmp_path / tool
        repo.mkdir()
        for path, text in case.originals.items():
            if text is not None:
                (repo / path).parent.mkdir(parents=True, exist_ok=True)
                (repo / path).write_bytes(text.encode())
        if tool == "git":
            subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
            subprocess.run(["git", "-c", "core.autocrlf=false", "add", "-A"], cwd=repo, check=True)
            subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com",
                            "commit", "-qm", "base", "--allow-empty"], cwd=repo, check=True)
        subprocess.run(command, cwd=repo, check=True, capture_output=True)
        for path, text in case.expected.items():
            assert (repo / path).read_bytes() == text.encode(), (tool, path)


def test_applied_records_targets_and_lines() -> None:
    result = run(CASES["insert in class"].prediction, CASES["insert in class"].originals)
    assert [(a.block, a.target, a.start_line, a.fallback) for a in result.applied] == [
        (1, "TestFoo.test_new", 8, None),
        (2, "TestFoo.value", 14, None),
        (3, "test_free", 19, None),
    ]
    nested = run(CASES["nested class"].prediction, CASES["nested class"].originals)
    assert nested.applied[0].target == "TestOuter.TestInner.test_deep"
    assert run(CASES["python 2 original"].prediction,
               CASES["python 2 original"].originals).applied[0].fallback == SCAN_NOTE


DUPLICATES = src('''\
    class TestA:
        def test_a(self):
            return "A"


    class TestB:
        def test_a(self):
            return "B"
    ''')


@pytest.mark.parametrize(("location", "replaced"), [
    (1, "A"), (2, "A"), (3, "A"), (5, "B"), (7, "B"), (8, "B"), (40, "B"), ("BOF", "A"),
    ("EOF", "B"),
])
def test_duplicate_names_nearest_wins(location: int | str, replaced: str) -> None:
    prediction = block("t.py", "rewrite", location, 'def test_a(self):\n    return "new"')
    result = run(prediction, {"t.py": DUPLICATES})
    kept = "B" if replaced == "A" else "A"
    new = result.files["t.py"]
    assert f'return "{replaced}"' not in new and f'return "{kept}"' in new
    assert new.count('return "new"') == 1
    assert result.applied[0].target == f"Test{replaced}.test_a"
    assert new.replace('return "new"', f'return "{replaced}"') == DUPLICATES


def test_rewrite_of_unknown_name_falls_back_to_insert() -> None:
    original = "class TestA:\n    def test_a(self):\n        pass\n"
    prediction = block("t.py", "rewrite", 2, "def test_missing(self):\n    assert 1")
    result = run(prediction, {"t.py": original})
    assert result.files["t.py"] == (
        "class TestA:\n    def test_a(self):\n        pass\n\n"
        "    def test_missing(self):\n        assert 1\n")
    assert result.applied[0].fallback == "test_missing not found: inserted"
    assert result.applied[0].target == "TestA.test_missing"


def test_unparsable_original_insert_into_class_by_indentation() -> None:
    original = '@deco\nclass TestA(\n        Base):\n    x = 1\n    print "x"\n\nprint "y"\n'
    result = run(block("t.py", "insert", 2, "def test_x(self):\n    pass")
                 + block("t.py", "insert", 8, "def test_y():\n    pass"), {"t.py": original})
    assert result.files["t.py"] == (
        '@deco\nclass TestA(\n        Base):\n    def test_x(self):\n        pass\n\n'
        '    x = 1\n    print "x"\n\n\ndef test_y():\n    pass\n\n\nprint "y"\n')
    assert [a.fallback for a in result.applied] == [SCAN_NOTE, SCAN_NOTE]


def test_rewrite_with_several_definitions_rewrites_each() -> None:
    original = "import os\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n"
    prediction = block("t.py", "rewrite", 4, "def g():\n    return 20\n\n\ndef f():\n    return 10")
    result = run(prediction, {"t.py": original})
    assert result.files["t.py"] == original.replace("1\n", "10\n").replace("2\n", "20\n")
    assert [a.target for a in result.applied] == ["g", "f"]


def test_insert_at_eof_of_method_goes_into_last_class() -> None:
    original = src('''\
        import unittest


        class TestX(unittest.TestCase):
            def test_a(self):
                pass


        if __name__ == "__main__":
            unittest.main()
        ''')
    result = run(block("t.py", "insert", "EOF", "def test_b(self):\n    pass"), {"t.py": original})
    assert result.files["t.py"] == original.replace(
        "pass\n", "pass\n\n    def test_b(self):\n        pass\n", 1)
    assert result.applied[0].target == "TestX.test_b"


def test_path_prefix_is_dropped_only_when_needed() -> None:
    files: dict[str, str | None] = {"src/x.py": "X = 1\n", "a/y.py": "Y = 1\n"}
    result = run(block("a/src/x.py", "insert", "EOF", "Z = 1")
                 + block("a/y.py", "insert", "EOF", "Z = 2")
                 + block("b/new.py", "insert", "EOF", "Z = 3"), files)
    assert result.files == {"src/x.py": "X = 1\n\nZ = 1\n", "a/y.py": "Y = 1\n\nZ = 2\n",
                            "b/new.py": "Z = 3\n"}


def test_unchanged_result_gives_empty_diff() -> None:
    original = "def f():\n    return 1\n"
    result = run(block("t.py", "rewrite", 1, "def f():\n    return 1"), {"t.py": original})
    assert result.files == {} and result.unified_diff == ""
    assert len(result.applied) == 1


@pytest.mark.parametrize(("prediction", "message"), [
    ("I could not write a test.", "no custom diff block found"),
    ("diff\nt.py\nrewrite\n1\ndef f():\n    pass\n", "custom diff block 1: missing 'end diff'"),
    ("diff\nt.py\nrewrite\n1\ndef f():\n    pass\ndiff\nt.py\ninsert\n1\nX = 1\nend diff\n",
     "custom diff block 1: missing 'end diff'"),
    ("diff\nt.py\nreplace\n1\nX = 1\nend diff", "custom diff block 1: unknown action 'replace'"),
    ("diff\nt.py\ninsert\nline twelve\nX = 1\nend diff", "block 1: bad location 'line twelve'"),
    ("diff\nt.py\ninsert\n-3\nX = 1\nend diff", "block 1: bad location '-3'"),
    ("diff\nt.py\ninsert\n1\n\n```\nend diff", "block 1: the block has no code"),
    ("diff\n../x.py\ninsert\n1\nX = 1\nend diff", "block 1: path '../x.py' is not a file inside"),
    ("diff\nsrc/../../x.py\ninsert\n1\nX = 1\nend diff", "path 'src/../../x.py' is not a file"),
    ("diff\n/etc/passwd\ninsert\n1\nX = 1\nend diff", "block 1: path '/etc/passwd' is absolute"),
    ("diff\nC:\\x.py\ninsert\n1\nX = 1\nend diff", "is absolute"),
    ("diff\nend diff\n", "block 1: 'end diff' comes before the block's path"),
    ("diff\nt.py\ninsert\n", "block 1: the text ends before the block's location"),
    (block("t.py", "insert", 1, "X = 1") + "\ndiff\nt.py\ninsert\nEOF\nY = 2\n",
     "custom diff block 2: missing 'end diff'"),
])
def test_malformed_input_raises_one_line_error(prediction: str, message: str) -> None:
    with pytest.raises(CustomDiffError) as caught:
        run(prediction, {"t.py": "X = 0\n"})
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, BenchsmithError)


def test_parse_tolerates_case_whitespace_fences_and_crlf() -> None:
    text = ("Sure!\r\n```python\r\nDIFF  \r\n  tests/test_x.py \r\nINSERT\r\n eof \r\n"
            "```python\r\ndef test_x():  \r\n    pass\r\n```\r\nEnd Diff\r\n```\r\nBye.")
    assert parse_custom_diff(text) == [
        DiffBlock(path="tests/test_x.py", action="insert", location="EOF",
                  code="def test_x():\n    pass")]
    assert parse_custom_diff(block("./x/../t.py", "rewrite", "line 7", "X = 1"))[0].location == 7


@pytest.mark.parametrize(("text", "expected"), [
    (block("t.py", "insert", 1, "X = 1"), True),
    ("```custom-diff\n" + block("t.py", "insert", 1, "X = 1") + "```\n", True),
    ("diff\nt.py\ninsert\n1\nX = 1\n", False),
    ("diff --git a/t.py b/t.py\n--- a/t.py\n+++ b/t.py\n@@ -1 +1 @@\n-X\n+Y\n", False),
    ("--- a/t.py\n+++ b/t.py\n@@ -1,3 +1,3 @@\n diff\n-X\n+Y\n end diff\n", False),
    ("```diff\n--- a/t.py\n+++ b/t.py\n@@ -1 +1 @@\n-X\n+Y\n```\n", False),
    ("no diff here, end diff", False),
])
def test_is_custom_diff(text: str, expected: bool) -> None:
    assert is_custom_diff(text) is expected


def test_unified_diff_format() -> None:
    diff = unified_diff({"x.py": "a\nb", "new.py": None}, {"x.py": "a\nc", "new.py": "n"})
    assert diff == (
        "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n"
        "@@ -0,0 +1 @@\n+n\n\\ No newline at end of file\n"
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n"
        "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
        "\\ No newline at end of file\n")
    assert unified_diff({"x.py": "same\n"}, {"x.py": "same\n"}) == ""


# ---------------------------------------------------------------- property-based tests

def apply_patch(patch: str, files: dict[str, str | None]) -> dict[str, str]:
    """A strict pure-Python applier of the diffs `unified_diff` writes (context must match)."""
    lines = re.findall(r"[^\n]*\n|[^\n]+\Z", patch)
    out: dict[str, str] = {}
    index = 0
    while index < len(lines):
        assert lines[index].startswith("diff --git "), lines[index]
        index += 2 if lines[index + 1].startswith("new file mode") else 1
        minus, plus = lines[index], lines[index + 1]
        path = plus[len("+++ b/"):-1]
        before = "" if minus == "--- /dev/null\n" else files[path] or ""
        old = re.findall(r"[^\n]*\n|[^\n]+\Z", before)
        index += 2
        new: list[str] = []
        position = 0
        while index < len(lines) and lines[index].startswith("@@ "):
            match = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@\n", lines[index])
            assert match
            start = int(match[1]) - (1 if match[2] != "0" else 0)
            assert start >= position
            new += old[position:start]
            position = start
            index += 1
            while index < len(lines) and lines[index][:1] in (" ", "-", "+"):
                kind, content = lines[index][0], lines[index][1:]
                index += 1
                if index < len(lines) and lines[index].startswith("\\ No newline"):
                    content = content[:-1]
                    index += 1
                if kind in (" ", "-"):
                    assert old[position] == content
                    position += 1
                if kind in (" ", "+"):
                    new.append(content)
        out[path] = "".join(new + old[position:])
    return out


PATHS = st.from_regex(r"[a-z][a-z0-9_]{0,7}(/[a-z][a-z0-9_]{0,7}){0,2}\.py", fullmatch=True)
CODE_LINE = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"),
                                  whitelist_characters="\t"), max_size=30).map(str.rstrip).filter(
    lambda line: line.lower() != "diff" and not re.fullmatch(r"end\s*diff", line.strip(), re.I)
    and not line.lstrip().startswith(("```", "~~~", "diff --git", "--- ")))


@st.composite
def diff_blocks(draw: st.DrawFn) -> DiffBlock:
    code = draw(st.lists(CODE_LINE, min_size=1, max_size=6))
    while code and not code[0].strip():
        code.pop(0)
    while code and not code[-1].strip():
        code.pop()
    if not code:
        code = ["pass"]
    return DiffBlock(path=draw(PATHS), action=draw(st.sampled_from(["rewrite", "insert"])),
                     location=draw(st.integers(0, 10**6) | st.sampled_from(["EOF", "BOF"])),
                     code="\n".join(code))


@settings(max_examples=150, deadline=None, database=None)
@given(st.lists(diff_blocks(), min_size=1, max_size=4))
def test_format_then_parse_is_identity(blocks: list[DiffBlock]) -> None:
    text = format_custom_diff(blocks)
    assert parse_custom_diff(text) == blocks
    assert is_custom_diff(text)
    assert parse_custom_diff(f"Prose first.\n```custom-diff\n{text}```\nProse after.") == blocks
    assert parse_custom_diff(text.replace("\n", "\r\n")) == blocks


FUNCTION_NAMES = ["test_one", "test_two", "helper", "run", "check"]
CLASS_NAMES = ["TestAlpha", "TestBeta", "Gamma", "Delta"]
BODIES = ["return 1", "x = (\n    1 +\n    2\n)\nreturn x", '"""Doc."""\npass',
          "# inner comment\nassert True"]
DECORATORS = ["", "@decorator\n", "@decorator(\n    1,\n)\n", "@a.b\n@c\n"]


@st.composite
def functions(draw: st.DrawFn, name: str, method: bool) -> str:
    params = "self" if method else ""
    if draw(st.booleans()):
        params = f"\n    {params},\n" if params else "\n"
    head = "async def" if draw(st.booleans()) else "def"
    body = textwrap.indent(draw(st.sampled_from(BODIES)), "    ")
    return f"{draw(st.sampled_from(DECORATORS))}{head} {name}({params}):\n{body}\n"


@st.composite
def classes(draw: st.DrawFn, name: str, depth: int, comments: list[str]) -> str:
    members = []
    if draw(st.booleans()):
        members.append('"""Class docstring."""\n')
    for member in draw(st.lists(st.sampled_from(FUNCTION_NAMES + ["attr", "nested", "comment"]),
                                min_size=1, max_size=4, unique=True)):
        if member == "attr":
            members.append("attr = [\n    1,\n]\n")
        elif member == "comment":
            comments.append(f"# comment {len(comments)}")
            members.append(comments[-1] + "\n")
        elif member == "nested":
            if depth == 0:
                members.append(draw(classes(draw(st.sampled_from(CLASS_NAMES)), 1, comments)))
        else:
            members.append(draw(functions(member, method=True)))
    if all(member.startswith(("#", '"""')) for member in members):
        members.append("pass\n")
    body = "\n".join(members)
    return f"{draw(st.sampled_from(['', '@dataclass' + chr(10)]))}class {name}:\n" + \
        textwrap.indent(body, "    ")


@st.composite
def modules(draw: st.DrawFn) -> tuple[str, list[str]]:
    comments: list[str] = []
    parts = []
    if draw(st.booleans()):
        parts.append('"""Module docstring."""\nfrom __future__ import annotations\n')
    parts.append("import os\n")
    names = draw(st.lists(st.sampled_from(FUNCTION_NAMES + CLASS_NAMES + ["DATA", "#"]),
                          min_size=1, max_size=5, unique=True))
    for name in names:
        if name == "DATA":
            parts.append("DATA = {\n    'a': 1,\n}\n")
        elif name == "#":
            comments.append(f"# comment {len(comments)}")
            parts.append(comments[-1] + "\n")
        elif name in CLASS_NAMES:
            parts.append(draw(classes(name, 0, comments)))
        else:
            parts.append(draw(functions(name, method=False)))
    text = "\n\n".join(parts)
    if draw(st.booleans()):
        text = text.rstrip("\n")
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text, comments


def definitions(tree: ast.Module) -> list[tuple[str, bool, int, int]]:
    """(qualname, is_class, first line with decorators, last line) of defs outside functions."""
    found: list[tuple[str, bool, int, int]] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                found.append((prefix + node.name, isinstance(node, ast.ClassDef), start,
                              node.end_lineno or node.lineno))
                if isinstance(node, ast.ClassDef):
                    visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return found


def qualname_of_marker(text: str, marker: str) -> str:
    """The qualified name of the one function whose body holds the string constant `marker`."""
    found: list[str] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    isinstance(inner, ast.Constant) and inner.value == marker
                    for inner in ast.walk(node)):
                found.append(prefix + node.name)

    visit(ast.parse(text).body, "")
    assert len(found) == 1, (marker, found)
    return found[0]


Planned = tuple[DiffBlock, str, str | None]  # a block, its marker, the qualname it rewrites


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[str, list[str], list[Planned]]:
    """A module, its comments, and blocks with their marker and (rewrites) expected qualname."""
    text, comments = draw(modules())
    tree = ast.parse(text)
    defs = definitions(tree)
    chosen = draw(st.lists(st.sampled_from(defs), max_size=3, unique=True)) if defs else []
    targets: list[tuple[str, bool, int, int]] = []
    for target in chosen:  # disjoint ranges only
        if all(target[3] < start or end < target[2] for _, _, start, end in targets):
            targets.append(target)
    planned: list[Planned] = []
    for number, (qualname, is_class, start, end) in enumerate(targets):
        name = qualname.rsplit(".", 1)[-1]
        method = "." in qualname
        if is_class:
            code = f"class {name}:\n    def m(self):\n        return 'MARK{number}'"
        else:
            code = (f"{draw(st.sampled_from(DECORATORS))}def {name}({'self' if method else ''}):"
                    f"\n    return 'MARK{number}'")
        if draw(st.booleans()):
            code = textwrap.indent(code, "    ")
        same = [(s, e) for q, c, s, e in defs  # a nested namesake would be nearer
                if q.startswith(qualname + ".") and c == is_class and q.endswith("." + name)]
        location = draw(st.sampled_from([line for line in range(start, end + 1)
                                         if not any(s <= line <= e for s, e in same)]))
        planned.append((DiffBlock(path="m.py", action="rewrite", location=location, code=code),
                        f"MARK{number}", qualname))
    total = len(text.splitlines())
    free = [line for line in range(1, total + 1)
            if all(not start <= line <= end for _, _, start, end in targets)]
    for number in range(draw(st.integers(0 if targets else 1, 3))):
        kind = draw(st.sampled_from(["method", "function", "fixture", "statement"]))
        code = {"method": f"def ins{number}(self):\n    return 'INS{number}'",
                "function": f"def ins{number}():\n    return 'INS{number}'",
                "fixture": f"@pytest.fixture\ndef ins{number}():\n    return 'INS{number}'",
                "statement": f"ins{number} = 'INS{number}'"}[kind]
        where = draw(st.integers(0, 5))
        location = "EOF" if where == 0 else "BOF" if where == 1 else draw(st.sampled_from(free))
        if location == "EOF" and kind == "method" and any(t[1] for t in targets):
            kind, code = "statement", f"ins{number} = 'INS{number}'"  # a rewritten class ate it
        planned.append((DiffBlock(path="m.py", action="insert", location=location, code=code),
                        f"INS{number}", None))

    def order(item: Planned) -> int:  # bottom-up, so no edit shifts a later one
        location = item[0].location
        return -(10**9) if location == "EOF" else 10**9 if location == "BOF" else -int(location)

    return text, comments, sorted(planned, key=order)


@settings(max_examples=200, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(scenarios())
def test_random_modules_apply_in_place(scenario: tuple[str, list[str], list[Planned]]) -> None:
    original, comments, planned = scenario
    result = apply_custom_diff(format_custom_diff([item[0] for item in planned]),
                               {"m.py": original}.get)
    new = result.files.get("m.py", original)
    ast.parse(new)  # still Python
    assert new.count("\r\n") == (new.count("\n") if "\r\n" in original else 0)
    assert new.endswith("\n") == original.endswith("\n")
    rewritten = [qualname for _, _, qualname in planned if qualname]
    for item, marker, qualname in planned:
        assert new.count(f"'{marker}'") == 1
        if qualname:  # the new body is in the definition that was aimed at
            is_class = item.code.lstrip().startswith("class")
            assert qualname_of_marker(new, marker) == (f"{qualname}.m" if is_class else qualname)
    assert [a.target for a in result.applied if a.action == "rewrite"] == rewritten
    # every original line outside the rewritten ranges is still there, in order
    ranges = [(s, e) for q, _, s, e in definitions(ast.parse(original)) if q in rewritten]
    kept = [line for number, line in enumerate(original.splitlines(), 1)
            if not any(s <= number <= e for s, e in ranges)]
    remaining = iter(new.splitlines())
    assert all(any(line == other for other in remaining) for line in kept)
    for comment in comments:
        where = [n for n, line in enumerate(original.splitlines(), 1) if line.strip() == comment]
        assert comment in new or any(s <= n <= e for s, e in ranges for n in where)
    # the unified diff reproduces the new text from the original
    assert apply_patch(result.unified_diff, {"m.py": original}) == result.files


@settings(max_examples=100, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(modules())
def test_indentation_scan_agrees_with_ast(module: tuple[str, list[str]]) -> None:
    lines = module[0].splitlines(keepends=True)
    parsed, scanned = analyze(lines), scan(lines)
    assert parsed.parsed and not scanned.parsed
    assert [(d.qualname, d.start, d.end, d.indent) for d in scanned.definitions] == [
        (d.qualname, d.start, d.end, d.indent) for d in parsed.definitions]
    assert (scanned.statements, scanned.bof) == (parsed.statements, parsed.bof)
