"""Generation baselines of the seed papers with a language model: ZeroShot (unified diff),
ZeroShotPlus (SWT-bench's custom diff format), Pass@k (an evaluation oracle picks) and LIBRO
(generated tests run and judged), for tests (``mode="test"``) and fixes (``mode="fix"``), with
oracle or BM25 context. Reached only through ``benchsmith generate --model ...``.
"""

from benchsmith.generation.context import Context, build_context
from benchsmith.generation.gold import as_custom_diff
from benchsmith.generation.models import (
    METHODS,
    Candidate,
    GenerateOptions,
    GenerationRecord,
    Method,
)
from benchsmith.generation.repo import RepoSnapshot
from benchsmith.generation.run import Generator

__all__ = [
    "METHODS", "Candidate", "Context", "GenerateOptions", "GenerationRecord", "Generator",
    "Method", "RepoSnapshot", "as_custom_diff", "build_context",
]
