#!/usr/bin/env python3
"""make-shapes.py -- the JSON example files beside it, each in its tool's exact shape.

  vllm_bench_serve.json       `vllm bench serve --save-result --save-detailed`, vLLM main
                              (vllm/benchmarks/serve.py, 2026): traffic settings, benchmark()'s
                              result dict, the per-metric statistics; one failed request.
  vllm_bench_serve_v0.8.json  the same without latencies / start_times / queue_times (older vLLM):
                              latsim re-draws the arrivals from request_rate and burstiness.
  aiperf_profile_export.jsonl AIPerf MetricRecordInfo records (src/aiperf/common/models/
                              record_models.py): a warm-up record, three profiling ones, a cancelled one.
  guidellm_benchmarks.json    GuideLLM GenerativeBenchmarksReport: one benchmark, three
                              GenerativeRequestStats with their computed fields.
The CSV and generic JSON-lines examples are written by hand.  Usage: ./make-shapes.py (here).
"""
import json
import os

os.chdir(os.path.dirname(os.path.abspath(__file__)))
res = {
    "date": "20260301-101500", "endpoint_type": "openai", "backend": "openai", "label": None,
    "model_id": "meta-llama/Llama-3.1-8B", "tokenizer_id": "meta-llama/Llama-3.1-8B", "num_prompts": 4,
    "request_rate": 2.0, "burstiness": 1.0, "max_concurrency": None,
    "duration": 1.2, "completed": 3, "failed": 1, "total_input_tokens": 350, "total_output_tokens": 9,
    "request_throughput": 2.5, "request_goodput": None, "output_throughput": 7.5, "total_token_throughput": 299.2,
    "input_lens": [100, 200, 300, 50], "output_lens": [3, 4, 0, 2],
    "ttfts": [0.05, 0.08, 0.0, 0.04],
    "itls": [[0.01, 0.012], [0.01, 0.01, 0.011], [], [0.02]],
    "latencies": [0.072, 0.111, 0.0, 0.06],
    "start_times": [1000.0, 1000.5, 1000.7, 1001.0],
    "queue_times": [0.0, 0.0, 0.0, 0.0],
    "generated_texts": [" a b", " c d e", "", " f"],
    "errors": ["", "", "Traceback (most recent call last):\n  ...\naiohttp.client_exceptions.ServerDisconnectedError: Server disconnected\n", ""],
    "max_output_tokens_per_s": 6.0, "max_concurrent_requests": 2, "rtfx": 0.0,
    "mean_ttft_ms": 56.666666666666664, "median_ttft_ms": 50.0, "std_ttft_ms": 17.0, "p99_ttft_ms": 79.4,
    "mean_tpot_ms": 13.777777777777779, "median_tpot_ms": 11.0, "std_tpot_ms": 4.4, "p99_tpot_ms": 19.8,
    "mean_itl_ms": 12.166666666666666, "median_itl_ms": 10.5, "std_itl_ms": 3.5, "p99_itl_ms": 19.6,
}
open("vllm_bench_serve.json", "w").write(json.dumps(res, indent=2) + "\n")
old = {k: v for k, v in res.items() if k not in ("latencies", "start_times", "queue_times", "failed",
                                                  "max_output_tokens_per_s", "max_concurrent_requests", "rtfx")}
old["request_rate"] = 4.0
old["burstiness"] = 0.5
open("vllm_bench_serve_v0.8.json", "w").write(json.dumps(old, indent=2) + "\n")


def rec(n, start, isl, osl, ttft, lat, icl, phase="profiling", error=None, cancelled=False):
    meta = {"session_num": n, "x_request_id": "7609a2e7-aa53-4ab1-98f4-f35ecafe%04d" % n,
            "x_correlation_id": "32ee4f33-cfca-4cfc-988f-79b45408%04d" % n,
            "conversation_id": "77aa5b0e-b305-423f-88d5-c00da189%04d" % n, "turn_index": 0,
            "request_start_ns": start, "request_ack_ns": start + 1000000 if error is None else None,
            "request_end_ns": start + int(lat * 1e6), "worker_id": "worker_359d423a",
            "record_processor_id": "record_processor_1fa47cd7", "benchmark_phase": phase,
            "was_cancelled": cancelled, "cancellation_time_ns": None}
    if error is not None:
        return {"metadata": meta, "metrics": {"error_isl": {"value": isl, "unit": "tokens"}}, "error": error}
    m = {"input_sequence_length": {"value": isl, "unit": "tokens"},
         "time_to_first_token": {"value": ttft, "unit": "ms"},
         "time_to_second_token": {"value": icl[0] if icl else 0, "unit": "ms"},
         "request_latency": {"value": lat, "unit": "ms"},
         "output_token_count": {"value": osl, "unit": "tokens"},
         "inter_chunk_latency": {"value": icl, "unit": "ms"},
         "output_sequence_length": {"value": osl, "unit": "tokens"},
         "inter_token_latency": {"value": (lat - ttft) / (osl - 1), "unit": "ms"},
         "output_token_throughput_per_user": {"value": 1000.0 * (osl - 1) / (lat - ttft), "unit": "tokens/sec/user"}}
    return {"metadata": meta, "metrics": m, "error": None}


t0 = 1759813207532900363
rows = [rec(0, t0 - 5000000000, 550, 9, 30.0, 70.0, [5.0] * 8, phase="warmup"),
        rec(0, t0, 550, 9, 25.5, 66.0, [4.5, 5.5, 5.0, 5.0, 5.25, 4.75, 5.0, 5.5]),
        rec(1, t0 + 250000000, 300, 4, 20.0, 35.0, [5.0, 5.0, 5.0]),
        rec(2, t0 + 400000000, 550, 1, 0, 0, [], error={"code": 499, "type": "RequestCancellationError",
                                                         "message": "Request was cancelled after 0.000 seconds"}),
        rec(3, t0 + 500000000, 1000, 2, 40.0, 45.0, [5.0])]
open("aiperf_profile_export.jsonl", "w").write("".join(json.dumps(r) + "\n" for r in rows))


def greq(i, start, pt, ot, ttft_ms, lat_s):
    first = start + ttft_ms / 1000
    end = start + lat_s
    timings = {"targeted_start": start - 0.001, "queued": start - 0.002, "dequeued": start - 0.0015,
               "scheduled_at": start - 0.001, "resolve_start": start - 0.0005, "request_start": start,
               "first_request_iteration": first, "first_token_iteration": first,
               "first_output_token_iteration": first, "last_token_iteration": end,
               "last_request_iteration": end, "request_iterations": ot, "token_iterations": ot,
               "request_end": end, "resolve_end": end + 0.0001, "finalized": end + 0.0002}
    info = {"request_id": "req-%d" % i, "conversation_id": None, "turn_index": 0, "status": "completed",
            "scheduler_node_id": 0, "scheduler_process_id": 1, "scheduler_start_time": 1767261600.0,
            "timings": timings, "settings": {"relative_timestamp": None, "requeue_delay": None},
            "error": None, "traceback": None, "started_at": start, "completed_at": end}
    return {"type_": "generative_request_stats", "request_id": "req-%d" % i, "response_id": "cmpl-%d" % i,
            "request_args": None, "output": " ...", "reasoning_output": None, "tool_calls": None, "info": info,
            "input_metrics": {"text_tokens": pt, "text_words": None, "text_characters": None, "total_tokens": pt},
            "output_metrics": {"text_tokens": ot, "text_words": None, "text_characters": None, "total_tokens": ot},
            "request_start_time": start, "request_end_time": end, "request_latency": lat_s,
            "prompt_tokens": pt, "output_tokens": ot, "total_tokens": pt + ot,
            "time_to_first_token_ms": ttft_ms, "time_per_output_token_ms": 1000 * lat_s / ot,
            "inter_token_latency_ms": (1000 * lat_s - ttft_ms) / (ot - 1),
            "tokens_per_second": (pt + ot) / lat_s, "output_tokens_per_second": ot / lat_s,
            "time_to_first_output_token_ms": ttft_ms, "iter_tokens_per_iteration": 1.0,
            "output_tokens_per_iteration": 1.0}


s0 = 1767261600.25
reqs = [greq(0, s0, 128, 64, 100.0, 1.0), greq(1, s0 + 0.5, 128, 64, 120.0, 1.2), greq(2, s0 + 1.0, 256, 64, 150.0, 1.5)]
report = {"metadata": {"version": 1, "guidellm_version": "0.5.0", "python_version": "3.12.3", "platform": "Linux"},
          "args": {"target": "http://localhost:8000", "profile": "constant", "rate": [2.0], "sample_requests": None},
          "benchmarks": [{"type_": "generative_benchmark", "id_": "2b7c6f1e", "run_id": "9f0a", "run_index": 0,
                          "config": {"strategy": {"type_": "constant", "rate": 2.0}},
                          "start_time": s0, "end_time": s0 + 2.5, "duration": 2.5,
                          "metrics": {"request_totals": {"successful": 3, "incomplete": 0, "errored": 0, "total": 3}},
                          "request_totals": {"successful": 3, "incomplete": 0, "errored": 0, "total": 3},
                          "requests": {"successful": reqs, "incomplete": [], "errored": []}}]}
open("guidellm_benchmarks.json", "w").write(json.dumps(report, indent=2) + "\n")
