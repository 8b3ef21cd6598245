"""An instance's gold test patch rewritten in the custom diff format: what a perfect model
answering in that format would say (the lossless-plumbing check of `generate` + `evaluate`)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from unidiff import PatchSet

from benchsmith.evaluation.custom_diff import DiffBlock, format_custom_diff


def patched_texts(patch: str, read: Callable[[str], str | None]) -> dict[str, str | None]:
    """Each file the unified diff `patch` changes, as text after it (None: deleted)."""
    texts: dict[str, str | None] = {}
    for file in PatchSet(patch):
        path = file.path
        if file.is_removed_file:
            texts[path] = None
            continue
        lines = [] if file.is_added_file else (read(path) or "").splitlines(keepends=True)
        offset = 0
        for hunk in file:
            start = max(hunk.source_start - 1, 0) + offset
            new = [line.value for line in hunk if not line.is_removed]
            lines[start:start + hunk.source_length] = new
            offset += len(new) - hunk.source_length
        texts[path] = "".join(lines)
    return texts


def _definitions(text: str) -> tuple[dict[str, tuple[int, str]], list[str]]:
    """Top-level defs and classes by name (first line, source with decorators), and the other
    top-level statements' source lines."""
    tree = ast.parse(text)
    lines = text.splitlines()
    found: dict[str, tuple[int, str]] = {}
    other: list[str] = []
    for node in tree.body:
        start = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])
        source = "\n".join(lines[start - 1:node.end_lineno or node.lineno])
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found[node.name] = (start, source)
        else:
            other.extend(lines[start - 1:node.end_lineno or node.lineno])
    return found, other


def as_custom_diff(patch: str, read: Callable[[str], str | None]) -> str:
    """`patch` (a unified diff of Python files) as custom diff blocks: changed definitions
    rewritten, new ones inserted at EOF, new imports and other statements inserted at BOF."""
    blocks: list[DiffBlock] = []
    for path, after in patched_texts(patch, read).items():
        if after is None or not path.endswith(".py"):
            continue
        before = read(path)
        if before is None:
            blocks.append(DiffBlock(path=path, action="insert", location="EOF", code=after))
            continue
        old_defs, old_other = _definitions(before)
        new_defs, new_other = _definitions(after)
        added = [line for line in new_other if line not in old_other]
        if added:
            blocks.append(DiffBlock(path=path, action="insert", location="BOF", code="\n".join(added)))
        for name, (_, source) in new_defs.items():
            if name not in old_defs:
                blocks.append(DiffBlock(path=path, action="insert", location="EOF", code=source))
            elif old_defs[name][1] != source:
                blocks.append(DiffBlock(path=path, action="rewrite", location=old_defs[name][0],
                                        code=source))
    return format_custom_diff(blocks)
