#!/usr/bin/env python3
"""Builds argonne.csv (the learned step model's static-batch rows) from Argonne's
LLM-Inference-Bench files (argonne-lcf/LLM-Inference-Bench, commit 4211f5d4, BSD 3-Clause,
LICENSE-argonne), as copied to ../shared/data/bench/argonne/:
  python3 tests/data/corpus/make-corpus.py ../shared/data/bench/argonne > tests/data/corpus/argonne.csv
Every row of Plots/All_results.csv (kind batch: B prompts of L tokens generating L tokens, the
batch's wall time) and of Plots/Fig_21/all_results_TTFT.csv (kind ttft: the time to the first
token of B prompts of L tokens), except SambaNova SN40L (a dataflow machine, not in the catalog)
and blank lines; values unchanged."""
import csv, sys, os
d = sys.argv[1]
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow(["kind", "hardware", "tp", "framework", "model", "length", "batch", "latency_s"])
for r in csv.DictReader(open(os.path.join(d, "All_results.csv"))):
    if r["Hardware"].startswith("SambaNova"): continue
    w.writerow(["batch", r["Hardware"], r["Num of Hardware"], r["Framework"], r["Model"],
                r["Input Output Length"], r["Batch Size"], r["Latency"]])
for r in csv.DictReader(l for l in open(os.path.join(d, "all_results_TTFT.csv")) if l.strip()):
    if r["Hardware"].startswith("SambaNova"): continue
    w.writerow(["ttft", r["Hardware"], r["Num of Hardware"], r["Framework"], r["Model"],
                r["Input Length"], r["Batch Size"], r["Latency"]])
