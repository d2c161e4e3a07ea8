"""warpscope: memory coalescing and shared-memory bank conflicts, warp by warp, on every CUDA compute capability.

The same engine as the ``warpscope`` command line and the lab page, as Python functions::

    import warpscope
    r = warpscope.analyze(addr="4*lane", op="LDG.E.32")
    print(r)                      # the command line's text report
    r.to_dict()["sectors"]        # 4: its JSON, as a dict
    r                             # in Jupyter: the figure, with a step control

Keyword arguments are the command line's flags (``warpscope analyze --help``) with ``_`` for ``-``:
``cc="8.6"``, ``block="32x8"``, ``set={"N": 1024}``, ``caches=True``. The code inputs (``cuda``, ``ptx``,
``sass``, ``addresses``) take the text itself, or a :class:`pathlib.Path` to read (a CUDA file's quoted
``#include`` files are then found beside it, as with the command line). ``data=`` gives a CUDA kernel's arrays
their contents: ``data={"idx": ids, "col": "col.npy", "x": "uniform(0, 1, n=4096)"}``, each a numpy array
(passed in memory), a ``.npy`` path, a raw file with its type (``"corpus.txt:uint8"``) or a generator. Bad input raises
:class:`WarpscopeError`, which says which argument and where (``line``, ``column``).
"""

from __future__ import annotations

import html
import io
import json
import os
import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _warpscope

__version__: str = _warpscope.__version__

__all__ = [
    "analyze",
    "figure",
    "lab",
    "presets",
    "flags",
    "Result",
    "LabResult",
    "WarpscopeError",
]

Text = Union[str, "os.PathLike[str]"]

# The inputs that are files on the command line: here they take the text (or a path).
_CODE_INPUTS = ("cuda", "ptx", "sass", "addresses")


class WarpscopeError(ValueError):
    """Bad input: ``message`` as the command line prints it, ``argument`` the keyword it is about (``addr``,
    ``cuda``, ``block``...; None when the message names none), and ``line``/``column`` where in that
    argument's text (1-based; None when the problem has no position)."""

    def __init__(self, message: str, argument: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.argument = argument
        m = re.search(r"(?:^|\s)(\d+):(\d+):", message)
        self.line: Optional[int] = int(m.group(1)) if m else None
        self.column: Optional[int] = int(m.group(2)) if m else None


def _flags(command: str) -> Dict[str, Tuple[bool, bool, str]]:
    return {name: (value, repeats, help) for name, value, repeats, help in _warpscope.flags(command)}


def flags(command: str = "analyze") -> Dict[str, str]:
    """The keyword arguments a command takes (``analyze``, ``figure``, ``check``), with their help."""
    return {name.replace("-", "_"): help for name, (_, _, help) in _flags(command).items()}


def _argv(command: str, kwargs: Mapping[str, Any], reserved: Iterable[str] = ()) -> Tuple[List[str], Dict[str, str]]:
    """The command line for ``command`` with ``kwargs`` as its flags, and the texts given in place of files."""
    known = _flags(command)
    args: List[str] = [command]
    inputs: Dict[str, str] = {}
    for key, value in kwargs.items():
        flag = key.replace("_", "-")
        if key in reserved or flag not in known:
            names = ", ".join(sorted(n.replace("-", "_") for n in known if n.replace("-", "_") not in reserved))
            raise TypeError(f"{command}() got an unexpected keyword argument '{key}' (it takes: {names})")
        takes_value, repeats, _ = known[flag]
        if value is None or value is False:
            continue
        if not takes_value:
            if value is not True:
                raise TypeError(f"{key}= is a switch: give True or False, not {value!r}")
            args.append(f"--{flag}")
            continue
        if key == "include" and isinstance(value, Mapping):
            for name, text in value.items():
                inputs[f"include/{name}"] = text
                args += [f"--{flag}", f"include/{name}"]
            continue
        if key == "data" and isinstance(value, Mapping):
            # Arrays given as data: a generator or a path as text, or an array (numpy, or anything with the
            # buffer protocol numpy takes), passed as .npy bytes in memory.
            for name, v in value.items():
                args += [f"--{flag}", f"{name}={_data_source(name, v, inputs)}"]
            continue
        if key == "set" and isinstance(value, Mapping):
            values = [f"{k}={_text(v)}" for k, v in value.items()]
        elif repeats and isinstance(value, (list, tuple)):
            values = [_text(v) for v in value]
        else:
            values = [value]
        for v in values:
            if key in _CODE_INPUTS or key == "include":
                args += [f"--{flag}", _input(key, v, inputs)]
            else:
                args += [f"--{flag}", _text(v)]
    return args, inputs


def _data_source(name: str, value: Any, inputs: Dict[str, Any]) -> str:
    """One array's source for ``--data``: a generator call or a file's path stays as it is; an array becomes
    ``.npy`` bytes given under a name of its own (C order; its dtype is kept)."""
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    try:
        import numpy
    except ImportError as e:  # pragma: no cover - an array-like without numpy
        raise TypeError(f"data={{'{name}': ...}} takes a generator, a path or a numpy array") from e
    array = numpy.ascontiguousarray(value)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"data={{'{name}': ...}}: an array of integers or floats, not {array.dtype}")
    buffer = io.BytesIO()
    numpy.save(buffer, array.reshape(-1), allow_pickle=False)
    key = f"data/{name}.npy"
    inputs[key] = buffer.getvalue()
    return key


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _input(key: str, value: Any, inputs: Dict[str, str]) -> str:
    """A code input: a path stays a path (read by the engine, its includes found beside it); text is given
    under a name of its own. An ``include=`` entry is always a path (a dict gives headers as text)."""
    if isinstance(value, os.PathLike) or (key == "include" and isinstance(value, str)):
        return os.fspath(value)
    if not isinstance(value, str):
        raise TypeError(f"{key}= takes the text or a pathlib.Path, not {type(value).__name__}")
    inputs[key] = value
    return key


def _call(command: str, args: List[str], inputs: Dict[str, Any], kwargs: Mapping[str, Any]):
    texts = {k: v for k, v in inputs.items() if isinstance(v, str)}
    blobs = {k: v for k, v in inputs.items() if isinstance(v, bytes)}
    try:
        return _warpscope.call(args, texts, blobs)
    except ValueError as e:
        message = str(e)
        argument = None
        m = re.match(r"--([a-z0-9-]+)", message)
        if m:
            argument = m.group(1).replace("-", "_")
        else:
            for key in _CODE_INPUTS:
                if message.startswith(f"{key} ") or message.startswith(f"{kwargs.get(key)} "):
                    argument = key
            if argument is None and message.startswith("--preset"):
                argument = "preset"
        raise WarpscopeError(message, argument) from None


class Result:
    """One analysis: the command line's JSON (``json``, ``to_dict()``), its text (``str(result)``), a table
    with a row per memory instruction (``table()``, ``to_pandas()``) and its figure (in Jupyter, or
    ``figure()``)."""

    def __init__(self, json_text: str, args: List[str], inputs: Dict[str, str]) -> None:
        self.json: str = json_text
        self._dict: Dict[str, Any] = json.loads(json_text)
        self._args = args
        self._inputs = inputs
        self._text: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        """The JSON as a dict (docs/json.md): a copy, so changing it changes nothing here."""
        return json.loads(self.json)

    def __getitem__(self, key: str) -> Any:
        return self._dict[key]

    def __getattr__(self, key: str) -> Any:
        d = self.__dict__.get("_dict")
        if d is not None and key in d:
            return d[key]
        raise AttributeError(f"the result has no field '{key}' (it has: {', '.join(sorted(d or {}))})")

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self._dict))

    @property
    def text(self) -> str:
        """The command line's text report of the same analysis."""
        if self._text is None:
            args = _with_format(self._args, "text")
            self._text = _warpscope.call(args, self._inputs)[0]
        return self._text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        rows = self.table()
        ops = ", ".join(r["op"] for r in rows[:4]) + (", ..." if len(rows) > 4 else "")
        return f"<warpscope.Result cc {self._dict.get('cc')}: {len(rows)} memory instruction(s): {ops}>"

    def table(self) -> List[Dict[str, Any]]:
        """A row per memory instruction: its line, text, op, space and size, the costs summed over the warp
        issues (requests, sectors, wavefronts, bank_conflicts...), and Nsight Compute's metrics under their own
        names. For ``addr=`` with one warp (one report), the one row is that report's."""
        d = self._dict
        if "instructions" not in d:
            keep = {k: v for k, v in d.items() if not isinstance(v, (list, dict))}
            return [keep]
        rows = []
        for i in d["instructions"]:
            row = {k: v for k, v in i.items() if not isinstance(v, (list, dict))}
            row.update(i.get("ncu", {}))
            rows.append(row)
        return rows

    def metrics(self) -> Dict[str, float]:
        """Nsight Compute's metrics summed over the memory instructions (``l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum``,
        ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum``, ...)."""
        out: Dict[str, float] = {}
        for i in self._dict.get("instructions", []):
            for k, v in i.get("ncu", {}).items():
                out[k] = out.get(k, 0) + v
        return out

    def total(self, field: str) -> float:
        """A field summed over the memory instructions (``sectors``, ``wavefronts``, ``bank_conflicts``...);
        0 where no instruction has it."""
        return sum(r.get(field, 0) for r in self.table())

    def to_pandas(self):
        """``table()`` as a pandas DataFrame (pandas is not required by warpscope: install it to use this)."""
        try:
            import pandas
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("to_pandas() needs pandas: pip install pandas (table() gives the same rows as dicts)") from e
        return pandas.DataFrame(self.table())

    def figure(self, instr: int = 1, issue: int = 0, step: Union[int, str, None] = None, format: str = "svg",
               theme: str = "light", view: str = "lanes") -> Union[bytes, List[bytes]]:
        """This analysis's figure, as :func:`figure` draws it."""
        return _figure(self._args, self._inputs, instr, issue, step, format, theme, view)

    def steps(self, instr: int = 1, issue: int = 0) -> int:
        """How many animation steps the figure of ``instr`` (from 1) at ``issue`` has."""
        return len(self.figure(instr, issue, step="all")) - 1

    def _repr_svg_(self) -> Optional[str]:
        try:
            return self.figure().decode()
        except WarpscopeError:
            return None

    def _repr_html_(self) -> Optional[str]:
        """The figure with a step control: one frame per step, chosen with the radio buttons (no script, so it
        works in trusted and untrusted notebooks and in exported HTML alike)."""
        try:
            frames = self.figure(step="all")
        except WarpscopeError:
            return None
        assert isinstance(frames, list)
        uid = f"ws{id(self):x}"
        n = len(frames)
        css = [f"#{uid} .frame{{display:none}}"]
        buttons = []
        for k in range(n):
            checked = " checked" if k == n - 1 else ""
            buttons.append(
                f'<input type="radio" name="{uid}" id="{uid}-{k}"{checked}>'
                f'<label for="{uid}-{k}" style="margin-right:.6em">{k}</label>'
            )
            css.append(f"#{uid}-{k}:checked ~ .frames .f{k}{{display:block}}")
        body = "".join(
            f'<div class="frame f{k}">{frame.decode()}</div>' for k, frame in enumerate(frames)
        )
        title = html.escape(repr(self))
        return (
            f'<div id="{uid}"><style>{"".join(css)}</style>'
            f'<div style="font:13px sans-serif;margin:.3em 0">{title}<br>step: </div>'
            f'{"".join(buttons)}<div class="frames">{body}</div></div>'
        )


def _with_format(args: List[str], fmt: str) -> List[str]:
    out = list(args)
    if "--format" in out:
        out[out.index("--format") + 1] = fmt
    else:
        out += ["--format", fmt]
    return out


def analyze(**kwargs: Any) -> Result:
    """Analyses one input, as ``warpscope analyze`` does, and returns its :class:`Result`.

    Inputs (one): ``addr=`` an expression per lane (with ``op=``), ``cuda=``, ``ptx=``, ``sass=`` code,
    ``addresses=`` an address list, or ``preset=`` a named example. Everything else is the command line's
    flags: ``cc``, ``block``, ``grid``, ``block_idx``, ``set`` (a dict or a list of ``NAME=VALUE``),
    ``kernel``, ``mask``, ``layout``, ``caches``, ``steps``, ``issue``... (``warpscope.flags()`` lists them).
    """
    args, inputs = _argv("analyze", kwargs, reserved=("format",))
    args += ["--format", "json"]
    text, _, _ = _call("analyze", args, inputs, kwargs)
    return Result(text, args, inputs)


def _figure(args: List[str], inputs: Dict[str, str], instr: int, issue: int, step: Union[int, str, None],
            format: str, theme: str, view: str) -> Union[bytes, List[bytes]]:
    base = list(args)
    base[0] = "figure"
    # The analyze-only flags do not apply to a figure.
    for flag in ("--format", "--issue"):
        while flag in base:
            k = base.index(flag)
            del base[k:k + 2]
    if "--steps" in base:
        base.remove("--steps")
    base += ["--instr", str(instr), "--issue", str(issue), "--format", format, "--theme", theme, "--view", view]
    if step == "all":
        base += ["--step", "all", "-o", f"frame.{format}"]
    elif step is not None:
        base += ["--step", str(step)]
    _, files, _ = _call("figure", base, inputs, {})
    frames = [bytes(b) for _, b in files]
    return frames if step == "all" else frames[0]


def figure(instr: int = 1, issue: int = 0, step: Union[int, str, None] = None, format: str = "svg",
           theme: str = "light", view: str = "lanes", **kwargs: Any) -> Union[bytes, List[bytes]]:
    """The figure of one warp-level issue, as ``warpscope figure`` draws it: SVG or PNG bytes.

    ``instr`` counts memory instructions from 1, ``issue`` warp-level issues from 0; ``step`` is the
    animation step (0 .. the number of steps; None for the last, every transaction or wavefront drawn; "all"
    for a list of every frame). ``format`` is "svg" or "png", ``theme`` "light" or "dark", ``view`` "lanes" or
    "tile". The other keyword arguments are :func:`analyze`'s.
    """
    args, inputs = _argv("analyze", kwargs, reserved=("format", "steps", "issue"))
    return _figure(args, inputs, instr, issue, step, format, theme, view)


class LabResult:
    """A lab's answers checked, as ``warpscope check`` does: ``all_goals_pass``, ``goals_met`` of ``goals``,
    each exercise's goals (``to_dict()``), and the command line's text (``str()``)."""

    def __init__(self, json_text: str, text: str) -> None:
        self.json = json_text
        self._dict: Dict[str, Any] = json.loads(json_text)
        self.text = text
        self.all_goals_pass: bool = self._dict["all_goals_pass"]
        self.goals_met: int = self._dict["goals_met"]
        self.goals: int = self._dict["goals"]

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self.json)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<warpscope.LabResult {self._dict['lab']!r}: {self.goals_met} of {self.goals} goals met>"


def lab(lab: Text, answers: Union[Text, Mapping[str, Any]]) -> LabResult:
    """Checks a lab's answers, as ``warpscope check --lab LAB --answers ANSWERS`` does.

    ``lab`` is a lab file's path (``www/labs/memory.toml``) or its text; ``answers`` the page's saved answers:
    a path, the JSON text, or the dict (``{"lab": title, "answers": {exercise id: {"text": ..., ...}}}``).
    """
    inputs: Dict[str, str] = {}
    lab_arg = _lab_input("lab", lab, inputs)
    if isinstance(answers, Mapping):
        inputs["answers.json"] = json.dumps(answers)
        answers_arg = "answers.json"
    else:
        answers_arg = _lab_input("answers", answers, inputs)
    args = ["check", lab_arg, "--answers", answers_arg]
    json_text, _, _ = _call("check", args + ["--format", "json"], inputs, {})
    text, _, _ = _call("check", args, inputs, {})
    return LabResult(json_text, text)


def _lab_input(key: str, value: Text, inputs: Dict[str, str]) -> str:
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if "\n" not in value and os.path.isfile(value):
        return value
    name = f"{key}.toml" if key == "lab" else f"{key}.json"
    inputs[name] = value
    return name


def presets() -> List[Dict[str, Any]]:
    """The named examples (``preset=`` of :func:`analyze`), as ``warpscope presets --format json`` lists them."""
    text, _, _ = _call("presets", ["presets", "--format", "json"], {}, {})
    return json.loads(text)
