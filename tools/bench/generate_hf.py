"""Greedy generation with Hugging Face ``generate`` and a static KV cache:
eager PyTorch against the forward under ``torch.compile(backend="graphc")``,
in interleaved rounds in one process (each round times each in turn), on a
random-init Llama-architecture model (issue 35's: 8 layers, hidden 512,
8 heads, GQA with 4 KV heads, vocab 32000). Prints tokens/s per runtime
(prefill of the prompt included), whether graphc's tokens are eager's, and
what graphc compiled (partitions, ops left to PyTorch).

  PYTHONPATH=build/python $(tools/venv.sh)/bin/python tools/bench/generate_hf.py \
      [--new-tokens 64] [--prompt 16] [--rounds 3]

Inductor, onnxruntime, llama.cpp and the memory-bandwidth floor are not in
this run yet (issue 35, deliverable 5).
"""
import argparse
import statistics
import time

import torch

import graphc.dynamo


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--prompt", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.set_num_threads(2)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=32000, hidden_size=512, intermediate_size=1376, num_hidden_layers=8,
                         num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=512)
    model = LlamaForCausalLM(config).eval()
    parameters = sum(p.numel() for p in model.parameters())
    ids = torch.randint(0, config.vocab_size, (1, args.prompt), generator=torch.Generator().manual_seed(1))
    eager_forward = model.forward
    graphc_forward = torch.compile(model.forward, backend="graphc")

    def generate(forward):
        model.forward = forward
        with torch.no_grad():
            start = time.perf_counter()
            out = model.generate(ids, max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens,
                                 do_sample=False, cache_implementation="static")
            return out, time.perf_counter() - start

    want, _ = generate(eager_forward)
    got, first = generate(graphc_forward)  # compiles
    times = {"eager": [], "graphc": []}
    for _ in range(args.rounds):
        times["eager"].append(generate(eager_forward)[1])
        got, seconds = generate(graphc_forward)
        times["graphc"].append(seconds)
    print(f"Llama {parameters / 1e6:.1f} M parameters, prompt {args.prompt}, {args.new_tokens} new tokens, "
          f"batch 1, 2 threads, {args.rounds} rounds")
    for name, seconds in times.items():
        print(f"  {name:7s} {args.new_tokens / statistics.median(seconds):7.1f} tokens/s (median; best "
              f"{args.new_tokens / min(seconds):.1f})")
    print(f"  graphc's first generate (compiles included): {first:.2f} s")
    print(f"  graphc's tokens are eager's: {torch.equal(got, want)}")
    for record in graphc.dynamo.compile_records():
        print(f"  {record.name}: {record.partitions} partition(s), {len(record.eager_ops)} op(s) in PyTorch")


if __name__ == "__main__":
    main()
