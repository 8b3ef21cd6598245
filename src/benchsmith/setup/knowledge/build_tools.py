"""Build backends and tools: which ones too-old pins break, and when each gained PEP 660."""

from __future__ import annotations

# Build backends and tools whose too-old versions (as pinned by a historical date) break
# editable or isolated builds; candidates for a newer pin in the build environment.
BUILD_TOOLS: tuple[str, ...] = (
    "setuptools",
    "wheel",
    "setuptools-scm",
    "setuptools-rust",
    "hatchling",
    "hatch-vcs",
    "hatch-fancy-pypi-readme",
    "flit-core",
    "poetry-core",
    "pdm-backend",
    "pdm-pep517",
    "scikit-build",
    "scikit-build-core",
    "meson-python",
    "maturin",
    "Cython",
    "pip",
    "versioneer",
)

# First UTC date on PyPI of a release of each backend that implements PEP 660 editable builds.
PEP660_DATES: dict[str, str] = {
    "setuptools": "2022-08-11",  # 64.0.0
    "flit-core": "2021-10-10",  # 3.4.0
    "poetry-core": "2022-02-28",  # 1.0.8 (changelog says 02-27; upload landed the next day UTC)
    "pdm-pep517": "2021-06-29",  # 0.8.0
    "hatchling": "2022-01-09",  # 0.8.0, the oldest release still on PyPI; all support it
}
