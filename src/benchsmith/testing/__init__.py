"""Fakes that ship with benchsmith, so the whole CLI runs offline: a GitHub API server on
127.0.0.1 serving self-written responses."""

from benchsmith.testing.fake_github import FakeGitHub, FakeRepo

__all__ = ["FakeGitHub", "FakeRepo"]
