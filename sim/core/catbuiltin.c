/* catbuiltin.c -- the catalog's built-in entries: GPUs from their datasheets,
 * models from their Hugging Face config.json, and bringing their rows in a
 * database up to date (catalog_init).
 *
 * Every built-in entry names its source (docs/catalog.md has them all).  GPU
 * figures are dense (no structured sparsity) tensor-core throughputs from the
 * vendor datasheets; prices are on-demand list prices per GPU-hour at the
 * named provider and date, and drift: replace them with `latsim catalog
 * add` or a [gpu NAME] section.  Idle power is on no datasheet: it is an
 * estimate, said so in each source.  Models are read from their Hugging Face
 * config.json (core/hfdata.h: compiled in from tests/data/hf), their
 * parameter counts computed from it (core/hfcfg.h); the seven models of the
 * first catalog keep their typed rows (their numbers are those runs used).
 */
#include "core/catalog.h"
#include "core/catdb.h"
#include "core/hfcfg.h"
#include "core/hfdata.h"
#include "engine/errmsg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- built-in entries -------------------------------------------------------- */

/* Idle power: board power of a GPU holding a model with its CUDA context up but
 * not stepping.  No datasheet gives it; 15 % of the maximum is the estimate
 * used for every built-in GPU (docs/catalog.md: an H200 holding a vLLM model
 * was measured at 80 W, 11 % of 700 W; a CUDA context adds 26-66 W over bare
 * idle, arXiv:2605.23918). */
#define IDLE(max_w) (0.15 * (max_w))
#define IDLE_NOTE "idle = 15 % of max, an estimate (no datasheet gives it)"

static const gpu_spec builtin_gpus[] = {
    { "a100", "A100-SXM4-80GB", 312.0, 624.0, 80.0, 2039.0, 600.0, 1.79,
      "NVIDIA A100 datasheet (SXM4 80GB, dense; fp8 column = INT8 624 TOPS, no FP8; max 400 W); "
      "price: Lambda on-demand 8x A100 SXM4 80GB, $1.79/GPU-h, 2024; " IDLE_NOTE "; "
      "inter-node: HDR InfiniBand 200 Gb/s per GPU (DGX A100)",
      .fp4_tflops = 0, .idle_w = IDLE(400), .max_w = 400, .gpus_per_node = 8,
      .node_link_gbs = 25, .node_link_latency_us = 5 },
    { "h100", "H100-SXM5-80GB", 989.0, 1979.0, 80.0, 3350.0, 900.0, 2.99,
      "NVIDIA H100 datasheet (SXM5, dense; max 700 W); price: Lambda on-demand 8x H100 SXM, "
      "$2.99/GPU-h, 2024-2025; " IDLE_NOTE "; inter-node: NDR InfiniBand 400 Gb/s per GPU (DGX H100); "
      "usable memory 79.18 GiB: vLLM's startup log on H100 (llm-d/llm-d-benchmark, "
      "config_explorer/empirical-vllm-memory-results.md)",
      .fp4_tflops = 0, .idle_w = IDLE(700), .max_w = 700, .gpus_per_node = 8,
      .node_link_gbs = 50, .node_link_latency_us = 5, .mem_usable_gib = 79.18 },
    { "h200", "H200-SXM-141GB", 989.0, 1979.0, 141.0, 4800.0, 900.0, 3.50,
      "NVIDIA H200 datasheet (SXM, dense; max 700 W); price: Nebius on-demand H200, "
      "$3.50/GPU-h, 2025; " IDLE_NOTE "; inter-node: NDR InfiniBand 400 Gb/s per GPU (HGX H200)",
      .fp4_tflops = 0, .idle_w = IDLE(700), .max_w = 700, .gpus_per_node = 8,
      .node_link_gbs = 50, .node_link_latency_us = 5 },
    { "l40s", "L40S-48GB", 362.0, 733.0, 48.0, 864.0, 32.0, 1.86,
      "NVIDIA L40S datasheet (dense; link = PCIe Gen4 x16 per direction; max 350 W; no FP4); "
      "price: AWS g6e.xlarge on-demand us-east-1, $1.861/h, 2024; " IDLE_NOTE "; "
      "inter-node: AWS g6e.48xlarge, 400 Gb/s for 8 GPUs",
      .fp4_tflops = 0, .idle_w = IDLE(350), .max_w = 350, .gpus_per_node = 8,
      .node_link_gbs = 6.25, .node_link_latency_us = 10 },
    { "l4", "L4-24GB", 121.0, 242.0, 24.0, 300.0, 32.0, 0.80,
      "NVIDIA L4 datasheet (dense; link = PCIe Gen4 x16 per direction; max 72 W; no FP4); "
      "price: AWS g6.xlarge on-demand us-east-1, $0.8048/h, 2024; " IDLE_NOTE "; "
      "inter-node: AWS g6.48xlarge, 100 Gb/s for 8 GPUs",
      .fp4_tflops = 0, .idle_w = IDLE(72), .max_w = 72, .gpus_per_node = 8,
      .node_link_gbs = 1.5625, .node_link_latency_us = 10 },
    { "b200", "B200-SXM-180GB", 2250.0, 4500.0, 180.0, 8000.0, 1800.0, 6.69,
      "NVIDIA HGX B200 datasheet, per GPU at 1000 W (dense: its sparse FP4 18, FP8 9, BF16 4.5 PFLOPS "
      "halved; NVLink 5 1.8 TB/s); price: Lambda on-demand 8x B200 SXM6, $6.69/GPU-h "
      "(lambda.ai/instances, 2026-09-20); " IDLE_NOTE "; inter-node: NDR 400 Gb/s per GPU (DGX B200)",
      .fp4_tflops = 9000, .idle_w = IDLE(1000), .max_w = 1000, .gpus_per_node = 8,
      .node_link_gbs = 50, .node_link_latency_us = 5 },
    { "gb200", "GB200-NVL72-186GB (per GPU)", 2500.0, 5000.0, 186.0, 8000.0, 1800.0, 10.50,
      "NVIDIA GB200 NVL72 datasheet, per GPU at 1200 W (dense: its sparse FP4 20, FP8 10, BF16 5 PFLOPS "
      "halved; 13.4 TB HBM3e / 72; one NVLink domain of 72 GPUs); price: CoreWeave on-demand GB200 "
      "NVL72, $42.00/h for 4 GPUs (coreweave.com/pricing, 2026-09-20); " IDLE_NOTE "; "
      "inter-node: 400 Gb/s per GPU",
      .fp4_tflops = 10000, .idle_w = IDLE(1200), .max_w = 1200, .gpus_per_node = 72,
      .node_link_gbs = 50, .node_link_latency_us = 5 },
    { "h20", "H20-96GB", 148.0, 296.0, 96.0, 4000.0, 900.0, 1.50,
      "NVIDIA HGX H20 specifications as published by NVIDIA's partners (no public NVIDIA datasheet): "
      "dense FP8 296, BF16 148 TFLOPS, 96 GB HBM3, 4.0 TB/s, NVLink 900 GB/s, 400 W; no FP4; price: "
      "no public list price (sold in China): $1.50/GPU-h is an estimate, set your own; " IDLE_NOTE,
      .fp4_tflops = 0, .idle_w = IDLE(400), .max_w = 400, .gpus_per_node = 8,
      .node_link_gbs = 50, .node_link_latency_us = 5 },
    { "mi300x", "MI300X-192GB", 1307.4, 2614.9, 192.0, 5300.0, 896.0, 2.59,
      "AMD Instinct MI300X datasheet (dense; sparsity doubles them; Infinity Fabric 7 x 128 GB/s; "
      "750 W TBP; no FP4 in CDNA 3); price: DigitalOcean on-demand gpu-mi300x1-192gb, $2.59/h "
      "(list price, 2026-10); " IDLE_NOTE "; inter-node: 400 Gb/s NIC per GPU",
      .fp4_tflops = 0, .idle_w = IDLE(750), .max_w = 750, .gpus_per_node = 8,
      .node_link_gbs = 50, .node_link_latency_us = 5 },
    { "mi325x", "MI325X-256GB", 1307.4, 2614.9, 256.0, 6000.0, 896.0, 2.25,
      "AMD Instinct MI325X datasheet (dense; 256 GB HBM3E, 6 TB/s; Infinity Fabric 7 x 128 GB/s; "
      "1000 W TBP; no FP4); price: top of the $2.00-2.25/GPU-h cloud rentals reported by "
      "awesomeagents.ai (2026); " IDLE_NOTE "; inter-node: 400 Gb/s NIC per GPU",
      .fp4_tflops = 0, .idle_w = IDLE(1000), .max_w = 1000, .gpus_per_node = 8,
      .node_link_gbs = 50, .node_link_latency_us = 5 },
    { "gh200", "GH200-96GB (Hopper GPU of the Grace Hopper Superchip)", 989.0, 1979.0, 96.0, 4000.0, 900.0, 1.49,
      "NVIDIA GH200 Grace Hopper Superchip datasheet (96 GB HBM3, 4 TB/s; dense: its sparse FP8 3958, BF16 1979 "
      "TFLOPS halved; NVLink 900 GB/s; module up to 1000 W with the CPU, 700 W the GPU's share assumed); price: "
      "Lambda on-demand 1x GH200, $1.49/h (2025); " IDLE_NOTE "; inter-node: 400 Gb/s per superchip",
      .fp4_tflops = 0, .idle_w = IDLE(700), .max_w = 700, .gpus_per_node = 4,
      .node_link_gbs = 50, .node_link_latency_us = 5 },
    { "mi250", "MI250-128GB (OAM, two GCDs)", 362.1, 362.1, 128.0, 3276.8, 600.0, 1.00,
      "AMD Instinct MI250 datasheet (one OAM package of two GCDs: dense BF16 362.1 TFLOPS, INT8 362.1 TOPS, no "
      "FP8; 128 GB HBM2e, 3.2768 TB/s; 6 Infinity Fabric links x 100 GB/s; 500 W TBP, 560 W peak); price: no "
      "public on-demand list price, $1.00/h is an estimate, set your own; " IDLE_NOTE "; inter-node: 200 Gb/s "
      "per package (assumed)",
      .fp4_tflops = 0, .idle_w = IDLE(560), .max_w = 560, .gpus_per_node = 4,
      .node_link_gbs = 25, .node_link_latency_us = 5 },
    { "gaudi2", "Gaudi2-HL-225H-96GB", 432.0, 865.0, 96.0, 2460.0, 262.5, 1.30,
      "Intel Gaudi 2 (HL-225H mezzanine card) white paper and product brief (MME BF16 432, FP8 865 TFLOPS; 96 GB "
      "HBM2E, 2.46 TB/s; 24 x 100 GbE RoCE on chip, 21 of them to the 7 peers of an 8-card server: 262.5 GB/s; "
      "600 W); price: no public on-demand list price, $1.30/h is an estimate, set your own; " IDLE_NOTE "; "
      "inter-node: 3 x 100 GbE per card",
      .fp4_tflops = 0, .idle_w = IDLE(600), .max_w = 600, .gpus_per_node = 8,
      .node_link_gbs = 37.5, .node_link_latency_us = 10 },
    { "max-1550", "Data-Center-GPU-Max-1550-128GB (Ponte Vecchio)", 838.9, 1677.7, 128.0, 3276.8, 450.0, 2.00,
      "Intel Data Center GPU Max 1550 product specifications (ark.intel.com: XMX BF16 838.9 TFLOPS, INT8 1677.7 "
      "TOPS, no FP8; 128 GB HBM2e, 3.2768 TB/s; 600 W); Xe Link between the GPUs of a node: 450 GB/s is an "
      "estimate; price: no public on-demand list price, $2.00/h is an estimate, set your own; " IDLE_NOTE "; "
      "inter-node: 200 Gb/s per GPU (assumed)",
      .fp4_tflops = 0, .idle_w = IDLE(600), .max_w = 600, .gpus_per_node = 6,
      .node_link_gbs = 25, .node_link_latency_us = 5 },
    { "rtx-4090", "GeForce-RTX-4090-24GB", 165.2, 330.3, 24.0, 1008.0, 32.0, 0.60,
      "NVIDIA Ada Lovelace architecture whitepaper, RTX 4090 (dense, FP32 accumulate: FP16-accumulate "
      "rates are 2x; 24 GB GDDR6X; link = PCIe Gen4 x16 per direction, no NVLink; 450 W; no FP4); "
      "price: RunPod on-demand, $0.60/h (deploybase.ai, 2026-03); " IDLE_NOTE "; inter-node: 25 Gb/s "
      "per GPU (assumed); usable 23.52 GiB "
      "(LLMServingSim's vLLM run)",
      .fp4_tflops = 0, .idle_w = IDLE(450), .max_w = 450, .gpus_per_node = 8,
      .node_link_gbs = 3.125, .node_link_latency_us = 10, .mem_usable_gib = 25250627584.0 / 1073741824.0 },
    { "rtx-pro-6000", "RTX-PRO-6000-Blackwell-Server-96GB", 503.8, 1007.6, 96.0, 1597.0, 64.0, 1.85,
      "NVIDIA RTX PRO 6000 Blackwell Server Edition datasheet and GB202 figures (dense: FP4 2015, "
      "FP8 1007.6, BF16 503.8 TFLOPS; the 4 PFLOPS FP4 peak is with sparsity; 96 GB GDDR7; link = PCIe "
      "Gen5 x16 per direction; up to 600 W); price: Hyperstack on-demand RTX Pro 6000 SE, $1.85/h "
      "(2026-08-26); " IDLE_NOTE "; inter-node: 400 Gb/s per GPU",
      .fp4_tflops = 2015.2, .idle_w = IDLE(600), .max_w = 600, .gpus_per_node = 8,
      .node_link_gbs = 50, .node_link_latency_us = 5 },
};

/* The first catalog's models, typed from their config.json (kept as they were). */
static const model_spec builtin_models[] = {
    { "llama-2-7b", 32, 4096, 32, 32, 128, 11008, 32000, 6.74e9, 4096,
      "HF config.json of meta-llama/Llama-2-7b-hf (params 6,738,415,616)", "bf16", .experts = 0 },
    { "llama-2-70b", 80, 8192, 64, 8, 128, 28672, 32000, 68.98e9, 4096,
      "HF config.json of meta-llama/Llama-2-70b-hf (params 68,976,648,192)", "bf16", .experts = 0 },
    { "llama-3-8b", 32, 4096, 32, 8, 128, 14336, 128256, 8.03e9, 8192,
      "HF config.json of meta-llama/Meta-Llama-3-8B (params 8,030,261,248)", "bf16", .experts = 0 },
    { "llama-3-70b", 80, 8192, 64, 8, 128, 28672, 128256, 70.55e9, 8192,
      "HF config.json of meta-llama/Meta-Llama-3-70B (params 70,553,706,496)", "bf16", .experts = 0 },
    { "mistral-7b", 32, 4096, 32, 8, 128, 14336, 32000, 7.24e9, 32768,
      "HF config.json of mistralai/Mistral-7B-v0.1 (params 7,241,732,096; "
      "4096-token sliding window not modelled)", "bf16", .experts = 0 },
    { "codellama-34b", 48, 8192, 64, 8, 128, 22016, 32000, 33.74e9, 16384,
      "HF config.json of codellama/CodeLlama-34b-hf (params 33,743,970,304)", "bf16", .experts = 0 },
    { "qwen-72b", 80, 8192, 64, 64, 128, 24576, 152064, 72.29e9, 32768,
      "HF config.json of Qwen/Qwen1.5-72B (same geometry as Qwen/Qwen-72B; "
      "params 72,287,920,128)", "bf16", .experts = 0 },
};

/* The models read from their config.json (tests/data/hf, compiled in). */
static const struct hf_builtin {
    const char *name;         /* catalog key */
    const char *file;         /* its config.json (hfdata.h) */
    const char *repo;         /* the Hugging Face repository it is published in */
    const char *card;         /* the counts its model card states */
    const char *note;         /* what the catalog leaves out or assumes ("" none) */
} builtin_hf[] = {
    { "llama-3.1-8b", "llama-3.1-8b.json", "meta-llama/Llama-3.1-8B", "8.03 B", "" },
    { "llama-3.1-70b", "llama-3.1-70b.json", "meta-llama/Llama-3.1-70B", "70.6 B", "" },
    { "llama-3.1-405b", "llama-3.1-405b.json", "meta-llama/Llama-3.1-405B", "405 B (406 B on its page)", "" },
    { "llama-3.3-70b", "llama-3.3-70b.json", "meta-llama/Llama-3.3-70B-Instruct", "70.6 B", "" },
    { "qwen3-8b", "qwen3-8b.json", "Qwen/Qwen3-8B", "8.2 B", "" },
    { "qwen3-32b", "qwen3-32b.json", "Qwen/Qwen3-32B", "32.8 B", "" },
    { "qwen3-30b-a3b", "qwen3-30b-a3b.json", "Qwen/Qwen3-30B-A3B", "30.5 B, 3.3 B activated", "" },
    { "qwen3-235b-a22b", "qwen3-235b-a22b.json", "Qwen/Qwen3-235B-A22B", "235 B, 22 B activated", "" },
    { "mixtral-8x7b", "mixtral-8x7b.json", "mistralai/Mixtral-8x7B-v0.1", "46.7 B, 12.9 B active", "" },
    { "deepseek-v3", "deepseek-v3.json", "deepseek-ai/DeepSeek-V3", "671 B, 37 B activated",
      "; the 14 B MTP module not counted; MLA: a token caches 512 + 64 per layer" },
    { "gpt-oss-20b", "gpt-oss-20b.json", "openai/gpt-oss-20b", "20.91 B, 3.61 B active without the embedding",
      "; fp4: MXFP4 experts (attention, embeddings BF16); the 128-token window of half the layers not modelled" },
    { "gpt-oss-120b", "gpt-oss-120b.json", "openai/gpt-oss-120b", "116.83 B, 5.13 B active without the embedding",
      "; fp4: MXFP4 experts (attention, embeddings BF16); the 128-token window of half the layers not modelled" },
    /* Encoders (BERT-style; slices of their config.json: tests/data/hf/ENCODERS_LICENSES.txt). */
    { "bert-base-uncased", "bert-base-uncased.json", "google-bert/bert-base-uncased", "110 M", "; encoder" },
    { "all-minilm-l6-v2", "all-minilm-l6-v2.json", "sentence-transformers/all-MiniLM-L6-v2", "22.7 M", "; encoder" },
    { "bge-reranker-base", "bge-reranker-base.json", "BAAI/bge-reranker-base", "278 M", "; encoder (a reranker)" },
    { "bge-m3", "bge-m3.json", "BAAI/bge-m3", "568 M", "; encoder (8192-token context)" },
};

/* ---- the built-in models read from config.json ---------------------------------- */

/* V, a whole number, with thousands separators ("671,026,419,200") into BUF. */
static const char *grouped(double v, char *buf, size_t size)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%.0f", v), k = 0;
    for (int i = 0; i < n && (size_t) k + 2 < size; i++) {
        if (i > 0 && (n - i) % 3 == 0) buf[k++] = ',';
        buf[k++] = digits[i];
    }
    buf[k] = '\0';
    return buf;
}

/* Reads built-in model B from its compiled-in config.json into *M.  Returns 0
 * or -1 + ERR. */
static int hf_builtin_model(const struct hf_builtin *b, model_spec *m, char *err, size_t errlen)
{
    const char *text = NULL;
    char path[96], msg[512], total[32], active[32];
    for (size_t i = 0; i < hf_nfiles; i++)
        if (!strcmp(hf_files[i].name, b->file)) text = hf_files[i].text;
    snprintf(path, sizeof path, "tests/data/hf/%s", b->file);
    if (!text) {
        errmsg_set(err, errlen, "catalog: built-in model %s: %s was not compiled in", b->name, path);
        return -1;
    }
    if (hf_config_parse(path, text, b->name, NULL, m, NULL, msg, sizeof msg) != 0) {
        errmsg_set(err, errlen, "catalog: built-in model %s: %s", b->name, msg);
        return -1;
    }
    catalog_counts c;
    catalog_model_counts(m, &c);
    char moe[96] = "";
    if (m->experts)
        snprintf(moe, sizeof moe, ", active %s", grouped(c.active, active, sizeof active));
    snprintf(m->source, sizeof m->source, "HF config.json of %s (%s): params %s%s computed from it; model card: %s%s",
             b->repo, path, grouped(m->params, total, sizeof total), moe, b->card, b->note);
    return catalog_check_model(m, err, errlen);
}

/* Every built-in model, the typed ones first, in malloc'd *OUT.  Returns 0 or
 * -1 + ERR. */
int load_builtin_models(model_spec **out, size_t *n, char *err, size_t errlen)
{
    size_t total = NELEM(builtin_models) + NELEM(builtin_hf);
    model_spec *m = calloc(total, sizeof *m);
    if (!m) {
        errmsg_set(err, errlen, "catalog: out of memory");
        return -1;
    }
    memcpy(m, builtin_models, sizeof builtin_models);
    for (size_t i = 0; i < NELEM(builtin_hf); i++)
        if (hf_builtin_model(&builtin_hf[i], &m[NELEM(builtin_models) + i], err, errlen) != 0) {
            free(m);
            return -1;
        }
    *out = m;
    *n = total;
    return 0;
}

/* Brings the built-in rows up to date: inserts the missing ones and replaces
 * built-in rows whose figures differ; user rows (builtin = 0) stay.  With
 * WRITE 0 only counts, into *STALE, the rows that would change.  Returns 0 or
 * -1 + ERR. */
int sync_builtins(sqlite3 *db, const model_spec *models, size_t nmodels, int write, int *stale,
                         char *err, size_t errlen)
{
    char sql[1200];
    sqlite3_stmt *gst = NULL, *mst = NULL;
    int ret = -1;
    *stale = 0;
    if (write && (sqlite3_prepare_v2(db, insert_sql(&GPUS, sql, sizeof sql), -1, &gst, NULL) != SQLITE_OK ||
                  sqlite3_prepare_v2(db, insert_sql(&MODELS, sql, sizeof sql), -1, &mst, NULL) != SQLITE_OK)) {
        errmsg_set(err, errlen, "catalog: cannot write the built-in entries: %s", sqlite3_errmsg(db));
        goto done;
    }
    for (size_t i = 0; i < NELEM(builtin_gpus); i++) {
        gpu_spec have;
        int builtin = 0, found = builtin_row(db, &GPUS, builtin_gpus[i].name, read_gpu_void, &have, &builtin,
                                             err, errlen);
        if (found < 0) goto done;
        if (found && (!builtin || gpu_same(&have, &builtin_gpus[i]))) continue;
        (*stale)++;
        if (!write) continue;
        if (bind_gpu(gst, &builtin_gpus[i], builtin_gpus[i].name, 1) != SQLITE_OK || sqlite3_step(gst) != SQLITE_DONE)
            goto write_error;
        sqlite3_reset(gst);
        sqlite3_clear_bindings(gst);
    }
    for (size_t i = 0; i < nmodels; i++) {
        model_spec have;
        int builtin = 0, found = builtin_row(db, &MODELS, models[i].name, read_model_void, &have, &builtin, err,
                                             errlen);
        if (found < 0) goto done;
        if (found && (!builtin || model_same(&have, &models[i]))) continue;
        (*stale)++;
        if (!write) continue;
        if (bind_model(mst, &models[i], models[i].name, 1) != SQLITE_OK || sqlite3_step(mst) != SQLITE_DONE)
            goto write_error;
        sqlite3_reset(mst);
        sqlite3_clear_bindings(mst);
    }
    ret = 0;
    goto done;
write_error:
    errmsg_set(err, errlen, "catalog: cannot write the built-in entries: %s", sqlite3_errmsg(db));
done:
    sqlite3_finalize(gst);
    sqlite3_finalize(mst);
    return ret;
}
