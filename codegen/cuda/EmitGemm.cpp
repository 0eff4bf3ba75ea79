// The GEMM strategies: GemmSimt (128x128 tiles, 8x8 per thread, f32/f64)
// and GemmTensorCore (128x128x32 tiles with mma.sync m16n8k16 for
// f16/bf16), each with the kernel's pointwise epilogue.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "codegen/MxOperands.h"
#include "codegen/cuda/KernelWriter.h"
#include "codegen/cuda/Preamble.h"
#include "codegen/cuda/Syntax.h"
#include "codegen/kernel/Analysis.h"
#include "ir/Diagnostics.h"
#include "runtime/reference/ReferenceOps.h"

namespace graphc::codegen::cuda {

using ir::OpId;

KernelWriter::GemmDims KernelWriter::gemmDims() const {
  const Gemm& g = *k_.gemm;
  GemmDims d;
  const ir::Shape& out = k_.outer;
  const size_t ra = k_.inputs[static_cast<size_t>(g.a)].type.shape.size();
  const size_t rb = k_.inputs[static_cast<size_t>(g.b)].type.shape.size();
  if (g.transposeB) {  // linear: rows are all but the last output dim
    d.rows.assign(out.begin(), out.end() - 1);
    d.hasCol = true;
    d.aHasRows = true;
    d.bKContiguous = true;
    return d;
  }
  const size_t batch = out.size() - (ra > 1) - (rb > 1);
  d.batch.assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(batch));
  if (ra > 1) d.rows = {out[batch]};
  d.hasCol = rb > 1;
  d.aHasRows = ra > 1;
  d.bKContiguous = rb == 1;
  return d;
}

std::string KernelWriter::operandBase(const Buffer& b, const std::vector<IndexPtr>& idx, size_t batchRank) {
  std::vector<std::string> saved = vars_;
  for (size_t v = batchRank; v < vars_.size(); ++v) vars_[v] = "0ll";
  const std::string base = offset(b.type, idx);
  vars_ = std::move(saved);
  return base;
}

void KernelWriter::epilogue(const GemmDims& d, const std::string& row, const std::string& col, const std::string& acc) {
  open(fmt::format("if ({} < M && {} < N)", row, col));
  unravel(row, d.rows, d.batch.size(), "r");
  if (d.hasCol) {
    line("const i64 c{} = {};", k_.outer.size() - 1, col);
    vars_[k_.outer.size() - 1] = fmt::format("c{}", k_.outer.size() - 1);
  }
  accumulator_ = acc;
  stores(false);
  accumulator_.clear();
  close();
}

void KernelWriter::gemmPrologue(const GemmDims& d, std::string& aBase, std::string& bBase) {
  const Gemm& g = *k_.gemm;
  line("const i64 mTiles = (M + {0}) / {1}, nTiles = (N + {2}) / {3};", info_.tileM - 1, info_.tileM, info_.tileN - 1,
       info_.tileN);
  open("for (i64 bz = blockIdx.z; bz < batch; bz += gridDim.z)");
  unravel("bz", d.batch, 0, "b");
  aBase = fresh();
  bBase = fresh();
  line("const i64 {} = {};", aBase, operandBase(k_.inputs[static_cast<size_t>(g.a)], g.aIndex, d.batch.size()));
  line("const i64 {} = {};", bBase, operandBase(k_.inputs[static_cast<size_t>(g.b)], g.bIndex, d.batch.size()));
  open("for (i64 mt = blockIdx.y; mt < mTiles; mt += gridDim.y)");
  open("for (i64 nt = blockIdx.x; nt < nTiles; nt += gridDim.x)");
  line("const i64 m0 = mt * {}, n0 = nt * {};", info_.tileM, info_.tileN);
}

std::string KernelWriter::mxElement(const MxLayout& mx, const std::string& buffer, const std::string& row,
                                    const std::string& k) {
  const int64_t rowBytes = ir::mxRowBytes(mx.format, mx.cols);
  const std::string at = fmt::format("{} + {} * {}ll", buffer, row, rowBytes);
  if (!ir::mxHasScales(mx.format))
    return fmt::format("gc::{}(gc::mx_u16({}, {}))", mx.format == ir::MxFormat::F16 ? "f16_to_f32" : "bf16_to_f32", at,
                       k);
  return fmt::format("gc::mx_value({}, gc::mx_code({}, {}, {}), {}[{}ll + {} * {}ll + {} / {}])",
                     mxTableName(mx.format), at, ir::mxFormatInfo(mx.format).bits, k, buffer, mxScalesOffset(mx), row,
                     ir::mxRowBlocks(mx.cols), k, ir::kMxBlock);
}

void KernelWriter::gemmSimt() {
  const Gemm& g = *k_.gemm;
  const GemmDims d = gemmDims();
  const Buffer& a = k_.inputs[static_cast<size_t>(g.a)];
  const Buffer& b = k_.inputs[static_cast<size_t>(g.b)];
  const bool f64 = a.type.dtype == DType::F64;
  const std::string T = f64 ? "double" : "float";
  signature({"batch", "M", "N", "K"});
  line("__shared__ {} As[8][{}], Bs[8][{}];", T, info_.tileM + 4, info_.tileN + 4);
  line("const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;");
  line("const i64 aRow = {}, bCol = {}, bK = {};", d.aHasRows ? "K" : "0ll",
       d.bKContiguous ? (d.hasCol ? "K" : "0ll") : "1ll", d.bKContiguous ? "1ll" : "N");
  std::string aBase, bBase;
  gemmPrologue(d, aBase, bBase);
  line("{} acc[8][8];", T);
  line("#pragma unroll");
  line("for (int i = 0; i < 8; ++i)");
  line("  for (int j = 0; j < 8; ++j) acc[i][j] = 0;");
  open("for (i64 k0 = 0; k0 < K; k0 += 8)");
  open("for (int e = threadIdx.x; e < 8 * 128; e += 256)");
  line("const int r = e / 8, kk = e % 8;");
  line("const i64 row = m0 + r, k = k0 + kk;");
  line("As[kk][r] = (row < M && k < K) ? ({}){} : ({})0;", T,
       fromStorage(a.type.dtype, fmt::format("{}[{} + row * aRow + k]", a.name, aBase)), T);
  close();
  open("for (int e = threadIdx.x; e < 8 * 128; e += 256)");
  if (d.bKContiguous || b.mx)  // an MX weight is stored as rows along K
    line("const int c = e / 8, kk = e % 8;");
  else
    line("const int c = e % 128, kk = e / 128;");
  line("const i64 col = n0 + c, k = k0 + kk;");
  line("Bs[kk][c] = (col < N && k < K) ? ({}){} : ({})0;", T,
       b.mx ? mxElement(*b.mx, b.name, "col", "k")
            : fromStorage(b.type.dtype, fmt::format("{}[{} + col * bCol + k * bK]", b.name, bBase)),
       T);
  close();
  line("__syncthreads();");
  line("#pragma unroll");
  open("for (int kk = 0; kk < 8; ++kk)");
  line("{} ra[8], rb[8];", T);
  line("#pragma unroll");
  line("for (int i = 0; i < 8; ++i) {{ ra[i] = As[kk][ty + 16 * i]; rb[i] = Bs[kk][tx + 16 * i]; }}");
  line("#pragma unroll");
  line("for (int i = 0; i < 8; ++i)");
  line("  for (int j = 0; j < 8; ++j) acc[i][j] = fma(ra[i], rb[j], acc[i][j]);");
  close();
  line("__syncthreads();");
  close();
  line("#pragma unroll");
  open("for (int i = 0; i < 8; ++i)");
  line("#pragma unroll");
  open("for (int j = 0; j < 8; ++j)");
  line("const i64 row = m0 + ty + 16 * i, col = n0 + tx + 16 * j;");
  epilogue(d, "row", "col", "acc[i][j]");
  close();
  close();
  close();
  close();
  close();
  close();
}

void KernelWriter::gemmTensorCore() {
  const Gemm& g = *k_.gemm;
  const GemmDims d = gemmDims();
  const Buffer& a = k_.inputs[static_cast<size_t>(g.a)];
  const Buffer& b = k_.inputs[static_cast<size_t>(g.b)];
  const char* mma = a.type.dtype == DType::BF16 ? "gc::mma_bf16" : "gc::mma_f16";
  signature({"batch", "M", "N", "K"});
  line("__shared__ __align__(16) unsigned short As[128][40], Bs[128][40];");
  line("const int warp = threadIdx.x >> 5, g = (threadIdx.x & 31) >> 2, t = threadIdx.x & 3;");
  line("const int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;");
  line("const i64 aRow = {}, bCol = {}, bK = {};", d.aHasRows ? "K" : "0ll",
       d.bKContiguous ? (d.hasCol ? "K" : "0ll") : "1ll", d.bKContiguous ? "1ll" : "N");
  line("const bool aVec = K % 8 == 0 && (u64){} % 16 == 0;", a.name);
  line("const bool bVec = {} && K % 8 == 0 && (u64){} % 16 == 0;", d.bKContiguous ? "true" : "false", b.name);
  std::string aBase, bBase;
  gemmPrologue(d, aBase, bBase);
  line("float acc[4][4][4];");
  line("#pragma unroll");
  line("for (int i = 0; i < 64; ++i) (&acc[0][0][0])[i] = 0.0f;");
  // Software pipelining on the 16-byte paths: the next k-tile's global
  // loads are issued into registers before this tile's mma work, and
  // stored to shared memory at the top of the next iteration.
  line("uint4 nextA[2], nextB[2];");
  line("auto fetchA = [&](i64 k0) {{");
  line("  for (int q = 0; q < 2; ++q) {{");
  line("    const int e = threadIdx.x + q * 256, r = e >> 2, kq = (e & 3) * 8;");
  line("    const i64 row = m0 + r, k = k0 + kq;");
  line(
      "    nextA[q] = row < M && k < K ? *reinterpret_cast<const uint4*>({} + {} + row * aRow + k) : make_uint4(0, 0, "
      "0, 0);",
      a.name, aBase);
  line("  }}");
  line("}};");
  line("auto fetchB = [&](i64 k0) {{");
  line("  for (int q = 0; q < 2; ++q) {{");
  line("    const int e = threadIdx.x + q * 256, c = e >> 2, kq = (e & 3) * 8;");
  line("    const i64 col = n0 + c, k = k0 + kq;");
  line(
      "    nextB[q] = col < N && k < K ? *reinterpret_cast<const uint4*>({} + {} + col * bCol + k) : make_uint4(0, 0, "
      "0, 0);",
      b.name, bBase);
  line("  }}");
  line("}};");
  line("if (aVec) fetchA(0);");
  line("if (bVec) fetchB(0);");
  open("for (i64 k0 = 0; k0 < K; k0 += 32)");
  // A tile: 128 rows × 32 k.
  open("if (aVec)");
  line(
      "for (int q = 0; q < 2; ++q) {{ const int e = threadIdx.x + q * 256; *reinterpret_cast<uint4*>(&As[e >> 2][(e & "
      "3) * 8]) = nextA[q]; }}");
  close();
  open("else");
  open("for (int e = threadIdx.x; e < 128 * 32; e += 256)");
  line("const int r = e >> 5, kk = e & 31;");
  line("const i64 row = m0 + r, k = k0 + kk;");
  line("As[r][kk] = (row < M && k < K) ? {}[{} + row * aRow + k] : (unsigned short)0;", a.name, aBase);
  close();
  close();
  // B tile: 128 columns × 32 k.
  open("if (bVec)");
  line(
      "for (int q = 0; q < 2; ++q) {{ const int e = threadIdx.x + q * 256; *reinterpret_cast<uint4*>(&Bs[e >> 2][(e & "
      "3) * 8]) = nextB[q]; }}");
  close();
  open("else");
  open("for (int e = threadIdx.x; e < 128 * 32; e += 256)");
  if (d.bKContiguous)
    line("const int c = e >> 5, kk = e & 31;");
  else
    line("const int c = e & 127, kk = e >> 7;  // consecutive threads read consecutive columns");
  line("const i64 col = n0 + c, k = k0 + kk;");
  line("Bs[c][kk] = (col < N && k < K) ? {}[{} + col * bCol + k * bK] : (unsigned short)0;", b.name, bBase);
  close();
  close();
  line("__syncthreads();");
  open("if (k0 + 32 < K)");
  line("if (aVec) fetchA(k0 + 32);");
  line("if (bVec) fetchB(k0 + 32);");
  close();
  line("#pragma unroll");
  open("for (int ks = 0; ks < 32; ks += 16)");
  line("unsigned fa[4][4], fb[4][2];");
  line("#pragma unroll");
  open("for (int i = 0; i < 4; ++i)");
  line("const int r = wm + i * 16 + g;");
  line("fa[i][0] = *reinterpret_cast<const unsigned*>(&As[r][ks + 2 * t]);");
  line("fa[i][1] = *reinterpret_cast<const unsigned*>(&As[r + 8][ks + 2 * t]);");
  line("fa[i][2] = *reinterpret_cast<const unsigned*>(&As[r][ks + 2 * t + 8]);");
  line("fa[i][3] = *reinterpret_cast<const unsigned*>(&As[r + 8][ks + 2 * t + 8]);");
  line("const int c = wn + i * 8 + g;");
  line("fb[i][0] = *reinterpret_cast<const unsigned*>(&Bs[c][ks + 2 * t]);");
  line("fb[i][1] = *reinterpret_cast<const unsigned*>(&Bs[c][ks + 2 * t + 8]);");
  close();
  line("#pragma unroll");
  line("for (int i = 0; i < 4; ++i)");
  line("  for (int j = 0; j < 4; ++j) {}(acc[i][j], fa[i], fb[j]);", mma);
  close();
  line("__syncthreads();");
  close();
  // The epilogue, from the accumulator registers.
  line("#pragma unroll");
  open("for (int i = 0; i < 4; ++i)");
  line("#pragma unroll");
  open("for (int j = 0; j < 4; ++j)");
  line("#pragma unroll");
  open("for (int c = 0; c < 4; ++c)");
  line("const i64 row = m0 + wm + i * 16 + g + (c >> 1) * 8, col = n0 + wn + j * 8 + 2 * t + (c & 1);");
  epilogue(d, "row", "col", "acc[i][j][c]");
  close();
  close();
  close();
  close();
  close();
  close();
  close();
}

}  // namespace graphc::codegen::cuda
