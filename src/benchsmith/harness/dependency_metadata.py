"""uv's ``dependency-metadata`` setting for a plan's releases whose own metadata it cannot read
(:mod:`benchsmith.setup.metadata_repairs`): a config file written by the install command itself,
so the command works alone in any sandbox, image or exported script."""

from __future__ import annotations

import base64
import hashlib
import json

__all__ = ["metadata_config"]


def metadata_config(entries: dict[str, list[str]]) -> tuple[str, list[str]] | None:
    """(the shell command that writes uv's config file, the uv options that read it) for
    `entries` ("NAME==VERSION" -> requirements); None when there are none."""
    if not entries:
        return None
    blocks = []
    for key, requirements in sorted(entries.items()):
        name, _, version = key.partition("==")
        blocks.append("[[dependency-metadata]]\n"
                      f"name = {json.dumps(name)}\n"
                      + (f"version = {json.dumps(version)}\n" if version else "")
                      + f"requires-dist = {json.dumps(requirements)}\n")
    text = "\n".join(blocks)
    path = f"/tmp/benchsmith-metadata-{hashlib.sha256(text.encode()).hexdigest()[:12]}.toml"
    # one line (a Dockerfile RUN takes no newline), no character the shell reads
    encoded = base64.b64encode(text.encode()).decode()
    return f"echo {encoded} | base64 -d > {path}", ["--config-file", path]
