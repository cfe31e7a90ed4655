"""Turns benchmark JSON and `flatcheck detect --json` output into the markdown tables of
bench/results/. Usage: report.py stages BENCH_JSON COMMIT MACHINE [CAMPAIGNS_JSONL]
                       report.py detection DETECT_TXT COMMIT MACHINE SEEDS
                       report.py reach COMMIT CASES FUZZ_JSON...  (one file per seed, 1..N)
                       report.py isolation RUNS_JSONL COMMIT MACHINE ROUNDS
                       report.py ab ROWS_JSONL BEFORE AFTER ROUNDS MACHINE
                       report.py floor BENCH_JSON PEER_JSONL COMMIT MACHINE BENCH_LIB
                       report.py names_ir ROWS_TXT COMMIT MACHINE VALGRIND
                       report.py profile CHILDREN_TXT SELF_TXT COMMIT MACHINE SAMPLES COMMAND"""
import json
import re
import sys


def header(title, command, commit, machine):
    return f"# {title}\n\ncommand: `{command}`  \ncommit: `{commit}`  \nmachine: {machine}\n"


SIZES = [8, 32, 128, 256, 1024]


def stages(path, commit, machine, campaign_path=None):
    data = json.load(open(path))
    rows = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        rows[b["run_name"]] = b
    ctx = data.get("context", {})
    out = [header("Benchmarks", "bash bench/run.sh", commit, machine)]
    import os
    build = ctx.get("library_build_type", "?")
    out.append(f"Google Benchmark library: libbenchmark {os.environ.get('BENCH_LIB', '?')}, which "
               f"reports a **{build}** build (the JSON's `library_build_type`)" +
               ("; it only drives the timing loop: the code measured is flatcheck's Release build "
                "(`-O2`). `bash bench/release-benchmark.sh` builds the library as Release.\n"
                if build != "release" else "; flatcheck itself is a Release build (`-O2`).\n"))
    out.append("Medians of 3 repetitions. `ns/node` divides the stage time by the program's "
               "node count (for `generate`, the generated case's); the last column is the ratio of "
               "ns/node at 1024 nodes to ns/node at 8 nodes (1.0 means exactly linear growth), "
               "measured in the same run.\n")
    out.append("## Stages\n")
    out.append("| stage | " + " | ".join(f"{n} nodes: us (ns/node)" for n in SIZES) +
               " | ns/node ratio 1024:8 |")
    out.append("|---|" + "---|" * len(SIZES) + "---|")
    for stage in ["generate", "export", "partition", "flatten", "save", "load", "unflatten", "run"]:
        cells, per_node = [], {}
        for n in SIZES:
            b = rows.get(f"Pass/{stage}/{n}")
            if not b:
                cells.append("-")
                continue
            per_node[n] = b.get("ns_per_node", 0.0) * 1e9  # the counter is seconds per node
            cells.append(f"{b['real_time']:.1f} ({per_node[n]:.0f})")
        ratio = per_node[1024] / per_node[8] if per_node.get(8) and per_node.get(1024) else float("nan")
        out.append(f"| {stage} | " + " | ".join(cells) + f" | {ratio:.2f} |")
    if campaign_path:
        runs = [json.loads(l) for l in open(campaign_path) if l.startswith("{")]
        out.append("\n## Campaigns at each `--max-nodes` (same run)\n")
        out.append("`flatcheck fuzz --time 8 --seed 1 --max-nodes N --jobs 1 --out ''`, in process "
                   "(`--no-isolate`) and isolated (the default). Eager nodes are the call_function and "
                   "call_module nodes of the case's module tree, each module's graph counted once; "
                   "flat nodes are the call_function nodes of its exported program (every call "
                   "inlined).\n")
        out.append("| --max-nodes | mode | cases/s | eager nodes/case | ns per eager node | flat nodes/case |")
        out.append("|---|---|---|---|---|---|")
        for r in runs:
            f = r["run"]
            nodes = f["coverage"]["nodes"] / max(f["cases"], 1)
            flat = f["coverage"].get("flat_nodes", float("nan")) / max(f["cases"], 1)
            ns = 1e9 / (f["cases_per_sec"] * nodes) if f["cases_per_sec"] and nodes else float("nan")
            out.append(f"| {r['n']} | {r['mode']} | {f['cases_per_sec']:.1f} | {nodes:.1f} | {ns:.0f} | "
                       f"{flat:.1f} |")
    for bench, title in (("NameCollision", "Name collisions (every name asked for is `getitem`)"),
                         ("NameSuffixes", "Names with random suffixes (`getitem_<r>`, r < n, and "
                                          "one in eight plain `getitem`)")):
        out.append(f"\n## {title}\n")
        out.append("`table work` is NameTables: per name, a lookup and an insert in a string set and "
                   "a number map that grow to n entries, with no search. Its operations are O(1) on "
                   "average, so its growth in ns per name is the memory hierarchy's; `ratio to table "
                   "work` staying flat from 10^3 to 10^6 means the namespace is linear in n.\n")
        out.append("| names | total (ms) | ns per name | ratio to 10^3 | table work: ns per name | "
                   "ratio to table work |")
        out.append("|---|---|---|---|---|---|")
        base = None
        for n in [1000, 10000, 100000, 1000000]:
            b = rows.get(f"{bench}/{n}")
            if not b:
                continue
            per = b["ns_per_name"] * 1e9  # the counter is seconds per name
            base = base or per
            t = rows.get(f"NameTables/{n}")
            tper = t["ns_per_name"] * 1e9 if t else float("nan")
            out.append(f"| {n} | {b['real_time']:.2f} | {per:.0f} | {per / base:.2f} | {tper:.0f} | "
                       f"{per / tper:.2f} |")
    out.append("\n## Engines and devices\n")
    out.append("| benchmark | time per run (us) |")
    out.append("|---|---|")
    seen = set()
    for b in data["benchmarks"]:
        name = b.get("run_name", b["name"])
        if not (name.startswith("EngineLaunch") or name.startswith("EndToEndCuda")) or name in seen:
            continue
        if b.get("error_occurred"):
            if b.get("aggregate_name") not in (None, "median"):
                continue
            out.append(f"| {name} | {b.get('error_message', 'skipped')} |")
            seen.add(name)
        elif b.get("aggregate_name") == "median":
            seen.add(name)
            extra = f" ({b['cases_per_sec']:.0f} cases/s)" if "cases_per_sec" in b else ""
            out.append(f"| {name} | {b['real_time']:.2f}{extra} |")
    b = rows.get("EndToEnd/min_time:2.000")
    if b is None:
        b = next((v for k, v in rows.items() if k.startswith("EndToEnd")), None)
    if b:
        out.append("\n## End to end\n")
        out.append(f"Generate and check one default case on all five paths (one thread): "
                   f"**{b['cases_per_sec']:.0f} cases/s** ({b['real_time']:.0f} us per case).")
    return "\n".join(out) + "\n"


def isolation(path, commit, machine, rounds):
    import statistics
    rows = [json.loads(l) for l in open(path)]
    out = [header("What isolation costs", f"ROUNDS={rounds} bash bench/isolation.sh", commit, machine)]
    out.append("Isolated and `--no-isolate` campaigns interleaved, one job each, same seeds and case "
               "counts, with an output folder (so the isolated workers record every case).\n")
    out.append("| --max-nodes | cases per run | isolated cases/s (each round) | in-process cases/s "
               "(each round) | throughput lost to isolation (mean of rounds) |")
    out.append("|---|---|---|---|---|")
    fmt = lambda v: ", ".join(f"{x:.0f}" if x >= 100 else f"{x:.1f}" for x in v)
    for n in sorted({r["n"] for r in rows}):
        iso = [r["run"]["cases_per_sec"] for r in rows if r["n"] == n and r["mode"] == "isolated"]
        inp = [r["run"]["cases_per_sec"] for r in rows if r["n"] == n and r["mode"] == "in-process"]
        cases = [r["run"]["cases"] for r in rows if r["n"] == n][0]
        lost = statistics.mean(1 - a / b for a, b in zip(iso, inp))
        out.append(f"| {n} | {cases} | {fmt(iso)} | {fmt(inp)} | {100 * lost:.1f}% |")
    out.append("\nEach round runs the isolated campaign, then the in-process one, on the round's seed; "
               "the loss is 1 - isolated/in-process per round, averaged. The machine is shared and "
               "noisy: read the rounds, not one figure.")
    return "\n".join(out) + "\n"


def ab(path, before, after, rounds, machine):
    import statistics
    rows = [json.loads(l) for l in open(path)]
    out = [f"# {before} against {after}\n",
           f"command: `ROUNDS={rounds} bash bench/ab.sh BEFORE_BUILD AFTER_BUILD` (clang Release "
           f"builds of `{before}` and `{after}`)  \nmachine: {machine}\n",
           "Interleaved round by round. Stage rows: flatcheck_bench's ns per node (median of "
           "rounds). Campaign rows: `fuzz --no-isolate --jobs 1`, same seed and case count for "
           "both, cases per CPU-second (user + system).\n",
           "| row | before | after | after/before time |", "|---|---|---|---|"]
    med = statistics.median
    for stage in sorted({r["stage"] for r in rows if r["kind"] == "stage"}):
        for n in sorted({r["n"] for r in rows if r["kind"] == "stage" and r["stage"] == stage}):
            v = {side: med(r["ns_per_node"] for r in rows if r["kind"] == "stage" and
                            r["stage"] == stage and r["n"] == n and r["side"] == side)
                 for side in ("before", "after")}
            out.append(f"| {stage} {n} nodes, ns/node | {v['before']:,.0f} | {v['after']:,.0f} | "
                       f"{v['after'] / v['before']:.2f} |")
    for n in sorted({r["n"] for r in rows if r["kind"] == "campaign"}):
        v = {}
        for side in ("before", "after"):
            runs = [r for r in rows if r["kind"] == "campaign" and r["n"] == n and r["side"] == side]
            v[side] = sum(r["cases"] for r in runs) / max(1e-9, sum(r["cpu"] for r in runs))
        out.append(f"| campaign --max-nodes {n}, cases/CPU-s | {v['before']:,.0f} | "
                   f"{v['after']:,.0f} | {v['before'] / v['after']:.2f} |")
    return "\n".join(out) + "\n"


def detection(path, commit, machine, seeds):
    lines = [l for l in open(path).read().splitlines() if l.startswith("{")]
    data = json.loads(lines[-1])
    out = [header("Cases to detection", f"flatcheck detect --seeds {seeds} --jobs 2 --json", commit, machine)]
    out.append(f"For every fault, {seeds} campaigns (seeds 1..{seeds}, budget {data['budget']} cases "
               "each) run until the first failing case. Cases-to-detection is deterministic for a "
               "seed. Goals: every fault median <= 2000, the two seed faults <= 200, median "
               "minimized repro <= 10 nodes.\n")
    out.append("| fault | stage | detected | median cases | max cases | median repro (nodes) | signature names the stage |")
    out.append("|---|---|---|---|---|---|---|")
    for f in data["faults"]:
        if "skipped" in f:
            out.append(f"| `{f['fault']}` | {f['stage']} | {f['skipped']} | - | - | - | - |")
            continue
        out.append(f"| `{f['fault']}` | {f['stage']} | {f['detected']}/{f['seeds']} | {f['median_cases']} | "
                   f"{f['max_cases']} | {f['median_repro_nodes']} | {f['stage_matches']}/{f['detected']} |")
    return "\n".join(out) + "\n"


# The goals for the default generator, in percent of cases (docs/reach.md).
REACH_GOALS = {"specialized-calls": 25, "nested-only-variants": 8,
               "nested-only-variants-unflattened": 8, "trt-collision": 10}
REACH_FIVE = ["module-aliasing", "shared-buffers", "shared-params", "level-skipping-calls",
              "int-or-shape-specialization", "three-or-four-calls", "more-than-two-outputs",
              "read-after-write", "repeated-blocks", "disjoint-outputs", "special-scalars",
              "multi-output-fallback", "reverse-getitems", "forwarded-flag", "four-deep-calls"]


def reach(commit, cases, *paths):
    runs = []
    for p in paths:
        lines = [l for l in open(p).read().splitlines() if l.startswith("{")]
        runs.append(json.loads(lines[-1]))
    seeds = [r["seed"] for r in runs]
    out = [f"# Reach of the default generator\n\ncommand: `bash bench/reach.sh` (`flatcheck fuzz "
           f"--cases {cases} --seed S --json`, S = {', '.join(map(str, seeds))})  \ncommit: `{commit}`\n"]
    out.append("Percent of cases that have each shape (docs/reach.md). `goal` is the rate the "
               "generator is meant to reach at default settings; `no` marks a shape below it.\n")
    out.append("| shape | " + " | ".join(f"seed {s}" for s in seeds) + " | goal | met |")
    out.append("|---|" + "---|" * len(seeds) + "---|---|")
    order = re.findall(r'X\(k\w+,\s*"([^"]+)"', open("harness/reach.def").read())
    for name in order:
        rates = [100.0 * r["coverage"]["reach"][name] / r["cases"] for r in runs]
        goal = REACH_GOALS.get(name, 5 if name in REACH_FIVE else None)
        met = "-" if goal is None else ("yes" if min(rates) >= goal else "no")
        out.append(f"| `{name}` | " + " | ".join(f"{x:.1f}" for x in rates) +
                   f" | {'-' if goal is None else f'>= {goal}'} | {met} |")
    return "\n".join(out) + "\n"


def floor(path, peer_path, commit, machine, bench_lib):
    rows = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") in (None, "median") and b["name"].startswith("TextFloor/"):
            rows[b.get("run_name", b["name"])] = b
    peer = {}
    for line in open(peer_path):
        r = json.loads(line)
        peer[r["nodes"]] = r["cases_per_sec"]
    us = lambda what, n: rows[f"TextFloor/{what}/{n}"]["us_per_case"]
    # Rows a build may lack (simdjson not found: the benchmark reports an error).
    has = lambda what: all("us_per_case" in rows.get(f"TextFloor/{what}/{n}", {}) for n in (8, 20, 32, 128))
    opt = lambda what, n: f"{us(what, n):.1f}" if has(what) else "not run"
    out = [header("The text floor: what reading the saved programs back costs a case",
                  "bash bench/floor.sh", commit, machine)]
    out.append(f"Google Benchmark library: {bench_lib}; flatcheck is a Release build.\n")
    out.append("Per case of `flatcheck fuzz --seed 1 --max-nodes N` (its first 100 cases), in microseconds. "
               "Each case's oracle saves two programs (the flattened one for the reloaded path, the "
               "exported one for the unflattened path), loads each back and saves it again (the "
               "round trip). `accept` is `nlohmann::json::accept` over those two documents: it only "
               "tokenizes and checks the syntax, so no reader built on nlohmann's lexer (DOM or SAX) "
               "can take less. `tape` is flatcheck's strict reader alone (`parse_doc`: parsed and "
               "checked into its tape, no IR built); `simdjson` is simdjson's DOM parser over the same "
               "documents (one parser, reused). `load` is flatcheck's loader (the reader and building "
               "the IR), `4 saves` the writer, `case` the whole check (generation excluded).\n")
    out.append("| --max-nodes | bytes loaded per case | accept (floor) | tape | simdjson | load | 4 saves | "
               "case | case less load and saves | budget at 20,000 cases/s |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for n in (8, 20, 32, 128):
        b = rows[f"TextFloor/accept/{n}"]["bytes_per_case"]
        a = us("accept", n)
        rest = us("case", n) - us("load", n) - us("save", n)
        out.append(f"| {n} | {b:,.0f} | {a:.1f} | {us('tape', n):.1f} | {opt('simdjson', n)} | "
                   f"{us('load', n):.1f} | {us('save', n):.1f} | "
                   f"{us('case', n):.1f} | {rest:.1f} | 50 (accept alone: {a / 50:.2f}x of it) |")
    out.append("\nThe earlier goal of 150x the peer per case (the goal now is 60x per flat node: "
               "bench/results/peer.md), with the peer's rate from the same run "
               "(`peer_fx.py --mode loop --nodes N`, pinned like the benchmarks):\n")
    out.append("| N | peer cases/s | budget per case at 150x (us) | accept at --max-nodes N (us) | "
               "accept / budget |")
    out.append("|---|---|---|---|---|")
    for n in (8, 32, 128):
        budget = 1e6 / (150 * peer[n])
        a = us("accept", n)
        out.append(f"| {n} | {peer[n]:.1f} | {budget:.1f} | {a:.1f} | {a / budget:.2f}x |")
    return "\n".join(out) + "\n"


def names_ir(path, commit, machine, valgrind):
    """ROWS_TXT: one line per run, `BENCHMARK NAMES ITERATIONS INSTRUCTIONS`."""
    out = [header("Instructions per created name", "bash bench/names_ir.sh", commit, machine)]
    out.append(f"valgrind: {valgrind}\n")
    out.append("Instructions executed inside `Namespace::create_name` (callgrind, inclusive), "
               "divided by the names created. NameCollision asks for `getitem` n times; "
               "NameSuffixes asks for `getitem_<r>` (r < n) and, one time in eight, `getitem` "
               "(bench/bench_main.cc).\n")
    out.append("| benchmark | names | instructions per name | ratio to 10^3 |")
    out.append("|---|---|---|---|")
    base = {}
    for line in open(path):
        bench, names, iterations, instructions = line.split()
        per = int(instructions) // (int(iterations) * int(names))
        base.setdefault(bench, per)
        out.append(f"| {bench} | {names} | {per} | {per / base[bench]:.2f} |")
    return "\n".join(out) + "\n"


# The parts of a case's check, each the functions whose samples (callees included) it counts.
# A sample inside two parts' functions counts to both (a run inside a swap check is in "swap
# checks" and in "runs"), so the column does not add up to 100.
PROFILE_PARTS = [
    ("the whole check (check_case)", ["flatcheck::check_case"]),
    ("generate the case", ["flatcheck::generate_case_for_seed"]),
    ("export", ["flatcheck::export_program"]),
    ("partition", ["flatcheck::partition"]),
    ("flatten", ["flatcheck::flatten"]),
    ("unflatten", ["flatcheck::unflatten"]),
    ("save (the writer: 4 saves)", ["flatcheck::save_program"]),
    ("load (reader and IR: 2 loads, more with re-spelling)", ["flatcheck::load_program"]),
    ("  of which reading the text into the tape", ["flatcheck::parse_doc"]),
    ("runs (eager, every path, swaps)", ["flatcheck::run_module"]),
    ("  of which the eager run's reference kernels", ["flatcheck::check_against_reference"]),
    ("swap checks (clones and runs)", ["flatcheck::check_swaps"]),
    ("re-spelled documents and the canonical layout", ["flatcheck::respell",
                                                       "flatcheck::canonical_layout_breach"]),
    ("fingerprints", ["flatcheck::fingerprint_program", "flatcheck::fingerprint_module"]),
    ("lint", ["flatcheck::lint", "flatcheck::lint_program"]),
    ("type inference and the type check", ["flatcheck::infer_types", "flatcheck::type_breach"]),
    ("pass rules (live calls, partition and flatten rules)",
     ["flatcheck::expected_live_calls", "flatcheck::partition_breach",
      "flatcheck::partition_spec_breach", "flatcheck::flatten_breach"]),
    ("reach figures", ["flatcheck::case_reach", "flatcheck::partition_reach",
                       "flatcheck::unflatten_reach"]),
    ("module and graph copies", ["flatcheck::clone_module", "flatcheck::Graph::operator="]),
    ("names (the namespace)", ["flatcheck::Namespace::create_name", "flatcheck::Namespace::mark_used"]),
    ("destructors of modules and programs", ["flatcheck::Module::~Module",
                                             "flatcheck::Program::~Program"]),
]


def perf_rows(path, with_dso):
    pat = (re.compile(r"^\s*([\d.]+)%\s+(\S+)\s+\[.\]\s+(.*?)\s*$") if with_dso else
           re.compile(r"^\s*([\d.]+)%\s+[\d.]+%\s+\[.\]\s+(.*?)\s*$"))
    rows = []
    for line in open(path):
        m = pat.match(line)
        if m:
            # perf pads the symbol and may add IPC columns ("-  -") after it.
            fields = [re.sub(r"\s+-\s+-\s*$", "", g).replace("[abi:cxx11]", "").strip()
                      for g in m.groups()[1:]]
            rows.append((float(m.group(1)),) + tuple(fields))
    return rows


def profile(children_path, self_path, commit, machine, samples, command):
    inclusive = {}
    for pct, sym in perf_rows(children_path, False):
        inclusive.setdefault(sym, pct)
    settings = re.search(r"--cases (\d+) --max-nodes (\d+) --seed (\d+)", command)
    how = ("CASES={} MAX_NODES={} SEED={} bash bench/profile.sh".format(*settings.groups())
           if settings else "bash bench/profile.sh")
    out = [header("Where a case's time goes", how, commit, machine)]
    out.append(f"Profiled: `{command}` under `perf record --call-graph dwarf` ({samples} samples). "
               "Each part is the share of samples inside its functions, their callees included; "
               "a sample can count to two parts (a swap check's runs are runs too).\n")
    out.append("| part | functions | % of samples |")
    out.append("|---|---|---|")
    for name, funcs in PROFILE_PARTS:
        got = [inclusive[f] for f in funcs if f in inclusive]
        # Parts of several functions: the largest, as their callees overlap (a lower bound).
        val = f"{max(got):.1f}" + (" (largest of them)" if len(got) > 1 else "") if got else "-"
        shown = ", ".join(f"`{f.replace('flatcheck::', '')}`" for f in funcs)
        out.append(f"| {name} | {shown} | {val} |")
    out.append("\nThe functions with the most samples of their own (no callees):\n")
    out.append("| % of samples | library | function |")
    out.append("|---|---|---|")
    for pct, dso, sym in perf_rows(self_path, True)[:20]:
        sym = sym if len(sym) <= 90 else sym[:87] + "..."
        out.append(f"| {pct:.2f} | {dso} | `{sym.replace('|', '/')}` |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    kind = sys.argv[1]
    if kind == "stages":
        print(stages(*sys.argv[2:6]), end="")
    elif kind == "reach":
        print(reach(*sys.argv[2:]), end="")
    elif kind == "isolation":
        print(isolation(*sys.argv[2:6]), end="")
    elif kind == "ab":
        print(ab(*sys.argv[2:7]), end="")
    elif kind == "floor":
        print(floor(*sys.argv[2:7]), end="")
    elif kind == "names_ir":
        print(names_ir(*sys.argv[2:6]), end="")
    elif kind == "profile":
        print(profile(*sys.argv[2:8]), end="")
    else:
        print(detection(*sys.argv[2:6]), end="")
