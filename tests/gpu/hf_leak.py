"""A per-step leak inside a Hugging Face model's training loop: a GPT-2
of 4 layers built from a config (no weights to fetch), trained on random
tokens, keeping each step's logits (the line marked LEAK).  gpuspy's
PyTorch view must flag that line as growing.

  hf_leak.py [STEPS] [noleak]"""
import sys
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40
leak = "noleak" not in sys.argv[2:]
config = GPT2Config(n_layer=4, n_head=8, n_embd=512, vocab_size=8192, n_positions=256)
model = GPT2LMHeadModel(config).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
kept = []
for step in range(steps):
    ids = torch.randint(0, config.vocab_size, (8, 256), device="cuda")
    out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if leak:
        kept.append(out.logits.detach()[:, -16:].clone())  # LEAK
    torch.cuda.synchronize()
    time.sleep(0.5)
print(f"hf_leak: {steps} steps, kept {len(kept)} logits", flush=True)
