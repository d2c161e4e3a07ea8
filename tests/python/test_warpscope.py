"""The Python package against the command line it wraps: the installed wheel (a fresh virtual environment, as
.ci/test.sh sets it up) and the `warpscope` binary the native tests built (WARPSCOPE_CLI)."""

import json
import os
import pathlib
import subprocess
import time
import tomllib

import pytest

import warpscope

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("WARPSCOPE_CLI", str(ROOT / "target" / "debug" / "warpscope"))


def cli(*args: str) -> str:
    """The command line's standard output for `args` (it prints one newline after the text)."""
    out = subprocess.run([CLI, *args], capture_output=True, text=True, check=True).stdout
    assert out.endswith("\n")
    return out[:-1]


def test_the_issue_example_prints_the_command_lines_report():
    r = warpscope.analyze(addr="4*lane", op="LDG.E.32")
    # CUDA C++ Best Practices Guide 9.2.1.1: 32 consecutive 4-byte words are 4 sectors of one 128-byte line.
    assert (r.lines, r.sectors, r.requests) == (1, 4, 1)
    assert str(r) == cli("analyze", "--addr", "4*lane", "--op", "LDG.E.32")
    assert r.json == cli("analyze", "--addr", "4*lane", "--op", "LDG.E.32", "--format", "json")
    assert repr(r) == "<warpscope.Result cc 8.0: 1 memory instruction(s): LDG.E.32>"


@pytest.mark.parametrize("preset", [p["name"] for p in json.loads(cli("presets", "--format", "json"))])
def test_every_preset_gives_the_command_lines_json_byte_for_byte(preset):
    assert warpscope.analyze(preset=preset).json == cli("analyze", "--preset", preset, "--format", "json")


def test_presets_are_the_command_lines_list():
    names = [p["name"] for p in warpscope.presets()]
    assert names == [p["name"] for p in json.loads(cli("presets", "--format", "json"))]
    assert len(names) >= 35


def published_rows():
    rows = []
    for line in (ROOT / "tests/data/published/kernels.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        f = line.split("\t")
        rows.append((f[0], f[2], f[3], f[4], [s for s in f[5].split(",") if s and s != "-"]))
    return rows


# Published CUDA files, verbatim (tests/data/published: siboehm's SGEMM, NVIDIA's cuda-samples, llm.c ...),
# given as paths, so that their quoted #include files are found beside them as the command line finds them.
@pytest.mark.parametrize("row", published_rows()[::7], ids=lambda r: r[1])
def test_a_published_cuda_file_gives_the_command_lines_json(row):
    file, kernel, block, grid, sets = row
    path = ROOT / "tests/data/published" / file
    if path.with_suffix(".inst.cu").exists():
        path = path.with_suffix(".inst.cu")
    flags = ["--cuda", str(path), "--kernel", kernel, "--block", block, "--grid", grid]
    for s in sets:
        flags += ["--set", s]
    run = subprocess.run([CLI, "analyze", *flags, "--format", "json"], capture_output=True, text=True)
    if run.returncode == 0:
        r = warpscope.analyze(cuda=path, kernel=kernel, block=block, grid=grid, set=sets)
        assert r.json == run.stdout[:-1]
        assert r.table(), "a published kernel has memory instructions"
    else:
        # What the command line refuses (a pointer loaded from memory, tests/data/published/agreement.txt), the
        # package refuses with the same message.
        with pytest.raises(warpscope.WarpscopeError) as e:
            warpscope.analyze(cuda=path, kernel=kernel, block=block, grid=grid, set=sets)
        assert run.stderr == f"error: {e.value.message}\n"
        assert e.value.argument == "cuda" and e.value.line is not None


def test_cuda_text_with_a_template_and_settings():
    # The same kernel as text: the settings path is the command line's (`--set n=1024`, `--kernel`).
    src = (ROOT / "tests/python/transpose.cu").read_text()
    r = warpscope.analyze(cuda=src, block="32x32", set={"n": 1024}, kernel="transpose<32, 0>")
    flags = ["--cuda", str(ROOT / "tests/python/transpose.cu"), "--block", "32x32", "--set", "n=1024"]
    assert r.json == cli("analyze", *flags, "--kernel", "transpose<32, 0>", "--format", "json")


def test_a_sweep_over_a_template_argument():
    """The tiled transpose's padding swept: tile[32][32 + PAD] read down a column by 32 warps of 32 lanes.
    docs/model.md#shared-memory: 32 banks of 4 bytes; a column of a row of 32 + PAD floats puts lane k in bank (k * (32 + PAD))
    % 32. PAD 0: all 32 lanes in bank 0, 32 wavefronts per warp, 31 conflicts each (992 for 32 warps); PAD 1
    and 3: 32 distinct banks; PAD 2: 16 banks twice, 2 wavefronts per warp (32 conflicts). The row write is
    1 wavefront per warp (32) in every case."""
    src = (ROOT / "tests/python/transpose.cu").read_text()
    conflicts, wavefronts = [], []
    for pad in range(4):
        r = warpscope.analyze(cuda=src, block="32x32", set={"n": 1024}, kernel=f"transpose<32, {pad}>")
        conflicts.append(r.total("bank_conflicts"))
        wavefronts.append(r.total("wavefronts"))
        m = r.metrics()
        assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == conflicts[-1]
    assert conflicts == [992, 0, 32, 0]
    assert wavefronts == [32 + 1024, 32 + 32, 32 + 64, 32 + 32]


def test_a_thousand_small_analyses_take_seconds_not_minutes():
    # Not a time limit (a loaded machine must not fail this): the count and the results, with the time
    # printed for the record. docs/performance.md records the measurement.
    start = time.perf_counter()
    sectors = [warpscope.analyze(addr=f"{4 * (s % 33)}*lane", op="LDG.E.32").sectors for s in range(1000)]
    print(f"1000 analyses: {time.perf_counter() - start:.2f} s")
    # Stride 0 is one sector; stride 4 bytes 4 sectors; 32 bytes and more, one sector per lane.
    assert (sectors[0], sectors[1], sectors[8], sectors[32]) == (1, 4, 32, 32)


def test_errors_are_exceptions_with_line_and_column():
    with pytest.raises(warpscope.WarpscopeError) as e:
        warpscope.analyze(addr="4*lane +", op="LDG.E.32")
    assert (e.value.argument, e.value.line, e.value.column) == ("addr", 1, 9)
    assert "found the end of the input" in str(e.value)
    with pytest.raises(warpscope.WarpscopeError) as e:
        warpscope.analyze(cuda="__global__ void k(float *a) {\n  a[threadIdx.x] = b;\n}\n")
    assert (e.value.argument, e.value.line) == ("cuda", 2)
    assert e.value.column is not None and "`b`" in str(e.value)
    with pytest.raises(warpscope.WarpscopeError) as e:
        warpscope.analyze(addr="4*lane", op="LDX.32")
    assert e.value.argument == "op"
    with pytest.raises(warpscope.WarpscopeError) as e:
        warpscope.analyze(addr="4*lane", op="LDG.E.32", block="0x4")
    assert e.value.argument == "block"
    with pytest.raises(warpscope.WarpscopeError, match="--addr needs --op"):
        warpscope.analyze(addr="4*lane")
    with pytest.raises(TypeError, match="unexpected keyword argument 'adr'"):
        warpscope.analyze(adr="4*lane")
    with pytest.raises(TypeError, match="is a switch"):
        warpscope.analyze(addr="4*lane", op="LDG.E.32", caches="yes")
    # The engine is still there after an error.
    assert warpscope.analyze(addr="4*lane", op="LDS.32").wavefronts == 1


def test_the_table_and_pandas():
    r = warpscope.analyze(preset="transpose-naive")
    rows = r.table()
    assert [row["op"] for row in rows] == ["LDG.E.32", "STS.32", "LDS.32", "STG.E.32"]
    # The column read: 32-way, 32 wavefronts per warp for 32 warps (docs/model.md#shared-memory).
    assert rows[2]["wavefronts"] == 1024 and rows[2]["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == 1024
    df = r.to_pandas()
    assert list(df["op"]) == ["LDG.E.32", "STS.32", "LDS.32", "STG.E.32"]
    assert int(df["bank_conflicts"].fillna(0).sum()) == 992
    assert r.to_dict() == json.loads(r.json)


def test_figures_as_svg_png_and_every_step():
    svg = warpscope.figure(addr="4*lane", op="LDG.E.32")
    assert svg.decode() == cli("figure", "--addr", "4*lane", "--op", "LDG.E.32")
    assert svg.startswith(b"<svg") and b"LDG.E.32" in svg
    png = warpscope.figure(addr="4*lane", op="LDG.E.32", format="png", theme="dark")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    frames = warpscope.figure(addr="4*lane", op="LDG.E.32", step="all")
    # One request of 4 sectors: steps 0 (nothing moved) to 4, one per transaction (docs/guide.md).
    assert len(frames) == 5 and frames[-1] == svg
    assert warpscope.figure(addr="4*lane", op="LDG.E.32", step=0) == frames[0]
    r = warpscope.analyze(preset="transpose-naive")
    assert r.figure(instr=3) == warpscope.figure(preset="transpose-naive", instr=3)
    with pytest.raises(warpscope.WarpscopeError, match="--instr 9"):
        r.figure(instr=9)


def test_the_figure_shows_inline_in_jupyter():
    r = warpscope.analyze(addr="4*lane", op="LDG.E.32")
    assert r._repr_svg_().startswith("<svg")
    h = r._repr_html_()
    assert h.count('type="radio"') == 5 and h.count("<svg") == 5


def test_the_cli_writes_the_same_figure_bytes(tmp_path):
    out = tmp_path / "f.svg"
    subprocess.run([CLI, "figure", "--preset", "transpose-swizzle", "--step", "2", "-o", str(out)], check=True)
    assert warpscope.figure(preset="transpose-swizzle", step=2) == out.read_bytes()


def test_a_lab_is_checked_as_warpscope_check_does(tmp_path):
    path = ROOT / "www/labs/memory.toml"
    lab = tomllib.loads(path.read_text())
    answers = {"lab": lab["title"], "answers": {e["id"]: e["solution"] for e in lab["exercise"]}}
    good = warpscope.lab(path, answers)
    assert good.all_goals_pass and good.goals_met == good.goals
    del answers["answers"]["bank-padding"]
    (tmp_path / "a.json").write_text(json.dumps(answers))
    cli_out = subprocess.run([CLI, "check", str(path), "--answers", str(tmp_path / "a.json")], capture_output=True, text=True)
    some = warpscope.lab(str(path), answers)
    assert not some.all_goals_pass and some.goals_met < some.goals
    assert str(some) == cli_out.stdout[:-1] and cli_out.returncode == 1
    assert "the column read (LDS) has no bank conflicts (bank_conflicts == 0)" in str(some)
    with pytest.raises(warpscope.WarpscopeError, match="no exercise `nope`"):
        warpscope.lab(path, {"answers": {"nope": {}}})


def test_headers_given_as_paths_or_as_text():
    # NVIDIA's cuda-samples histogram256.cu, verbatim, includes "histogram_common.h" (its HISTOGRAM256_BIN_COUNT
    # and the warp count). Given as text it has no folder, so the header comes by include=, as a path or as text.
    folder = ROOT / "tests/data/published/NVIDIA__cuda-samples"
    src = (folder / "histogram256.cu").read_text()
    header = folder / "histogram_common.h"
    flags = dict(kernel="mergeHistogram256Kernel", block="256", grid="256", set={"histogramCount": 240})
    from_file = warpscope.analyze(cuda=folder / "histogram256.cu", **flags).table()
    assert warpscope.analyze(cuda=src, include=[str(header)], **flags).table() == from_file
    assert warpscope.analyze(cuda=src, include=[header], **flags).table() == from_file
    assert warpscope.analyze(cuda=src, include={"histogram_common.h": header.read_text()}, **flags).table() == from_file
    with pytest.raises(warpscope.WarpscopeError) as e:
        warpscope.analyze(cuda=src, **flags)
    assert e.value.argument == "cuda" and e.value.line is not None


HIST = """__global__ void hist(const unsigned char *data, int n, unsigned int *bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[data[i]], 1);
}
"""


def test_a_numpy_array_is_given_as_data_in_memory(tmp_path):
    # numpy comes with pandas in the test environment; warpscope itself does not require it.
    numpy = pytest.importorskip("numpy")
    text = numpy.frombuffer(b"the quick brown fox jumps over the lazy dog", dtype=numpy.uint8)
    r = warpscope.analyze(cuda=HIST, block="32", set={"n": 32}, data={"data": text})
    atom = r.to_dict()["instructions"][1]
    # The pangram's first 32 bytes: 6 spaces in one bin (6 lanes in series), 5 sectors over 2 lines
    # (tests/data.rs works the figures out).
    assert (atom["atomic"]["serial"], atom["sectors"], atom["lines"]) == (6, 5, 2)
    # The same figures as the command line given the bytes as a raw file.
    path = tmp_path / "pangram.txt"
    path.write_bytes(text.tobytes())
    raw = warpscope.analyze(cuda=HIST, block="32", set={"n": 32}, data={"data": f"{path}:uint8"})
    assert raw.to_dict()["instructions"] == r.to_dict()["instructions"]
    # A generator, as the command line writes it.
    g = warpscope.analyze(cuda=HIST, block="32", set={"n": 32}, data={"data": "const(7, n=32)"})
    assert g.to_dict()["instructions"][1]["atomic"]["serial"] == 32
    with pytest.raises(warpscope.WarpscopeError, match="past its end"):
        warpscope.analyze(cuda=HIST, block="64", set={"n": 64}, data={"data": text})
