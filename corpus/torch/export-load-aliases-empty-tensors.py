"""torch.export.save / torch.export.load make distinct zero-element buffers one storage, and
torch.export.unflatten then makes them one tensor. Found by flatcheck's torch campaign (seed 78,
torch 2.14.1, paths export.nonstrict.functional_call and export.strict.functional_call: the
eager model's distinct tensors for the two names are, to torch.func.functional_call, "multiple
values" for one tied tensor, a ValueError); written by hand.

torch/export/pt2_archive/_package_weights.py groups the weights that share a storage by
(storage data_ptr, dtype) to save each storage once; every zero-element storage has data_ptr 0,
so every empty weight of one dtype joins one group, and they load as views of one storage.
unflatten finds shared tensors by storage (_TensorID) and gives both names one tensor. torch
2.11 and 2.14.1; torch 2.6 loads them apart (2.7 to 2.10 not run).
    python3 corpus/torch/export-load-aliases-empty-tensors.py   # exit 1 while present
"""
import io
import sys

import torch

PRESENT_FROM = (2, 11)  # 2.7 to 2.10 not run; 2.11 and 2.14.1 have it


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Module()
        self.a.register_buffer("buf", torch.zeros(0, 4))
        self.b = torch.nn.Module()
        self.b.register_buffer("buf", torch.zeros(0, 4))  # another tensor, also empty

    def forward(self, x):
        return x + self.a.buf.sum() + self.b.buf.sum()


def main():
    x = torch.ones(2)
    saved = io.BytesIO()
    torch.export.save(torch.export.export(Model(), (x,)), saved)
    loaded = torch.export.load(io.BytesIO(saved.getvalue()))
    one_storage = (loaded.state_dict["a.buf"].untyped_storage() is
                   loaded.state_dict["b.buf"].untyped_storage())
    u = torch.export.unflatten(loaded)
    one_tensor = u.a.buf is u.b.buf
    if one_storage or one_tensor:
        print(f"torch {torch.__version__}: two distinct empty buffers after save/load: one "
              f"storage {one_storage}, one tensor in the unflattened module {one_tensor}")
        try:  # what a checkpoint of the eager model meets
            torch.func.functional_call(u, dict(Model().named_buffers()), (x,))
        except ValueError as e:
            print(f"  functional_call with the eager model's buffers: ValueError: {e}")
        return 1
    print(f"torch {torch.__version__}: the empty buffers stay apart after save/load and unflatten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
