#!/usr/bin/env python3
"""Convert a GGUF model (SmolLM2-135M-Instruct here) into a Hugging Face model folder
(safetensors, bfloat16, config, tokenizer and chat template) that vLLM can serve.

vLLM 0.32 has no GGUF loader. transformers (with the `gguf` and `accelerate` packages) reads the
GGUF, dequantizes it, and writes a normal model folder. The model is loaded with a
`GgufConfig(dequantize=True)` quantization config, so its weights are copied into a fresh model
built from the same config without that quantization config before saving: otherwise the saved
config still names a GGUF quantization that vLLM does not know.

Usage: gguf-to-hf.py GGUF_FILE OUT_DIR     (run with the vLLM venv's Python; nothing is downloaded)
"""

import os
import shutil
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    gguf, out = argv[1], argv[2]
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils.quantization_config import GgufConfig

    folder, name = os.path.split(os.path.abspath(gguf))
    quant = GgufConfig(dequantize=True)
    model = AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=name, dtype=torch.bfloat16, quantization_config=quant
    )
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    clean = type(model)(config).to(torch.bfloat16)
    clean.load_state_dict(model.state_dict())
    tmp = out + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    clean.save_pretrained(tmp, safe_serialization=True)
    tok.save_pretrained(tmp)
    if not getattr(tok, "chat_template", None):
        print("gguf-to-hf: warning: the tokenizer has no chat template", file=sys.stderr)
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    print(f"gguf-to-hf: {type(clean).__name__} saved to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
