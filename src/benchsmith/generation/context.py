"""The code a prompt shows: the oracle files (those the gold patch touches) or the files BM25
ranks highest for the issue, within a token budget; a file that does not fit is cut between
top-level statements, so every function and class shown is whole."""

from __future__ import annotations

import ast
from typing import Literal

from pydantic import BaseModel, Field

from benchsmith.core import BenchsmithError
from benchsmith.generation.repo import RepoSnapshot
from benchsmith.harness.patches import is_test_path, touched_files
from benchsmith.instance import TaskInstance

ContextKind = Literal["oracle", "bm25"]
TEXT_SUFFIXES = (".py", ".pyi", ".md", ".rst", ".txt", ".cfg", ".toml", ".ini", ".yaml", ".yml")
BM25_CANDIDATES = 20  # files ranked; the budget decides how many are shown


class Context(BaseModel):
    """The rendered code context and what it holds."""

    kind: ContextKind
    text: str
    files: list[str] = Field(default_factory=list)
    truncated: list[str] = Field(default_factory=list)  # files shown only in part
    tokens: int = 0


def count_tokens(text: str) -> int:
    """A tokenizer-free estimate (four characters a token), used for the budget."""
    return (len(text) + 3) // 4


def oracle_files(instance: TaskInstance, mode: str, snapshot: RepoSnapshot) -> list[str]:
    """The files the gold patch touches (in test mode also the existing test files the gold
    test patch touches, so the model sees where tests live)."""
    files = touched_files(instance.patch)
    if mode == "test":
        files += [f for f in touched_files(instance.test_patch) if f in snapshot.sizes]
    return [f for f in dict.fromkeys(files) if f in snapshot.sizes]


def bm25_files(instance: TaskInstance, snapshot: RepoSnapshot, limit: int = BM25_CANDIDATES) -> list[str]:
    """The repository's text files ranked by BM25 against the problem statement."""
    try:
        import bm25s
    except ImportError:
        raise BenchsmithError("--context bm25 needs the retrieval extra: pip install "
                              "'benchsmith[retrieval]'") from None
    paths = [p for p in snapshot.files if p.endswith(TEXT_SUFFIXES)]
    texts = snapshot.read_many(paths)
    paths = [p for p in paths if p in texts]
    query = instance.problem_statement.strip()
    if not paths or not query:
        return []
    # The path counts as text too: an issue naming `parser.py` should find it.
    corpus = bm25s.tokenize([f"{p.replace('/', ' ')}\n{texts[p]}" for p in paths],
                            stopwords="en", show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
    k = min(limit, len(paths))
    try:
        documents, scores = retriever.retrieve(tokens, k=k, show_progress=False)
    except (ValueError, IndexError):  # a query of stop words only
        return []
    return [paths[int(d)] for d, s in zip(documents[0], scores[0], strict=True) if s > 0]


def build_context(instance: TaskInstance, mode: str, kind: ContextKind, snapshot: RepoSnapshot,
                  budget: int) -> Context:
    """The files of `kind`, rendered with line numbers until `budget` tokens are used."""
    files = oracle_files(instance, mode, snapshot) if kind == "oracle" else bm25_files(instance, snapshot)
    if kind == "bm25" and mode == "test":
        # Show tests after code, so the model sees a test module to extend.
        files = [f for f in files if not is_test_path(f)] + [f for f in files if is_test_path(f)]
    context = Context(kind=kind, text="")
    parts: list[str] = []
    left = budget
    for path in files:
        text = snapshot.read(path)
        if text is None:
            continue
        whole = render_file(path, text) or ""
        if count_tokens(whole) <= left:
            parts.append(whole)
        else:
            cut = render_file(path, text, keep_tokens=left)
            if cut is None:
                continue
            parts.append(cut)
            context.truncated.append(path)
        context.files.append(path)
        left = budget - count_tokens("".join(parts))
        if left <= 0:
            break
    context.text = "".join(parts)
    context.tokens = count_tokens(context.text)
    return context


def render_file(path: str, text: str, keep_tokens: int | None = None) -> str | None:
    """``[start of PATH]`` + numbered lines + ``[end of PATH]``; with `keep_tokens`, only the
    leading whole top-level statements that fit (None when not even one does)."""
    lines = text.splitlines()
    shown = range(len(lines))
    if keep_tokens is not None:
        kept = _fitting_prefix(lines, keep_tokens - count_tokens(f"[start of {path}]\n[end of {path}]\n") - 10)
        if kept == 0:
            return None
        shown = range(kept)
    body = "".join(f"{n + 1} {lines[n]}\n" for n in shown)
    omitted = len(lines) - len(shown)
    note = f"... ({omitted} more lines not shown)\n" if omitted else ""
    return f"[start of {path}]\n{body}{note}[end of {path}]\n"


def _fitting_prefix(lines: list[str], tokens: int) -> int:
    """How many leading lines, ending at a top-level statement's end, fit in `tokens`."""
    try:
        ends = [node.end_lineno or node.lineno for node in ast.parse("\n".join(lines)).body]
    except SyntaxError:
        ends = list(range(1, len(lines) + 1))  # not Python: any line is a boundary
    cumulative = [0]
    for n, line in enumerate(lines):
        cumulative.append(cumulative[-1] + len(f"{n + 1} {line}\n"))
    best = 0
    for end in ends:
        if (cumulative[min(end, len(lines))] + 3) // 4 > tokens:
            break
        best = end
    return best
