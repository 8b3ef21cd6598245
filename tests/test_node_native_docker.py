"""A native addon whose build needs Debian -dev packages the base image lacks, set up on
Docker: the first install fails, the diagnosis names the packages (from the pkg-config modules
the build asks for), the repair installs them (cairo's pulls Debian's own python3 in beside the
sandbox's), node-gyp builds against the staged Node's own headers (no download), and the tests
pass."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import RepoBuilder

pytestmark = [pytest.mark.slow, pytest.mark.docker]

BINDING = {"targets": [{"target_name": "pixels", "sources": ["pixels.cc"],
                        "cflags": ["<!@(pkg-config --cflags pixman-1 cairo)"],
                        "libraries": ["<!@(pkg-config --libs pixman-1 cairo)"]}]}
PIXELS_CC = """#include <node_api.h>
#include <cairo.h>
#include <pixman.h>
#include <string>

static napi_value Version(napi_env env, napi_callback_info info) {
  napi_value result;
  std::string versions = std::string(pixman_version_string()) + " " + cairo_version_string();
  napi_create_string_utf8(env, versions.c_str(), NAPI_AUTO_LENGTH, &result);
  return result;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "version", NAPI_AUTO_LENGTH, Version, nullptr, &fn);
  napi_set_named_property(env, exports, "version", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
"""
TEST = """const { test } = require('node:test');
const assert = require('node:assert');
const pixels = require('pixels');
test('the addon reports its library version', () => {
  assert.match(pixels.version(), /^\\d+\\.\\d+\\.\\d+ \\d+\\.\\d+\\.\\d+$/);
});
"""


def test_a_native_addon_gets_its_debian_headers_on_docker(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "uses-pixels")
    repo.commit({
        "package.json": json.dumps({"name": "uses-pixels", "version": "1.0.0",
                                    "scripts": {"test": "node --test"},
                                    "dependencies": {"pixels": "file:./pixels"}}),
        ".nvmrc": "18\n",
        "pixels/package.json": json.dumps({"name": "pixels", "version": "1.0.0",
                                           "main": "build/Release/pixels.node",
                                           "scripts": {"install": "node-gyp rebuild"}}),
        "pixels/binding.gyp": json.dumps(BINDING),
        "pixels/pixels.cc": PIXELS_CC,
        "test/pixels.test.js": TEST}, date="2023-05-01T12:00:00+00:00")
    out = tmp_path / "setup.json"
    run = subprocess.run([sys.executable, "-m", "benchsmith.cli", "setup", str(repo.path),
                          "--out", str(out), "--no-refdb", "--backend", "docker",
                          "--date", "2023-06-01"], capture_output=True, text=True, timeout=1800)
    assert out.is_file(), run.stdout + run.stderr
    record: dict[str, Any] = json.loads(out.read_text())
    first = record["iterations"][0]
    assert first["diagnosis"]["kind"] == "system_packages", first["diagnosis"]
    assert first["diagnosis"]["facts"]["apt"] == ["libpixman-1-dev", "libcairo2-dev"]
    assert "install Debian packages libpixman-1-dev libcairo2-dev" in first["repair"]
    assert record["status"] == "validated", (record.get("failure_reason"), run.stderr[-2000:])
    assert len(record["iterations"]) == 2 and record["node"]["version"].startswith("18.")
    assert {t["name"]: t["status"] for t in record["tests"]["tests"]} == {
        "test/pixels.test.js::the addon reports its library version": "PASSED"}
