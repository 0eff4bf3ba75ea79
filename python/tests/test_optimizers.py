"""PyTorch's compiled-optimizer recipe, ``torch.compile(step,
backend="graphc")`` around ``opt.step()``: the step is whole in graphc
(foreach ops decomposed per tensor, fused), parameters and optimizer state
are updated in place in the caller's tensors (results that update inputs),
and the parameters follow eager's for 20 steps."""

import pytest
import torch

import graphc.dynamo

OPTIMIZERS = {
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
    "sgd_nesterov_decay": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-2),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-2),
    "adam_amsgrad": lambda p: torch.optim.Adam(p, lr=1e-2, amsgrad=True),
    "adamw_foreach": lambda p: torch.optim.AdamW(p, lr=1e-2, foreach=True),
    "adagrad": lambda p: torch.optim.Adagrad(p, lr=1e-2),
    "rmsprop": lambda p: torch.optim.RMSprop(p, lr=1e-3, momentum=0.5),
}


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))


def train_beside_eager(make, steps=20):
    """Two copies of the MLP: one stepped by `make(params)`'s optimizer
    under torch.compile(backend="graphc"), one in eager; returns both
    models after `steps` steps. `make` returns the optimizer and a
    scheduler (or None), and is told whether it makes the compiled one."""
    torch.manual_seed(0)
    model, reference = mlp(), mlp()
    reference.load_state_dict(model.state_dict())
    (opt, schedule), (ref_opt, ref_schedule) = make(model.parameters(), True), make(reference.parameters(), False)
    graphc.dynamo.reset()
    torch._dynamo.reset()

    @torch.compile(backend="graphc")
    def step():
        opt.step()

    for i in range(steps):
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(i))
        for m in (model, reference):
            m.zero_grad()
            m(x).square().sum().backward()
        step()
        ref_opt.step()
        for s in (schedule, ref_schedule):
            if s is not None:
                s.step()
    return model, reference


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_compiled_step_matches_eager_in_place(name):
    pointers = []

    def make(params, compiled):
        params = list(params)
        if compiled:
            pointers.extend(p.data_ptr() for p in params)
        return OPTIMIZERS[name](params), None

    model, reference = train_beside_eager(make)
    for p, r in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p, r, rtol=1e-5, atol=1e-6)
    assert [p.data_ptr() for p in model.parameters()] == pointers
    records = graphc.dynamo.compile_records()
    assert records, "nothing compiled"
    for record in records:
        assert record.partitions == 1 and not record.eager_ops and not record.failed_partitions, record
    # Every parameter is written in place by the compiled step.
    assert records[-1].graphs[0].count(" updates %") >= len(pointers)


def test_a_scheduled_tensor_learning_rate_compiles_once():
    """The learning rate as a tensor (capturable=True) that OneCycleLR
    changes every step is read by the kernel: one compile for every step,
    with eager's parameters."""

    def make(params, capturable):  # (eager allows capturable on accelerators only)
        opt = torch.optim.Adam(params, lr=torch.tensor(0.01), capturable=capturable, foreach=False)
        return opt, torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=20, cycle_momentum=False)

    model, reference = train_beside_eager(make)
    # capturable's bias correction is computed in another order than the
    # eager reference's (non-capturable) one: a few ulps apart.
    for p, r in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p, r, rtol=1e-4, atol=1e-5)
    assert len(graphc.dynamo.compile_records()) == 1
