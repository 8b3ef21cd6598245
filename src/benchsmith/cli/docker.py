"""`benchsmith docker ...`: base images, leftovers, and rebuilding environment images."""

from __future__ import annotations

import time
from fnmatch import fnmatch
from pathlib import Path
from typing import Annotated, Any

import typer

from benchsmith.cli.app import WorkflowGroup, app, err, fail, out, say
from benchsmith.core import BenchsmithError
from benchsmith.sandbox.tools import scratch_dir

docker_app = typer.Typer(no_args_is_help=True, cls=WorkflowGroup, help="Docker backend: base images and leftovers.")
app.add_typer(docker_app, name="docker")


@docker_app.command("base")
def docker_base(
    python: Annotated[str, typer.Option("--python", help="Python minor version, e.g. 3.11.")],
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Build again even if it exists.")] = False,
) -> None:
    """Pull or build the base image for one Python version, and say which way it went."""
    from benchsmith.sandbox.docker.base import docker_client, ensure_base_image

    try:
        result = ensure_base_image(docker_client(), python, rebuild=rebuild, progress=say)
    except BenchsmithError as exc:
        fail(str(exc))
    out.print(f"{result.name}: {result.how} ({result.detail})", highlight=False)


# What `docker clean --images LEVEL` removes: each level adds a layer kind under the last.
IMAGE_LEVELS: dict[str, tuple[str, ...]] = {
    "none": (), "instance": ("instance",), "env": ("instance", "env"),
    "base": ("instance", "env", "base", "other")}
KINDS = ("base", "env", "instance", "other")


def image_kind(tags: list[str]) -> str:
    """The layer an image of benchsmith's is, by its tag (see sandbox.store's names): base (the
    Debian rootfs, the per-Python base), env (a repository's validated environment), instance
    (a commit on top of one) or other."""
    for kind, prefixes in (("instance", ("benchsmith/inst.",)), ("env", ("benchsmith/env.",)),
                           ("base", ("benchsmith/base:", "benchsmith/rootfs:"))):
        if any(tag.startswith(prefixes) for tag in tags):
            return kind
    return "other"


@docker_app.command("clean")
def docker_clean(
    include_cache: Annotated[bool, typer.Option("--include-cache", help="Also remove the shared uv cache volume.")] = False,
    images: Annotated[str, typer.Option("--images", metavar="LEVEL", help="Also remove benchsmith's images: none, instance (instance images), env (and environment images) or base (and base images: everything); those a container still uses stay.")] = "none",
    match: Annotated[str | None, typer.Option("--match", help="With --images: only images with a tag matching this glob, e.g. 'benchsmith/env.*'.")] = None,
) -> None:
    """Remove containers and volumes benchsmith left behind (labelled benchsmith=1), and with
    --images LEVEL its images down to that layer."""
    from benchsmith.sandbox.docker.base import docker_client
    from benchsmith.sandbox.docker.sandbox import clean_leftovers

    if images not in IMAGE_LEVELS:
        fail(f"unknown --images level {images!r}: use one of {', '.join(IMAGE_LEVELS)}")
    if match is not None and images == "none":
        fail("--match chooses images: it needs --images instance, env or base")
    try:
        client = docker_client()
        removed = clean_leftovers(client, include_cache=include_cache)
        if IMAGE_LEVELS[images]:
            removed += _remove_images(client, IMAGE_LEVELS[images], match)
    except BenchsmithError as exc:
        fail(str(exc))
    out.print(f"removed {len(removed)} object(s)" + (": " + ", ".join(removed) if removed else ""),
              highlight=False, soft_wrap=True)


def _ours(tags: list[str], labels: dict[str, str] | None) -> bool:
    return (labels or {}).get("benchsmith") == "1" or any(t.startswith("benchsmith/") for t in tags)


def _remove_images(client: Any, kinds: tuple[str, ...], match: str | None) -> list[str]:
    """Remove benchsmith's images of `kinds` (all, or those with a tag matching `match`),
    instance images first, then environments, then bases: each before what it is built on."""
    import docker.errors

    removed = []
    found = sorted(client.images.list(all=True), key=lambda image: image.attrs.get("Created", ""),
                   reverse=True)
    found.sort(key=lambda image: KINDS[::-1].index(image_kind(list(image.tags))))
    for image in found:
        tags = list(image.tags)
        if (not _ours(tags, image.labels) or image_kind(tags) not in kinds
                or (match and not any(fnmatch(t, match) for t in tags))):
            continue
        for tag in tags or [image.id]:
            try:
                client.images.remove(tag, noprune=False)
                removed.append(f"image {tag if tags else image.short_id}")
            except docker.errors.NotFound:
                continue
            except docker.errors.APIError as exc:  # in use by a container, or a parent image
                if tags:  # untagged build layers under a kept image are no news
                    say(f"kept image {tag}: {str(exc.explanation or exc).splitlines()[0]}")
    return removed


def disk_usage(client: Any, tries: int = 5) -> dict[str, Any]:
    """The engine's `system df`; one the engine is already computing for another client (it
    answers 500 "a disk usage operation is already running") is waited for. Other API errors
    become a :class:`BenchsmithError`."""
    import docker

    for attempt in range(tries):
        try:
            return dict(client.df())
        except docker.errors.APIError as exc:
            if "already running" not in str(exc) or attempt == tries - 1:
                raise BenchsmithError(f"the Docker engine's disk usage: {exc.explanation or exc}") from exc
            time.sleep(2)
    return {}


def image_sizes(client: Any) -> dict[str, tuple[int, int]]:
    """(size, size not shared with other images) of every tagged image, by tag."""
    sizes: dict[str, tuple[int, int]] = {}
    for image in disk_usage(client).get("Images") or []:
        size = int(image.get("Size", 0) or 0)
        own = max(size - max(int(image.get("SharedSize", 0) or 0), 0), 0)
        for tag in image.get("RepoTags") or []:
            sizes[tag] = (size, own)
    return sizes


@docker_app.command("du")
def docker_du() -> None:
    """What benchsmith's images (per layer: base, env, instance), containers and volumes take
    on disk."""
    from rich.table import Table

    from benchsmith.sandbox.docker.base import docker_client

    try:
        usage = disk_usage(docker_client())
    except BenchsmithError as exc:
        fail(str(exc))
    images = [i for i in usage.get("Images") or [] if _ours(i.get("RepoTags") or [], i.get("Labels"))]
    containers = [c for c in usage.get("Containers") or [] if (c.get("Labels") or {}).get("benchsmith") == "1"]
    volumes = [v for v in usage.get("Volumes") or [] if (v.get("Labels") or {}).get("benchsmith") == "1"]
    table = Table(title="benchsmith on Docker")
    for column in ("kind", "count", "size", "detail"):
        table.add_column(column, justify="left" if column in ("kind", "detail") else "right")
    for kind in KINDS:
        found = [i for i in images if image_kind(i.get("RepoTags") or []) == kind]
        own = sum(max(i.get("Size", 0) - max(i.get("SharedSize", 0), 0), 0) for i in found)
        table.add_row(f"images: {kind}", str(len(found)), size_text(sum(i.get("Size", 0) for i in found)),
                      f"{size_text(own)} not shared with other images")
    table.add_row("containers", str(len(containers)), size_text(sum(c.get("SizeRw", 0) or 0 for c in containers)),
                  f"{sum(1 for c in containers if c.get('State') == 'running')} running")
    table.add_row("volumes", str(len(volumes)),
                  size_text(sum(max((v.get("UsageData") or {}).get("Size", 0), 0) for v in volumes)),
                  ", ".join(v.get("Name", "") for v in volumes))
    out.print(table)


def size_text(count: int) -> str:
    """A byte count as people read it (kB, MB, GB: powers of 1000, as Docker shows them)."""
    size = float(count)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} GB"


@docker_app.command("build-env")
def docker_build_env(
    record_path: Annotated[Path, typer.Argument(help="A setup.json written with --backend docker.")],
) -> None:
    """Rebuild a validated environment image from its generated Dockerfile and validate it again."""
    import shutil

    from benchsmith.harness.checkout import materialize, resolve
    from benchsmith.harness.history import seal_dir
    from benchsmith.harness.vendored import vendor
    from benchsmith.sandbox.docker.images import (
        build_env_image,
        render_dockerfile,
        start_from_image,
    )
    from benchsmith.setup.rebuild import validate_in
    from benchsmith.setup.record import SetupRecord

    try:
        record = SetupRecord.model_validate_json(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        fail(f"cannot read setup record {record_path}: {str(exc).splitlines()[0]}")
    if record.status != "validated" or not record.commit:
        fail(f"{record_path} is not a validated setup (status {record.status})")
    workspace = scratch_dir("src")
    try:
        checkout = resolve(record.source, rev=None if record.commit == "worktree" else record.commit,
                           on_date=record.date if record.commit == "worktree" else None,
                           repo=record.repo)
        repo_dir = materialize(checkout, workspace / "repo")
        vendor(repo_dir, record.install)
        if checkout.git_dir is not None:
            seal_dir(repo_dir, checkout.commit, f"{record.repo} at {checkout.commit[:12]}")
        err.print(f"[dim]building {record.repo} @ {record.commit[:12]} from its Dockerfile[/]")
        dockerfile = record.dockerfile or render_dockerfile(
            record.repo, record.commit, record.python or "", record.exclude_newer or "", record.install)
        image = build_env_image(record.repo, record.commit, dockerfile, record.python or "", repo_dir)
        sandbox = start_from_image(image)
        try:
            ok, rate, count = validate_in(sandbox, record, record.threshold)
        finally:
            sandbox.close()
    except BenchsmithError as exc:
        fail(str(exc))
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    shown = f"{rate:.1%}" if rate is not None else "n/a"
    line = f"{image}: {'validated' if ok else 'NOT validated'} ({count} tests, pass rate {shown})"
    out.print(line, highlight=False)
    if not ok:
        raise typer.Exit(1)
