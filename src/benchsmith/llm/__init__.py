"""Language models as an optional layer: providers behind :class:`benchsmith.core.Model`
(OpenAI-compatible servers, Anthropic, a scripted model), a SQLite cache of every call, and
token/time/cost accounting from an editable price table.

Nothing here is imported unless a command is given ``--model``; the SDKs are optional extras.
"""

from benchsmith.llm.cache import CallCache
from benchsmith.llm.calls import CallParams, Completion, LLMError, Message, Usage
from benchsmith.llm.client import LLM, make_provider
from benchsmith.llm.config import (
    AnthropicConfig,
    ModelConfig,
    OpenAIConfig,
    ScriptedConfig,
    model_label,
    parse_model,
)
from benchsmith.llm.prices import Price, Prices
from benchsmith.llm.scripted import Script

__all__ = [
    "LLM", "AnthropicConfig", "CallCache", "CallParams", "Completion", "LLMError", "Message",
    "ModelConfig", "OpenAIConfig", "Price", "Prices", "ScriptedConfig", "Script", "Usage",
    "make_provider", "model_label", "parse_model",
]
