"""Second spellings of an option: deprecated ones (kept one release, with a warning line) and the
``--instances FILE`` form of the commands whose canonical form is a positional INSTANCES."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any

import typer

from benchsmith.cli.app import fail, warn

Command = Callable[..., Any]


def _evaluated(annotation: Any, namespace: dict[str, Any]) -> Any:
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, namespace)  # noqa: S307
    except NameError:  # a type that exists only for type checkers (another decorator's target)
        return annotation


def _alias(func: Command, target: str, spelling: str, hidden: bool, help_text: str | None,
           on_use: Callable[[], None] | None, missing: str | None) -> Command:
    signature = inspect.signature(func)
    parameters = [p.replace(annotation=_evaluated(p.annotation, func.__globals__))
                  for p in signature.parameters.values()]
    wanted = next(p for p in parameters if p.name == target)
    base = typing.get_args(wanted.annotation)[0]
    name = "alias_" + spelling.lstrip("-").replace("-", "_")
    added = inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
        base | None, typer.Option(spelling, hidden=hidden, help=help_text, show_default=False)])

    @functools.wraps(func)
    def command(*args: Any, **kwargs: Any) -> Any:
        value = kwargs.pop(name)
        if value is not None:
            if on_use is not None:
                on_use()
            kwargs[target] = value
        elif missing is not None and kwargs.get(target) is None:
            fail(missing)
        return func(*args, **kwargs)

    return _with_parameter(command, signature.replace(parameters=parameters), added)


def _with_parameter(command: Command, signature: inspect.Signature,
                    added: inspect.Parameter) -> Command:
    """`command` presented to typer with `signature` and one more keyword parameter, `added`."""
    both = list(signature.parameters.values()) + [added]
    command.__signature__ = signature.replace(parameters=both, return_annotation=None)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in both}
    return command


def renamed(old: str, new: str, target: str) -> Callable[[Command], Command]:
    """Accept `old` as a hidden, deprecated spelling of option `new` (parameter `target`): it
    works, and prints one warning line."""
    def decorate(func: Command) -> Command:
        return _alias(func, target, old, True, None, lambda: deprecated(old, new), None)
    return decorate


def deprecated(old: str, new: str) -> None:
    """The one line a deprecated spelling prints."""
    warn(f"{old} is deprecated; use {new}")


def instances_option(target: str, metavar: str = "INSTANCES", split: bool = False
                     ) -> Callable[[Command], Command]:
    """The positional `metavar` (parameter `target`, default None) may also be given as
    ``--instances FILE``; one error line when neither is. With `split`, ``--split NAME`` picks
    a split of a Hugging Face dataset given by name or saved to disk."""
    def decorate(func: Command) -> Command:
        command = _alias(func, target, "--instances", False, f"The same as the {metavar} argument.",
                         None, f"missing {metavar}: give it as an argument or with --instances")
        return _split_option(command, target) if split else command
    return decorate


def _split_option(func: Command, target: str) -> Command:
    from benchsmith.core import BenchsmithError
    from benchsmith.harness.hub import with_split

    signature = inspect.signature(func)
    added = inspect.Parameter("split", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
        str | None, typer.Option("--split", show_default=False, help=(
            "The split of a Hugging Face dataset (a name from the local cache, or a folder "
            "save_to_disk wrote): test, dev, train... (default: test)"))])

    @functools.wraps(func)
    def command(*args: Any, **kwargs: Any) -> Any:
        split = kwargs.pop("split")
        for name in (target, "alias_instances"):
            if split is not None and kwargs.get(name) is not None:
                try:
                    kwargs[name] = type(kwargs[name])(with_split(kwargs[name], split))
                except BenchsmithError as exc:
                    fail(str(exc))
        return func(*args, **kwargs)

    return _with_parameter(command, signature, added)
