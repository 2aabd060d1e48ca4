"""Where each planning rule comes from, cited in the formula text the user sees."""

from __future__ import annotations

TRANSFORMER_MATH = (
    "Anthony, Biderman, Schoelkopf et al., 'Transformer Math 101', EleutherAI blog, 2023, "
    "https://blog.eleuther.ai/transformer-math/"
)
KORTHIKANTI = (
    "Korthikanti et al., 'Reducing Activation Recomputation in Large Transformer Models', "
    "2022, arXiv:2205.05198, section 4"
)
FLASH_ATTENTION = (
    "Dao et al., 'FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness', "
    "2022, arXiv:2205.14135 (no s x s score matrix is stored)"
)
KV_CACHE = (
    "Pope et al., 'Efficiently Scaling Transformer Inference', 2022, arXiv:2211.05102; "
    "Ainslie et al., 'GQA', 2023, arXiv:2305.13245 (K and V per KV head, not per query head)"
)
LORA = "Hu et al., 'LoRA: Low-Rank Adaptation of Large Language Models', 2021, arXiv:2106.09685"
PEFT_FP32_ADAPTERS = (
    "Hugging Face PEFT: adapter weights are kept in float32 by default "
    "(autocast_adapter_dtype=True), https://huggingface.co/docs/peft"
)
QLORA = (
    "Dettmers et al., 'QLoRA: Efficient Finetuning of Quantized LLMs', 2023, arXiv:2305.14314, "
    "section 3 (NF4 + double quantisation: 4 + 0.127 bits per parameter)"
)
EIGHT_BIT_OPTIMIZERS = (
    "Dettmers et al., '8-bit Optimizers via Block-wise Quantization', 2021, arXiv:2110.02861"
)
QUANTISED_EMBEDDINGS = (
    "bitsandbytes/GPTQ/AWQ quantise nn.Linear layers; embeddings and, by default, the LM head "
    "stay in 16-bit (transformers BitsAndBytesConfig llm_int8_skip_modules)"
)
FRAMEWORK_OVERHEAD = (
    "GPUDesk's choice: 1.0 GB per GPU for the CUDA context and cuBLAS/cuDNN workspaces "
    "(PyTorch's context alone is ~0.3-1 GB) plus 5% for the caching allocator's fragmentation "
    "(PyTorch 'CUDA semantics: memory management', "
    "https://pytorch.org/docs/stable/notes/cuda.html#memory-management)"
)
GPT3_SHAPES = (
    "Kaplan et al. 2020 (arXiv:2001.08361): non-embedding params ~ 12 x layers x hidden^2; "
    "Brown et al. 2020 (arXiv:2005.14165, table 2.1): hidden / layers ~ 128 for GPT-3 6.7B-175B"
)
CHECKPOINTING = (
    "Chen et al., 'Training Deep Nets with Sublinear Memory Cost', 2016, arXiv:1604.06174"
)
DECODE_BOUND = (
    "Single-stream decode reads every weight (and the sequence's KV cache) once per token, so "
    "tokens/s <= bandwidth / bytes per token (Pope et al. 2022, arXiv:2211.05102; "
    "kipply, 'Transformer Inference Arithmetic', 2022)"
)
BF16_SUPPORT = (
    "bfloat16 needs NVIDIA compute capability 8.0+ (Ampere); vLLM refuses bf16 below it "
    "(CUDA C++ Programming Guide, arithmetic instructions)"
)
