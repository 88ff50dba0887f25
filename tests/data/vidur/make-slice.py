#!/usr/bin/env python3
"""Makes tests/data/vidur/, the slice of the Vidur profile set (microsoft/vidur,
MIT licence: LICENSE here) the calibrator's tests read, from a checkout of
../shared/data/profiles/vidur.  Rows are copied unchanged (header included):
  compute/a100/meta-llama/Meta-Llama-3-8B/mlp.csv  the rows at tp 1
  compute/{a100,h100}/meta-llama/Llama-2-7b-hf/mlp.csv  the rows at tp 1 and 2
  attention_a100/attention.csv  every 8th data row;  cpu_overheads.csv whole
  network/{a100,h100}_dgx/all_reduce.csv  the rows with 2 workers
Run from the repository root:  python3 tests/data/vidur/make-slice.py
"""
import csv, os, shutil

SRC, DST = "../shared/data/profiles/vidur", "tests/data/vidur"


def slice_rows(rel, keep):
    with open(os.path.join(SRC, rel), newline="") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    out = [head] + [r for k, r in enumerate(rows[1:]) if keep(head, k, r)]
    os.makedirs(os.path.dirname(os.path.join(DST, rel)), exist_ok=True)
    with open(os.path.join(DST, rel), "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(out)


def col(head, r, name):
    return r[head.index(name)]


slice_rows("compute/a100/meta-llama/Meta-Llama-3-8B/mlp.csv",
           lambda h, k, r: col(h, r, "num_tensor_parallel_workers") == "1")
for gpu in ("a100", "h100"):
    slice_rows(f"compute/{gpu}/meta-llama/Llama-2-7b-hf/mlp.csv",
               lambda h, k, r: col(h, r, "num_tensor_parallel_workers") in ("1", "2"))
    slice_rows(f"network/{gpu}_dgx/all_reduce.csv", lambda h, k, r: col(h, r, "num_workers") == "2")
slice_rows("attention_a100/attention.csv", lambda h, k, r: k % 8 == 0)
slice_rows("attention_a100/cpu_overheads.csv", lambda h, k, r: True)
shutil.copy(os.path.join(SRC, "LICENSE"), os.path.join(DST, "LICENSE"))
