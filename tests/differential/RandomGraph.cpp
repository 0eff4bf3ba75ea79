#include "RandomGraph.h"

#include <algorithm>
#include <random>
#include <vector>

#include <fmt/format.h>

namespace graphc::difftest {

namespace {

using Shape = std::vector<int64_t>;

struct Val {
  std::string name;
  Shape shape;
};

std::string shapeText(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

class Generator {
 public:
  Generator(uint64_t seed, const RandomGraphOptions& options)
      : rng_(seed), options_(options), dtype_(options.useF32 ? "f32" : "f64") {}

  std::string run() {
    const int params = pick(1, 3);
    params_ = params;
    const Shape base = {pick(1, 4), pick(1, 5)};
    std::string signature;
    for (int k = 0; k < params; ++k) {
      Shape s = base;
      if (chance(0.3))
        s = {base[1]};  // a broadcastable bias
      else if (chance(0.25))
        s = {pick(1, 3), base[0], base[1]};  // a batch
      Val v{fmt::format("p{}", k), s};
      signature += fmt::format("{}%{}: {}{}", k ? ", " : "", v.name, dtype_, shapeText(s));
      pool_.push_back(v);
    }
    const int ops = pick(options_.minOps, options_.maxOps);
    for (int k = 0; k < ops; ++k) step(body_, pool_, 1);
    // Return one to three values, the newest most likely.
    std::vector<Val> outs;
    const int count = pick(1, 3);
    for (int k = 0; k < count; ++k) outs.push_back(recent(pool_));
    // A result may update a parameter of its shape in place (each at most once).
    std::vector<bool> updated(static_cast<size_t>(params), false);
    std::string types, names;
    for (size_t k = 0; k < outs.size(); ++k) {
      types += fmt::format("{}{}{}", k ? ", " : "", dtype_, shapeText(outs[k].shape));
      names += fmt::format("{}%{}", k ? ", " : "", outs[k].name);
      if (!options_.inputUpdates || !chance(0.5)) continue;
      for (int p = 0; p < params; ++p)
        if (!updated[static_cast<size_t>(p)] && pool_[static_cast<size_t>(p)].shape == outs[k].shape) {
          updated[static_cast<size_t>(p)] = true;
          types += fmt::format(" updates %{}", pool_[static_cast<size_t>(p)].name);
          break;
        }
    }
    return fmt::format("graph @main({}) -> ({}) {{\n{}  return {}\n}}\n", signature, types, body_, names);
  }

 private:
  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  double number() { return std::round(std::normal_distribution<double>(0, 1)(rng_) * 100) / 100; }

  const Val& recent(const std::vector<Val>& pool) {
    // Biased towards the newest values, so graphs grow deep as well as wide.
    size_t n = pool.size();
    size_t back = std::min<size_t>(n - 1, static_cast<size_t>(std::geometric_distribution<int>(0.4)(rng_)));
    return pool[n - 1 - back];
  }

  std::string fresh() { return fmt::format("v{}", next_++); }

  std::string type(const Shape& s) const { return dtype_ + shapeText(s); }

  /// A value of the pool whose shape broadcasts against `s` (or none).
  const Val* partner(const std::vector<Val>& pool, const Shape& s) {
    std::vector<const Val*> fits;
    for (const Val& v : pool) {
      if (v.shape.size() > s.size()) continue;
      bool ok = true;
      for (size_t k = 0; k < v.shape.size(); ++k) {
        int64_t a = v.shape[v.shape.size() - 1 - k], b = s[s.size() - 1 - k];
        ok &= a == b || a == 1;
      }
      if (ok) fits.push_back(&v);
    }
    if (fits.empty()) return nullptr;
    return fits[static_cast<size_t>(pick(0, static_cast<int64_t>(fits.size()) - 1))];
  }

  std::string constantList(int64_t n) {
    std::vector<std::string> items;
    for (int64_t k = 0; k < n; ++k) items.push_back(fmt::format("{:.2f}", number()));
    return fmt::format("[{}]", fmt::join(items, ", "));
  }

  /// A constant [a, b, c] as nested lists.
  std::string constant3(int64_t a, int64_t b, int64_t c) {
    std::vector<std::string> outer;
    for (int64_t i = 0; i < a; ++i) {
      std::vector<std::string> rows;
      for (int64_t j = 0; j < b; ++j) rows.push_back(constantList(c));
      outer.push_back(fmt::format("[{}]", fmt::join(rows, ", ")));
    }
    return fmt::format("[{}]", fmt::join(outer, ", "));
  }

  /// Emits one statement (or a few) into `out`, adding its result to `pool`.
  void step(std::string& out, std::vector<Val>& pool, int depth) {
    const Val a = recent(pool);
    const std::string r = fresh();
    const std::string pad(static_cast<size_t>(depth) * 2, ' ');
    auto emit = [&](const std::string& line, Shape shape) {
      out += pad + line + "\n";
      pool.push_back({r, std::move(shape)});
    };
    const int64_t rank = static_cast<int64_t>(a.shape.size());
    switch (pick(0, 19)) {
      case 0:
      case 1: {
        static const char* unary[] = {"neg",     "abs",  "exp",  "sin", "cos",  "tanh",
                                      "sigmoid", "relu", "silu", "erf", "atan", "sign"};
        const std::string op = unary[pick(0, 11)];
        if (op == "exp") {
          // exp of a bounded argument: an unbounded one reaches 1e37, where
          // a later sin or cos turns last-bit differences between two equal
          // formulas (a decomposition, a fused kernel) into different values.
          out += pad + fmt::format("%{}_c = clamp(%{}) {{min = -10.0, max = 10.0}}\n", r, a.name);
          emit(fmt::format("%{} = exp(%{}_c)", r, r), a.shape);
          return;
        }
        emit(fmt::format("%{} = {}(%{})", r, op, a.name), a.shape);
        return;
      }
      case 2:
        emit(fmt::format("%{} = gelu(%{}){}", r, a.name, chance(0.5) ? " {approximate = \"tanh\"}" : ""), a.shape);
        return;
      case 3:
      case 4: {
        static const char* binary[] = {"add", "sub", "mul", "maximum", "minimum"};
        const char* op = binary[pick(0, 4)];
        if (const Val* b = partner(pool, a.shape); b && chance(0.7))
          emit(fmt::format("%{} = {}(%{}, %{})", r, op, a.name, b->name), a.shape);
        else
          emit(fmt::format("%{} = {}(%{}, {:.2f})", r, op, a.name, number()), a.shape);
        return;
      }
      case 5: {  // a safe division and square root
        out += pad + fmt::format("%{}_d = abs(%{})\n", r, a.name);
        out += pad + fmt::format("%{}_e = add(%{}_d, 1.0)\n", r, r);
        out += pad + fmt::format("%{}_s = sqrt(%{}_e)\n", r, r);
        emit(fmt::format("%{} = div(%{}, %{}_s)", r, a.name, r), a.shape);
        return;
      }
      case 6: {
        const Val* b = partner(pool, a.shape);
        std::string other = b ? "%" + b->name : "0.0";
        out += pad + fmt::format("%{}_c = gt(%{}, {})\n", r, a.name, other);
        emit(fmt::format("%{} = where(%{}_c, %{}, {})", r, r, a.name, other), a.shape);
        return;
      }
      case 7: {
        if (rank == 0) break;
        static const char* reduce[] = {"sum", "amax", "amin", "mean"};
        std::vector<int64_t> dims;
        for (int64_t k = 0; k < rank; ++k)
          if (chance(0.5)) dims.push_back(chance(0.5) ? k : k - rank);
        if (dims.empty()) dims.push_back(rank - 1);
        bool keep = chance(0.5);
        Shape s;
        for (int64_t k = 0; k < rank; ++k) {
          bool reduced = std::find(dims.begin(), dims.end(), k) != dims.end() ||
                         std::find(dims.begin(), dims.end(), k - rank) != dims.end();
          if (!reduced)
            s.push_back(a.shape[k]);
          else if (keep)
            s.push_back(1);
        }
        emit(fmt::format("%{} = {}(%{}) {{dims = [{}], keepdim = {}}}", r, reduce[pick(0, 3)], a.name,
                         fmt::join(dims, ", "), keep ? "true" : "false"),
             s);
        return;
      }
      case 8: {
        if (rank == 0) break;
        emit(fmt::format("%{} = {}(%{}) {{dim = {}}}", r, chance(0.5) ? "softmax" : "log_softmax", a.name,
                         pick(-rank, rank - 1)),
             a.shape);
        return;
      }
      case 9: {
        if (rank == 0) break;
        const int64_t c = a.shape.back();
        out += pad + fmt::format("%{}_w = constant() {{value = {}}} : {}\n", r, constantList(c), type({c}));
        if (chance(0.5)) {
          out += pad + fmt::format("%{}_b = constant() {{value = {}}} : {}\n", r, constantList(c), type({c}));
          emit(fmt::format("%{} = layer_norm(%{}, %{}_w, %{}_b)", r, a.name, r, r), a.shape);
        } else {
          emit(fmt::format("%{} = layer_norm(%{}, %{}_w) {{eps = 0.001}}", r, a.name, r), a.shape);
        }
        return;
      }
      case 10: {
        if (rank < 2) break;
        out += pad + fmt::format("%{}_t = transpose(%{}) {{dim0 = -1, dim1 = -2}}\n", r, a.name);
        Shape s = a.shape;
        s.back() = s[s.size() - 2];
        emit(fmt::format("%{} = matmul(%{}, %{}_t)", r, a.name, r), s);
        return;
      }
      case 11: {
        if (rank == 0) break;
        const int64_t in = a.shape.back(), outF = pick(1, 5);
        out += pad + fmt::format(
                         "%{}_w = constant() {{value = [{}]}} : {}\n", r,
                         [&] {
                           std::vector<std::string> rows;
                           for (int64_t k = 0; k < outF; ++k) rows.push_back(constantList(in));
                           return fmt::format("{}", fmt::join(rows, ", "));
                         }(),
                         type({outF, in}));
        out += pad + fmt::format("%{}_b = constant() {{value = {}}} : {}\n", r, constantList(outF), type({outF}));
        Shape s = a.shape;
        s.back() = outF;
        emit(fmt::format("%{} = linear(%{}, %{}_w, %{}_b)", r, a.name, r, r), s);
        return;
      }
      case 12: {  // shape ops
        if (rank == 0) break;
        Shape s = a.shape;
        switch (pick(0, 5)) {
          case 0: {
            int64_t d0 = pick(0, rank - 1), d1 = pick(0, rank - 1);
            std::swap(s[d0], s[d1]);
            emit(fmt::format("%{} = transpose(%{}) {{dim0 = {}, dim1 = {}}}", r, a.name, d0, d1), s);
            return;
          }
          case 1: emit(fmt::format("%{} = reshape(%{}) {{shape = [-1]}}", r, a.name), {numel(a.shape)}); return;
          case 2: {
            int64_t d = pick(0, rank);
            s.insert(s.begin() + d, 1);
            emit(fmt::format("%{} = unsqueeze(%{}) {{dim = {}}}", r, a.name, d), s);
            return;
          }
          case 3: {
            int64_t d = pick(0, rank - 1);
            int64_t start = pick(0, s[d] - 1);
            int64_t step = pick(1, 2);
            s[d] = (s[d] - start + step - 1) / step;
            emit(fmt::format("%{} = slice(%{}) {{dim = {}, start = {}, step = {}}}", r, a.name, d, start, step), s);
            return;
          }
          case 4: {
            int64_t d = pick(0, rank - 1);
            s[d] *= 2;
            // With another value of the shape when there is one: the buffer
            // plan writes distinct operands into the result's slices.
            std::string b = a.name;
            for (const Val& v : pool)
              if (v.shape == a.shape && v.name != a.name && chance(0.5)) b = v.name;
            emit(fmt::format("%{} = concat(%{}, %{}) {{dim = {}}}", r, a.name, b, d), s);
            return;
          }
          default: {
            Shape e = s;
            e.insert(e.begin(), pick(1, 3));
            emit(fmt::format("%{} = expand(%{}) {{shape = {}}}", r, a.name, shapeText(e)), e);
            return;
          }
        }
      }
      case 13: {
        if (depth > 1) break;  // conds nest one level
        out += pad + fmt::format("%{}_s = sum(%{})\n", r, a.name);
        out += pad + fmt::format("%{}_p = gt(%{}_s, {:.2f})\n", r, r, number());
        std::string param = fmt::format("%x: {}", type(a.shape));
        std::string branches;
        for (const char* label : {"then", "else"}) {
          std::vector<Val> inner = {{"x", a.shape}};
          std::string body;
          const int n = pick(1, 3);
          for (int k = 0; k < n; ++k) stepPointwise(body, inner, depth + 1);
          // Each branch returns a value of the operand's shape.
          const Val* ret = &inner.front();
          for (const Val& v : inner)
            if (v.shape == a.shape) ret = &v;
          branches += fmt::format("{}{}({}) {{\n{}{}  return %{}\n{}}}", branches.empty() ? " " : " ", label, param,
                                  body, pad, ret->name, pad);
        }
        emit(fmt::format("%{} = cond(%{}_p, %{}){}", r, r, a.name, branches), a.shape);
        return;
      }
      case 14: {  // indexing, with constant indices (negative ones included)
        if (rank == 0) break;
        const int64_t d = pick(0, rank - 1);
        auto indexIn = [&](int64_t size) { return std::to_string(pick(-size, size - 1)); };
        Shape s = a.shape;
        std::vector<std::string> items;
        if (chance(0.5)) {  // index_select with a 1-D or 2-D index
          Shape is = chance(0.7) ? Shape{pick(1, 4)} : Shape{pick(1, 3), pick(1, 3)};
          std::string list;
          for (int64_t k = 0; k < numel(is); ++k) items.push_back(indexIn(a.shape[d]));
          if (is.size() == 1) {
            list = fmt::format("[{}]", fmt::join(items, ", "));
          } else {
            std::vector<std::string> rows;
            for (int64_t k = 0; k < is[0]; ++k)
              rows.push_back(
                  fmt::format("[{}]", fmt::join(items.begin() + k * is[1], items.begin() + (k + 1) * is[1], ", ")));
            list = fmt::format("[{}]", fmt::join(rows, ", "));
          }
          out += pad + fmt::format("%{}_i = constant() {{value = {}}} : i64{}\n", r, list, shapeText(is));
          s.erase(s.begin() + d);
          s.insert(s.begin() + d, is.begin(), is.end());
          emit(fmt::format("%{} = index_select(%{}, %{}_i) {{dim = {}}}", r, a.name, r, d), s);
        } else {  // gather: indices of the input's rank, no larger than it
          for (int64_t k = 0; k < rank; ++k) s[k] = k == d ? pick(1, 4) : pick(1, a.shape[k]);
          std::vector<std::string> flat;
          for (int64_t k = 0; k < numel(s); ++k) flat.push_back(indexIn(a.shape[d]));
          // Nest the flat list by the shape, innermost dim first.
          for (int64_t k = rank; k-- > 1;) {
            std::vector<std::string> nested;
            for (size_t j = 0; j < flat.size(); j += static_cast<size_t>(s[k]))
              nested.push_back(
                  fmt::format("[{}]", fmt::join(flat.begin() + static_cast<std::ptrdiff_t>(j),
                                                flat.begin() + static_cast<std::ptrdiff_t>(j + s[k]), ", ")));
            flat = nested;
          }
          out += pad +
                 fmt::format("%{}_i = constant() {{value = [{}]}} : i32{}\n", r, fmt::join(flat, ", "), shapeText(s));
          emit(fmt::format("%{} = gather(%{}, %{}_i) {{dim = {}}}", r, a.name, r, d), s);
        }
        return;
      }
      case 15: {  // 1-D windows over [N, C, L]: conv, conv_transpose, pools
        if (rank != 3) break;
        const int64_t c = a.shape[1], len = a.shape[2];
        const int64_t k = pick(1, 3), stride = pick(1, 2), pad = pick(0, k / 2);
        switch (pick(0, 2)) {
          case 0: {
            const int64_t groups = c % 2 == 0 && chance(0.5) ? 2 : 1, outC = groups * pick(1, 2);
            if (len + 2 * pad < k) break;
            const int64_t o = (len + 2 * pad - k) / stride + 1;
            out += pad0(depth) + fmt::format("%{}_w = constant() {{value = {}}} : {}\n", r,
                                             constant3(outC, c / groups, k), type({outC, c / groups, k}));
            emit(fmt::format("%{} = conv(%{}, %{}_w) {{stride = [{}], padding = [{}, {}], groups = {}}}", r, a.name, r,
                             stride, pad, pad, groups),
                 {a.shape[0], outC, o});
            return;
          }
          case 1: {
            const int64_t outC = pick(1, 3);
            const int64_t o = (len - 1) * stride - 2 * pad + k;
            if (o < 1) break;
            out += pad0(depth) + fmt::format("%{}_w = constant() {{value = {}}} : {}\n", r, constant3(c, outC, k),
                                             type({c, outC, k}));
            emit(fmt::format("%{} = conv_transpose(%{}, %{}_w) {{stride = [{}], padding = [{}, {}]}}", r, a.name, r,
                             stride, pad, pad),
                 {a.shape[0], outC, o});
            return;
          }
          default: {
            const bool ceil = chance(0.5);
            int64_t span = len + 2 * pad - k;
            if (span < 0) break;
            int64_t o = (ceil ? (span + stride - 1) / stride : span / stride) + 1;
            if (ceil && (o - 1) * stride >= len + pad) --o;
            emit(fmt::format("%{} = {}(%{}) {{kernel = [{}], stride = [{}], padding = [{}, {}], ceil_mode = {}}}", r,
                             chance(0.5) ? "max_pool" : "avg_pool", a.name, k, stride, pad, pad, ceil),
                 {a.shape[0], c, o});
            return;
          }
        }
        break;
      }
      case 16: {  // scans and products along a dim
        if (rank == 0) break;
        const int64_t d = pick(0, rank - 1);
        if (chance(0.5)) {
          emit(fmt::format("%{} = cumsum(%{}) {{dim = {}, exclusive = {}, reverse = {}}}", r, a.name, d, chance(0.3),
                           chance(0.3)),
               a.shape);
        } else {
          Shape s = a.shape;
          s[d] = 1;
          emit(fmt::format("%{} = prod(%{}) {{dims = [{}], keepdim = true}}", r, a.name, d), s);
        }
        return;
      }
      case 17: {  // steps (floor, ceil, round, argmax) of a parameter: its values are exact on every backend
        const Val& p = pool[static_cast<size_t>(pick(0, params_ - 1))];
        const int64_t prank = static_cast<int64_t>(p.shape.size());
        if (chance(0.5) || prank == 0) {
          static const char* steps[] = {"floor", "ceil", "round"};
          out += pad0(depth) + fmt::format("%{}_x = mul(%{}, 2.5)\n", r, p.name);
          emit(fmt::format("%{} = {}(%{}_x)", r, steps[pick(0, 2)], r), p.shape);
        } else {
          const int64_t d = pick(0, prank - 1);
          Shape s = p.shape;
          s.erase(s.begin() + d);
          out += pad0(depth) +
                 fmt::format("%{}_i = {}(%{}) {{dim = {}}}\n", r, chance(0.5) ? "argmax" : "argmin", p.name, d);
          emit(fmt::format("%{} = cast(%{}_i) {{dtype = {}}}", r, r, dtype_), s);
        }
        return;
      }
      case 18: {  // normalisations over [N, C, ...]
        if (rank < 2) break;
        const int64_t c = a.shape[1];
        out += pad0(depth) + fmt::format("%{}_w = constant() {{value = {}}} : {}\n", r, constantList(c), type({c}));
        out += pad0(depth) + fmt::format("%{}_b = constant() {{value = {}}} : {}\n", r, constantList(c), type({c}));
        if (chance(0.5)) {
          out += pad0(depth) + fmt::format("%{}_v = full() {{value = 0.5}} : {}\n", r, type({c}));
          emit(fmt::format("%{} = batch_norm(%{}, %{}_b, %{}_v, %{}_w, %{}_b)", r, a.name, r, r, r, r), a.shape);
        } else {
          emit(fmt::format("%{} = group_norm(%{}, %{}_w, %{}_b) {{groups = {}}}", r, a.name, r, r,
                           c % 2 == 0 && chance(0.5) ? 2 : 1),
               a.shape);
        }
        return;
      }
      case 19: {  // computed indices: gather_nd, scatter_nd, resize, iota
        if (rank == 0) break;
        switch (pick(0, 3)) {
          case 0: {
            const int64_t n = pick(1, 3);
            std::vector<std::string> items;
            for (int64_t k = 0; k < n; ++k) items.push_back(fmt::format("[{}]", pick(-a.shape[0], a.shape[0] - 1)));
            out += pad0(depth) +
                   fmt::format("%{}_i = constant() {{value = [{}]}} : i64[{}, 1]\n", r, fmt::join(items, ", "), n);
            Shape s = a.shape;
            s[0] = n;
            emit(fmt::format("%{} = gather_nd(%{}, %{}_i)", r, a.name, r), s);
            return;
          }
          case 1: {
            Shape s = a.shape;
            s.back() = pick(1, 2 * s.back());
            const bool linear = chance(0.5);
            emit(fmt::format("%{} = resize(%{}) {{size = {}, mode = \"{}\", coordinates = \"{}\"}}", r, a.name,
                             shapeText(s), linear ? "linear" : "nearest", chance(0.5) ? "half_pixel" : "asymmetric"),
                 s);
            return;
          }
          case 2: {  // rows of `a` overwritten (or combined) with its negated leading rows; indices may repeat
            const int64_t n = pick(1, a.shape[0]);
            std::vector<std::string> items;
            for (int64_t k = 0; k < n; ++k) items.push_back(fmt::format("[{}]", pick(-a.shape[0], a.shape[0] - 1)));
            out += pad0(depth) +
                   fmt::format("%{}_i = constant() {{value = [{}]}} : i64[{}, 1]\n", r, fmt::join(items, ", "), n);
            out += pad0(depth) + fmt::format("%{}_u = slice(%{}) {{dim = 0, start = 0, end = {}}}\n", r, a.name, n);
            out += pad0(depth) + fmt::format("%{}_n = neg(%{}_u)\n", r, r);
            static const char* const kReductions[] = {"none", "add", "max", "min"};
            emit(fmt::format("%{} = scatter_nd(%{}, %{}_i, %{}_n) {{reduction = \"{}\"}}", r, a.name, r, r,
                             kReductions[pick(0, 3)]),
                 a.shape);
            return;
          }
          default: {
            const int64_t d = pick(0, rank - 1);
            out += pad0(depth) +
                   fmt::format("%{}_i = iota() {{dim = {}, start = 0.5, step = -0.25}} : {}\n", r, d, type(a.shape));
            emit(fmt::format("%{} = add(%{}, %{}_i)", r, a.name, r), a.shape);
            return;
          }
        }
      }
      default: break;
    }
    stepPointwise(out, pool, depth);  // the op did not fit `a`: fall back to a pointwise one
  }

  static std::string pad0(int depth) { return std::string(static_cast<size_t>(depth) * 2, ' '); }

  /// A pointwise statement only (cond branches use these).
  void stepPointwise(std::string& out, std::vector<Val>& pool, int depth) {
    const Val a = recent(pool);
    const std::string r = fresh();
    static const char* unary[] = {"neg", "tanh", "relu", "sigmoid", "abs"};
    static const char* binary[] = {"add", "mul", "sub", "maximum"};
    std::string line = chance(0.5) ? fmt::format("%{} = {}(%{})", r, unary[pick(0, 4)], a.name)
                                   : fmt::format("%{} = {}(%{}, {:.2f})", r, binary[pick(0, 3)], a.name, number());
    out += std::string(static_cast<size_t>(depth) * 2, ' ') + line + "\n";
    pool.push_back({r, a.shape});
  }

  std::mt19937_64 rng_;
  RandomGraphOptions options_;
  std::string dtype_;
  std::vector<Val> pool_;
  std::string body_;
  int next_ = 0;
  int params_ = 1;
};

}  // namespace

std::string randomGraph(uint64_t seed, const RandomGraphOptions& options) { return Generator(seed, options).run(); }

}  // namespace graphc::difftest
