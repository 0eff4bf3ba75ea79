"""The decomposition table a training graph lowers with: the inference
table (decompositions.py), plus what a joint forward and backward needs.

- Forward ops whose backward reads what inference drops: max pooling's
  indices (torch's decomposition computes them from the windows, as
  ``max`` over each window's elements, first maximum on ties, as eager)
  and batch norm in training mode (batch statistics and the new running
  statistics, which AOTAutograd writes back into the module's buffers).
- Layer and group norms of a reduced-precision input with f32
  parameters (autocast), whose kernels' statistics are not in the dtype
  their metadata says (mixed_dtype_normalisation).
- Backward ops graphc has no op for, as ops it has: max pooling's
  backward as a scatter-add of the gradient at the saved indices
  (torch's), convolution's backward (below: a transposed convolution
  for the input's gradient, an im2col GEMM for the weight's), average
  pooling's (a depthwise transposed convolution with a kernel of ones;
  adaptive: the transposed averaging matrices), and CPU flash
  attention's backward (below: the probabilities recomputed from the
  saved log-sum-exp, as the flash kernel does).
- CPU flash attention's forward as its math, returning the log-sum-exp
  of each query's scores that its backward reads. (torch's own
  decomposition, made for inference and export, returns the attention
  weights in that place, which its backward would take for the
  log-sum-exp.)

The other backward ops of torch's core set (threshold_backward,
native_layer_norm_backward, _softmax_backward_data, embedding_dense_
backward, native_batch_norm_backward, gelu_backward, ...) are in the
inference table already: ATen's core decompositions.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any, Dict, List, Optional, Sequence

import torch

from graphc.dynamo.aten_ops import spatial
from graphc.dynamo.decompositions import decomposition_table

aten = torch.ops.aten

# Taken from torch's full decomposition table for training graphs only
# (inference keeps max pooling whole: one pooling kernel, no indices).
FROM_TORCH = (
    aten.max_pool2d_with_indices.default,
    aten.max_pool2d_with_indices_backward.default,
    aten._native_batch_norm_legit_functional.default,
    aten._native_batch_norm_legit.default,
    aten.native_batch_norm.default,
)


def mixed_dtype_normalisation(decomposition: Any, input: torch.Tensor, *args: Any) -> Any:
    """A layer or group norm of a bf16/f16 input with f32 parameters
    (``torch.autocast`` keeps a module's weights in f32) as torch's
    decomposition, which Inductor traces too; others whole (NotImplemented:
    graphc has the op). ATen's CPU kernel of the mixed case returns its
    mean and rstd in f32 where its meta function, which the backward was
    traced with, says the input's dtype: kept whole, a forward run by
    PyTorch would hand the backward tensors of another dtype than it was
    compiled for. The decomposition's statistics are in the input's dtype,
    as the metadata says, wherever it runs."""
    params = [a for a in args if isinstance(a, torch.Tensor)]
    if not any(p.dtype != input.dtype for p in params):
        return NotImplemented
    return decomposition(input, *args)


def convolution_backward(grad_output: torch.Tensor, input: torch.Tensor, weight: torch.Tensor,
                         bias_sizes: Optional[Sequence[Any]], stride: List[int], padding: List[int],
                         dilation: List[int], transposed: bool, output_padding: List[int], groups: int,
                         output_mask: List[bool]) -> Any:
    """The gradients of ``aten.convolution`` for the input, the weight and
    the bias, each computed only where `output_mask` asks:

    - input: the transposed convolution of the output's gradient with the
      same weight, stride, padding, dilation and groups; its output
      padding restores the rows the forward's stride skipped at the end.
      With stride 1, the same as a convolution (_flipped_convolution).
      (Of a transposed convolution: the convolution of the gradient.)
    - weight: im2col and one GEMM per group. The padded input's element
      under kernel offset k for each output position (a strided slice per
      offset) stacked to [G, C/G·K, N·L], and the gradient [G, O/G, N·L],
      contracted over the batch and the positions: [G, O/G, C/G·K].
      (A transposed convolution's is the same with the input and the
      output's gradient in each other's places.)
    - bias: the gradient summed over all dims but the channels."""
    n = input.dim() - 2
    kernel = list(weight.shape[2:])
    stride, padding, dilation = (spatial(v, n) for v in (stride, padding, dilation))
    grad_input = grad_weight = grad_bias = None
    if output_mask[0] and transposed:
        grad_input = aten.convolution.default(grad_output, weight, None, stride, padding, dilation, False, [0] * n,
                                              groups)
    elif output_mask[0] and all(s == 1 for s in stride) and all(d * (k - 1) >= p for d, k, p in
                                                                    zip(dilation, kernel, padding)):
        grad_input = _flipped_convolution(grad_output, weight, padding, dilation, groups)
    elif output_mask[0]:
        extra = [input.shape[2 + i] - ((grad_output.shape[2 + i] - 1) * stride[i] - 2 * padding[i]
                                       + dilation[i] * (kernel[i] - 1) + 1) for i in range(n)]
        grad_input = aten.convolution.default(grad_output, weight, None, stride, padding, dilation, True, extra,
                                              groups)
    if output_mask[1] and transposed:
        grad_weight = _weight_gradient(input, grad_output, kernel, stride, padding, dilation, groups)
    elif output_mask[1]:
        grad_weight = _weight_gradient(grad_output, input, kernel, stride, padding, dilation, groups)
    if output_mask[2]:
        grad_bias = aten.sum.dim_IntList(grad_output, [0] + list(range(2, grad_output.dim())))
    return grad_input, grad_weight, grad_bias


def _flipped_convolution(grad_output: torch.Tensor, weight: torch.Tensor, padding: List[int], dilation: List[int],
                         groups: int) -> torch.Tensor:
    """The input's gradient of a stride-1 convolution as a convolution: the
    gradient padded by d·(k−1)−p, convolved with each group's filters with
    input and output channels swapped and the kernel flipped. The same
    sums as the transposed convolution, on the GEMM path convolutions take
    forward (the transposed one scatters its columns back, col2im)."""
    n = weight.dim() - 2
    out_channels, per_group = weight.shape[0], weight.shape[1]
    kernel = list(weight.shape[2:])
    if groups == 1:  # [O, C, k...] -> [C, O, k...]: one permute, an index the kernel reads plainly
        swapped = aten.transpose.int(weight, 0, 1)
    else:  # [O, C/G, k...] -> [G, O/G, C/G, k...] -> [G, C/G, O/G, k...] -> [C, O/G, k...]
        swapped = aten.reshape.default(weight, [groups, out_channels // groups, per_group] + kernel)
        swapped = aten.transpose.int(swapped, 1, 2)
        swapped = aten.reshape.default(swapped, [groups * per_group, out_channels // groups] + kernel)
    flipped = aten.flip.default(swapped, list(range(2, 2 + n)))
    pads = [d * (k - 1) - p for d, k, p in zip(dilation, kernel, padding)]
    return aten.convolution.default(grad_output, flipped, None, [1] * n, pads, dilation, False, [0] * n, groups)


def _weight_gradient(grad_output: torch.Tensor, input: torch.Tensor, kernel: List[int], stride: List[int],
                     padding: List[int], dilation: List[int], groups: int) -> torch.Tensor:
    n = len(kernel)
    batch, channels = input.shape[0], input.shape[1]
    out_channels, out_sizes = grad_output.shape[1], list(grad_output.shape[2:])
    if any(padding):
        pads = [p for i in reversed(range(n)) for p in (padding[i], padding[i])]  # last dim first, as F.pad
        input = aten.constant_pad_nd.default(input, pads, 0.0)
    columns = []
    for offsets in itertools.product(*(range(k) for k in kernel)):
        window = input
        for i, k in enumerate(offsets):
            start = k * dilation[i]
            window = aten.slice.Tensor(window, 2 + i, start, start + (out_sizes[i] - 1) * stride[i] + 1, stride[i])
        columns.append(window)
    taps = len(columns)
    positions = functools.reduce(lambda a, b: a * b, out_sizes, 1)
    rows = (channels // groups) * taps
    cols = aten.stack.default(columns, 2)  # [N, C, K, *out]
    # [N, G, C/G·K, L] -> [G, C/G·K, N·L]: runs of L positions stay contiguous
    cols = aten.reshape.default(cols, [batch, groups, rows, positions])
    cols = aten.reshape.default(aten.permute.default(cols, [1, 2, 0, 3]), [groups, rows, batch * positions])
    # [N, O, *out] -> [G, O/G, N·L]
    grads = aten.reshape.default(grad_output, [batch, groups, out_channels // groups, positions])
    grads = aten.reshape.default(aten.permute.default(grads, [1, 2, 0, 3]),
                                 [groups, out_channels // groups, batch * positions])
    if groups == 1:  # a GEMM reading the columns as its [out, in] operand, where they are (linear)
        weight_grad = aten.mm.default(aten.select.int(grads, 0, 0), aten.t.default(aten.select.int(cols, 0, 0)))
    else:
        weight_grad = aten.bmm.default(grads, aten.transpose.int(cols, 1, 2))  # [G, O/G, C/G·K]
    return aten.reshape.default(weight_grad, [out_channels, channels // groups] + kernel)


def avg_pool2d_backward(grad_output: torch.Tensor, input: torch.Tensor, kernel_size: List[int], stride: List[int],
                        padding: List[int], ceil_mode: bool, count_include_pad: bool,
                        divisor_override: Optional[int]) -> Any:
    """Each input element gets the gradient of every window it lies in,
    divided by that window's divisor: the depthwise transposed convolution
    of gradient/divisor with a kernel of ones. The divisor is the
    kernel's size, the override, or (count_include_pad=False) the count of
    unpadded elements under each window, a convolution of ones. A ceil-mode
    window hanging past the padding is left to ATen."""
    if input.dim() != 4:
        return NotImplemented
    kernel, padding = spatial(kernel_size, 2), spatial(padding, 2)
    stride = spatial(stride, 2) if stride else kernel
    sizes = [input.shape[2 + i] for i in range(2)]
    floor_sizes = [(sizes[i] + 2 * padding[i] - kernel[i]) // stride[i] + 1 for i in range(2)]
    if ceil_mode and floor_sizes != list(grad_output.shape[2:]):
        return NotImplemented
    channels, dtype = input.shape[1], grad_output.dtype
    if divisor_override:
        scaled = aten.div.Tensor(grad_output, divisor_override)
    elif count_include_pad:
        scaled = aten.div.Tensor(grad_output, kernel[0] * kernel[1])
    else:
        ones = aten.full.default([1, 1] + sizes, 1.0, dtype=dtype, device=input.device)
        counts = aten.convolution.default(ones, aten.full.default([1, 1] + kernel, 1.0, dtype=dtype,
                                                                  device=input.device),
                                          None, stride, padding, [1, 1], False, [0, 0], 1)
        scaled = aten.div.Tensor(grad_output, counts)
    extra = [sizes[i] - ((floor_sizes[i] - 1) * stride[i] - 2 * padding[i] + kernel[i]) for i in range(2)]
    spread = aten.full.default([channels, 1] + kernel, 1.0, dtype=dtype, device=input.device)
    return aten.convolution.default(scaled, spread, None, stride, padding, [1, 1], True, extra, channels)


def _averaging_matrix(size: int, out_size: int, dtype: torch.dtype, device: Any) -> torch.Tensor:
    """[out, size]: row k averages torch's adaptive window k, [⌊k·size/out⌋,
    ⌈(k+1)·size/out⌉)."""
    rows = aten.arange.default(out_size, device=device)
    starts = aten.unsqueeze.default(aten.floor_divide.default(aten.mul.Tensor(rows, size), out_size), -1)
    ends = aten.unsqueeze.default(aten.floor_divide.default(
        aten.add.Tensor(aten.mul.Tensor(aten.add.Tensor(rows, 1), size), out_size - 1), out_size), -1)
    columns = aten.arange.default(size, device=device)
    inside = aten.logical_and.default(aten.ge.Tensor(columns, starts), aten.lt.Tensor(columns, ends))
    return aten.div.Tensor(aten._to_copy.default(inside, dtype=dtype), aten.sub.Tensor(ends, starts))


def adaptive_avg_pool2d_backward(grad_output: torch.Tensor, input: torch.Tensor) -> Any:
    """Adaptive average pooling is y = A_h·x·A_wᵀ with one averaging matrix
    per spatial dim, so the input's gradient is A_hᵀ·dy·A_w."""
    height, width = input.shape[-2], input.shape[-1]
    out_height, out_width = grad_output.shape[-2], grad_output.shape[-1]
    rows = _averaging_matrix(height, out_height, grad_output.dtype, input.device)
    columns = _averaging_matrix(width, out_width, grad_output.dtype, input.device)
    spread = aten.matmul.default(grad_output, columns)  # [..., oh, W]
    return aten.matmul.default(aten.transpose.int(rows, 0, 1), spread)  # [..., H, W]


def _attention_scores(query: torch.Tensor, key: torch.Tensor, is_causal: bool, attn_mask: Optional[torch.Tensor],
                      scale: Optional[float]) -> Any:
    """(scale·QKᵀ with the masks applied, the scale, key heads per query
    head's group): the scores [N, H, L, S] both passes of CPU flash
    attention compute, in the query's dtype. A causal mask is top-left
    aligned (query i sees keys 0..i), as torch's."""
    scale = scale if scale is not None else 1.0 / math.sqrt(query.shape[-1])
    group = query.shape[1] // key.shape[1]
    key = _repeat_heads(key, group)
    scores = aten.mul.Tensor(aten.matmul.default(query, aten.transpose.int(key, -2, -1)), scale)
    if is_causal:
        length, keys = query.shape[-2], key.shape[-2]
        rows = aten.unsqueeze.default(aten.arange.default(length, device=query.device), -1)
        allowed = aten.le.Tensor(aten.arange.default(keys, device=query.device), rows)
        scores = aten.where.self(allowed, scores, aten.full.default([], float("-inf"), dtype=scores.dtype))
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        scores = aten.where.self(attn_mask, scores, aten.full.default([], float("-inf"), dtype=scores.dtype))
    elif attn_mask is not None:
        scores = aten.add.Tensor(scores, attn_mask)
    return scores, scale, group


def _repeat_heads(x: torch.Tensor, group: int) -> torch.Tensor:
    """[N, Hkv, S, E] -> [N, Hkv·group, S, E], each head `group` times in a row."""
    if group == 1:
        return x
    n, heads, length, width = x.shape
    expanded = aten.expand.default(aten.unsqueeze.default(x, 2), [n, heads, group, length, width])
    return aten.reshape.default(expanded, [n, heads * group, length, width])


def _sum_groups(x: torch.Tensor, group: int) -> torch.Tensor:
    """[N, Hkv·group, S, E] -> [N, Hkv, S, E]: a shared key head's gradient
    is the sum over the query heads that read it."""
    if group == 1:
        return x
    n, heads, length, width = x.shape
    return aten.sum.dim_IntList(aten.reshape.default(x, [n, heads // group, group, length, width]), [2])


def _probabilities(scores: torch.Tensor, logsumexp: torch.Tensor) -> torch.Tensor:
    """exp(scores - lse); a query whose every key is masked (lse = -inf)
    gets probabilities of 0, an output of 0, as the flash kernel."""
    finite = aten.where.self(aten.isinf.default(logsumexp), aten.full.default([], 0.0, dtype=logsumexp.dtype),
                             logsumexp)
    return aten.exp.default(aten.sub.Tensor(scores, aten.unsqueeze.default(finite, -1)))


def flash_attention_forward(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, dropout_p: float = 0.0,
                            is_causal: bool = False, *, attn_mask: Optional[torch.Tensor] = None,
                            scale: Optional[float] = None) -> Any:
    """``_scaled_dot_product_flash_attention_for_cpu`` as softmax(QKᵀ)V, and
    the log-sum-exp of each query's scores [N, H, L] that its backward
    reads. The output is laid out as the kernel's ([N, L, H, E] memory,
    seen as [N, H, L, E]), which the views after it expect. Dropout draws
    random numbers: left to ATen."""
    if dropout_p != 0.0:
        return NotImplemented
    scores, _, group = _attention_scores(query, key, is_causal, attn_mask, scale)
    logsumexp = aten.logsumexp.default(scores, [-1])
    output = aten.matmul.default(_probabilities(scores, logsumexp), _repeat_heads(value, group))
    output = aten.clone.default(aten.permute.default(output, [0, 2, 1, 3]), memory_format=torch.contiguous_format)
    return aten.permute.default(output, [0, 2, 1, 3]), logsumexp


def flash_attention_backward(grad_out: torch.Tensor, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                             out: torch.Tensor, logsumexp: torch.Tensor, dropout_p: float, is_causal: bool, *,
                             attn_mask: Optional[torch.Tensor] = None, scale: Optional[float] = None) -> Any:
    """The gradients of flash attention for Q, K and V from the saved
    output and log-sum-exp: P = exp(S - lse), dV = PᵀdO, dS = P∘(dO·Vᵀ −
    rowsum(dO∘O)), dQ = dS·K·scale, dK = dSᵀ·Q·scale; a key/value head
    shared by a group of query heads (GQA) sums the group's."""
    if dropout_p != 0.0:
        return NotImplemented
    scores, scale, group = _attention_scores(query, key, is_causal, attn_mask, scale)
    probabilities = _probabilities(scores, logsumexp)
    grad_value = aten.matmul.default(aten.transpose.int(probabilities, -2, -1), grad_out)
    grad_probabilities = aten.matmul.default(grad_out, aten.transpose.int(_repeat_heads(value, group), -2, -1))
    delta = aten.sum.dim_IntList(aten.mul.Tensor(grad_out, out), [-1], True)
    grad_scores = aten.mul.Tensor(aten.mul.Tensor(probabilities, aten.sub.Tensor(grad_probabilities, delta)), scale)
    grad_query = aten.matmul.default(grad_scores, _repeat_heads(key, group))
    grad_key = aten.matmul.default(aten.transpose.int(grad_scores, -2, -1), query)
    return grad_query, _sum_groups(grad_key, group), _sum_groups(grad_value, group)


@functools.lru_cache(maxsize=1)
def training_decomposition_table() -> Dict[Any, Any]:
    from torch._decomp import decomposition_table as full

    table = dict(decomposition_table())
    for op in FROM_TORCH:
        table[op] = full[op]
    for op in (aten.native_layer_norm.default, aten.native_group_norm.default):
        table[op] = functools.partial(mixed_dtype_normalisation, full[op])
    table[aten.convolution_backward.default] = convolution_backward
    table[aten.avg_pool2d_backward.default] = avg_pool2d_backward
    table[aten._adaptive_avg_pool2d_backward.default] = adaptive_avg_pool2d_backward
    table[aten._scaled_dot_product_flash_attention_for_cpu.default] = flash_attention_forward
    table[aten._scaled_dot_product_flash_attention_for_cpu_backward.default] = flash_attention_backward
    return table
