#!/usr/bin/env python3
"""The tree's structure rules (docs/architecture.md), checked from the sources alone.

1. Layers: a folder includes only headers of its own folder or of folders below it.
       core/base < core/ops < core/ir < core/runtime < core/passes < core/serialize
       < core/pipeline < generators < harness < harness/{cli,fuzz} < bench, tests
   Every #include "..." edge that points upward is reported (file, line, both layers).
2. Size: no file in core/, generators/ or harness/ over 600 lines and no function over 80
   lines, unless the file's first lines carry `// long-file: <reason>` or the line above the
   function carries `// long-function: <reason>`.

    scripts/check_structure.py [ROOT]        exit 0 when every rule holds, 1 with the list
    scripts/check_structure.py --graph ROOT  print the folder-level include graph
    scripts/check_structure.py --self-test   show that each rule catches a violation
"""
import os
import re
import sys

LAYERS = [
    "core/base",
    "core/ops",
    "core/ir",
    "core/runtime",
    "core/passes",
    "core/serialize",
    "core/pipeline",
    "generators",
    "harness",
    "harness/cli",
    "harness/fuzz",
    "bench",
    "tests",
]
SIZE_CHECKED = ("core/", "generators/", "harness/")
SOURCE_EXT = (".h", ".cc", ".cu", ".cuh")
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    """The index of the deepest layer folder that holds `path`; None outside the layers."""
    best = None
    for i, folder in enumerate(LAYERS):
        if path.startswith(folder + "/"):
            if best is None or len(folder) > len(LAYERS[best]):
                best = i
    return best


def sources(root):
    for top in ("core", "generators", "harness", "bench", "tests"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith(SOURCE_EXT) or name.endswith(".def"):
                    full = os.path.join(dirpath, name)
                    yield os.path.relpath(full, root), full


def include_edges(root):
    for rel, full in sources(root):
        with open(full, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if m and os.path.exists(os.path.join(root, m.group(1))):
                    yield rel, lineno, m.group(1)


def strip_code(text):
    """Comments, string and character literals blanked out, newlines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (j + 1 - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else|return|try)\b")
TYPE_HEAD = re.compile(r"\b(namespace|class|struct|union|enum)\b")


def functions(text):
    """(name, first line, last line) of every function body at namespace or class scope."""
    code = strip_code(text)
    stack = []  # kinds of open braces: "ns", "type", "fn", "block"
    head_start = 0
    found = []
    line = 1
    fn_open = None
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c in ";":
            if not stack or stack[-1] in ("ns", "type"):
                head_start = i + 1
        elif c == "{":
            head = code[head_start:i]
            outer = stack[-1] if stack else "ns"
            if outer in ("ns", "type"):
                if TYPE_HEAD.search(head) and "(" not in head.split("{")[0].split("=")[0]:
                    stack.append("ns" if "namespace" in head else "type")
                elif ")" in head and not CONTROL.match(head.strip()) and "=" not in head.split("(")[0]:
                    name = re.findall(r"([~\w:<>=!+\-*/\[\]]+)\s*\(", head)
                    stack.append("fn")
                    offset = head_start + len(head) - len(head.lstrip())
                    fn_open = (name[0] if name else "?", code.count("\n", 0, offset) + 1, line)
                else:
                    stack.append("block")
            else:
                stack.append("block")
            head_start = i + 1
        elif c == "}":
            kind = stack.pop() if stack else "block"
            if kind == "fn" and fn_open:
                name, head_line, open_line = fn_open
                found.append((name, head_line, line))
                fn_open = None
            if not stack or stack[-1] in ("ns", "type"):
                head_start = i + 1
    return found


def check(root):
    problems = []
    for rel, lineno, target in include_edges(root):
        a, b = layer_of(rel), layer_of(target)
        if a is None or b is None:
            continue
        if b > a:
            problems.append(f"{rel}:{lineno}: includes {target}: {LAYERS[a]} must not depend on "
                            f"{LAYERS[b]}, a layer above it")
    for rel, full in sources(root):
        if not rel.startswith(SIZE_CHECKED) or rel.endswith(".def"):
            continue
        with open(full, encoding="utf-8") as f:
            text = f.read()
        lines = text.split("\n")
        head = "\n".join(lines[:12])
        n_lines = len(lines) - (1 if text.endswith("\n") else 0)
        if n_lines > MAX_FILE_LINES and "long-file:" not in head:
            problems.append(f"{rel}: {n_lines} lines (over {MAX_FILE_LINES})")
        for name, first, last in functions(text):
            length = last - first + 1
            if length <= MAX_FUNCTION_LINES:
                continue
            above = "\n".join(lines[max(0, first - 3):first])
            if "long-function:" in above:
                continue
            problems.append(f"{rel}:{first}: function {name} is {length} lines "
                            f"(over {MAX_FUNCTION_LINES})")
    return problems


def graph(root):
    edges = {}
    for rel, _, target in include_edges(root):
        a, b = layer_of(rel), layer_of(target)
        if a is not None and b is not None and a != b:
            edges.setdefault(LAYERS[a], set()).add(LAYERS[b])
    for src in LAYERS:
        if src in edges:
            print(f"{src} -> {', '.join(sorted(edges[src], key=LAYERS.index))}")


def self_test():
    """The checker catches what it is for: an upward include, a long file, a long function."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        write("core/ir/ir.h", "#pragma once\n")
        write("core/base/tensor.h", '#include "core/ir/ir.h"\n')
        write("core/ops/ops.h", '#include "core/base/tensor.h"\n')
        body = "".join("  x += %d;\n" % i for i in range(85))
        write("harness/long.cc", "namespace a {\nvoid f(int x) {\n" + body + "}\n"
              "// long-function: a table\nvoid g(int x) {\n" + body + "}\n}\n")
        write("core/ir/big.cc", "int x;\n" * 601)
        got = check(root)
    want = ["core/base/tensor.h:1: includes core/ir/ir.h", "harness/long.cc:2: function f is 87",
            "core/ir/big.cc: 601 lines"]
    missing = [w for w in want if not any(p.startswith(w) for p in got)]
    if missing or len(got) != len(want):
        print("check_structure self-test failed: got", got, "missing", missing)
        return 1
    print("check_structure self-test: an upward include, a long file and a long function found")
    return 0


def main(argv):
    if argv and argv[0] == "--self-test":
        return self_test()
    if argv and argv[0] == "--graph":
        graph(argv[1] if len(argv) > 1 else ".")
        return 0
    root = argv[0] if argv else "."
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_structure: {len(problems)} problem(s)")
        return 1
    print("check_structure: layers, file sizes and function sizes hold")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
