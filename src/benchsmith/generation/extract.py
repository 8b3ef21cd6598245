"""Find the patch in a model's answer: a unified diff (fenced or bare) or SWT-bench's custom
diff format, checked so that a prediction never holds prose; fixes in the custom format are
turned into unified diffs against the repository at `base_commit`."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from benchsmith.core import BenchsmithError
from benchsmith.evaluation.custom_diff import (
    apply_custom_diff,
    format_custom_diff,
    is_custom_diff,
    parse_custom_diff,
)

PatchFormat = Literal["unified", "custom"]
_FENCE = re.compile(r"^(```|~~~)[ \t]*([\w+-]*)[^\n]*\n(.*?)^\1[ \t]*$", re.DOTALL | re.MULTILINE)
_START = re.compile(r"^(diff --git |--- )", re.MULTILINE)


class ExtractionError(BenchsmithError):
    """The answer holds no usable patch (one line saying why)."""


def extract_unified(text: str) -> str:
    """The unified diff in `text`: a fenced diff block, else from the first header on."""
    candidates = [body for _, language, body in _FENCE.findall(text)
                  if language.lower() in ("diff", "patch", "udiff") or "\n@@ " in "\n" + body]
    start = _START.search(text)
    if start is not None:
        candidates.append(text[start.start():])
    for candidate in candidates:
        patch = _checked(candidate)
        if patch:
            return patch
    raise ExtractionError("the answer holds no unified diff")


def _checked(candidate: str) -> str | None:
    from unidiff import PatchSet
    from unidiff.errors import UnidiffParseError

    lines = candidate.splitlines()
    # Keep the diff itself: stop at the first line that cannot belong to it.
    kept: list[str] = []
    for line in lines:
        if line.startswith(("```", "~~~")):
            break
        kept.append(line)
    patch = "\n".join(kept).rstrip("\n") + "\n"
    try:
        parsed = PatchSet(patch)
    except UnidiffParseError:
        return None
    return patch if len(parsed) and all(len(f) for f in parsed) else None


def extract_custom(text: str) -> str:
    """The custom diff blocks in `text`, normalised (fences and prose removed)."""
    if not is_custom_diff(text):
        raise ExtractionError("the answer holds no custom diff block ('diff' ... 'end diff')")
    return format_custom_diff(parse_custom_diff(text))


def extract_patch(text: str, wanted: PatchFormat) -> tuple[str, PatchFormat]:
    """(patch, format): the `wanted` format first, the other one as a fallback."""
    order: list[PatchFormat] = ["custom", "unified"] if wanted == "custom" else ["unified", "custom"]
    first: ExtractionError | None = None
    for patch_format in order:
        try:
            return (extract_custom(text) if patch_format == "custom" else extract_unified(text),
                    patch_format)
        except BenchsmithError as exc:
            first = first or ExtractionError(str(exc))
    assert first is not None
    raise first


def custom_to_unified(patch: str, read: Callable[[str], str | None]) -> str:
    """A custom diff applied to the files `read` returns, as a unified diff."""
    converted = apply_custom_diff(patch, read).unified_diff
    if not converted.strip():
        raise ExtractionError("the custom diff changes nothing")
    return converted
