"""The model layer against a real HTTP server on loopback: the official SDKs, retries that
honour Retry-After, one-line errors without keys, the SQLite cache and the cost accounting."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.core import BenchsmithError
from benchsmith.llm import (
    LLM,
    AnthropicConfig,
    CallCache,
    CallParams,
    LLMError,
    Message,
    OpenAIConfig,
    Prices,
    Script,
    parse_model,
)
from benchsmith.testing.fake_openai import FakeLLMServer

SCRIPT = Script.model_validate({"rules": [
    {"match": "capital of France", "reply": "Paris"},
    {"match": "sample", "replies": ["one", "two"]},
], "default": "no idea"})
KEY = "sk-test-secret-key-123456"
ASK = [Message(role="user", content="What is the capital of France?")]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with FakeLLMServer(SCRIPT, valid_keys={KEY}, models={"gpt-test", "claude-test"}) as fake:
        yield fake


def openai(fake: FakeLLMServer, tmp_path: Path, model: str = "gpt-test", **knobs) -> LLM:
    config = OpenAIConfig(model=model, base_url=fake.openai_url, timeout_s=knobs.pop("timeout_s", 5),
                          max_retries=knobs.pop("max_retries", 3), **knobs)
    return LLM(config, CallCache(tmp_path / "llm.sqlite"), Prices.load())


def test_openai_and_anthropic_sdks_answer_from_the_loopback_server(server, tmp_path: Path) -> None:
    assert openai(server, tmp_path).complete("What is the capital of France?") == "Paris"
    claude = LLM(AnthropicConfig(model="claude-test", base_url=server.anthropic_url, timeout_s=5),
                 None, Prices.load())
    answer = claude.chat([Message(role="system", content="Be brief."), *ASK])
    assert answer.text == "Paris" and answer.input_tokens > 0 and answer.output_tokens > 0
    assert [(c.api, c.status) for c in server.calls] == [("openai", 200), ("anthropic", 200)]
    assert server.calls[1].messages[0] == "Be brief."  # the system prompt went into `system`


def test_retries_honour_retry_after_and_give_up_with_one_line(server, tmp_path: Path) -> None:
    server.add_fault("rate_limit", retry_after="0.2")
    server.add_fault("server_error")
    server.add_fault("garbage")
    waits: list[float] = []
    model = openai(server, tmp_path)
    model.provider.sleep = waits.append
    assert model.complete("What is the capital of France?") == "Paris"
    assert [c.status for c in server.calls] == [429, 500, 200, 200]
    assert waits[0] == pytest.approx(0.2) and waits[1:] == [1.0, 2.0]  # then own backoff
    server.add_fault("server_error", times=10)
    model.provider.sleep = lambda s: None
    with pytest.raises(LLMError) as failure:
        model.chat([Message(role="user", content="sample please")])
    assert failure.value.retryable and "HTTP 500" in str(failure.value)
    assert "(after 4 tries)" in str(failure.value) and "\n" not in str(failure.value)
    assert model.usage.failed_calls == 1


def test_a_retry_after_longer_than_allowed_fails_at_once(server, tmp_path: Path) -> None:
    server.add_fault("rate_limit", retry_after="3600")
    with pytest.raises(LLMError, match="asks to wait 3600s"):
        openai(server, tmp_path).complete("What is the capital of France?")
    assert len(server.calls) == 1


def test_slow_answers_time_out_and_are_retried(server, tmp_path: Path) -> None:
    server.add_fault("slow", delay_s=1.5)
    model = openai(server, tmp_path, timeout_s=0.5)
    model.provider.sleep = lambda s: None
    assert model.complete("What is the capital of France?") == "Paris"
    server.add_fault("slow", delay_s=1.5, times=2)
    model = openai(server, tmp_path / "other", timeout_s=0.5, max_retries=1)
    model.provider.sleep = lambda s: None
    with pytest.raises(LLMError, match=r"no answer within 0.5s.*after 2 tries"):
        model.complete("What is the capital of France?")


def test_bad_key_and_unknown_model_are_one_line_and_never_show_the_key(
        server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-987654")
    with pytest.raises(LLMError) as refused:
        openai(server, tmp_path).complete("hi")
    assert refused.value.fatal and "OPENAI_API_KEY" in str(refused.value)
    assert "sk-wrong" not in str(refused.value)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with pytest.raises(LLMError, match="unknown model 'gpt-nope'") as unknown:
        openai(server, tmp_path, model="gpt-nope").complete("hi")
    assert unknown.value.fatal and len(server.calls) == 2  # neither is retried
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(LLMError, match="no API key for openai: set OPENAI_API_KEY"):
        LLM(OpenAIConfig(model="gpt-4o-mini"), None).check()
    with pytest.raises(BenchsmithError, match="unknown model provider 'mistral'"):
        parse_model("mistral:large")
    with pytest.raises(BenchsmithError, match="expected PROVIDER:MODEL"):
        parse_model("gpt-4o")


def test_a_rerun_is_served_from_the_cache_with_zero_provider_calls(server, tmp_path: Path) -> None:
    first = openai(server, tmp_path)
    samples = [first.chat([Message(role="user", content="sample please")],
                          CallParams(temperature=0.8, sample=i)).text for i in range(2)]
    first.complete("What is the capital of France?")
    assert samples == ["one", "two"] and server.answered() == 3
    assert first.usage.llm_calls == 3 and first.usage.llm_cached_calls == 0
    again = openai(server, tmp_path)
    assert [again.chat([Message(role="user", content="sample please")],
                       CallParams(temperature=0.8, sample=i)).text for i in range(2)] == samples
    assert again.complete("What is the capital of France?") == "Paris"
    assert server.answered() == 3  # nothing reached the server
    assert again.usage.llm_calls == 0 and again.usage.llm_cached_calls == 3
    assert again.usage.llm_cost_usd == 0.0
    assert len(CallCache(tmp_path / "llm.sqlite")) == 3


def test_costs_come_from_the_editable_price_table(server, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "prices.toml"
    table.write_text('["openai:gpt-test"]\ninput = 1000.0\noutput = 2000.0\n')
    monkeypatch.setenv("BENCHSMITH_PRICES", str(table))
    model = openai(server, tmp_path)
    one = model.chat(ASK)
    two = model.chat([Message(role="user", content="sample please")])
    expected = sum((c.input_tokens * 1000 + c.output_tokens * 2000) / 1e6 for c in (one, two))
    assert model.usage.llm_cost_usd == pytest.approx(expected) and expected > 0
    assert model.usage.llm_tokens == sum(c.input_tokens + c.output_tokens for c in (one, two))
    assert Prices.load().of("openai", "gpt-4o-mini-2024-07-18").input == 0.15  # dated release
    assert Prices.load().of("openai", "no-such-model") is None
