"""Draw an instance's samples: context, prompt, k answers, and the patch found in each.

ZeroShot asks for a unified diff, ZeroShotPlus (and Pass@k and LIBRO, which build on it) for
the custom diff format. Every answer is kept in a raw-responses file beside the predictions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.core import BenchsmithError
from benchsmith.generation.context import Context, build_context
from benchsmith.generation.extract import PatchFormat, custom_to_unified, extract_patch
from benchsmith.generation.models import Candidate, GenerateOptions
from benchsmith.generation.prompts import generation_prompt
from benchsmith.generation.repo import RepoSnapshot
from benchsmith.instance import TaskInstance
from benchsmith.llm import LLM, CallParams, Message


@dataclass
class Drawn:
    """The samples of one instance: candidates (with their patches) and how they were asked."""

    context: Context
    prompt_version: str
    candidates: list[Candidate] = field(default_factory=list)
    patches: dict[int, str] = field(default_factory=dict)  # sample -> patch, where one was found
    responses: list[str] = field(default_factory=list)


def wanted_format(method: str) -> PatchFormat:
    """The format a method asks for: unified for ZeroShot, custom for the others."""
    return "unified" if method == "zeroshot" else "custom"


def draw(llm: LLM, instance: TaskInstance, options: GenerateOptions, snapshot: RepoSnapshot,
         responses_file: Path) -> Drawn:
    """Ask for `options.samples` answers and extract a patch from each (an answer without
    one is a candidate with an error); raise LLMError when the model cannot be called."""
    context = build_context(instance, options.mode, options.context, snapshot,
                            options.context_tokens)
    patch_format = wanted_format(options.method)
    prompt, version = generation_prompt(options.mode, patch_format, instance.problem_statement,
                                        context.text)
    drawn = Drawn(context=context, prompt_version=version)
    messages = [Message(role="user", content=prompt)]
    try:
        for sample in range(options.samples):
            params = CallParams(temperature=options.temperature, max_tokens=options.max_tokens,
                                sample=sample)
            answer = llm.chat(messages, params).text
            drawn.responses.append(answer)
            candidate = Candidate(sample=sample)
            try:
                patch, found = extract_patch(answer, patch_format)
                if options.mode == "fix" and found == "custom":
                    patch = custom_to_unified(patch, snapshot.read)
                drawn.patches[sample] = patch
                candidate.patch_format, candidate.chars = found, len(patch)
            except BenchsmithError as exc:
                candidate.error = str(exc)
            drawn.candidates.append(candidate)
    finally:
        write_responses(responses_file, prompt, version, drawn.responses)
    return drawn


def write_responses(path: Path, prompt: str, version: str, responses: list[str]) -> None:
    """Keep the prompt and every answer (the record points here)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"prompt_version": version, "prompt": prompt,
                                "responses": responses}, indent=1, ensure_ascii=False),
                    encoding="utf-8")
