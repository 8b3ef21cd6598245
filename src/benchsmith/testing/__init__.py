"""Fakes that ship with benchsmith, so the whole CLI runs offline: a GitHub API server and a
language-model server (OpenAI- and Anthropic-compatible) and an npm registry on 127.0.0.1 serving
self-written responses."""

from benchsmith.testing.fake_github import FakeGitHub, FakeRepo
from benchsmith.testing.fake_npm_registry import FakeNpmRegistry, FakePackage

__all__ = ["FakeGitHub", "FakeLLMServer", "FakeNpmRegistry", "FakePackage", "FakeRepo"]


def __getattr__(name: str) -> object:
    # The LLM fake is loaded on demand, so importing the GitHub fake loads nothing of the LLM layer.
    if name == "FakeLLMServer":
        from benchsmith.testing.fake_openai import FakeLLMServer

        return FakeLLMServer
    raise AttributeError(name)
