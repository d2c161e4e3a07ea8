#!/usr/bin/env python3
"""Checks the probe kernels' machine code: every ws_ kernel in a disassembly (nvdisasm -c or cuobjdump -sass)
must hold exactly one memory instruction, of the probe's kind and width (probes.txt, from `warpscope
calibrate emit`). Constant loads (LDC, ULDC) do not count: they do not pass through L1TEX.

usage: check_sass.py probes.txt probes.sass
"""
import re
import sys

MEMORY = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?((?:LDG|STG|LDS|STS|LDL|STL|LD|ST|ATOM|ATOMG|ATOMS|RED|LDSM|LDGSTS)(?:\.[\w]+)*)\b")
WIDTH = {"U8": ".U8", "S8": ".S8", "U16": ".U16", "S16": ".S16", "64": ".64", "128": ".128"}


def expected(op):
    """(SASS base, width suffix or None for 32-bit) of a warpscope mnemonic such as LDG.E.CG.64."""
    parts = op.split(".")
    width = next((WIDTH[p] for p in reversed(parts[1:]) if p in WIDTH), None)
    return parts[0], width


def main(listing, sass):
    probes = {}
    for line in open(listing):
        pid, kernel, _fp, op, _title = line.rstrip("\n").split("\t", 4)
        probes[kernel] = (pid, op)
    found = {}
    current = None
    for line in open(sass):
        m = re.match(r"^(\w+):\s*$", line) or re.match(r"^\s+Function : (\w+)\s*$", line)
        if m:
            current = m.group(1)
            found.setdefault(current, [])
            continue
        m = MEMORY.match(line)
        if m and current:
            found[current].append(m.group(1))
    bad = 0
    for kernel, (pid, op) in sorted(probes.items(), key=lambda kv: kv[1][0]):
        ops = found.get(kernel)
        base, width = expected(op)
        if ops is None:
            print(f"{pid}: kernel {kernel} missing from the disassembly")
            bad += 1
            continue
        if len(ops) != 1:
            print(f"{pid}: {len(ops)} memory instructions {ops}, want exactly one {op}")
            bad += 1
            continue
        got = ops[0]
        parts = got.split(".")
        got_width = next((WIDTH[p] for p in parts[1:] if p in WIDTH), None)
        if parts[0] != base or got_width != width:
            print(f"{pid}: {got}, want {op}")
            bad += 1
            continue
        print(f"{pid}: {got}")
    print(f"{len(probes) - bad} of {len(probes)} kernels issue exactly the probe's one memory instruction")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
