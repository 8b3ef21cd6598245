"""The line-splicing engine behind custom diffs (see :mod:`benchsmith.evaluation.custom_diff`).

A file is edited as a list of lines that keep their own line endings, so every line outside an
edited range stays byte-identical. Definitions and statement boundaries come from `ast`; when the
file does not parse (syntax errors, Python 2), from an indentation scan (see `scan`).
"""

from __future__ import annotations

import ast
import re
import textwrap
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field

from benchsmith.parsing.python_source import parse_source

SCAN_NOTE = "file does not parse: indentation scan"
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")  # line breaks as `ast` counts them
_DEF = re.compile(r"([ \t]*)(async[ \t]+def|def|class)[ \t]+([^\W\d]\w*)[ \t]*[(:\[]")
_SELF_PARAM = re.compile(r"(?:async\s+)?def\s+\w+\s*\(\s*(?:self|cls)\b")
_MEMBER_DECORATOR = re.compile(r"@(?:staticmethod|classmethod|pytest\.fixture)\b")
_CODING = re.compile(r"[ \t\f]*#.*coding[:=]")
_DOCSTRING = re.compile(r"[rRuUbB]?(\"\"\"|''')")
_CLOSING = (")", "]", "}")


@dataclass
class Step:
    """What one edit did: the definition or place it hit, the new code's first line, a fallback."""

    target: str | None
    start_line: int
    fallback: str | None = None


@dataclass
class Definition:
    """A def or class: 1-based first line (decorators included) and last line, indentation."""

    name: str
    qualname: str
    is_class: bool
    start: int
    end: int
    indent: str
    members: list[tuple[int, int]] = field(default_factory=list)  # classes: body statements
    member_indent: str = ""
    body_start: int = 0  # classes: lines above the earliest insertion point (after a docstring)


@dataclass
class Structure:
    """What inserts and rewrites need to know about a file."""

    definitions: list[Definition]
    statements: list[tuple[int, int]]  # module-level statements: (first line, last line)
    bof: int  # lines to keep above a BOF insert: shebang, encoding, docstring, __future__
    parsed: bool  # False when found by the indentation scan


class _Doc:
    """A text as lines that all end with a newline; `text()` restores a missing final newline."""

    def __init__(self, text: str) -> None:
        self.lines: list[str] = _LINE.findall(text)
        found = re.search(r"\r\n|\r|\n", text)
        self.newline = found.group() if found else "\n"
        self.final_newline = not text or text.endswith(("\n", "\r"))
        if self.lines and not self.final_newline:
            self.lines[-1] += self.newline

    def text(self) -> str:
        joined = "".join(self.lines)
        if not self.final_newline and joined.endswith(self.newline):
            joined = joined[: -len(self.newline)]
        return joined


def apply_block(text: str | None, action: str, location: int | str, code: str
                ) -> tuple[str, list[Step]]:
    """Apply one block's code to `text` (None: no such file); return the new text and steps."""
    if not text:
        fallback = None if action == "insert" else "no such file: created"
        if text == "" and action == "rewrite":
            fallback = "empty file: inserted"
        name = _first_definition(textwrap.dedent(code).split("\n"))[1]
        target = location if isinstance(location, str) else name or f"line {location}"
        return "".join(_code_lines(code, "", "\n")), [Step(target, 1, fallback)]
    doc = _Doc(text)
    steps = _rewrite(doc, code, location) if action == "rewrite" else [_insert(doc, code, location)]
    return doc.text(), steps


def analyze(lines: list[str]) -> Structure:
    """Find the definitions, module-level statements and BOF insertion point of a file."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = parse_source("".join(lines))
    except (SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError):
        return scan(lines)
    definitions: list[Definition] = []
    _collect(tree.body, "", lines, definitions)
    bof, body = _leading_comments(lines), list(tree.body)
    if body and _is_docstring(body[0]):
        bof = max(bof, _span(body.pop(0))[1])
    while body and isinstance(body[0], ast.ImportFrom) and body[0].module == "__future__":
        bof = max(bof, _span(body.pop(0))[1])
    return Structure(definitions, [_span(node) for node in tree.body], bof, parsed=True)


def split_definitions(code: str) -> list[tuple[str | None, bool, str]]:
    """Split code into (name, is_class, code) per top-level definition; text before the first
    definition stays with it. Found by regex, so code with syntax errors still splits."""
    lines = textwrap.dedent(code).split("\n")
    starts = []
    for index, line in enumerate(lines):
        match = _DEF.match(line)
        if match and not match.group(1):
            starts.append((_decorator_start(lines, index, ""), match.group(3),
                           match.group(2) == "class"))
    if not starts:
        return [(None, False, code)]
    bounds = [0] + [first for first, _, _ in starts[1:]] + [len(lines)]
    return [(name, is_class, "\n".join(lines[bounds[k]:bounds[k + 1]]))
            for k, (_, name, is_class) in enumerate(starts)]


def _rewrite(doc: _Doc, code: str, location: int | str) -> list[Step]:
    steps = []
    for name, is_class, chunk in split_definitions(code):
        structure = analyze(doc.lines)
        candidates = [d for d in structure.definitions if d.name == name]
        target = _nearest([d for d in candidates if d.is_class == is_class] or candidates, location)
        if target is None:
            why = f"{name} not found: inserted" if name else "no def or class in the code: inserted"
            steps.append(_insert(doc, chunk, location, why))
            continue
        doc.lines[target.start - 1:target.end] = _code_lines(chunk, target.indent, doc.newline)
        steps.append(Step(target.qualname, target.start, None if structure.parsed else SCAN_NOTE))
    return steps


def _nearest(candidates: list[Definition], location: int | str) -> Definition | None:
    """The candidate containing the line, else the one starting nearest; BOF first, EOF last."""
    if not candidates:
        return None
    if location == "BOF":
        return min(candidates, key=lambda d: d.start)
    if location == "EOF":
        return max(candidates, key=lambda d: d.start)
    line = int(location)
    return min(candidates, key=lambda d: (not d.start <= line <= d.end, abs(d.start - line)))


def _insert(doc: _Doc, code: str, location: int | str, fallback: str | None = None) -> Step:
    structure = analyze(doc.lines)
    notes = [note for note in (fallback, None if structure.parsed else SCAN_NOTE) if note]
    lines = textwrap.dedent(code).split("\n")
    index, name = _first_definition(lines)
    cls: Definition | None = None
    if location == "BOF":
        position, target = structure.bof, "BOF"
    elif location == "EOF" or int(location) > len(doc.lines):
        position, target = len(doc.lines), "EOF"
        if index is not None and _SELF_PARAM.match("\n".join(lines[index:])):  # last class
            top = [d for d in structure.definitions if d.is_class and "." not in d.qualname]
            cls = max(top, key=lambda d: d.start) if top else None
            position = cls.end if cls else position
    else:
        line = max(1, int(location))
        position, target, spans = structure.bof, name or f"line {line}", structure.statements
        if _is_member(lines, index):
            classes = [d for d in structure.definitions if d.is_class and d.start <= line <= d.end]
            cls = max(classes, key=lambda d: d.start) if classes else None
        if cls is not None:
            position, spans = cls.body_start, cls.members
        position = max([position] + [end for start, end in spans if start <= line])
    if cls is not None:
        target = f"{cls.qualname}.{name}" if name else cls.qualname
    separation = 1 if cls is not None or index is None else 2
    new = _code_lines(code, cls.member_indent if cls else "", doc.newline)
    first = cls is not None and all(position < start for start, _ in cls.members)
    start = _place(doc, position, new, separation, 0 if first else separation)
    return Step(target, start, "; ".join(notes) or None)


def _place(doc: _Doc, position: int, new: list[str], separation: int, lead_separation: int
           ) -> int:
    """Splice `new` in before line index `position` with at least so many blank lines around."""
    lines = doc.lines
    above = _count_blank(reversed(lines[:position]))
    below = _count_blank(lines[position:])
    lead = [doc.newline] * (lead_separation - above) if position > 0 else []
    trail = [doc.newline] * (separation - below) if position < len(lines) else []
    lines[position:position] = lead + new + trail
    return position + len(lead) + 1


def _count_blank(lines: Iterable[str]) -> int:
    count = 0
    for line in lines:
        if line.strip():
            break
        count += 1
    return count


def _code_lines(code: str, indent: str, newline: str) -> list[str]:
    """Dedent `code`, indent it by `indent`, drop blank lines around it, end lines by `newline`."""
    lines = textwrap.dedent(code).split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    if "\t" in indent:  # a file indented with tabs: 4 leading spaces of the code become a tab
        lines = [re.sub(r"^(?:    )+", lambda m: "\t" * (len(m.group()) // 4), line)
                 for line in lines]
    return [(indent + line if line.strip() else "") + newline for line in lines]


def _first_definition(lines: list[str]) -> tuple[int | None, str | None]:
    """Index and name of the first unindented def/class line (of dedented code)."""
    for index, line in enumerate(lines):
        match = _DEF.match(line)
        if match and not match.group(1):
            return index, match.group(3)
    return None, None


def _is_member(lines: list[str], index: int | None) -> bool:
    """Whether dedented code looks like a method: `self`/`cls` first, or a member decorator."""
    if index is None or lines[index].lstrip().startswith("class"):
        return False
    decorators = lines[_decorator_start(lines, index, ""):index]
    return bool(_SELF_PARAM.match("\n".join(lines[index:]))) or any(
        _MEMBER_DECORATOR.match(line.strip()) for line in decorators)


def _decorator_start(lines: list[str], index: int, indent: str) -> int:
    """The first line of the decorators above line `index` (multi-line decorators included)."""
    first = index
    for above in range(index - 1, -1, -1):
        line = lines[above].rstrip("\r\n")
        if line.startswith(indent + "@"):
            first = above
        elif not line.strip() or not (_width(_indent(line)) > _width(indent)
                                       or line.strip().startswith(_CLOSING)):
            break
    return first


def _collect(body: list[ast.stmt], prefix: str, lines: list[str], out: list[Definition]) -> None:
    """Definitions at module level and in classes (also under if/try/with/...), not in functions."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            start, end = _span(node)
            definition = Definition(node.name, prefix + node.name, isinstance(node, ast.ClassDef),
                                    start, end, _indent(lines[start - 1]))
            out.append(definition)
            if isinstance(node, ast.ClassDef):
                first = node.body[0]
                definition.members = [_span(child) for child in node.body]
                definition.member_indent = (_indent(lines[_span(first)[0] - 1])
                                            if first.lineno > node.lineno
                                            else definition.indent + "    ")
                definition.body_start = (_span(first)[1] if _is_docstring(first)
                                         else _span(first)[0] - 1)
                _collect(node.body, definition.qualname + ".", lines, out)
            continue
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ExceptHandler, ast.match_case)):
                _collect(child.body, prefix, lines, out)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                _collect(block, prefix, lines, out)


def scan(lines: list[str]) -> Structure:
    """Find definitions by indentation alone, for files `ast` cannot parse.

    A `def`/`class` line starts a definition (with the decorators just above it); it ends at its
    last code line before the next non-blank line indented no deeper that is neither a comment
    nor a closing bracket. Module-level statements are found the same way from unindented lines.
    Multi-line strings or continuation lines at a lower indentation fool it.
    """
    definitions: list[Definition] = []
    enclosing: list[tuple[Definition, bool]] = []  # open definitions, and whether they are visible
    for number, line in enumerate(lines, 1):
        match = _DEF.match(line)
        if not match:
            continue
        indent, is_class, name = match.group(1), match.group(2) == "class", match.group(3)
        while enclosing and (enclosing[-1][0].end < number
                             or _width(enclosing[-1][0].indent) >= _width(indent)):
            enclosing.pop()
        parent, visible = enclosing[-1] if enclosing else (None, True)
        definition = Definition(name, f"{parent.qualname}.{name}" if parent else name, is_class,
                                _decorator_start(lines, number - 1, indent) + 1,
                                _block_end(lines, number, indent), indent)
        header = number  # the header ends at the first line ending with ":"
        while header < definition.end and not lines[header - 1].rstrip().endswith(":"):
            header += 1
        definition.body_start = header
        visible = visible and (parent is None or parent.is_class)
        enclosing.append((definition, visible))
        if visible:
            definitions.append(definition)
    for cls in (d for d in definitions if d.is_class):
        children = [d for d in definitions if d.qualname == f"{cls.qualname}.{d.name}"]
        cls.members = [(d.start, d.end) for d in children]
        body = [line for line in lines[cls.body_start:cls.end] if line.strip()]
        cls.member_indent = _indent(body[0]) if body else cls.indent + "    "
        cls.body_start = children[0].start - 1 if children else cls.body_start
    statements, number = [], 1
    while number <= len(lines):
        line = lines[number - 1]
        if not line.strip() or line[0] in " \t#" or line.startswith(_CLOSING):
            number += 1
            continue
        first = number
        while lines[number - 1].startswith("@") and number < len(lines):  # skip decorators
            number = _block_end(lines, number, "") + 1
        statements.append((first, _block_end(lines, number, "")))
        number = statements[-1][1] + 1
    return Structure(definitions, statements, _scan_bof(lines), parsed=False)


def _block_end(lines: list[str], number: int, indent: str) -> int:
    """Last line of the block whose header is line `number` (1-based), by indentation."""
    end = number
    for index in range(number, len(lines)):
        text = lines[index].strip()
        if not text or text.startswith("#"):  # comments never end a block, nor extend it
            continue
        if _width(_indent(lines[index])) <= _width(indent) and not text.startswith(_CLOSING):
            break
        end = index + 1
    return end


def _scan_bof(lines: list[str]) -> int:
    """BOF insertion point without `ast`: after comments, a docstring, `from __future__` lines."""
    bof = index = _leading_comments(lines)
    while index < len(lines) and not lines[index].strip():
        index += 1
    match = _DOCSTRING.match(lines[index]) if index < len(lines) else None
    if match:
        quote, rest = match.group(1), lines[index][match.end():]
        end = index
        while quote not in rest and end + 1 < len(lines):
            end += 1
            rest = lines[end]
        bof = index = end + 1
    while index < len(lines) and (not lines[index].strip()
                                  or lines[index].startswith("from __future__")):
        index += 1
        if lines[index - 1].strip():
            bof = index
    return bof


def _leading_comments(lines: list[str]) -> int:
    """How many of the first lines are a shebang or an encoding comment."""
    keep = 0
    for index, line in enumerate(lines[:2]):
        if not ((index == 0 and line.startswith("#!")) or _CODING.match(line)):
            break
        keep = index + 1
    return keep


def _span(node: ast.stmt) -> tuple[int, int]:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)]), node.end_lineno or node.lineno


def _is_docstring(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def _width(indent: str) -> int:
    return len(indent.expandtabs(8))
