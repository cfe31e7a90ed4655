"""The bridge's subgraph-rewriting path (docs/torch.md): torch.fx.subgraph_rewriter.replace_pattern,
the pass torch.fx offers for replacing every match of a pattern of ops by other ops (the fusions
and lowerings a compiler runs before it partitions a model).

  fx.rewrite   the fx trace (the fx path's: buffer reads and in-place updates where the model
               makes them); the patterns are drawn from the trace itself, each replaced by an
               identical copy of itself in a copy of the trace, the calls; outputs and state
               must equal torch eager's bit for bit, for every pattern

A pattern is one op of the trace; an op and the op that makes one of its inputs, or the two ops
before it in such a chain; or an op and the ops making two of its inputs: its other inputs the
pattern's placeholders, its constants kept, its results every value of it used outside it.
The distinct patterns of a program are tried, MAX_PATTERNS at most of those that read a buffer
the graph updates in place and as many of the others (drawn, seeded by the patterns
themselves). Replacing a computation by itself changes nothing a correct rewriter does, so the
expectation is torch eager's run of the model, as on every path.

Four causes are known. Each is looked for in the matches of a pattern whose rewrite failed in
its way, and counts only when rewriting again without the matches that have it (a match filter
of replace_pattern_with_filters) agrees; where that removal leaves another failure (a crash can
hide a wrong result), the cause of that one is looked for in turn:
  rewrite-moves-read-past-update  a wrong result (docs/found-bugs.md 52): replace_pattern puts the
                                  replacement before the first user of the pattern's results,
                                  not where the pattern was, so a read of a buffer that an
                                  in-place update between the two changes reads the new value
  rewrite-input-after-first-user  a graph that uses a value before making it (53): a pattern of
                                  several results, one read before a value another result is
                                  computed from is made (in the graph, or where another
                                  match's replacement makes it anew); the replacement put
                                  before that read reads the value before it exists
  rewrite-match-without-user      torch 2.6's AssertionError "The returning_nodes should have at
                                  least one user node" for a match whose result nothing reads
                                  (pytorch#143841, fixed before 2.14.1)
  rewrite-zero-literal-sign       a wrong result: SubgraphMatcher compares a pattern's literals
                                  with ==, so a pattern dividing by 0.0 matches a division by
                                  -0.0 too, and the replacement divides by 0.0 (pytorch#192598,
                                  an open pull request; a NaN literal never matches, no wrong
                                  result)
"""
import copy
import math
import random
import zlib

import torch

from torch_compare import judge, run_calls
from torch_export import failure, state_after, verdict
from torch_fx import trace
from torch_partition import attr_of, base_of, in_place, storage_of

PATHS = ("fx.rewrite",)
MOVED = "rewrite-moves-read-past-update"  # docs/found-bugs.md 52
BEFORE = "rewrite-input-after-first-user"  # docs/found-bugs.md 53
LITERAL_SIGN = "rewrite-zero-literal-sign"  # pytorch#192598 (open)
NO_USER = "rewrite-match-without-user"  # torch 2.6; fixed by pytorch#143841
MAX_PATTERNS = 16
PINNED = None  # the patterns' signatures to try instead of a draw (the bridge's --draw)


def candidate(n):
    """Whether node `n` can be in a pattern: an op (function or method), not an in-place one
    (an update whose result nothing reads has no user for the replacement to go before)."""
    return n.op in ("call_function", "call_method") and not in_place(n)


def patterns_of(graph):
    """The patterns of `graph`: lists of its nodes in graph order, each with a result used
    outside it: one op; an op and the op making one of its inputs, and that op's maker too; an
    op and the makers of two of its inputs."""
    order = {n: i for i, n in enumerate(graph.nodes)}
    out = []
    for n in graph.nodes:
        if not candidate(n):
            continue
        out.append([n])
        makers = [m for m in dict.fromkeys(n.all_input_nodes) if candidate(m)]
        for m in makers:
            out.append([m, n])
            out += [[k, m, n] for k in dict.fromkeys(m.all_input_nodes) if candidate(k)]
        if len(makers) > 1:
            out.append(makers[:2] + [n])
    out = [sorted(dict.fromkeys(nodes), key=order.get) for nodes in out]
    return [nodes for nodes in out if results(nodes) and not dead(nodes)]


def results(nodes):
    """The nodes of a pattern used outside it, in graph order."""
    inside = set(nodes)
    return [n for n in nodes if any(u not in inside for u in n.users)]


def dead(nodes):
    """Whether a node of the pattern is neither read inside it nor one of its results (torch.fx
    refuses a pattern with dead code)."""
    inside, out = set(nodes), set(results(nodes))
    return any(n not in out and not any(u in inside for u in n.users) for n in nodes)


def inputs_of(nodes):
    """The values from outside a pattern its nodes read, in the order they first read them."""
    inside, seen = set(nodes), {}
    for n in nodes:
        for a in n.all_input_nodes:
            if a not in inside:
                seen.setdefault(a, None)
    return list(seen)


def pattern_module(nodes):
    """A GraphModule of the pattern: a placeholder per outside input, a copy of each op with its
    constants, the results as the output (one, or a tuple)."""
    g = torch.fx.Graph()
    env = {a: g.placeholder(f"in_{i}") for i, a in enumerate(inputs_of(nodes))}
    for n in nodes:
        env[n] = g.node_copy(n, lambda a: env[a])
    outs = [env[n] for n in results(nodes)]
    g.output(outs[0] if len(outs) == 1 else tuple(outs))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def signature(nodes):
    """A pattern's structure, the same for every match of it: each op's kind, target and
    arguments, with inputs numbered as the pattern's placeholders and its own nodes by
    position."""
    index = {n: f"op{i}" for i, n in enumerate(nodes)}
    for i, a in enumerate(inputs_of(nodes)):
        index[a] = f"in{i}"

    def arg(a):
        return torch.fx.node.map_arg(a, lambda v: index[v])

    target = (lambda n: n.target if isinstance(n.target, str)
              else getattr(n.target, "__name__", repr(n.target)))
    return repr([(n.op, target(n), arg(n.args), arg(n.kwargs)) for n in nodes] +
                [[index[n] for n in results(nodes)]])


def drawn(graph):
    """The distinct patterns of `graph` tried: {signature: nodes}. Those reading an attribute the
    graph updates in place (where moving a computation can change what it reads) and the
    others are two groups; each is tried whole when it has at most MAX_PATTERNS, else
    MAX_PATTERNS of it drawn, seeded by its signatures."""
    updated = {key(n.args[0], graph) for n in graph.nodes if in_place(n)}
    groups = ({}, {})
    for nodes in patterns_of(graph):
        touches = any(key(a, graph) in updated for n in nodes for a in n.all_input_nodes)
        groups[0 if touches else 1].setdefault(signature(nodes), nodes)
    if PINNED is not None:
        return {s: nodes for group in groups for s, nodes in group.items() if s in PINNED}
    out = {}
    for group in groups:
        keys = sorted(group)
        if len(keys) > MAX_PATTERNS:
            keys = sorted(random.Random(zlib.crc32(repr(keys).encode())).sample(keys,
                                                                                 MAX_PATTERNS))
        out.update((s, group[s]) for s in keys)
    return out


def spans(match, graph):
    """(the graph's order of its nodes, the match's own nodes, the first user of its results, or
    None): replace_pattern puts the replacement before that user, which may be a node of the
    match itself (a result read by another node of the pattern)."""
    order = {n: i for i, n in enumerate(graph.nodes)}
    mine = [gn for pn, gn in match.nodes_map.items() if pn.op not in ("placeholder", "output")]
    users = {u for r in match.returning_nodes for u in r.users}
    return order, mine, min(users, key=order.get) if users else None


def moves_past_update(match, graph):
    """A node of the match and the first user of the match's results, where replace_pattern
    puts the replacement, have an in-place op between them that updates a value the node reads
    (the same node, or another read of the same buffer, under any of its names, or through a
    view of it), or that user is such an update and the node comes after it: the node's
    computation moves past the update, later (a node before that user) or earlier (a node after
    it)."""
    order, mine, first = spans(match, graph)
    if not mine or first is None:
        return False
    end = order[first]
    for n in mine:
        # A node before that user moves past the updates between them; one after it moves
        # before the user too, which may itself be the update (`copy_(buf, result)`).
        lo, hi = (order[n] + 1, end) if order[n] < end else (end, order[n])
        read = {key(a, graph) for a in n.all_input_nodes}
        if any(in_place(u) and key(u.args[0], graph) in read
               for u in graph.nodes if lo <= order[u] < hi):
            return True
    return False


def key(v, graph):
    """What a value is, for an update and a read to meet: an attribute read by its tensor's
    storage (two names of one shared buffer are one; an empty tensor, whose storage address
    says nothing, by its name), a view of a value or an in-place op's result (its destination)
    as that value (--reads alias: a view of a buffer reads the buffer), any other node by
    itself."""
    v = base_of(v)
    if not (isinstance(v, torch.fx.Node) and v.op == "get_attr"):
        return v
    t = attr_of(graph.owning_module, v.target) if graph.owning_module is not None else None
    if isinstance(t, torch.Tensor) and t.numel():
        return ("storage", storage_of(t))
    return ("attr", v.target)


def input_after_user(match, graph):
    """A value the match reads is made after the first user of its results (a pattern of several
    results: one used early, another reading a later value), in the graph or where another
    match's replacement puts it: a value another match of the pattern returns is made anew
    before that match's first user, which may come after this one's."""
    order, _, first = spans(match, graph)
    if first is None:
        return False
    mine = set(match.nodes_map.values())
    made = {}  # a result of another match -> where its replacement goes
    for other in same_pattern_matches(match, graph):
        _, _, at = spans(other, graph)
        if at is not None and set(other.nodes_map.values()) != mine:
            made.update((r, order[at]) for r in other.returning_nodes)
    return any(isinstance(n, torch.fx.Node) and max(order[n], made.get(n, -1)) > order[first]
               for n in match.placeholder_nodes)


def same_pattern_matches(match, graph):
    """Every match of `match`'s pattern in `graph`, as replace_pattern finds them (the pattern
    graph read from the match's own map)."""
    return graph_matches(next(iter(match.nodes_map)).graph, graph)


def graph_matches(pattern, graph):
    """The matches of the pattern graph `pattern` in `graph`, found as replace_pattern finds
    them."""
    from torch.fx.passes.utils.matcher_utils import SubgraphMatcher
    return SubgraphMatcher(pattern, match_output=False, match_placeholder=False,
                           remove_overlapping_matches=True).match(graph)


def result_without_user(match, graph):
    """A result of the match that nothing reads (torch 2.6's replace_pattern asserts every
    result has a user)."""
    return any(not r.users for r in match.returning_nodes)


def literal_sign_differs(match, graph):
    """Whether a float literal of the match equals the pattern's as Python floats but not in
    sign (0.0 and -0.0): SubgraphMatcher._match_literals compares literals with ==, and the
    replacement writes the pattern's literal."""
    def floats(n):
        return [a for a in (*n.args, *n.kwargs.values()) if type(a) is float]
    return any(a == b and math.copysign(1.0, a) != math.copysign(1.0, b)
               for pn, gn in match.nodes_map.items()
               if getattr(pn, "op", None) in ("call_function", "call_method")
               for a, b in zip(floats(pn), floats(gn)))


# (class, the cause in a match, the failure it gives: a wrong result or an error's text, what the
# class's text says). A cause is tried only on a failure of its kind.
CAUSES = [
    (MOVED, moves_past_update, "mismatch",
     "a replacement of the pattern moved past an in-place update of a value it reads"),
    (BEFORE, input_after_user, "was used before it has been defined",
     "a replacement of the pattern put before a value it reads is made (a pattern of several "
     "results, one read before that value)"),
    (NO_USER, result_without_user, "should have at least one user node",
     "a match of the pattern whose result nothing reads (torch 2.6; fixed upstream)"),
    (LITERAL_SIGN, literal_sign_differs, "mismatch",
     "a match whose float literal is the pattern's zero of the other sign (the matcher "
     "compares literals with ==; pytorch#192598)"),
]


def explains(cause, r):
    """Whether a cause of CAUSES gives failures like the result `r`."""
    kind = cause[2]
    return r["status"] == kind if kind == "mismatch" else \
        r["status"] == "error" and kind in r.get("first_mismatch", "")


def matches(gm, nodes):
    """The matches replace_pattern finds for the pattern `nodes` in `gm`."""
    return graph_matches(pattern_module(nodes).graph, gm.graph)


def rewritten(gm, nodes, causes=()):
    """A copy of `gm` with every match of the pattern `nodes` replaced by an identical copy;
    the matches with one of `causes` left out (replace_pattern_with_filters)."""
    from torch.fx import subgraph_rewriter
    pattern, replacement = pattern_module(nodes), pattern_module(nodes)
    out = copy.deepcopy(gm)
    if not causes:
        subgraph_rewriter.replace_pattern(out, pattern, replacement)
    else:
        keep = (lambda m, g, _p: not any(cause(m, g) for cause in causes))
        subgraph_rewriter.replace_pattern_with_filters(out, pattern, replacement, [keep])
    out.graph.lint()  # a graph using a value before making it fails here, not in a call
    out.recompile()
    return out


def judged(p, gm, nodes, eager, cache, causes=()):
    """The rewrite of one pattern run and judged: a result dict (stage and status)."""
    stage = "rewrite"
    try:
        out = rewritten(gm, nodes, causes)
        stage = "run"
        status, why = judge(p, run_calls(out, p), state_after(out), eager, cache)
    except Exception as e:  # noqa: BLE001 - torch refusing a program
        return failure(e, stage)
    return verdict(status, why)


def traced(p, gm, nodes, r, eager, cache, removed=()):
    """The causes of CAUSES whose removal makes the rewrite agree, each seen in the pattern's
    matches and giving the failure left when the ones before it are removed (`r`: a cause
    can hide another, as a crash hides a wrong result): [(class, text)], or [] when none do."""
    found = matches(gm, nodes)
    for c in CAUSES:
        if c in removed or not explains(c, r) or not any(c[1](m, gm.graph) for m in found):
            continue
        now = removed + (c,)
        again = judged(p, gm, nodes, eager, cache, [x[1] for x in now])
        if again["status"] in ("agree", "excused"):
            return [(x[0], x[3]) for x in now]
        if not explains(c, again):  # another failure: the next cause is looked for
            deeper = traced(p, gm, nodes, again, eager, cache, now)
            if deeper:
                return deeper
    return []


def one_pattern(p, gm, sig, nodes, eager, cache):
    """The rewrite of one pattern: a result dict, a failure traced to its causes."""
    r = judged(p, gm, nodes, eager, cache)
    if r["status"] in ("mismatch", "error"):
        classes = traced(p, gm, nodes, r, eager, cache)
        if classes:
            r = {"status": "known_torch_issue",
                 "known_torch_issue": "+".join(c for c, _ in classes) + ": " +
                 "; ".join(t for _, t in classes),
                 "detail": r.get("first_mismatch", "")[:300]}
    r["pattern"] = sig
    return r


def rewrite_path(p, eager, cache):
    """The fx trace of `p`, every drawn pattern of it rewritten (rewrite_all)."""
    try:
        gm = trace(p)
    except Exception as e:  # noqa: BLE001 - torch refusing a program
        return failure(e, "trace")
    return rewrite_all(p, gm, eager, cache)


def rewrite_all(p, gm, eager, cache):
    """Every drawn pattern of `gm` rewritten: the first result neither agreeing nor a known
    issue, else every known class seen, else an agreement (excused when one pattern's was)."""
    tried = drawn(gm.graph)
    known, excused = {}, None
    for sig, nodes in tried.items():
        r = one_pattern(p, gm, sig, nodes, eager, cache)
        if r["status"] in ("mismatch", "error", "skipped"):
            return r
        if r["status"] == "known_torch_issue":
            known.setdefault(r["known_torch_issue"], r)
        elif r["status"] == "excused" and excused is None:
            excused = r
    if known:
        # Every class seen, on the first pattern that showed each.
        labels = sorted({c for text in known for c in text.split(":")[0].split("+")})
        first = next(iter(known.values()))
        return {**first, "known_torch_issue": "+".join(labels) + ": " + "; ".join(
            f"{r['known_torch_issue'].split(': ', 1)[1]} ({r['pattern']})"
            for r in known.values())[:900]}
    return excused or {"status": "agree", "detail": f"{len(tried)} patterns rewritten"}


def available():
    """None where torch.fx has the rewriter with match filters (torch >= 2); else why not."""
    if int(torch.__version__.split(".")[0]) < 2:
        return (f"torch {torch.__version__}: replace_pattern_with_filters, the path's removal of "
                "a cause, needs torch >= 2")
    return None


def run_rewrite(p, eager, paths, cache):
    """The rewrite path of one program, when asked for: {path: result}."""
    why = available()
    return {path: ({"status": "skipped", "skip": why} if why else rewrite_path(p, eager, cache))
            for path in PATHS if path in paths}
