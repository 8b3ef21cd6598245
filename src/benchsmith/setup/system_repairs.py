"""Repairs for what the machine must provide, not the Python install: Debian packages and
services (both only in sandboxes that may install system packages)."""

from __future__ import annotations

from benchsmith.core import Diagnosis, Plan, Service
from benchsmith.harness.services import DEBIAN_PACKAGES
from benchsmith.setup.context_model import RepoContext


def repair_system_packages(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Missing headers, tools or libraries: install their Debian packages (sandboxes with apt)."""
    fresh = [p for p in diagnosis.facts.get("apt", []) if p not in plan.apt_packages]
    if not fresh:
        return None
    plan.apt_packages += fresh
    return f"install Debian packages {' '.join(fresh)}"


def repair_services(plan: Plan, diagnosis: Diagnosis, context: RepoContext) -> str | None:
    """Tests could not reach a database or cache: start it before the tests (sandboxes with apt)."""
    have = {s.kind for s in plan.services}
    fresh = [k for k in diagnosis.facts.get("services", []) if k not in have]
    if not fresh:
        return None
    plan.services += [Service(kind=kind, source="test output") for kind in fresh]  # type: ignore[arg-type]
    packages = [p for kind in fresh for p in DEBIAN_PACKAGES[kind]]  # type: ignore[index]
    return f"start {', '.join(fresh)} before the tests (Debian packages {' '.join(packages)})"
