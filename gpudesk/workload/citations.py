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
    "2022, arXiv:2205.14135 (no s × s score matrix is stored)"
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
    "GPUDesk's choice: 0.5 GB per GPU for the CUDA context of a PyTorch process with lazy "
    "module loading (0.3 GB for llama.cpp, + 0.5 GB of CUDA graphs for vLLM) plus 5% of the "
    "tensors for the caching allocator's fragmentation; max_memory_allocated counts neither "
    "(PyTorch 'CUDA semantics: memory management', "
    "https://pytorch.org/docs/stable/notes/cuda.html#memory-management)"
)
GPT3_SHAPES = (
    "Kaplan et al. 2020 (arXiv:2001.08361): non-embedding params ~ 12 × layers × hidden^2; "
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
ZERO = (
    "Rajbhandari et al., 'ZeRO: Memory Optimizations Toward Training Trillion Parameter "
    "Models', 2020, arXiv:1910.02054 (stage 1 shards optimizer states, 2 gradients, 3 "
    "parameters); PyTorch FSDP full sharding is stage 3"
)
ZERO_OFFLOAD = (
    "Ren et al., 'ZeRO-Offload: Democratizing Billion-Scale Model Training', 2021, "
    "arXiv:2101.06840 (optimizer states and fp32 master weights in host memory)"
)
PAGED_OPTIMIZERS = (
    "Dettmers et al., 'QLoRA', 2023, arXiv:2305.14314, section 3 (paged optimizers: "
    "optimizer states in NVIDIA unified memory, paged to the CPU under memory pressure)"
)
FUSED_OPTIMIZER = (
    "PyTorch tutorial 'How to save memory by fusing the optimizer step into the backward "
    "pass', https://pytorch.org/tutorials/intermediate/optimizer_step_in_backward_tutorial.html; "
    "torchtune optimizer_in_bwd"
)
CHUNKED_CE = (
    "torchtune CEWithChunkedOutputLoss (16-bit logits, fp32 upcast per chunk of 8); "
    "Hsu et al., 'Liger Kernel', 2024, arXiv:2410.10989 and Wijmans et al., 'Cut Your Losses "
    "in Large-Vocabulary Language Models', 2024, arXiv:2411.09009 (logits never materialised)"
)
LLAMA_CPP_BUFFERS = (
    "llama.cpp: the compute buffer is reserved for one micro-batch (-ub, default 512) in "
    "fp32; its largest tensor is the logits, ubatch × n_vocab × 4 bytes (a Llama-3-8B log: "
    "258.50 MiB at -ub 512), https://github.com/ggml-org/llama.cpp"
)
VLLM_MEMORY = (
    "vLLM docs, 'Engine arguments' (max_num_batched_tokens, gpu_memory_utilization 0.9, "
    "block_size 16) and 'Optimization and tuning' (chunked prefill), https://docs.vllm.ai"
)
TRTLLM_MEMORY = (
    "TensorRT-LLM docs, 'Memory usage of TensorRT-LLM' (activations sized for max_num_tokens, "
    "KV pool from free_gpu_memory_fraction 0.9), https://nvidia.github.io/TensorRT-LLM/"
)
