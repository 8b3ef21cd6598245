"""Splitting pull-request diffs into code and test patches."""

from __future__ import annotations

import pytest

from benchsmith.harness.patches import is_test_path, split_patch, touched_files


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_api.py", True),
        ("test/unit/helpers.py", True),
        ("testing/conftest.py", True),
        ("src/pkg/tests/data/sample.json", True),
        ("pkg/test_utils.py", True),
        ("pkg/utils_test.py", True),
        ("conftest.py", True),
        ("src/pytest_plugins/core.py", False),
        ("src/testfixtures/compare.py", False),
        ("pkg/contest.py", False),
        ("docs/testing.rst", False),
        ("src/pkg/testing_utils.py", False),
        ("setup.py", False),
    ],
)
def test_is_test_path(path: str, expected: bool) -> None:
    assert is_test_path(path) is expected


DIFF = """diff --git a/src/pkg/core.py b/src/pkg/core.py
index 1111111..2222222 100644
--- a/src/pkg/core.py
+++ b/src/pkg/core.py
@@ -1,2 +1,2 @@
-def f(): return 1
+def f(): return 2
diff --git a/tests/test_core.py b/tests/test_core.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/tests/test_core.py
@@ -0,0 +1,2 @@
+def test_f():
+    assert f() == 2
diff --git a/docs/old.rst b/docs/new.rst
similarity index 100%
rename from docs/old.rst
rename to docs/new.rst
"""


def test_split_patch_keeps_whole_file_sections() -> None:
    patch, test_patch = split_patch(DIFF)
    assert touched_files(patch) == ["src/pkg/core.py", "docs/new.rst"]
    assert touched_files(test_patch) == ["tests/test_core.py"]
    assert patch + test_patch != DIFF  # reordered, but nothing lost:
    assert sorted(patch.splitlines() + test_patch.splitlines()) == sorted(DIFF.splitlines())
