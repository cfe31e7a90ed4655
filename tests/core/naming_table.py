#!/usr/bin/env python3
"""Writes tests/core/naming_table.jsonl: naming sequences and the names torch.fx hands out.

Each line is {"in": [candidate, ...], "out": [name, ...]} for one fresh namespace. The
expected names come from `ReferenceNamespace` below, a line-by-line transcription of
current PyTorch's torch/fx/graph.py `_Namespace.create_name` (the version with `_base_count`
and `_illegal_names`, as torch 2.14.1 has it), called with obj=None as `Graph.create_node`
does. It is independent of
flatcheck's C++ Namespace, which tests/core/ir/namespace_test.cc checks against this table.

    python3 tests/core/naming_table.py            # regenerate the table (fixed seed)
    python3 tests/core/naming_table.py --check    # compare the installed torch.fx with the
                                                  # table and with each transcription below

torch.fx's naming changed three times: torch 1.13 counts up from the candidate's own suffix and
keeps no count per base; torch 2.x up to at least 2.6 keeps `_base_count` per base and treats a
suffix `_0` as no suffix (`Torch26Namespace`, transcribed from torch 2.6's graph.py); PyTorch of
2025 (`_illegal_names`) keeps identifiers as given and a used candidate with a suffix counts up
from the count of the candidate itself (`Torch2025Namespace`); since PyTorch #177217 (March
2026; torch 2.14.1 checked) it counts up from its base's count (`ReferenceNamespace`, the table
flatcheck follows: create_name("max_2") twice gives max_2, max_3, not max_2, max_1).
`--check` runs every sequence through the installed torch and says which transcription it
equals; it exits 1 when torch equals none of them (a transcription is wrong or torch changed
again), 0 otherwise, and prints how many sequences the table differs on.
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

    def _count_key(self, base, candidate):
        """Whose count a colliding candidate counts up from: its base's (PyTorch #177217)."""
        return base

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
            num = self._base_count.get(self._count_key(base, candidate), 0)
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


class Torch2025Namespace(ReferenceNamespace):
    """PyTorch's `_Namespace.create_name` of 2025 (main, with `_illegal_names`) until PyTorch
    #176515/#177217 (March 2026): a used candidate with a suffix counted up from the count of the
    candidate itself (`self._base_count.get(candidate, 0)`, 0 for "max_2") instead of its base's.
    flatcheck followed it until torch 2.14 (Debian sid) showed the change."""

    def _count_key(self, base, candidate):
        return candidate


class Torch26Namespace:
    """torch 2.6's `_Namespace.create_name` (torch/fx/graph.py), obj=None."""

    _custom = {"inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree"}

    def __init__(self):
        self._used_names = set()
        self._base_count = {}

    def _is_illegal_name(self, name):
        if name in keyword.kwlist:
            return True
        if name in builtins.__dict__:
            return True  # obj (None) is never the builtin itself
        return name in self._custom

    def create_name(self, candidate, obj=None):
        candidate = _illegal_char_regex.sub("_", candidate)
        if not candidate:
            candidate = "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = re.match(r"(.*)_(\d+)$", candidate)
        if match is None:
            base, num = candidate, None
        else:
            base, num = match.group(1), int(match.group(2))
        candidate = base if num is None else f"{base}_{num}"
        if not num:
            num = self._base_count.get(base, 0)
        while candidate in self._used_names or self._is_illegal_name(candidate):
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        return candidate


TRANSCRIPTIONS = {"current PyTorch (the table)": ReferenceNamespace,
                  "PyTorch 2025 to March 2026": Torch2025Namespace,
                  "torch 2.6": Torch26Namespace}


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


def run_names(make, row):
    """The names one namespace hands out for a row's candidates, or the exception's name."""
    ns = make()
    try:
        return [ns.create_name(c, None) for c in row["in"]]
    except Exception as e:  # noqa: BLE001 - an older torch raises on some candidates ("")
        return f"raises {type(e).__name__}"


def check_against_torch(rows):
    try:
        import torch
        import torch.fx.graph as fxg
    except Exception as e:  # noqa: BLE001
        print(f"not checked: torch.fx cannot be imported ({e})")
        return 77
    torch_names = [run_names(fxg._Namespace, row) for row in rows]
    table_differs = sum(got != row["out"] for got, row in zip(torch_names, rows))
    print(f"torch {torch.__version__}: {len(rows)} sequences; the table (current PyTorch's "
          f"naming) differs from this torch on {table_differs}")
    matched = []
    for label, make in TRANSCRIPTIONS.items():
        differs = [(row["in"], want, got) for row, got in zip(rows, torch_names)
                   if (want := run_names(make, row)) != got]
        print(f"  transcription '{label}': differs from torch on {len(differs)}")
        for ins, want, got in differs[:3]:
            print(f"    {ins}: transcription {want}, torch {got}")
        if not differs:
            matched.append(label)
    if not matched:
        print("FAIL: torch's naming equals none of the transcriptions")
        return 1
    print(f"torch {torch.__version__} names exactly as the transcription '{matched[0]}'")
    return 0


def main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "naming_table.jsonl")
    rows = sequences(400, seed=20261122)
    if "--check" in sys.argv:
        with open(path, encoding="utf-8") as f:
            committed = [json.loads(line) for line in f]
        if committed != rows:
            print(f"FAIL: {path} is not what this script writes; regenerate it")
            return 1
        return check_against_torch(rows)
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} sequences to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
