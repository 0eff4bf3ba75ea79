"""Training steps in eager PyTorch, Inductor and graphc, side by side in one
process, rounds interleaved against host noise (each round runs a few
steps of each runtime in turn), on issue 34's benchmark models:

  mlp       784-1024-1024-10, batch 128, SGD with momentum
  gpt       GPT-2 architecture, 2 layers, d 256, 4 heads, sequence 128,
            batch 16, vocabulary 8192, AdamW
  resnet18  torchvision's, 64x64 images, batch 16, 10 classes, SGD with
            momentum (batch norm in train mode)
  bert      BERT-small masked LM (4 layers, d 512, 8 heads), sequence 128,
            batch 8, AdamW

Each runtime trains its own copy of the same initial model on the same
batches. Compiled runtimes compile the model (``torch.compile(model,
backend=...)``) and the optimizer step (``torch.compile(opt.step,
backend=...)``, PyTorch's compiled-optimizer recipe). Dropout is 0 (graphc
leaves dropout's random masks to PyTorch). Prints per model and runtime:
the first step (compiles included), the median step time of the timed
steps, the loss after all steps (and its relative difference from
eager's), the median minor page faults of a step (the process's: glibc's
adaptive mmap threshold makes them depend on what ran before), and with
--memory the peak RSS of a fresh process training
that runtime alone over the steps after its first (compiles and imports
excluded; RSS peaks of runtimes in one process cannot be told apart).

  PYTHONPATH=build/python $(tools/venv.sh)/bin/python tools/bench/train_bench.py \\
      [--models mlp,gpt,resnet18,bert] [--runtimes eager,inductor,graphc] \\
      [--rounds 5] [--steps-per-round 2] [--memory]
"""
import argparse
import copy
import resource
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

RUNTIMES = ("eager", "inductor", "graphc")


def mlp() -> Tuple[nn.Module, Callable[[int], Any], Callable[..., torch.Tensor], Callable[[Any], Any]]:
    model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))

    def batch(step: int) -> Any:
        g = torch.Generator().manual_seed(step)
        return torch.randn(128, 784, generator=g), torch.randint(0, 10, (128,), generator=g)

    return model, batch, lambda m, x, y: F.cross_entropy(m(x), y), sgd


def gpt() -> Tuple[nn.Module, Callable[[int], Any], Callable[..., torch.Tensor], Callable[[Any], Any]]:
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=8192, n_positions=128, n_embd=256, n_layer=2, n_head=4, resid_pdrop=0.0,
                        embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(config)

    def batch(step: int) -> Any:
        ids = torch.randint(0, 8192, (16, 128), generator=torch.Generator().manual_seed(step))
        return (ids,)

    return model, batch, lambda m, ids: m(input_ids=ids, labels=ids).loss, adamw


def resnet18() -> Tuple[nn.Module, Callable[[int], Any], Callable[..., torch.Tensor], Callable[[Any], Any]]:
    import torchvision

    model = torchvision.models.resnet18(num_classes=10)

    def batch(step: int) -> Any:
        g = torch.Generator().manual_seed(step)
        return torch.randn(16, 3, 64, 64, generator=g), torch.randint(0, 10, (16,), generator=g)

    return model, batch, lambda m, x, y: F.cross_entropy(m(x), y), sgd


def bert() -> Tuple[nn.Module, Callable[[int], Any], Callable[..., torch.Tensor], Callable[[Any], Any]]:
    from transformers import BertConfig, BertForMaskedLM

    config = BertConfig(hidden_size=512, num_hidden_layers=4, num_attention_heads=8, intermediate_size=2048,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, max_position_embeddings=128)
    model = BertForMaskedLM(config)

    def batch(step: int) -> Any:
        g = torch.Generator().manual_seed(step)
        ids = torch.randint(1000, config.vocab_size, (8, 128), generator=g)
        masked = torch.rand(8, 128, generator=g) < 0.15
        labels = torch.where(masked, ids, torch.full_like(ids, -100))
        return torch.where(masked, torch.full_like(ids, 103), ids), labels  # 103: [MASK]

    return model, batch, lambda m, ids, labels: m(input_ids=ids, labels=labels).loss, adamw


def sgd(parameters: Any) -> torch.optim.Optimizer:
    return torch.optim.SGD(parameters, lr=0.01, momentum=0.9)


def adamw(parameters: Any) -> torch.optim.Optimizer:
    return torch.optim.AdamW(parameters, lr=1e-4, foreach=True)


MODELS = {"mlp": mlp, "gpt": gpt, "resnet18": resnet18, "bert": bert}


class Trainer:
    """One runtime's copy of the model, its optimizer and its step."""

    def __init__(self, runtime: str, model: nn.Module, loss_of: Callable[..., torch.Tensor],
                 optimizer: Callable[[Any], torch.optim.Optimizer]) -> None:
        self.runtime, self.model = runtime, copy.deepcopy(model).train()
        self.opt = optimizer(self.model.parameters())
        backend = {"inductor": "inductor", "graphc": "graphc"}.get(runtime)
        self.forward = torch.compile(self.model, backend=backend) if backend else self.model
        self.opt_step = torch.compile(self.opt.step, backend=backend) if backend else self.opt.step
        self.loss_of = loss_of
        self.losses: List[float] = []

    def step(self, batch: Any) -> float:
        loss = self.loss_of(self.forward, *batch)
        loss.backward()
        self.opt_step()
        self.opt.zero_grad(set_to_none=True)
        value = float(loss.detach())
        self.losses.append(value)
        return value


def peak_rss_since_reset() -> float:
    """VmHWM in KiB: the peak RSS since the last write of 5 to
    /proc/self/clear_refs."""
    with open("/proc/self/status") as f:
        return float(next(line.split()[1] for line in f if line.startswith("VmHWM:")))


def peak_rss_mib(name: str, runtime: str, steps: int) -> float:
    """The peak RSS of a fresh process over `steps` steps of one runtime
    after its first (compiled) step: the model, its gradients, the
    optimizer's state, the activations, and the runtime's own buffers."""
    out = subprocess.run([sys.executable, __file__, "--models", name, "--runtimes", runtime, "--rss-only",
                          "--rounds", "1", "--steps-per-round", str(steps)], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def run(name: str, runtimes: List[str], rounds: int, per_round: int, memory: bool, rss_only: bool) -> None:
    import graphc.dynamo

    torch.manual_seed(0)
    model, batch, loss_of, optimizer = MODELS[name]()
    trainers = [Trainer(r, model, loss_of, optimizer) for r in runtimes]
    first: Dict[str, float] = {}
    for t in trainers:
        start = time.perf_counter()
        t.step(batch(0))
        first[t.runtime] = time.perf_counter() - start
    if rss_only:  # the high-water mark from here: steady steps, not imports and compiles
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    times: Dict[str, List[float]] = {r: [] for r in runtimes}
    faults: Dict[str, List[int]] = {r: [] for r in runtimes}
    step = 1
    for _ in range(rounds):
        for t in trainers:
            for k in range(per_round):
                faulted = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                start = time.perf_counter()
                t.step(batch(step + k))
                times[t.runtime].append(time.perf_counter() - start)
                faults[t.runtime].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faulted)
        step += per_round
    if rss_only:
        print(peak_rss_since_reset() / 1024)
        return
    parameters = sum(p.numel() for p in model.parameters())
    print(f"{name}: {parameters / 1e6:.2f} M parameters, {step} steps, {rounds} rounds of {per_round}")
    eager_loss = next((t.losses[-1] for t in trainers if t.runtime == "eager"), None)
    median = {r: statistics.median(v) for r, v in times.items()}
    for t in trainers:
        line = (f"  {t.runtime:9s} first step {first[t.runtime]:7.2f} s   step {median[t.runtime] * 1e3:8.1f} ms   "
                f"loss {t.losses[-1]:.5f}")
        line += f"   page faults/step {statistics.median(faults[t.runtime]):6.0f}"
        if eager_loss is not None and t.runtime != "eager":
            line += f" ({abs(t.losses[-1] - eager_loss) / abs(eager_loss):.1e} from eager's)"
        if memory:
            line += f"   peak RSS {peak_rss_mib(name, t.runtime, 3):7.0f} MiB"
        print(line, flush=True)
    if "graphc" in median:
        ratios = ", ".join(f"{r} {median['graphc'] / median[r]:.2f}" for r in runtimes if r != "graphc")
        records = graphc.dynamo.compile_records()
        left = sorted({op for r in records for op, _ in r.eager_ops})
        print(f"  graphc step time / {ratios}; {sum(r.partitions for r in records)} graphc partitions, "
              f"ops left to PyTorch: {', '.join(left) or 'none'}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--runtimes", default=",".join(RUNTIMES))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps-per-round", type=int, default=2)
    parser.add_argument("--memory", action="store_true", help="peak RSS of each runtime alone (a process each)")
    parser.add_argument("--rss-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(2)
    for name in args.models.split(","):
        run(name, args.runtimes.split(","), args.rounds, args.steps_per_round, args.memory, args.rss_only)


if __name__ == "__main__":
    main()
