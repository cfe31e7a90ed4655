#!/usr/bin/env python3
"""Writes tests/core/naming_table.jsonl: naming sequences and the names torch.fx hands out.

Each line is {"in": [candidate, ...], "out": [name, ...]} for one fresh namespace. The
expected names come from `reference_create_name` below, a line-by-line transcription of
current PyTorch's torch/fx/graph.py `_Namespace.create_name` (the version with `_base_count`
and `_illegal_names`), called with obj=None as `Graph.create_node` does. It is independent of
flatcheck's C++ Namespace, which tests/core/ir/namespace_test.cc checks against this table.

    python3 tests/core/naming_table.py            # regenerate the table (fixed seed)
    python3 tests/core/naming_table.py --check    # compare with the installed torch.fx, when
                                                  # it has that implementation (torch >= 2.5)
"""
import builtins
import json
import keyword
import math
import os
import random
import re
import sys

_illegal_names = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)
for _name in ("inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree"):
    _illegal_names[_name] = object()  # torch.fx's _register_custom_builtin
_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")


class ReferenceNamespace:
    def __init__(self):
        self._used_names = set()
        self._base_count = {}

    def create_name(self, candidate, obj=None):
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate)
            if not candidate:
                candidate = "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
            assert match is not None
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(candidate, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        return candidate


BASES = ["getitem", "add", "relu", "x", "a_b", "layer_0", "p_weight", "b_buf", "_run_on_acc",
         "sum", "abs", "input", "max", "min", "if", "None", "True", "torch", "nan", "inf",
         "device", "print", "id", "type", "output", "_", "__x", "copy_", "n"]
SUFFIXES = ["", "", "", "_1", "_2", "_3", "_0", "_01", "_10", "_007", "_123456789012345678"]
ODD = ["a..b", "a.b", "a-b c", "0x", "", "layer.0.weight", "\u00fc", "a__1", "_1", "x_", "1",
       "a b", "..", "__1", "sum_1", "abs_2", "getitem_1_1", "a\u00fcb", "9_9"]


def candidate(rng):
    r = rng.random()
    if r < 0.2:
        return rng.choice(ODD)
    return rng.choice(BASES) + rng.choice(SUFFIXES)


def sequences(count, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        ins = [candidate(rng) for _ in range(rng.randint(1, 14))]
        ns = ReferenceNamespace()
        out.append({"in": ins, "out": [ns.create_name(c) for c in ins]})
    return out


def check_against_torch(rows):
    try:
        import torch.fx.graph as fxg
    except Exception as e:  # noqa: BLE001
        print(f"not checked: torch.fx cannot be imported ({e})")
        return 0
    ns = fxg._Namespace()
    if not hasattr(ns, "_base_count") or not hasattr(fxg, "_illegal_names"):
        import torch
        print(f"not checked: torch {torch.__version__} has an older _Namespace.create_name")
        return 0
    bad = 0
    for row in rows:
        ns = fxg._Namespace()
        got = [ns.create_name(c, None) for c in row["in"]]
        if got != row["out"]:
            bad += 1
            print("differs:", row["in"], "table", row["out"], "torch", got)
    print(f"checked {len(rows)} sequences against torch.fx: {bad} differ")
    return 1 if bad else 0


def main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "naming_table.jsonl")
    rows = sequences(400, seed=20261122)
    if "--check" in sys.argv:
        return check_against_torch(rows)
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} sequences to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
