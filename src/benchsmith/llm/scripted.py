"""A deterministic model that answers from a script: rules matched against the prompt.

A script is a JSON or YAML file::

    rules:
      - match: "Does this failure"        # a string or a list of strings, all in the prompt
        reply: "yes"
      - match: ["parse", "spaces"]
        replies: ["first sample", "second sample"]   # sample i gets replies[i % len]
    default: "I cannot help."             # optional: without it an unmatched prompt fails

The first rule whose strings all occur in the messages answers. The same script drives the
loopback OpenAI-compatible server (:mod:`benchsmith.testing.fake_openai`).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from benchsmith.llm.calls import CallParams, LLMError, Message, RawCompletion


class Rule(BaseModel):
    """One scripted answer and when it is given."""

    model_config = ConfigDict(extra="forbid")

    match: list[str] = Field(default_factory=list)
    reply: str | None = None
    replies: list[str] = Field(default_factory=list)

    @field_validator("match", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _has_reply(self) -> Rule:
        if self.reply is not None:
            self.replies = [self.reply, *self.replies]
        if not self.replies:
            raise ValueError("a rule needs reply or replies")
        return self


class Script(BaseModel):
    """The rules of a scripted model."""

    model_config = ConfigDict(extra="forbid")

    rules: list[Rule] = Field(default_factory=list)
    default: str | None = None

    @classmethod
    def load(cls, path: Path) -> Script:
        """Read a script file; one-line BenchsmithError when it cannot be used."""
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
            return cls.model_validate(data)
        except OSError as exc:
            raise LLMError(f"cannot read the model script {path}: {exc.strerror}") from None
        except (ValueError, yaml.YAMLError, ValidationError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if isinstance(exc, ValidationError):
                error = exc.errors()[0]
                first = f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
            raise LLMError(f"invalid model script {path}: {first}") from None

    def answer(self, messages: list[Message], sample: int = 0) -> str | None:
        """The scripted reply to `messages` (sample `sample`), or None when no rule matches."""
        text = "\n".join(m.content for m in messages)
        for rule in self.rules:
            if all(needle in text for needle in rule.match):
                return rule.replies[sample % len(rule.replies)]
        return self.default


def estimate_tokens(text: str) -> int:
    """A rough token count (four characters a token), where no tokenizer is at hand."""
    return max(1, len(text) // 4) if text else 0


class ScriptedProvider:
    """Answers from a :class:`Script`; free, instant and deterministic."""

    name = "scripted"

    def __init__(self, path: Path) -> None:
        self.model = path.stem
        self.script = Script.load(path)

    def call(self, messages: list[Message], params: CallParams) -> RawCompletion:
        """The scripted reply, with estimated token counts."""
        reply = self.script.answer(messages, params.sample)
        if reply is None:
            raise LLMError(f"the model script {self.model} has no rule for this prompt "
                           "and no default")
        prompt = sum(estimate_tokens(m.content) for m in messages)
        return RawCompletion(text=reply, input_tokens=prompt, output_tokens=estimate_tokens(reply),
                             finish_reason="stop", model=self.model)
