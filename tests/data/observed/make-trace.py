#!/usr/bin/env python3
"""make-trace.py -- the observed vLLM run as a latsim CSV trace.

Reads the per-request log of a real vLLM 0.19.0 run (Llama-3.1-8B on one RTX 4090,
300 ShareGPT requests; data and licence from LLMServingSim, MIT: LICENSE-LLMServingSim)
and writes vllm_rtx4090_llama31_8b.csv with the columns latsim's CSV reader takes:
  TIMESTAMP        queued_ts (the server's monotonic clock, s; latsim shifts the first row to 0),
  ContextTokens    input_toks,
  GeneratedTokens  output_toks,
rows in order of queued_ts.  The arrival time is queued_ts, not arrival_time (the
client's epoch clock), so that the simulated latencies start where the observed ones
do: TTFT = first_token_ts - queued_ts, E2E = last_token_ts - queued_ts.  It prints
those observed percentiles (ms) by latsim's rule (sim/engine/stats.c, and
`latsim replay`): the value of 1-based rank ceil(p n).

Usage: tests/data/observed/make-trace.py [REQUESTS.jsonl]
(default ../shared/data/observed/vllm_rtx4090_llama31_8b_requests.jsonl from the
repository root; the CSV is written beside this script).
"""
import json
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    here, "..", "..", "..", "..", "shared", "data", "observed", "vllm_rtx4090_llama31_8b_requests.jsonl")
rows = [json.loads(line) for line in open(src) if line.strip()]
rows.sort(key=lambda r: r["queued_ts"])
with open(os.path.join(here, "vllm_rtx4090_llama31_8b.csv"), "w") as out:
    out.write("TIMESTAMP,ContextTokens,GeneratedTokens\n")
    for r in rows:
        out.write("%.6f,%d,%d\n" % (r["queued_ts"], r["input_toks"], r["output_toks"]))


def pct(v, p):
    v = sorted(v)
    rank = math.ceil(p * len(v) * (1 - 4 * 2.220446049250313e-16))
    return v[min(max(rank, 1), len(v)) - 1]


ttft = [1000 * (r["first_token_ts"] - r["queued_ts"]) for r in rows]
e2e = [1000 * (r["last_token_ts"] - r["queued_ts"]) for r in rows]
span = rows[-1]["queued_ts"] - rows[0]["queued_ts"]
print("%d requests over %.2f s" % (len(rows), span))
for name, v in (("ttft", ttft), ("e2e", e2e)):
    print("%s ms: p50 %.0f  p90 %.0f  p99 %.0f  mean %.0f" % (name, pct(v, .5), pct(v, .9), pct(v, .99), sum(v) / len(v)))
