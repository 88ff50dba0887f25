/* catalog.c -- the GPU and model catalog kept in SQLite (see catalog.h).
 *
 * Implements the `gpus` and `models` tables: their creation, the migration of
 * an older database (added columns, added and refreshed built-in rows), the
 * built-in entries below, case-insensitive lookups (with a few GPU aliases),
 * validated inserts of user entries, the `latsim catalog` listing, the bytes
 * per weight of the precisions and the parameter counts of a geometry.
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
#include "core/hfcfg.h"
#include "core/hfdata.h"
#include "engine/errmsg.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

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

struct alias { const char *alias, *name; };

static const struct alias gpu_aliases[] = {
    { "a100-80gb", "a100" }, { "a100-sxm", "a100" },
    { "h100-sxm", "h100" }, { "h100-sxm5", "h100" },
    { "h200-sxm", "h200" }, { "b200-sxm", "b200" }, { "gb200-nvl72", "gb200" },
    { "rtx4090", "rtx-4090" }, { "4090", "rtx-4090" },
    { "pvc", "max-1550" }, { "gaudi-2", "gaudi2" }, { "mi250-oam", "mi250" },
    { "rtx-pro-6000-se", "rtx-pro-6000" }, { "rtx-pro-6000-server", "rtx-pro-6000" },
};

/* ---- the tables ---------------------------------------------------------------- */

/* A column: its name, its SQL declaration, and whether a database of the first
 * schema lacks it (migration adds it, with its default). */
typedef struct column {
    const char *name;
    const char *decl;
    int added;
} column;

/* Every column but `builtin` is read and written in the order below. */
static const column gpu_table[] = {
    { "name", "TEXT PRIMARY KEY COLLATE NOCASE", 0 },
    { "full_name", "TEXT NOT NULL", 0 },
    { "bf16_tflops", "REAL NOT NULL", 0 },
    { "fp8_tflops", "REAL NOT NULL", 0 },
    { "mem_gib", "REAL NOT NULL", 0 },
    { "mem_bw_gbs", "REAL NOT NULL", 0 },
    { "link_gbs", "REAL NOT NULL", 0 },
    { "price_hr", "REAL NOT NULL", 0 },
    { "source", "TEXT NOT NULL DEFAULT ''", 0 },
    { "builtin", "INTEGER NOT NULL DEFAULT 0", 0 },
    { "fp4_tflops", "REAL NOT NULL DEFAULT 0", 1 },
    { "idle_w", "REAL NOT NULL DEFAULT 0", 1 },
    { "max_w", "REAL NOT NULL DEFAULT 0", 1 },
    { "gpus_per_node", "INTEGER NOT NULL DEFAULT 8", 1 },
    { "node_link_gbs", "REAL NOT NULL DEFAULT 50", 1 },
    { "node_link_latency_us", "REAL NOT NULL DEFAULT 5", 1 },
    { "mem_usable_gib", "REAL NOT NULL DEFAULT 0", 1 },
};

static const column model_table[] = {
    { "name", "TEXT PRIMARY KEY COLLATE NOCASE", 0 },
    { "layers", "INTEGER NOT NULL", 0 },
    { "hidden", "INTEGER NOT NULL", 0 },
    { "heads", "INTEGER NOT NULL", 0 },
    { "kv_heads", "INTEGER NOT NULL", 0 },
    { "head_dim", "INTEGER NOT NULL", 0 },
    { "intermediate", "INTEGER NOT NULL", 0 },
    { "vocab", "INTEGER NOT NULL", 0 },
    { "params", "REAL NOT NULL", 0 },
    { "context", "INTEGER NOT NULL", 0 },
    { "source", "TEXT NOT NULL DEFAULT ''", 0 },
    { "weights", "TEXT NOT NULL DEFAULT 'bf16'", 0 },
    { "builtin", "INTEGER NOT NULL DEFAULT 0", 0 },
    { "experts", "INTEGER NOT NULL DEFAULT 0", 1 },
    { "experts_per_token", "INTEGER NOT NULL DEFAULT 0", 1 },
    { "shared_experts", "INTEGER NOT NULL DEFAULT 0", 1 },
    { "moe_intermediate", "INTEGER NOT NULL DEFAULT 0", 1 },
    { "first_dense_layers", "INTEGER NOT NULL DEFAULT 0", 1 },
    { "expert_params", "REAL NOT NULL DEFAULT 0", 1 },
    { "kv_lora_rank", "INTEGER NOT NULL DEFAULT 0", 1 },
    { "qk_rope_head_dim", "INTEGER NOT NULL DEFAULT 0", 1 },
    { "encoder", "INTEGER NOT NULL DEFAULT 0", 1 },
};

typedef struct table_def {
    const char *name;         /* "gpus" or "models" */
    const column *cols;
    size_t ncols;
} table_def;

static const table_def GPUS = { "gpus", gpu_table, NELEM(gpu_table) };
static const table_def MODELS = { "models", model_table, NELEM(model_table) };

/* The columns of T but `builtin`, comma-separated, into BUF (room for all). */
static const char *data_columns(const table_def *t, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i].name, "builtin") != 0)
            used += (size_t) snprintf(buf + used, size - used, "%s%s", used ? ", " : "", t->cols[i].name);
    return buf;
}

/* "INSERT OR REPLACE INTO T (columns, builtin) VALUES (?, ..., ?)" into BUF. */
static const char *insert_sql(const table_def *t, char *buf, size_t size)
{
    char cols[1024];
    size_t used = (size_t) snprintf(buf, size, "INSERT OR REPLACE INTO %s (%s, builtin) VALUES (", t->name,
                                    data_columns(t, cols, sizeof cols));
    for (size_t i = 0; i < t->ncols; i++)
        used += (size_t) snprintf(buf + used, size - used, "%s?", i ? "," : "");
    snprintf(buf + used, size - used, ")");
    return buf;
}

/* "CREATE [TEMP ]TABLE IF NOT EXISTS T (...)" into BUF. */
static const char *create_sql(const table_def *t, int temp, char *buf, size_t size)
{
    size_t used = (size_t) snprintf(buf, size, "CREATE %sTABLE IF NOT EXISTS %s (", temp ? "TEMP " : "", t->name);
    for (size_t i = 0; i < t->ncols; i++)
        used += (size_t) snprintf(buf + used, size - used, "%s%s %s", i ? ", " : "", t->cols[i].name, t->cols[i].decl);
    snprintf(buf + used, size - used, ")");
    return buf;
}

/* Copies a column's text into a fixed-size field, truncating if needed. */
static void copy_text(char *dst, size_t size, sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    snprintf(dst, size, "%s", t ? (const char *)t : "");
}

static void read_gpu_row(sqlite3_stmt *st, gpu_spec *g)
{
    memset(g, 0, sizeof *g);
    copy_text(g->name, sizeof g->name, st, 0);
    copy_text(g->full_name, sizeof g->full_name, st, 1);
    g->bf16_tflops = sqlite3_column_double(st, 2);
    g->fp8_tflops = sqlite3_column_double(st, 3);
    g->mem_gib = sqlite3_column_double(st, 4);
    g->mem_bw_gbs = sqlite3_column_double(st, 5);
    g->link_gbs = sqlite3_column_double(st, 6);
    g->price_hr = sqlite3_column_double(st, 7);
    copy_text(g->source, sizeof g->source, st, 8);
    g->fp4_tflops = sqlite3_column_double(st, 9);
    g->idle_w = sqlite3_column_double(st, 10);
    g->max_w = sqlite3_column_double(st, 11);
    g->gpus_per_node = sqlite3_column_int(st, 12);
    g->node_link_gbs = sqlite3_column_double(st, 13);
    g->node_link_latency_us = sqlite3_column_double(st, 14);
    g->mem_usable_gib = sqlite3_column_double(st, 15);
}

static void read_model_row(sqlite3_stmt *st, model_spec *m)
{
    memset(m, 0, sizeof *m);
    copy_text(m->name, sizeof m->name, st, 0);
    m->layers = sqlite3_column_int(st, 1);
    m->hidden = sqlite3_column_int(st, 2);
    m->heads = sqlite3_column_int(st, 3);
    m->kv_heads = sqlite3_column_int(st, 4);
    m->head_dim = sqlite3_column_int(st, 5);
    m->intermediate = sqlite3_column_int(st, 6);
    m->vocab = sqlite3_column_int(st, 7);
    m->params = sqlite3_column_double(st, 8);
    m->context = sqlite3_column_int(st, 9);
    copy_text(m->source, sizeof m->source, st, 10);
    copy_text(m->weights, sizeof m->weights, st, 11);
    m->experts = sqlite3_column_int(st, 12);
    m->experts_per_token = sqlite3_column_int(st, 13);
    m->shared_experts = sqlite3_column_int(st, 14);
    m->moe_intermediate = sqlite3_column_int(st, 15);
    m->first_dense_layers = sqlite3_column_int(st, 16);
    m->expert_params = sqlite3_column_double(st, 17);
    m->kv_lora_rank = sqlite3_column_int(st, 18);
    m->qk_rope_head_dim = sqlite3_column_int(st, 19);
    m->encoder = sqlite3_column_int(st, 20);
}

/* Binds G to an INSERT of insert_sql(&GPUS) (name NAME; builtin last). */
static int bind_gpu(sqlite3_stmt *st, const gpu_spec *g, const char *name, int builtin)
{
    int rc = SQLITE_OK;
    const char *full = g->full_name[0] ? g->full_name : name;
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 2, full, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 3, g->bf16_tflops);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 4, g->fp8_tflops);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 5, g->mem_gib);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 6, g->mem_bw_gbs);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 7, g->link_gbs);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 8, g->price_hr);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 9, g->source, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 10, g->fp4_tflops);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 11, g->idle_w);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 12, g->max_w);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 13, g->gpus_per_node > 0 ? g->gpus_per_node : 8);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 14, g->node_link_gbs);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 15, g->node_link_latency_us);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 16, g->mem_usable_gib);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 17, builtin);
    return rc;
}

static int bind_model(sqlite3_stmt *st, const model_spec *m, const char *name, int builtin)
{
    int rc = SQLITE_OK;
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 2, m->layers);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 3, m->hidden);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 4, m->heads);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 5, m->kv_heads);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 6, m->head_dim);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 7, m->intermediate);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 8, m->vocab);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 9, m->params);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 10, m->context);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 11, m->source, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 12, m->weights[0] ? m->weights : "bf16", -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 13, m->experts);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 14, m->experts_per_token);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 15, m->shared_experts);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 16, m->moe_intermediate);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 17, m->first_dense_layers);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 18, m->expert_params);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 19, m->kv_lora_rank);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 20, m->qk_rope_head_dim);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 21, m->encoder != 0);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 22, builtin);
    return rc;
}

/* 1 when the rows A and B hold the same figures (as stored). */
static int gpu_same(const gpu_spec *a, const gpu_spec *b)
{
    return !strcmp(a->name, b->name) && !strcmp(a->full_name, b->full_name) && !strcmp(a->source, b->source) &&
           a->bf16_tflops == b->bf16_tflops && a->fp8_tflops == b->fp8_tflops && a->mem_gib == b->mem_gib &&
           a->mem_bw_gbs == b->mem_bw_gbs && a->link_gbs == b->link_gbs && a->price_hr == b->price_hr &&
           a->fp4_tflops == b->fp4_tflops && a->idle_w == b->idle_w && a->max_w == b->max_w &&
           a->gpus_per_node == b->gpus_per_node && a->node_link_gbs == b->node_link_gbs &&
           a->node_link_latency_us == b->node_link_latency_us && a->mem_usable_gib == b->mem_usable_gib;
}

static int model_same(const model_spec *a, const model_spec *b)
{
    return !strcmp(a->name, b->name) && !strcmp(a->source, b->source) && !strcmp(a->weights, b->weights) &&
           a->layers == b->layers && a->hidden == b->hidden && a->heads == b->heads && a->kv_heads == b->kv_heads &&
           a->head_dim == b->head_dim && a->intermediate == b->intermediate && a->vocab == b->vocab &&
           a->params == b->params && a->context == b->context && a->experts == b->experts &&
           a->experts_per_token == b->experts_per_token && a->shared_experts == b->shared_experts &&
           a->moe_intermediate == b->moe_intermediate && a->first_dense_layers == b->first_dense_layers &&
           a->expert_params == b->expert_params && a->kv_lora_rank == b->kv_lora_rank &&
           a->qk_rope_head_dim == b->qk_rope_head_dim && (a->encoder != 0) == (b->encoder != 0);
}

/* ---- validation ------------------------------------------------------------------ */

/* Checks a catalog key (1..47 characters of [A-Za-z0-9._+-], stored in FIELD
 * of size SIZE) and writes its lower-case form to LOWER. */
static int check_name(const char *kind, const char *field, size_t size, char *lower,
                      char *err, size_t errlen)
{
    size_t n = strnlen(field, size);
    if (n == 0) {
        errmsg_set(err, errlen, "%s: the name is empty", kind);
        return -1;
    }
    if (n == size) {
        errmsg_set(err, errlen, "%s: the name is too long (at most %zu characters)", kind,
                size - 1);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)field[i];
        if (!isalnum(c) && c != '-' && c != '_' && c != '.' && c != '+') {
            errmsg_set(err, errlen,
                    "%s '%s': names may use only letters, digits, '-', '_', '.' and '+'",
                    kind, field);
            return -1;
        }
        lower[i] = (char)tolower(c);
    }
    lower[n] = '\0';
    return 0;
}

static int check_positive(const char *kind, const char *name, const char *field, double v,
                          char *err, size_t errlen)
{
    if (isfinite(v) && v > 0)
        return 0;
    errmsg_set(err, errlen, "%s '%s': %s must be a positive number (got %g)", kind, name,
            field, v);
    return -1;
}

static int check_nonneg(const char *kind, const char *name, const char *field, double v,
                        char *err, size_t errlen)
{
    if (isfinite(v) && v >= 0)
        return 0;
    errmsg_set(err, errlen, "%s '%s': %s must be a number >= 0 (got %g)", kind, name, field, v);
    return -1;
}

static int check_terminated(const char *kind, const char *name, const char *field,
                            const char *s, size_t size, char *err, size_t errlen)
{
    if (strnlen(s, size) < size)
        return 0;
    errmsg_set(err, errlen, "%s '%s': %s is too long (at most %zu characters)", kind, name,
            field, size - 1);
    return -1;
}

static int validate_gpu(const gpu_spec *g, char *name, char *err, size_t errlen)
{
    if (check_name("gpu", g->name, sizeof g->name, name, err, errlen) ||
        check_terminated("gpu", name, "full name", g->full_name, sizeof g->full_name,
                         err, errlen) ||
        check_terminated("gpu", name, "source", g->source, sizeof g->source, err, errlen) ||
        check_positive("gpu", name, "bf16_tflops", g->bf16_tflops, err, errlen) ||
        check_positive("gpu", name, "fp8_tflops", g->fp8_tflops, err, errlen) ||
        check_positive("gpu", name, "mem_gib", g->mem_gib, err, errlen) ||
        check_positive("gpu", name, "mem_bw_gbs", g->mem_bw_gbs, err, errlen) ||
        check_positive("gpu", name, "link_gbs", g->link_gbs, err, errlen))
        return -1;
    if (!isfinite(g->price_hr) || g->price_hr < 0) {
        errmsg_set(err, errlen, "gpu '%s': price_hr must be a number >= 0 (got %g)", name,
                g->price_hr);
        return -1;
    }
    if (check_nonneg("gpu", name, "fp4_tflops", g->fp4_tflops, err, errlen) ||
        check_nonneg("gpu", name, "idle_w", g->idle_w, err, errlen) ||
        check_nonneg("gpu", name, "max_w", g->max_w, err, errlen) ||
        check_nonneg("gpu", name, "gpus_per_node", g->gpus_per_node, err, errlen) ||
        check_nonneg("gpu", name, "node_link_gbs", g->node_link_gbs, err, errlen) ||
        check_nonneg("gpu", name, "node_link_latency_us", g->node_link_latency_us, err, errlen) ||
        check_nonneg("gpu", name, "mem_usable_gib", g->mem_usable_gib, err, errlen))
        return -1;
    if (g->mem_usable_gib > g->mem_gib) {
        errmsg_set(err, errlen, "gpu '%s': mem_usable_gib (%g) is more than mem_gib (%g)", name, g->mem_usable_gib,
                   g->mem_gib);
        return -1;
    }
    if (g->max_w > 0 && g->idle_w > g->max_w) {
        errmsg_set(err, errlen, "gpu '%s': idle_w (%g) is more than max_w (%g)", name, g->idle_w, g->max_w);
        return -1;
    }
    return 0;
}

/* The mixture-of-experts and MLA fields of M (validate_model). */
static int validate_moe(const model_spec *m, const char *name, char *err, size_t errlen)
{
    const struct { const char *key; double v; } f[] = {
        { "experts", m->experts }, { "experts_per_token", m->experts_per_token },
        { "shared_experts", m->shared_experts }, { "moe_intermediate", m->moe_intermediate },
        { "first_dense_layers", m->first_dense_layers }, { "expert_params", m->expert_params },
        { "kv_lora_rank", m->kv_lora_rank }, { "qk_rope_head_dim", m->qk_rope_head_dim },
    };
    for (size_t i = 0; i < NELEM(f); i++)
        if (check_nonneg("model", name, f[i].key, f[i].v, err, errlen)) return -1;
    if (m->qk_rope_head_dim && !m->kv_lora_rank) {
        errmsg_set(err, errlen, "model '%s': qk_rope_head_dim needs kv_lora_rank (MLA)", name);
        return -1;
    }
    if (!m->experts) {
        for (size_t i = 1; i < 6; i++)
            if (f[i].v != 0) {
                errmsg_set(err, errlen, "model '%s': %s needs experts (a mixture-of-experts model)", name, f[i].key);
                return -1;
            }
        return 0;
    }
    if (m->experts_per_token < 1 || m->experts_per_token > m->experts) {
        errmsg_set(err, errlen, "model '%s': experts_per_token must be 1 to the %d experts (got %d)", name,
                   m->experts, m->experts_per_token);
        return -1;
    }
    if (m->moe_intermediate < 1) {
        errmsg_set(err, errlen, "model '%s': moe_intermediate must be a positive number (got %d)", name,
                   m->moe_intermediate);
        return -1;
    }
    if (m->first_dense_layers >= m->layers) {
        errmsg_set(err, errlen, "model '%s': first_dense_layers (%d) leaves none of the %d layers to the experts",
                   name, m->first_dense_layers, m->layers);
        return -1;
    }
    catalog_counts c;
    catalog_model_counts(m, &c);
    double routed = (double) c.moe_layers * m->experts * c.expert;
    if (routed >= m->params) {
        errmsg_set(err, errlen, "model '%s': params (%g) must exceed its routed experts' %g (%d layers x %d x %g)",
                   name, m->params, routed, c.moe_layers, m->experts, c.expert);
        return -1;
    }
    return 0;
}

static int validate_model(const model_spec *m, char *name, char *err, size_t errlen)
{
    if (check_name("model", m->name, sizeof m->name, name, err, errlen) ||
        check_terminated("model", name, "source", m->source, sizeof m->source, err,
                         errlen) ||
        check_positive("model", name, "layers", m->layers, err, errlen) ||
        check_positive("model", name, "hidden", m->hidden, err, errlen) ||
        check_positive("model", name, "heads", m->heads, err, errlen) ||
        check_positive("model", name, "kv_heads", m->kv_heads, err, errlen) ||
        check_positive("model", name, "head_dim", m->head_dim, err, errlen) ||
        check_positive("model", name, "intermediate", m->intermediate, err, errlen) ||
        check_positive("model", name, "vocab", m->vocab, err, errlen) ||
        check_positive("model", name, "params", m->params, err, errlen) ||
        check_positive("model", name, "context", m->context, err, errlen))
        return -1;
    if (m->weights[0] && catalog_weight_bytes(m->weights) == 0) {
        errmsg_set(err, errlen, "model '%s': weights must be bf16, fp16, fp8, int8, int4 or fp4 (got '%s')", name,
                   m->weights);
        return -1;
    }
    /* One set of limits, a [model] section's or a config.json's. */
    static const struct { const char *k; double max; } LIM[] = {
        { "layers", CATALOG_MAX_LAYERS }, { "hidden", CATALOG_MAX_HIDDEN }, { "heads", CATALOG_MAX_HEADS },
        { "kv_heads", CATALOG_MAX_HEADS }, { "head_dim", CATALOG_MAX_HEAD_DIM }, { "intermediate", CATALOG_MAX_WIDE },
        { "vocab", CATALOG_MAX_WIDE }, { "context", CATALOG_MAX_WIDE }, { "moe_intermediate", CATALOG_MAX_WIDE } };
    const double V[] = { m->layers, m->hidden, m->heads, m->kv_heads, m->head_dim, m->intermediate, m->vocab, m->context,
                         m->moe_intermediate };
    for (size_t i = 0; i < sizeof LIM / sizeof LIM[0]; i++)
        if (V[i] > LIM[i].max) {
            errmsg_set(err, errlen, "model '%s': %s = %.0f is beyond the %.0f a model may have", name, LIM[i].k, V[i], LIM[i].max);
            return -1;
        }
    double lo, hi;
    catalog_model_params_range(m, &lo, &hi);
    if (lo > 0 && (m->params < lo / CATALOG_PARAMS_TOLERANCE || m->params > hi * CATALOG_PARAMS_TOLERANCE)) {
        errmsg_set(err, errlen, "model '%s': params = %.4g does not match its geometry (%.4g to %.4g from layers, hidden, "
                   "heads, head_dim, intermediate, vocab and experts; %g x either way is accepted)", name, m->params, lo, hi,
                   CATALOG_PARAMS_TOLERANCE);
        return -1;
    }
    /* heads * head_dim == hidden is not required: some models differ. */
    if (m->heads % m->kv_heads != 0) {
        errmsg_set(err, errlen,
                "model '%s': heads (%d) must be a multiple of kv_heads (%d)", name,
                m->heads, m->kv_heads);
        return -1;
    }
    return validate_moe(m, name, err, errlen);
}

int catalog_check_gpu(const gpu_spec *g, char *err, size_t errlen)
{
    char name[sizeof g->name];
    return validate_gpu(g, name, err, errlen);
}

void catalog_model_params_range(const model_spec *m, double *lo, double *hi)
{
    *lo = *hi = 0;
    if (m->kv_lora_rank > 0) return;
    double h = m->hidden, hd = m->head_dim, attn = 2 * h * m->heads * hd + 2 * h * m->kv_heads * hd;
    double mlp3 = 3 * h * m->intermediate, mlp2 = 2 * h * m->intermediate;
    int nmoe = m->experts ? m->layers - m->first_dense_layers : 0;
    double ep = m->expert_params > 0 ? m->expert_params : 3 * h * m->moe_intermediate;
    double moe = (double) (m->experts + m->shared_experts) * ep;
    double body_lo = (m->layers - nmoe) * (attn + mlp2) + nmoe * (attn + moe * 2 / 3);
    double body_hi = (m->layers - nmoe) * (attn + mlp3) + nmoe * (attn + moe);
    *lo = body_lo + (double) m->vocab * h;
    *hi = body_hi + 2.0 * m->vocab * h;
}

int catalog_check_model(const model_spec *m, char *err, size_t errlen)
{
    char name[sizeof m->name];
    return validate_model(m, name, err, errlen);
}

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
static int load_builtin_models(model_spec **out, size_t *n, char *err, size_t errlen)
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

/* ---- initialisation and migration ------------------------------------------------ */

/* Sets *MISSING to the number of T's columns the table (as unqualified names
 * resolve: a TEMP table first) lacks; all of them when it does not exist.
 * Returns 0 or -1 + ERR. */
static int missing_columns(sqlite3 *db, const table_def *t, const char *schema, int *missing,
                           char *err, size_t errlen)
{
    char sql[128];
    sqlite3_stmt *st = NULL;
    int rc, have[32] = { 0 };
    snprintf(sql, sizeof sql, "PRAGMA %s%stable_info(%s)", schema ? schema : "", schema ? "." : "", t->name);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) goto db_error;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *c = (const char *) sqlite3_column_text(st, 1);
        for (size_t i = 0; c && i < t->ncols; i++)
            if (!strcmp(c, t->cols[i].name)) have[i] = 1;
    }
    if (rc != SQLITE_DONE) goto db_error;
    sqlite3_finalize(st);
    *missing = 0;
    for (size_t i = 0; i < t->ncols; i++) *missing += !have[i];
    return 0;
db_error:
    errmsg_set(err, errlen, "catalog: cannot read the columns of %s: %s", t->name, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return -1;
}

/* Reads the row of T called NAME into OUT (through READ) and its builtin flag.
 * Returns 1 found, 0 absent, -1 error + ERR. */
static int builtin_row(sqlite3 *db, const table_def *t, const char *name, void (*read)(sqlite3_stmt *, void *),
                       void *out, int *builtin, char *err, size_t errlen)
{
    char cols[1024], sql[1200];
    sqlite3_stmt *st = NULL;
    int ret = -1;
    snprintf(sql, sizeof sql, "SELECT %s, builtin FROM %s WHERE name = ?1", data_columns(t, cols, sizeof cols),
             t->name);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) != SQLITE_OK) {
        errmsg_set(err, errlen, "catalog: cannot read %s: %s", t->name, sqlite3_errmsg(db));
        goto done;
    }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        read(st, out);
        *builtin = sqlite3_column_int(st, (int) t->ncols - 1);
        ret = 1;
    } else if (rc == SQLITE_DONE) {
        ret = 0;
    } else {
        errmsg_set(err, errlen, "catalog: cannot read %s: %s", t->name, sqlite3_errmsg(db));
    }
done:
    sqlite3_finalize(st);
    return ret;
}

static void read_gpu_void(sqlite3_stmt *st, void *out) { read_gpu_row(st, out); }
static void read_model_void(sqlite3_stmt *st, void *out) { read_model_row(st, out); }

/* Brings the built-in rows up to date: inserts the missing ones and replaces
 * built-in rows whose figures differ; user rows (builtin = 0) stay.  With
 * WRITE 0 only counts, into *STALE, the rows that would change.  Returns 0 or
 * -1 + ERR. */
static int sync_builtins(sqlite3 *db, const model_spec *models, size_t nmodels, int write, int *stale,
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

/* 1 when the catalog (as unqualified names resolve) lacks a table, a column or
 * a current built-in row, 0 when it is current, -1 on an error + ERR. */
static int catalog_stale(sqlite3 *db, const model_spec *models, size_t nmodels, char *err, size_t errlen)
{
    int mg, mm, rows;
    if (missing_columns(db, &GPUS, NULL, &mg, err, errlen) || missing_columns(db, &MODELS, NULL, &mm, err, errlen))
        return -1;
    if (mg || mm) return 1;
    if (sync_builtins(db, models, nmodels, 0, &rows, err, errlen)) return -1;
    return rows > 0;
}

/* Runs SQL; returns 0 or -1 + ERR ("catalog: WHAT: message"). */
static int exec(sqlite3 *db, const char *sql, const char *what, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
    errmsg_set(err, errlen, "catalog: %s: %s", what, msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -1;
}

/* Gives the writable database the current tables: creates them, or adds the
 * columns an older schema lacks (with their defaults).  Returns 0 or -1 + ERR. */
static int migrate_tables(sqlite3 *db, char *err, size_t errlen)
{
    const table_def *tables[] = { &GPUS, &MODELS };
    char sql[2048];
    for (size_t k = 0; k < NELEM(tables); k++) {
        const table_def *t = tables[k];
        if (exec(db, create_sql(t, 0, sql, sizeof sql), "cannot create tables", err, errlen)) return -1;
        for (size_t i = 0; i < t->ncols; i++) {
            if (!t->cols[i].added) continue;
            sqlite3_stmt *st = NULL;
            int have = 0;
            snprintf(sql, sizeof sql, "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'", t->name,
                     t->cols[i].name);
            if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
                have = sqlite3_column_int(st, 0) > 0;
            else {
                errmsg_set(err, errlen, "catalog: cannot read the columns of %s: %s", t->name, sqlite3_errmsg(db));
                sqlite3_finalize(st);
                return -1;
            }
            sqlite3_finalize(st);
            if (have) continue;
            snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", t->name, t->cols[i].name, t->cols[i].decl);
            if (exec(db, sql, "cannot add a column", err, errlen)) return -1;
        }
    }
    return 0;
}

/* On a read-only connection: the current tables as TEMP tables that shadow the
 * file's, filled with its rows (the columns it has).  Returns 0 or -1 + ERR. */
static int shadow_tables(sqlite3 *db, char *err, size_t errlen)
{
    const table_def *tables[] = { &GPUS, &MODELS };
    char sql[4096];
    if (exec(db, "PRAGMA temp_store = MEMORY", "cannot keep temporary tables in memory", err, errlen)) return -1;
    for (size_t k = 0; k < NELEM(tables); k++) {
        const table_def *t = tables[k];
        int missing;
        if (exec(db, create_sql(t, 1, sql, sizeof sql), "cannot create temporary tables", err, errlen) ||
            missing_columns(db, t, "main", &missing, err, errlen))
            return -1;
        if (missing == (int) t->ncols) continue;   /* the file has no such table */
        /* The file's columns among ours, read one by one. */
        char cols[1024] = "";
        size_t used = 0;
        for (size_t i = 0; i < t->ncols; i++) {
            sqlite3_stmt *st = NULL;
            snprintf(sql, sizeof sql, "SELECT count(*) FROM pragma_table_info('%s', 'main') WHERE name = '%s'",
                     t->name, t->cols[i].name);
            int have = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
                       sqlite3_column_int(st, 0) > 0;
            sqlite3_finalize(st);
            if (have) used += (size_t) snprintf(cols + used, sizeof cols - used, "%s%s", used ? ", " : "",
                                                t->cols[i].name);
        }
        snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO temp.%s (%s) SELECT %s FROM main.%s", t->name, cols, cols,
                 t->name);
        if (exec(db, sql, "cannot copy the catalog", err, errlen)) return -1;
    }
    return 0;
}

int catalog_init(sqlite3 *db, char *err, size_t errlen)
{
    int ret = -1, stale, rows, own = 0, began = 0;
    int readonly = sqlite3_db_readonly(db, "main") == 1;
    model_spec *models = NULL;
    size_t nmodels = 0;

    if (load_builtin_models(&models, &nmodels, err, errlen) != 0) return -1;
    /* A current catalog is only read: nothing takes a write lock. */
    stale = catalog_stale(db, models, nmodels, err, errlen);
    if (stale <= 0) {
        ret = stale;
        goto done;
    }
    /* Outside a transaction, take the write lock first (two processes migrating
     * at once then wait for each other rather than fail); inside a caller's, a
     * savepoint.  A read-only connection writes only TEMP tables. */
    own = !readonly && sqlite3_get_autocommit(db);
    if (exec(db, own ? "BEGIN IMMEDIATE" : "SAVEPOINT catalog_init", "cannot begin", err, errlen)) goto done;
    began = 1;
    if ((readonly ? shadow_tables(db, err, errlen) : migrate_tables(db, err, errlen)) != 0 ||
        sync_builtins(db, models, nmodels, 1, &rows, err, errlen) != 0)
        goto done;
    if (exec(db, own ? "COMMIT" : "RELEASE catalog_init", "cannot commit", err, errlen)) goto done;
    began = 0;
    ret = 0;
done:
    if (began)
        sqlite3_exec(db, own ? "ROLLBACK" : "ROLLBACK TO catalog_init; RELEASE catalog_init", NULL, NULL, NULL);
    free(models);
    return ret;
}

/* ---- lookups ----------------------------------------------------------------------- */

/* Writes "unknown KIND 'NAME' (valid: a, b, c)" into ERR; returns 1, or -1 when
 * the names cannot be read. */
static int unknown_name(sqlite3 *db, const char *kind, const char *table,
                        const char *name, char *err, size_t errlen)
{
    int ret = -1, rc;
    sqlite3_stmt *st = NULL;
    char sql[128], list[512] = "";
    size_t used = 0, room = sizeof list - sizeof ", ...";

    snprintf(sql, sizeof sql, "SELECT name FROM %s ORDER BY name", table);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        goto db_error;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *n = (const char *)sqlite3_column_text(st, 0);
        int w = snprintf(list + used, room - used, "%s%s", used ? ", " : "", n ? n : "");
        if (w < 0 || (size_t)w >= room - used) {
            /* Too many names for the buffer: end the list with ", ...". */
            snprintf(list + used, sizeof list - used, ", ...");
            break;
        }
        used += (size_t)w;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        goto db_error;
    errmsg_set(err, errlen, "unknown %s '%s' (valid: %s)", kind, name, list);
    ret = 1;
    goto done;

db_error:
    errmsg_set(err, errlen, "catalog: cannot list %s: %s", table, sqlite3_errmsg(db));
done:
    sqlite3_finalize(st);
    return ret;
}

/* Looks NAME up in T, filling OUT through READ.  Returns 0 found, 1 not found
 * (no message), -1 error with ERR. */
static int fetch_row(sqlite3 *db, const table_def *t, const char *name, void (*read)(sqlite3_stmt *, void *),
                     void *out, char *err, size_t errlen)
{
    int builtin;
    int rc = builtin_row(db, t, name, read, out, &builtin, err, errlen);
    return rc < 0 ? -1 : rc == 1 ? 0 : 1;
}

int catalog_gpu(sqlite3 *db, const char *name, gpu_spec *out, char *err, size_t errlen)
{
    int rc;
    if (!name)
        name = "";
    rc = fetch_row(db, &GPUS, name, read_gpu_void, out, err, errlen);
    for (size_t i = 0; rc == 1 && i < NELEM(gpu_aliases); i++)
        if (strcasecmp(name, gpu_aliases[i].alias) == 0)
            rc = fetch_row(db, &GPUS, gpu_aliases[i].name, read_gpu_void, out, err, errlen);
    if (rc == 1)
        rc = unknown_name(db, "gpu", "gpus", name, err, errlen);
    return rc;
}

int catalog_model(sqlite3 *db, const char *name, model_spec *out, char *err, size_t errlen)
{
    int rc;
    if (!name)
        name = "";
    rc = fetch_row(db, &MODELS, name, read_model_void, out, err, errlen);
    if (rc == 1)
        rc = unknown_name(db, "model", "models", name, err, errlen);
    return rc;
}

/* ---- user entries --------------------------------------------------------------- */

/* Runs one INSERT OR REPLACE of SQL with BIND applied.  Returns 0 or -1 + ERR. */
static int put_row(sqlite3 *db, const char *sql, const char *what, const char *name,
                   int (*bind)(sqlite3_stmt *, const void *, const char *),
                   const void *spec, char *err, size_t errlen)
{
    int ret = -1;
    sqlite3_stmt *st = NULL;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
        bind(st, spec, name) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE) {
        errmsg_set(err, errlen, "%s '%s': cannot save: %s", what, name, sqlite3_errmsg(db));
        goto done;
    }
    ret = 0;
done:
    sqlite3_finalize(st);
    return ret;
}

static int bind_user_gpu(sqlite3_stmt *st, const void *g, const char *name)
{
    return bind_gpu(st, g, name, 0);
}

static int bind_user_model(sqlite3_stmt *st, const void *m, const char *name)
{
    return bind_model(st, m, name, 0);
}

int catalog_is_builtin(sqlite3 *db, const char *table, const char *name)
{
    char sql[128];
    sqlite3_stmt *st = NULL;
    int yes = 0;
    snprintf(sql, sizeof sql, "SELECT builtin FROM %s WHERE name = ?",
             strcmp(table, "gpus") == 0 ? "gpus" : "models");
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        yes = sqlite3_column_int(st, 0) != 0;
    sqlite3_finalize(st);
    return yes;
}

int catalog_put_gpu(sqlite3 *db, const gpu_spec *g, char *err, size_t errlen)
{
    char name[sizeof g->name], sql[1200];
    if (validate_gpu(g, name, err, errlen) != 0)
        return -1;
    return put_row(db, insert_sql(&GPUS, sql, sizeof sql), "gpu", name, bind_user_gpu, g, err, errlen);
}

int catalog_put_model(sqlite3 *db, const model_spec *m, char *err, size_t errlen)
{
    char name[sizeof m->name], sql[1200];
    if (validate_model(m, name, err, errlen) != 0)
        return -1;
    return put_row(db, insert_sql(&MODELS, sql, sizeof sql), "model", name, bind_user_model, m, err, errlen);
}

/* ---- the listing --------------------------------------------------------------------- */

/* Reads a whole table, ordered by name, into a malloc'd array of ELEMSIZE-byte
 * entries.  Returns 0 or -1 + ERR; *OUT is NULL when the table is empty. */
static int load_all(sqlite3 *db, const table_def *t, size_t elemsize, void (*read)(sqlite3_stmt *, void *),
                    void **out, size_t *n, char *err, size_t errlen)
{
    int ret = -1, rc;
    sqlite3_stmt *st = NULL;
    char cols[1024], sql[1200];
    unsigned char *rows = NULL;
    size_t count = 0, cap = 0;

    snprintf(sql, sizeof sql, "SELECT %s FROM %s ORDER BY name", data_columns(t, cols, sizeof cols), t->name);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        goto db_error;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (count == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            void *p = realloc(rows, ncap * elemsize);
            if (!p) {
                errmsg_set(err, errlen, "catalog: out of memory");
                goto done;
            }
            rows = p;
            cap = ncap;
        }
        read(st, rows + count * elemsize);
        count++;
    }
    if (rc != SQLITE_DONE)
        goto db_error;
    *out = rows;
    *n = count;
    rows = NULL;
    ret = 0;
    goto done;

db_error:
    errmsg_set(err, errlen, "catalog: cannot read %s: %s", t->name, sqlite3_errmsg(db));
done:
    free(rows);
    sqlite3_finalize(st);
    return ret;
}

/* The wider of W and S as shown (ERRMSG_SHOWN: control bytes escaped). */
static int max_width(int w, const char *s)
{
    int n = (int)strlen(ERRMSG_SHOWN(s));
    return n > w ? n : w;
}

static void print_gpus(FILE *out, const gpu_spec *g, size_t n)
{
    int wn = 4, wf = 9;   /* widths of "name" and "full name" */
    for (size_t i = 0; i < n; i++) {
        wn = max_width(wn, g[i].name);
        wf = max_width(wf, g[i].full_name);
    }
    fprintf(out, "GPUs\n");
    fprintf(out, "%-*s  %-*s  %7s  %7s  %7s  %7s  %6s  %9s  %4s  %9s  %6s  %6s  %6s\n", wn, "name", wf, "full name",
            "bf16 TF", "fp8 TF", "fp4 TF", "mem GiB", "GB/s", "link GB/s", "node", "node GB/s", "idle W", "max W",
            "$/h");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%-*s  %-*s  %7.1f  %7.1f  %7.1f  %7.1f  %6.0f  %9.0f  %4d  %9.2f  %6.0f  %6.0f  %6.2f\n", wn,
                ERRMSG_SHOWN(g[i].name), wf, ERRMSG_SHOWN(g[i].full_name), g[i].bf16_tflops, g[i].fp8_tflops,
                g[i].fp4_tflops, g[i].mem_gib, g[i].mem_bw_gbs, g[i].link_gbs, g[i].gpus_per_node,
                g[i].node_link_gbs, g[i].idle_w, g[i].max_w, g[i].price_hr);
}

static void print_models(FILE *out, const model_spec *m, size_t n)
{
    int wn = 4;
    for (size_t i = 0; i < n; i++)
        wn = max_width(wn, m[i].name);
    fprintf(out, "Models\n");
    fprintf(out, "%-*s  %6s  %6s  %5s  %4s  %8s  %6s  %6s  %10s  %10s  %9s  %8s  %7s  %7s\n", wn, "name",
            "layers", "hidden", "heads", "kv", "head_dim", "inter", "vocab", "params (B)", "active (B)", "experts",
            "kv/token", "context", "weights");
    for (size_t i = 0; i < n; i++) {
        catalog_counts c;
        char experts[32] = "-";
        catalog_model_counts(&m[i], &c);
        if (m[i].experts)
            snprintf(experts, sizeof experts, "%d/%d%s%.0d", m[i].experts_per_token, m[i].experts,
                     m[i].shared_experts ? "+" : "", m[i].shared_experts);
        fprintf(out, "%-*s  %6d  %6d  %5d  %4d  %8d  %6d  %6d  %10.2f  %10.2f  %9s  %8.0f  %7d  %7s\n", wn,
                ERRMSG_SHOWN(m[i].name), m[i].layers, m[i].hidden, m[i].heads, m[i].kv_heads,
                m[i].head_dim, m[i].intermediate, m[i].vocab, c.total / 1e9, c.active / 1e9, experts,
                catalog_kv_elems_per_token(&m[i]), m[i].context, ERRMSG_SHOWN(m[i].weights));
    }
}

int catalog_print(sqlite3 *db, FILE *out, char *err, size_t errlen)
{
    int ret = -1;
    void *gp = NULL, *mp = NULL;
    gpu_spec *g;
    model_spec *m;
    size_t ng = 0, nm = 0;

    if (load_all(db, &GPUS, sizeof(gpu_spec), read_gpu_void, &gp, &ng, err, errlen) != 0 ||
        load_all(db, &MODELS, sizeof(model_spec), read_model_void, &mp, &nm, err, errlen) != 0)
        goto done;
    g = gp;
    m = mp;

    print_gpus(out, g, ng);
    fprintf(out, "(TF: dense TFLOP/s; node: GPUs sharing the link; idle/max: board power)\n\n");
    print_models(out, m, nm);
    fprintf(out, "(experts: routed per token/routed+shared; kv/token: KV-cache elements a token adds, "
                 "all layers; active: the weights a token uses, embedding table included)\n");
    fprintf(out, "\nSources\n");
    for (size_t i = 0; i < ng; i++)
        fprintf(out, "  gpu %s: %s\n", ERRMSG_SHOWN(g[i].name),
                g[i].source[0] ? ERRMSG_SHOWN(g[i].source) : "(none given)");
    for (size_t i = 0; i < nm; i++)
        fprintf(out, "  model %s: %s\n", ERRMSG_SHOWN(m[i].name),
                m[i].source[0] ? ERRMSG_SHOWN(m[i].source) : "(none given)");
    if (ferror(out)) {
        errmsg_set(err, errlen, "catalog: write error");
        goto done;
    }
    ret = 0;
done:
    free(gp);
    free(mp);
    return ret;
}

/* ---- figures from a geometry ----------------------------------------------------- */

double catalog_weight_bytes(const char *precision)
{
    static const struct { const char *name; double bytes; } table[] = {
        { "bf16", 2.0 }, { "fp16", 2.0 }, { "fp8", 1.0 }, { "int8", 1.0 }, { "int4", 0.5 },
        { "fp4", 0.5 + 1.0 / 16 },   /* 4 bits + an 8-bit scale per 16 weights (NVFP4) */
    };
    if (!precision)
        return 0;
    for (size_t i = 0; i < NELEM(table); i++)
        if (strcasecmp(precision, table[i].name) == 0)
            return table[i].bytes;
    return 0;
}

void catalog_model_counts(const model_spec *m, catalog_counts *c)
{
    memset(c, 0, sizeof *c);
    c->total = m->params;
    c->active = m->params;
    c->embedding = (double) m->vocab * m->hidden;
    if (m->experts > 0) {
        c->moe_layers = m->layers - m->first_dense_layers;
        c->expert = m->expert_params > 0 ? m->expert_params : 3.0 * m->hidden * m->moe_intermediate;
        c->active -= (double) c->moe_layers * (m->experts - m->experts_per_token) * c->expert;
    }
}

double catalog_kv_elems_per_token(const model_spec *m)
{
    if (m->kv_lora_rank > 0)
        return (double) m->layers * (m->kv_lora_rank + m->qk_rope_head_dim);
    return 2.0 * m->layers * m->kv_heads * m->head_dim;
}
