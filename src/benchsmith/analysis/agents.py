"""The report's agent sections: accuracy per dataset, Spearman's rho per characteristic,
knowledge-cutoff tests, and a `build` run's funnel (the benchmark paper's Tables 1, 7, 8, 10)."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from benchsmith.analysis.characteristics import CHARACTERISTICS
from benchsmith.analysis.results import (
    SIGNIFICANT,
    Correlation,
    CutoffTest,
    Results,
    correlations,
    cutoff_test,
    match_results,
)

Rows = list[dict[str, Any]]


class Agents(BaseModel):
    """Everything the report says about agent results, per dataset."""

    results: dict[str, Results] = Field(default_factory=dict)
    accuracy: dict[str, dict[str, float | int | None]] = Field(default_factory=dict)
    correlations: dict[str, dict[str, Correlation]] = Field(default_factory=dict)
    cutoffs: dict[str, list[CutoffTest]] = Field(default_factory=dict)


def agent_analysis(datasets: dict[str, Rows], results: dict[str, Results], cutoffs: dict[str, str],
                   warn: Callable[[str], None]) -> Agents:
    """Accuracy, correlations and cutoff tests for each dataset that has results."""
    agents = Agents()
    used: set[str] = set()
    for name, loaded in results.items():
        matched = match_results(name, datasets[name], loaded, warn)
        agents.results[name] = matched
        evaluated = len(matched.resolved)
        resolved = sum(matched.resolved.values())
        agents.accuracy[name] = {"evaluated": evaluated, "resolved": resolved,
                                 "accuracy": round(resolved / evaluated, 4) if evaluated else None}
        agents.correlations[name] = correlations(datasets[name], matched, CHARACTERISTICS)
        for model, cutoff in cutoffs.items():
            if model == matched.model:
                used.add(model)
                agents.cutoffs.setdefault(name, []).append(cutoff_test(datasets[name], matched, cutoff))
    models = sorted({r.model for r in results.values()})
    for model in sorted(set(cutoffs) - used):
        warn(f"--cutoff {model}: no results of that model (models: {', '.join(models) or 'none'})")
    return agents


def _number(value: float | int | None, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    return f"{value:.{digits}g}" if isinstance(value, float) else str(value)


def agents_html(agents: Agents) -> str:
    """The agent sections of the page (empty without results)."""
    if not agents.results:
        return ""
    names = list(agents.results)
    rows = "".join(
        f"<tr><th>{html.escape(n)}</th><td>{html.escape(agents.results[n].model)}</td>"
        f"<td>{a['evaluated']}</td><td>{a['resolved']}</td><td>{_number(a['accuracy'])}</td></tr>"
        for n, a in agents.accuracy.items())
    head = "".join(f"<th>{html.escape(n)} rho</th><th>p</th><th>n</th>" for n in names)
    body = []
    for key in CHARACTERISTICS:
        cells = ""
        for name in names:
            c = agents.correlations[name][key]
            mark = "<b>*</b>" if c.significant else ""
            title = f" title='{html.escape(c.note)}'" if c.note else ""
            cells += f"<td{title}>{_number(c.rho)}{mark}</td><td>{_number(c.p, 2)}</td><td>{c.n}</td>"
        body.append(f"<tr><th>{key}</th>{cells}</tr>")
    tests = "".join(
        f"<tr><th>{html.escape(n)}</th><td>{html.escape(t.model)}</td><td>{t.cutoff}</td>"
        f"<td>{t.before_resolved}/{t.before}</td><td>{_number(t.accuracy_before)}</td>"
        f"<td>{t.after_resolved}/{t.after}</td><td>{_number(t.accuracy_after)}</td>"
        f"<td>{_number(t.p_one_sided, 3)}</td></tr>"
        for n, found in agents.cutoffs.items() for t in found)
    cutoff = ("<h2>Knowledge cutoff</h2><p>Accuracy on instances created before the cutoff "
              "against those created on or after it; one-sided p-value that it was higher "
              "before (two-proportion z-test, pooled).</p><table><tr><th>dataset</th><th>model</th>"
              "<th>cutoff</th><th>before</th><th>accuracy</th><th>after</th><th>accuracy</th>"
              f"<th>p</th></tr>{tests}</table>") if tests else ""
    return (f"<h2>Agent results</h2><table><tr><th>dataset</th><th>model</th><th>evaluated</th>"
            f"<th>resolved</th><th>accuracy</th></tr>{rows}</table>"
            f"<h2>Spearman's rho with resolution</h2><p>Per characteristic over the evaluated "
            f"instances with a known value; * marks p &lt; {SIGNIFICANT:g}.</p>"
            f"<table><tr><th>characteristic</th>{head}</tr>{''.join(body)}</table>{cutoff}")


def funnel_html(funnel: dict[str, Any] | None) -> str:
    """A `build` run's funnel: PRs per stage and per final stage."""
    if not funnel:
        return ""
    parts = []
    for title, key in (("stages reached", "pr_stages"), ("final stage of each PR", "terminal")):
        items = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{v}</td></tr>"
                        for k, v in (funnel.get(key) or {}).items())
        parts.append(f"<h3>{title}</h3><table>{items}</table>")
    return "<h2>Build funnel</h2>" + "".join(parts)
