"""The bridge's functional-call paths (docs/torch.md), torch >= 2.5:

  export.strict.functional_call, export.nonstrict.functional_call
             export, save/load and unflatten (as export.<mode>.unflatten), then each of the
             CONFIG["calls"] calls through torch.func.functional_call(u, state, inputs), the
             way a checkpoint of the eager model is run on the unflattened module without
             loading it: `state` maps every name the eager model holds a parameter or buffer
             under (those the unflattened module holds too) to a new tensor, one per eager
             tensor, twice its initial value. The outputs, and the given tensors after the
             calls (a buffer update writes into them), must equal torch eager's with the same
             new state written into the model's own tensors, bit for bit; and the unflattened
             module's own tensors must be as before (functional_call puts them back).

The expectation is torch eager, not functional_call: a fresh eager model whose tensors are
doubled in place, run as it is (new_state; the NaN-payload excuse of torch_compare.judge runs
eager with that state too). A call variant `n@1` of the unflattened module holds its module's
tensors under names the eager model does not have, tied to the names it does: functional_call
(tie_weights=True, its default) is documented to give every name of a tied tensor the value of
the names given. A program whose unflattened module disagrees with eager, or whose load or
unflatten raises, before any functional_call is skipped (the unflatten path reports why).

A failure is traced by its causes (those the program has), removed one at a time, then two,
then all three:
  functional-call-tied-subset-keyerror (docs/found-bugs.md 50)
      functional_call raises KeyError when two or more (but not all) names of a tied tensor
      are given: _untie_named_tensors_map looks every name of the tensor up among the given
      ones; removed: every name the module holds the tensor under given the one new tensor
  functional-call-shared-module-restore (pytorch/pytorch#164759, open)
      a module object the unflattened module holds under two paths (the variants of a module
      share its children) has its tensor swapped once per path, and put back once per path,
      the second time with the new tensor: after the call the module holds the given tensor,
      and the next call finds other ties; removed: every name given, one name per module and
      attribute passed, tie_weights=False (each slot swapped once)
  export-load-aliases-empty-tensors (docs/found-bugs.md 51, torch 2.14)
      torch.export.save groups the weights that share a storage by the storage's data_ptr,
      which is 0 for every zero-element storage: distinct empty buffers load as one storage,
      and unflatten (which finds shared tensors by storage) makes them one tensor, so the
      eager model's distinct tensors for them are "multiple values" for one tied tensor
      (ValueError); removed: unflatten of the program as exported, without save/load
"""
import contextlib
import itertools

import torch

from torch_compare import bit_equal, eager_run, judge, run_calls, state_of, tensors_of
from torch_export import available, export_program, failure, run_family, saved_loader, verdict

PATHS = ("export.strict.functional_call", "export.nonstrict.functional_call")
TIED_SUBSET = "functional-call-tied-subset-keyerror"
SHARED_RESTORE = "functional-call-shared-module-restore"
EMPTY_ALIASED = "export-load-aliases-empty-tensors"
# What each cause is, and how the trace removes it.
CAUSES = {TIED_SUBSET: "two or more, not all, names of a tied tensor given (every name given)",
          SHARED_RESTORE: "a module object held under two paths (each slot given its tensor "
                          "once: every name given, tie_weights=False)",
          EMPTY_ALIASED: "distinct zero-element tensors one storage after save/load, tied "
                         "by unflatten (unflatten of the unsaved program)"}


def unique_tensors(module):
    return list({id(t): t for t in tensors_of(module).values()}.values())


def names_by_tensor(module):
    """{id(tensor): [FQN, ...]}: every name the module holds each tensor under."""
    names = {}
    for fqn, t in tensors_of(module).items():
        names.setdefault(id(t), []).append(fqn)
    return names


@contextlib.contextmanager
def new_state(p):
    """The program `p` building its model with every parameter and buffer doubled in place: the
    expectation's state (eager_run and judge's canonical-NaN runs build through p.build)."""
    build = p.build

    def doubled():
        model = build()
        with torch.no_grad():
            for t in unique_tensors(model):
                t.mul_(2)
        return model
    p.build = doubled
    try:
        yield
    finally:
        p.build = build


def given_state(p, held):
    """{eager FQN: tensor} for each name a fresh doubled eager model holds a tensor under that
    the module (whose FQNs are `held`) holds too; the names of one eager tensor share one
    tensor, as in a checkpoint the eager model's state_dict gives."""
    with new_state(p):
        model = p.build()
    one = {}  # one tensor per eager tensor: functional_call tells tied tensors apart by object
    return {fqn: one.setdefault(id(t), t.detach()) for fqn, t in tensors_of(model).items()
            if fqn in held}


def tie_completed(module, state):
    """`state` with every other name the module holds each given tensor's original under given
    the same new tensor (the cause of TIED_SUBSET removed)."""
    own, names = tensors_of(module), names_by_tensor(module)
    out = dict(state)
    for fqn, value in state.items():
        for other in names.get(id(own.get(fqn)), []):
            out.setdefault(other, value)
    return out


def one_per_slot(module, state):
    """`state` with one name per (module object, attribute) it names: a module held under two
    paths is given its tensor once (the cause of SHARED_RESTORE removed, with tie_weights=False).
    """
    seen, out = set(), {}
    for fqn, value in state.items():
        parent, _, attr = fqn.rpartition(".")
        slot = (id(module.get_submodule(parent)), attr)
        if slot not in seen:
            seen.add(slot)
            out[fqn] = value
    return out


def functional_calls(module, state, p, tie_weights=True):
    """The calls through torch.func.functional_call(module, state, inputs): outputs per call."""
    return run_calls(lambda *args: torch.func.functional_call(module, state, args,
                                                              tie_weights=tie_weights), p)


def judged(p, module, state, want, cache, tie_weights=True):
    """(status, why): the functional calls of `module` with `state` against eager with the new
    state (`want`, judged under new_state with its own `cache`), then the module's own tensors
    against what they were before."""
    before = state_of(module)
    outs = functional_calls(module, state, p, tie_weights)
    with new_state(p):
        status, why = judge(p, outs, {fqn: t.clone() for fqn, t in state.items()}, want, cache)
    if status == "mismatch":
        return status, why
    for fqn, t in tensors_of(module).items():
        if fqn not in before or not bit_equal(before[fqn], t.detach()):
            return "mismatch", (f"the unflattened module's own {fqn} is not put back after "
                                "functional_call")
    return status, why


def functional_call_path(p, mode, eager, cache):
    stage = "export"
    try:
        load = saved_loader(export_program(p, mode))
        stage = "unflatten"
        u = torch.export.unflatten(load())
        status, why = judge(p, run_calls(u, p), state_of(u), eager, cache)
        if status == "mismatch":
            return {"status": "skipped",
                    "skip": "the unflattened module disagrees with eager before any "
                            "functional_call (the unflatten path reports why)"}
        stage = "eager"
        with new_state(p):
            want = eager_run(p)
        mine = {}  # judge's canonical-NaN runs of the new state, not the program's
        stage = "run"
        u = torch.export.unflatten(load())
        status, why = judged(p, u, given_state(p, set(tensors_of(u))), want, mine)
        if status != "mismatch":
            return verdict(status, why)
        error = None
    except Exception as e:  # noqa: BLE001 - torch refusing or crashing on the program
        if stage == "unflatten":
            return {"status": "skipped",
                    "skip": f"the load, unflatten or the unflattened module's calls raised "
                            f"{type(e).__name__} before any functional_call (the unflatten "
                            "path reports why)"}
        if stage != "run":
            return failure(e, stage)
        error, why = e, f"{type(e).__name__}: {e}"
    known = trace_functional(p, mode, load, want, mine, isinstance(error, KeyError))
    if known:
        return {"status": "known_torch_issue", "stage": stage, "detail": why[:300],
                "known_torch_issue": known}
    return verdict(status, why) if error is None else failure(error, stage)


def trace_functional(p, mode, load, want, cache, key_error):
    """The classes of the fewest causes (CAUSES) present in the program whose removal together
    makes the calls agree, with what was removed (text), or None. SHARED_RESTORE's removal
    passes tie_weights=False, which cannot raise TIED_SUBSET's KeyError: where the calls
    raised it, SHARED_RESTORE is tried with TIED_SUBSET only."""
    u = torch.export.unflatten(load())
    aliased = aliased_empty(p, u)
    # TIED_SUBSET is present where the calls raised its KeyError, or where a module the
    # removals run (this one, or without save/load when EMPTY_ALIASED is removed) gives it
    # one: the ValueError of EMPTY_ALIASED can come first.
    tied = key_error or tied_subset(p, u) or (
        aliased and tied_subset(p, torch.export.unflatten(export_program(p, mode))))
    present = [c for c, here in ((TIED_SUBSET, tied), (SHARED_RESTORE, held_twice(u)),
                                 (EMPTY_ALIASED, aliased)) if here]
    for size in range(1, len(present) + 1):
        for chosen in itertools.combinations(present, size):
            if key_error and SHARED_RESTORE in chosen and TIED_SUBSET not in chosen:
                continue
            if agrees(p, mode, load, want, cache, chosen):
                return "+".join(chosen) + ": " + "; ".join(CAUSES[c] for c in chosen) + \
                    "; removed, the calls agree"
    return None


def agrees(p, mode, load, want, cache, removed):
    """Whether the calls agree with the causes `removed` removed (an export, unflatten or call
    that raises then: not these causes alone)."""
    try:
        if EMPTY_ALIASED in removed:
            u = torch.export.unflatten(export_program(p, mode))  # no save/load
        else:
            u = torch.export.unflatten(load())
        state = given_state(p, set(tensors_of(u)))
        if TIED_SUBSET in removed or SHARED_RESTORE in removed:
            state = tie_completed(u, state)
        if SHARED_RESTORE in removed:
            return judged(p, u, one_per_slot(u, state), want, cache, False)[0] != "mismatch"
        return judged(p, u, state, want, cache)[0] != "mismatch"
    except Exception:  # noqa: BLE001 - not (only) these causes
        return False


def aliased_empty(p, module):
    """Whether the module holds one tensor under names whose eager tensors are distinct
    zero-element tensors (EMPTY_ALIASED's cause)."""
    eager = tensors_of(p.build())
    groups = ([n for n in names if n in eager] for names in names_by_tensor(module).values())
    return any(len({id(eager[n]) for n in group}) > 1 and
               all(eager[n].numel() == 0 for n in group) for group in groups)


def tied_subset(p, module):
    """Whether the module holds one tensor under names of which two or more, but not all, are
    names the eager model holds (those given_state gives: TIED_SUBSET's cause)."""
    eager = tensors_of(p.build())
    return any(2 <= sum(n in eager for n in names) < len(names)
               for names in names_by_tensor(module).values())


def held_twice(module):
    """Whether the module holds one module object under two paths (SHARED_RESTORE's cause)."""
    paths = {}
    for _, m in module.named_modules(remove_duplicate=False):
        paths[id(m)] = paths.get(id(m), 0) + 1
    return any(n > 1 for n in paths.values())


def run_functional(p, eager, paths, cache):
    """The functional-call paths of one program, when asked for: {path: result}."""
    return run_family(PATHS, paths,
                      lambda path: functional_call_path(p, path.split(".")[1], eager, cache),
                      available())
