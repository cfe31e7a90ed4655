"""torch._export.converter.TS2EPConverter (TorchScript to ExportedProgram) names each input of
the traced graph by its TorchScript debug name with '.' replaced by '_' (normalize_name), and
checks the result against nothing. torch.jit.trace names a value after the parameter of the
child it is passed to, and renames the value that held the name first: a model whose forward
takes `x` and `x_1` and passes another value to a child whose parameter is `x` has inputs
`x.1` and `x_1`, both named `x_1` by the converter. The two inputs' specs then share one name,
and convert() raises `SyntaxError: duplicate argument 'x_1' in function definition` (found by
flatcheck: generated programs of seeds 211 and 212, traced and converted, 6 of 90, on torch
2.14.1 and 2.6; shrunk with `flatcheck shrink --predicate` from 32 nodes to 3). The control,
the same model with its second input named `y`, converts and gives eager's numbers.

    python3 corpus/torch/ts-converter-input-name-collision.py   # exit 1 while present
"""
import sys
import warnings

import torch

warnings.simplefilter("ignore")


class Child(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.child = Child()

    def forward(self, x, x_1):
        return self.child(x + 1) + x_1


class Control(Model):
    def forward(self, x, y):
        return self.child(x + 1) + y


def converted(model, inputs):
    """The model traced, converted to an ExportedProgram, its module's result; or the error."""
    from torch._export.converter import TS2EPConverter  # noqa: PLC0415 - torch >= 2.4
    traced = torch.jit.trace(model, inputs)
    names = [v.debugName() for v in traced.graph.inputs()][1:]
    try:
        return names, TS2EPConverter(traced, inputs).convert().module()(*inputs)
    except Exception as e:  # noqa: BLE001 - the bug shown
        return names, e


def main():
    try:
        import torch._export.converter  # noqa: F401, PLC0415
    except ImportError:
        print(f"torch {torch.__version__} has no TorchScript converter: cannot show the bug")
        return 77
    inputs = (torch.ones(2), torch.full((2,), 5.0))
    want = Model()(*inputs)
    names, got = converted(Model(), inputs)
    control_names, control = converted(Control(), inputs)
    print(f"torch {torch.__version__}: eager {want.tolist()}")
    print(f"  traced inputs {names}: " + (f"{type(got).__name__}: {got}"
                                          if isinstance(got, Exception) else str(got.tolist())))
    print(f"  control, traced inputs {control_names}: " +
          (f"{type(control).__name__}: {control}"
           if isinstance(control, Exception) else str(control.tolist())))
    if isinstance(control, Exception) or not torch.equal(control, want):
        print("FAIL: the control does not convert to eager's result: not this bug")
        return 2
    if isinstance(got, Exception) or not torch.equal(got, want):
        print("FAIL: the converter gives both inputs one name (bug present)")
        return 1
    print("ok: the model converts and gives eager's result")
    return 0


if __name__ == "__main__":
    sys.exit(main())
