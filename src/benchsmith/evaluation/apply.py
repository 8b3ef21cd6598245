"""Apply a predicted patch: SWT-bench's fault-tolerant diff format is converted to a unified
diff first (where a prediction may use it), then the harness applies it robustly."""

from __future__ import annotations

from benchsmith.harness.worktree import ApplyResult, Worktree


def apply_prediction(worktree: Worktree, name: str, patch: str, custom: bool = False) -> ApplyResult:
    """Apply `patch`; with `custom`, the custom diff format is accepted too."""
    converted: str | None = None
    if custom and patch.strip():
        from benchsmith.evaluation.custom_diff import (
            CustomDiffError,
            apply_custom_diff,
            is_custom_diff,
        )

        if is_custom_diff(patch):
            try:
                converted = apply_custom_diff(patch, worktree.read).unified_diff
            except CustomDiffError as exc:
                return ApplyResult(applied=False, custom_diff=True, error=str(exc))
            if not converted.strip():
                return ApplyResult(applied=False, custom_diff=True, unified_diff="",
                                   error="the custom diff changes nothing")
    result = worktree.apply(name, converted if converted is not None else patch)
    result.custom_diff, result.unified_diff = converted is not None, converted
    return result
