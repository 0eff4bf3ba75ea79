// fuse: groups ops into kernels and rewrites each group as one `fused` op
// whose body is a region of the original ops, named after what it holds
// (`k0_linear_add_relu`). Modelled on Inductor's scheduler and XLA's
// priority fusion, greedily:
//
//  1. Cheap producers are recomputed rather than shared: a pointwise op that
//     reads only region parameters and constants, used by several ops, is
//     cloned for each user whose result has no more elements than it has,
//     so every such consumer's kernel can absorb it at one op per element
//     it already reads. A user that broadcasts it to more elements (where
//     recomputing would multiply the work) reads it materialised.
//  2. Every op that becomes kernel code starts as its own group: pointwise
//     ops, iota, index-only shape ops (reshape, permute, transpose, expand,
//     slice, squeeze, unsqueeze) and the indexing ops (index_select,
//     gather, gather_nd, resize: a load at an index the kernel computes or
//     reads) as "pointwise"; sum/mean/amax/amin/prod over trailing dims
//     (and softmax, log_softmax, layer_norm when decompose left them) as
//     "reduction"; matmul and linear as "matmul_epilogue"; the window ops
//     (conv, conv_transpose, max_pool, avg_pool, cumsum) as "window";
//     concat and other reductions as kernels of their own. Constants, full,
//     cond, eigh and fused ops never join a group; scalar constants are
//     copied into the bodies that use them.
//  3. Vertical fusion: in program order, each op's group merges with the
//     group of each operand's producer when legal:
//       - pointwise into pointwise;
//       - pointwise consumers of a matmul become its epilogue (bias add,
//         activation, residual add), never the other way round (no
//         prologues), and a matmul group holds one matmul;
//       - a window group holds one window op; pointwise consumers of its
//         result's shape become its epilogue (conv + bias + folded batch
//         norm + relu + residual add is one kernel), and pointwise
//         producers its prologue for pools and cumsum, which read each
//         input element a few times (a convolution would recompute it for
//         every output channel, so it takes none); every result it
//         exports has the window op's shape;
//       - a row reduction group takes pointwise producers and consumers and
//         other reductions over the same rows: every member's element count
//         is the group's full count F or its row count R (softmax and
//         layer_norm each become one kernel), and a row value is read only
//         by full-shape members (kept-1 form) or row members of its form;
//       - no index map (shape op) over a value computed from the group's
//         matmul or reductions: those exist only at the loop's element;
//       - no cycle through a third group; at most kMaxKernelNodes ops;
//       - for pointwise and matmul groups, all results the group exports
//         have one element count (one iteration space).
//  4. Horizontal (multi-output) fusion: pointwise groups that read a common
//     value and export equal element counts merge (an Adagrad step updating
//     parameter and state is one kernel with two results).
//  5. Each group becomes a fused op at the place of its last member; its
//     parameters are the values it reads from outside, its results the
//     values used outside or returned. Nodes are then re-sorted
//     topologically. cond branches are fused inside, separately.
//
// Every fused op, one from the input included, is then named k<N>_<ops>
// from its body (so no input identifier reaches generated source).
//
// Changed: some group was formed, or a kernel was renamed.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "ir/Builder.h"
#include "ir/KernelKind.h"
#include "ir/ShapeRules.h"
#include "passes/Passes.h"
#include "passes/RewriteUtils.h"
#include "runtime/reference/Constants.h"

namespace graphc::passes {

namespace {

using ir::OpId;

constexpr size_t kMaxKernelNodes = 64;

/// An element count: a constant times symbolic sizes (sorted).
struct Count {
  int64_t constant = 1;
  std::vector<std::string> symbols;
  bool operator==(const Count&) const = default;
};

Count countOf(const ir::TensorType& t) {
  Count c;
  for (const ir::Dim& d : t.shape) {
    if (d.isStatic())
      c.constant *= d.size;
    else
      c.symbols.push_back(d.symbol);
  }
  std::sort(c.symbols.begin(), c.symbols.end());
  return c;
}

enum class Kind { Pointwise, Reduction, Matmul, Window, Single, None };

bool isIndexOnly(OpId op) {
  return op == OpId::Reshape || op == OpId::Permute || op == OpId::Transpose || op == OpId::Expand ||
         op == OpId::Slice || op == OpId::Squeeze || op == OpId::Unsqueeze;
}

/// A sum/mean/amax/amin/prod whose reduced dims are the trailing ones.
bool isRowReduction(const ir::Node& n) {
  if (n.op != OpId::Sum && n.op != OpId::Mean && n.op != OpId::Amax && n.op != OpId::Amin && n.op != OpId::Prod)
    return false;
  const int64_t rank = n.operands[0]->type.rank();
  const std::vector<int64_t> dims = ir::rules::reducedAxes(n.attrs, rank);
  return dims.empty() || *std::min_element(dims.begin(), dims.end()) == rank - static_cast<int64_t>(dims.size());
}

/// index_select, gather, gather_nd and resize: each element computes or
/// loads the index it reads the data at.
bool isIndexing(OpId op) {
  return op == OpId::IndexSelect || op == OpId::Gather || op == OpId::GatherNd || op == OpId::Resize;
}

/// conv, conv_transpose, max_pool, avg_pool, cumsum: a reduction over a
/// window for each output element.
bool isWindow(OpId op) {
  return op == OpId::Conv || op == OpId::ConvTranspose || op == OpId::MaxPool || op == OpId::AvgPool ||
         op == OpId::Cumsum;
}

/// Whether a window op may compute its input in the kernel (a prologue): a
/// pool or cumsum reads each input element a few times, where a
/// convolution would recompute it for every output channel.
bool takesPrologue(OpId op) { return op == OpId::MaxPool || op == OpId::AvgPool || op == OpId::Cumsum; }

Kind kindOf(const ir::Node& n) {
  const ir::OpInfo& info = n.info();
  if (info.isPointwise() || isIndexOnly(n.op) || isIndexing(n.op) || n.op == OpId::Iota) return Kind::Pointwise;
  if (isRowReduction(n)) return Kind::Reduction;
  if (n.op == OpId::Matmul || n.op == OpId::Linear) return Kind::Matmul;
  if (isWindow(n.op)) return Kind::Window;
  if (n.op == OpId::Softmax || n.op == OpId::LogSoftmax || n.op == OpId::LayerNorm || n.op == OpId::Concat ||
      info.category == ir::OpCategory::Reduction)
    return Kind::Single;
  return Kind::None;  // constants, full, cond, eigh, fused
}

bool isScalarConstant(const ir::Value* v) {
  const ir::Node* n = v->definingNode();
  return n && (n->op == OpId::Constant || n->op == OpId::Full) && v->type.rank() == 0;
}

struct Group {
  std::vector<ir::Node*> members;  // in program order once sorted
  Kind kind = Kind::Pointwise;
  bool hasMatmul = false;
  const ir::Node* window = nullptr;  // Window groups: their window op
  std::optional<Count> full, rows;   // reduction groups: element counts per element and per row
  size_t last = 0;                   // the position of its last member
  bool alive = true;
};

class Fuser {
 public:
  explicit Fuser(ir::Region& r) : region_(r) {}

  bool run() {
    bool changed = false;
    for (const auto& n : region_.nodes())
      if (n->op == OpId::Cond)
        for (const auto& branch : n->regions()) changed |= Fuser(*branch).run();
    indexUsers();
    recomputeCheapProducers();
    indexUsers();  // step 1 redirected uses to the copies
    formGroups();
    fuseVertically();
    fuseHorizontally();
    changed |= materialize();
    return changed;
  }

 private:
  // ---- step 1 ----

  void recomputeCheapProducers() {
    for (size_t pos = 0; pos < region_.nodes().size(); ++pos) {
      ir::Node& p = *region_.nodes()[pos];
      if (!p.info().isPointwise() || p.numResults() != 1) continue;
      bool leaf = std::all_of(p.operands.begin(), p.operands.end(), [](const ir::Value* v) {
        const ir::Node* d = v->definingNode();
        return !d || d->op == OpId::Constant || d->op == OpId::Full;
      });
      if (!leaf) continue;
      const std::vector<ir::Node*> users = usersOf(p.result());
      bool returned = std::count(region_.returns.begin(), region_.returns.end(), p.result()) > 0;
      for (size_t k = returned ? 0 : 1; k < users.size(); ++k) {
        if (kindOf(*users[k]) == Kind::None || !atMostAsLarge(users[k]->result()->type, p.result()->type)) continue;
        ir::Node* copy = insertNode(region_, ++pos, p.op, p.operands, p.attrs, {p.result()->type}, p.loc);
        for (ir::Value*& v : users[k]->operands)
          if (v == p.result()) v = copy->result();
      }
    }
  }

  /// Whether `a` has at most as many elements as `b` for every value of the
  /// symbols (equal counts, or both static).
  static bool atMostAsLarge(const ir::TensorType& a, const ir::TensorType& b) {
    const Count ca = countOf(a), cb = countOf(b);
    if (ca == cb) return true;
    return ca.symbols.empty() && cb.symbols.empty() && ca.constant <= cb.constant;
  }

  /// The users of every value and the position of every node, so that the
  /// legality checks below cost what they inspect, not the graph's size.
  void indexUsers() {
    users_.clear();
    position_.clear();
    for (size_t k = 0; k < region_.nodes().size(); ++k) {
      ir::Node* n = region_.nodes()[k].get();
      position_[n] = k;
      for (const ir::Value* v : n->operands) {
        std::vector<ir::Node*>& users = users_[v];
        if (users.empty() || users.back() != n) users.push_back(n);
      }
    }
  }

  const std::vector<ir::Node*>& usersOf(const ir::Value* v) const {
    static const std::vector<ir::Node*> none;
    auto it = users_.find(v);
    return it == users_.end() ? none : it->second;
  }

  // ---- step 2 ----

  void formGroups() {
    for (const auto& n : region_.nodes()) {
      Kind k = kindOf(*n);
      if (k == Kind::None) continue;
      Group g;
      g.members = {n.get()};
      g.kind = k;
      g.hasMatmul = k == Kind::Matmul;
      if (k == Kind::Window) g.window = n.get();
      if (k == Kind::Reduction) {
        g.full = countOf(n->operands[0]->type);
        g.rows = countOf(n->result()->type);
      }
      g.last = position_.at(n.get());
      groupOf_[n.get()] = groups_.size();
      groups_.push_back(std::move(g));
    }
  }

  // ---- legality ----

  /// The values a set of members produces that something outside reads.
  std::vector<const ir::Value*> exports(const std::vector<ir::Node*>& members) const {
    std::unordered_set<const ir::Node*> inside(members.begin(), members.end());
    std::vector<const ir::Value*> out;
    for (const ir::Node* m : members)
      for (const auto& v : m->results()) {
        const std::vector<ir::Node*>& users = usersOf(v.get());
        bool used = std::count(region_.returns.begin(), region_.returns.end(), v.get()) > 0 ||
                    std::any_of(users.begin(), users.end(), [&](const ir::Node* u) { return !inside.count(u); });
        if (used) out.push_back(v.get());
      }
    return out;
  }

  /// Whether some path leads from group a to group b through a third group
  /// (merging them would then make a cycle). Edges run forward in program
  /// order, so the search never looks past b's last member.
  bool pathThroughOther(size_t a, size_t b) const {
    std::vector<size_t> work = {a};
    std::set<size_t> seen = {a};
    while (!work.empty()) {
      size_t g = work.back();
      work.pop_back();
      for (const ir::Node* m : groups_[g].members)
        for (const auto& v : m->results())
          for (ir::Node* user : usersOf(v.get())) {
            if (position_.at(user) > groups_[b].last) continue;
            auto it = groupOf_.find(user);
            // A user outside every group still forwards the path.
            size_t next = it == groupOf_.end() ? SIZE_MAX : it->second;
            if (next == b) {
              if (g != a) return true;
              continue;
            }
            if (next == SIZE_MAX) {
              if (forwardsTo(user, b, seen)) return true;
              continue;
            }
            if (seen.insert(next).second) work.push_back(next);
          }
    }
    return false;
  }

  /// Whether an ungrouped node's results reach group b.
  bool forwardsTo(const ir::Node* n, size_t b, std::set<size_t>& seen) const {
    for (const auto& v : n->results())
      for (ir::Node* user : usersOf(v.get())) {
        if (position_.at(user) > groups_[b].last) continue;
        auto it = groupOf_.find(user);
        if (it != groupOf_.end()) {
          if (it->second == b) return true;
          if (seen.insert(it->second).second && pathThroughOther(it->second, b)) return true;
        } else if (forwardsTo(user, b, seen)) {
          return true;
        }
      }
    return false;
  }

  bool legal(size_t a, size_t b, bool vertical) const {
    const Group& ga = groups_[a];
    const Group& gb = groups_[b];
    if (ga.members.size() + gb.members.size() > kMaxKernelNodes) return false;
    if (ga.kind == Kind::Single || gb.kind == Kind::Single) return false;
    if (vertical) {
      // a produces for b. Into a matmul kernel only through its epilogue:
      // no prologue on the GEMM's operands, and one matmul per kernel.
      if (gb.kind == Kind::Matmul && (ga.hasMatmul || feedsMatmul(ga, gb))) return false;
      if (ga.kind == Kind::Matmul && gb.kind == Kind::Reduction) return false;
      // A window kernel: one window op, pointwise work after it (its
      // epilogue) and, for pools and cumsum, before it (a prologue).
      if (ga.kind == Kind::Window && gb.kind != Kind::Pointwise) return false;
      if (gb.kind == Kind::Window && (ga.kind != Kind::Pointwise || !takesPrologue(gb.window->op))) return false;
    } else if (ga.kind != Kind::Pointwise || gb.kind != Kind::Pointwise) {
      return false;
    }
    std::vector<ir::Node*> merged = ga.members;
    merged.insert(merged.end(), gb.members.begin(), gb.members.end());
    if (!loopsAlign(merged)) return false;
    const bool reduction = ga.kind == Kind::Reduction || gb.kind == Kind::Reduction;
    if (reduction) {
      const Group& r = ga.kind == Kind::Reduction ? ga : gb;
      const Group& other = ga.kind == Kind::Reduction ? gb : ga;
      if (other.kind == Kind::Matmul) return false;
      if (other.kind == Kind::Reduction && (other.full != r.full || other.rows != r.rows)) return false;
      for (const ir::Node* m : merged)
        for (const auto& v : m->results()) {
          Count c = countOf(v->type);
          if (c != *r.full && c != *r.rows) return false;
        }
    } else {
      std::vector<const ir::Value*> out = exports(merged);
      for (const ir::Value* v : out)
        if (countOf(v->type) != countOf(out.front()->type)) return false;
      // A window kernel's loops are its window op's output: every result is stored there.
      if (const ir::Node* window = ga.window ? ga.window : gb.window)
        for (const ir::Value* v : out)
          if (v->type.shape != window->result()->type.shape) return false;
    }
    return !pathThroughOther(a, b) && !pathThroughOther(b, a);
  }

  /// Whether a member of `producer` computes an operand of `consumer`'s matmul.
  static bool feedsMatmul(const Group& producer, const Group& consumer) {
    for (const ir::Node* m : consumer.members)
      if (m->op == OpId::Matmul || m->op == OpId::Linear)
        for (const ir::Value* v : m->operands)
          if (std::find(producer.members.begin(), producer.members.end(), v->definingNode()) != producer.members.end())
            return true;
    return false;
  }

  /// Shapes that let one loop nest compute the whole group (what the kernel
  /// IR lowering relies on): in a reduction group every member has the
  /// first reduction's input shape, or its row shape (reduced dims dropped,
  /// or kept as 1); full-shape members read row values only in the kept-1
  /// form, so broadcasting follows the rows. In a matmul group every
  /// epilogue member has the matmul's result shape. In both, no index map
  /// reads a value computed from the matmul or a reduction.
  static bool loopsAlign(const std::vector<ir::Node*>& members) {
    const ir::Node* reduction = nullptr;
    const ir::Node* matmul = nullptr;
    const ir::Node* window = nullptr;
    for (const ir::Node* m : members) {
      if (!reduction && isRowReduction(*m)) reduction = m;
      if (!matmul && (m->op == OpId::Matmul || m->op == OpId::Linear)) matmul = m;
      if (!window && isWindow(m->op)) window = m;
    }
    // Matmul and reduction results exist only for the element (or row) the
    // loop is at, in registers: an index map (transpose, slice, ...) of a
    // value computed from one would need another element's or row's.
    std::unordered_set<const ir::Value*> accumulated;
    for (const ir::Node* m : members)
      if (m == matmul || m == window || isRowReduction(*m)) accumulated.insert(m->result());
    for (bool grew = true; grew;) {
      grew = false;
      for (const ir::Node* m : members)
        if (!accumulated.count(m->result()) && std::any_of(m->operands.begin(), m->operands.end(),
                                                           [&](const ir::Value* v) { return accumulated.count(v); }))
          grew = accumulated.insert(m->result()).second;
    }
    for (const ir::Node* m : members) {
      if (isIndexOnly(m->op) && accumulated.count(m->operands[0])) return false;
      if (isIndexing(m->op) && std::any_of(m->operands.begin(), m->operands.end(),
                                           [&](const ir::Value* v) { return accumulated.count(v) > 0; }))
        return false;
    }
    if (window) {
      // What follows the window op (its epilogue) has its result's shape;
      // what precedes it (a prologue) is evaluated at the window's reads.
      for (const ir::Node* m : members)
        if (m != window && accumulated.count(m->result()) && m->result()->type.shape != window->result()->type.shape)
          return false;
      return true;
    }
    if (matmul) {
      for (const ir::Node* m : members)
        if (m != matmul && m->result()->type.shape != matmul->result()->type.shape) return false;
      return true;
    }
    if (!reduction) return true;
    const ir::Shape& full = reduction->operands[0]->type.shape;
    const int64_t k = static_cast<int64_t>(full.size()) - reducedRank(*reduction);
    ir::Shape kept(full.begin(), full.begin() + k), ones = kept;
    for (size_t d = static_cast<size_t>(k); d < full.size(); ++d) ones.push_back(ir::Dim::of(1));
    std::unordered_set<const ir::Value*> inside;
    for (const ir::Node* m : members) inside.insert(m->result());
    for (const ir::Node* m : members) {
      const ir::Shape& s = m->result()->type.shape;
      if (s != full && s != kept && s != ones) return false;
      if (isRowReduction(*m)) {
        if (m->operands[0]->type.shape != full || reducedRank(*m) != reducedRank(*reduction)) return false;
        continue;
      }
      // A full-shape member reads row values in the kept-1 form; a row-shape
      // member reads a row value of its own form only (broadcasting [R] with
      // [R, 1] would pair row r with dim 1, not row r).
      for (const ir::Value* v : m->operands) {
        if (!inside.count(v) || v->type.shape == s) continue;
        if (s == full ? v->type.shape != ones : accumulated.count(v) != 0) return false;
      }
    }
    return true;
  }

  static int64_t reducedRank(const ir::Node& n) {
    return static_cast<int64_t>(ir::rules::reducedAxes(n.attrs, n.operands[0]->type.rank()).size());
  }

  void merge(size_t a, size_t b) {
    Group& ga = groups_[a];
    Group& gb = groups_[b];
    for (ir::Node* m : gb.members) groupOf_[m] = a;
    ga.members.insert(ga.members.end(), gb.members.begin(), gb.members.end());
    if (gb.kind == Kind::Reduction) {
      ga.full = gb.full;
      ga.rows = gb.rows;
    }
    if (ga.kind == Kind::Pointwise) ga.kind = gb.kind;
    ga.hasMatmul |= gb.hasMatmul;
    if (!ga.window) ga.window = gb.window;
    ga.last = std::max(ga.last, gb.last);
    gb.alive = false;
    gb.members.clear();
  }

  // ---- steps 3 and 4 ----

  void fuseVertically() {
    for (const auto& n : region_.nodes()) {
      auto consumer = groupOf_.find(n.get());
      if (consumer == groupOf_.end()) continue;
      for (const ir::Value* v : n->operands) {
        const ir::Node* p = v->definingNode();
        if (!p) continue;
        auto producer = groupOf_.find(p);
        if (producer == groupOf_.end()) continue;
        size_t a = producer->second, b = groupOf_.at(n.get());
        if (a != b && legal(a, b, true)) merge(a, b);
      }
    }
  }

  /// For each group a in order, the later groups that read a value a reads
  /// are tried in order; a merge adds the merged group's readers to the
  /// candidates still ahead.
  void fuseHorizontally() {
    std::unordered_map<const ir::Value*, std::vector<size_t>> readers;
    for (size_t g = 0; g < groups_.size(); ++g)
      if (groups_[g].alive && groups_[g].kind == Kind::Pointwise)
        for (const ir::Value* v : valuesRead(groups_[g])) readers[v].push_back(g);
    for (size_t a = 0; a < groups_.size(); ++a) {
      if (!groups_[a].alive || groups_[a].kind != Kind::Pointwise) continue;
      std::set<size_t> candidates;
      auto addReadersOf = [&](const Group& g, size_t after) {
        for (const ir::Value* v : valuesRead(g))
          for (size_t c : readers[v])
            if (c > after) candidates.insert(c);
      };
      addReadersOf(groups_[a], a);
      while (!candidates.empty()) {
        const size_t b = *candidates.begin();
        candidates.erase(candidates.begin());
        if (!groups_[b].alive || groups_[b].kind != Kind::Pointwise || !groups_[a].alive ||
            groups_[a].kind != Kind::Pointwise || !legal(a, b, false))
          continue;
        addReadersOf(groups_[b], b);
        merge(a, b);
      }
    }
  }

  /// The values a group's members read, scalar constants aside (sharing
  /// one of those is no reason to fuse).
  static std::unordered_set<const ir::Value*> valuesRead(const Group& g) {
    std::unordered_set<const ir::Value*> read;
    for (const ir::Node* m : g.members)
      for (const ir::Value* v : m->operands)
        if (!isScalarConstant(v)) read.insert(v);
    return read;
  }

  // ---- step 5 ----

  /// The kernel a group becomes (its `kind` attribute).
  static ir::KernelKind kernelKind(Kind k) {
    switch (k) {
      case Kind::Reduction:
      case Kind::Window: return ir::KernelKind::Reduction;
      case Kind::Matmul: return ir::KernelKind::MatmulEpilogue;
      default: return ir::KernelKind::Pointwise;
    }
  }

  bool materialize() {
    std::unordered_map<const ir::Node*, size_t> position;
    for (size_t k = 0; k < region_.nodes().size(); ++k) position[region_.nodes()[k].get()] = k;
    bool changed = false;
    std::unordered_set<const ir::Node*> fusedAway;
    std::vector<std::pair<size_t, std::unique_ptr<ir::Node>>> kernels;  // insert position, node
    for (Group& g : groups_) {
      if (!g.alive || g.members.empty()) continue;
      std::sort(g.members.begin(), g.members.end(),
                [&](const ir::Node* x, const ir::Node* y) { return position.at(x) < position.at(y); });
      Kind kind =
          g.kind == Kind::Single ? (g.members[0]->op == OpId::Concat ? Kind::Pointwise : Kind::Reduction) : g.kind;
      ir::AttrMap attrs;
      attrs.set("kind", ir::Attribute::ofString(std::string(ir::kernelKindName(kernelKind(kind)))));
      attrs.set("name", ir::Attribute::ofString("k"));  // numberKernels names it
      std::unordered_set<const ir::Node*> inside(g.members.begin(), g.members.end());
      // Parameters: values read from outside, scalar constants excepted.
      std::vector<ir::Value*> inputs;
      for (const ir::Node* m : g.members)
        for (ir::Value* v : m->operands)
          if ((!v->definingNode() || !inside.count(v->definingNode())) && !isScalarConstant(v) &&
              std::find(inputs.begin(), inputs.end(), v) == inputs.end())
            inputs.push_back(v);
      std::vector<const ir::Value*> outputs = exports(g.members);
      auto fused = std::make_unique<ir::Node>(OpId::Fused, inputs, attrs, g.members.back()->loc);
      ir::Region& body = fused->addRegion("body");
      std::unordered_map<const ir::Value*, ir::Value*> map;
      for (ir::Value* v : inputs) map[v] = body.addParam(v->type, v->name, v->loc);
      for (const ir::Node* m : g.members) {
        for (ir::Value* v : m->operands)
          if (!map.count(v)) {  // a scalar constant: copied into the body
            const ir::Node* c = v->definingNode();
            ir::Node* copy =
                body.append(std::make_unique<ir::Node>(c->op, std::vector<ir::Value*>{}, c->attrs, c->loc));
            map[v] = copy->addResult(v->type, v->name, v->loc);
          }
        std::vector<ir::Value*> operands;
        for (ir::Value* v : m->operands) operands.push_back(map.at(v));
        ir::Node* copy = body.append(std::make_unique<ir::Node>(m->op, operands, m->attrs, m->loc));
        for (const auto& r : m->results()) map[r.get()] = copy->addResult(r->type, r->name, r->loc);
      }
      for (const ir::Value* v : outputs) body.returns.push_back(map.at(v));
      body.returnLoc = g.members.back()->loc;
      for (const ir::Value* v : outputs) fused->addResult(v->type, v->name, v->loc);
      // Uses outside the group now read the fused op's results.
      for (size_t k = 0; k < outputs.size(); ++k) replaced_[outputs[k]] = fused->result(k);
      for (const ir::Node* m : g.members) fusedAway.insert(m);
      kernels.emplace_back(position.at(g.members.back()), std::move(fused));
      changed = true;
    }
    if (!changed) return false;
    // Each kernel goes in after its last member, in one merge of the node
    // list (an insert per kernel shifts the rest: quadratic in graph size).
    std::sort(kernels.begin(), kernels.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<std::unique_ptr<ir::Node>> nodes = region_.takeNodes();
    size_t nextKernel = 0;
    for (size_t k = 0; k < nodes.size(); ++k) {
      region_.append(std::move(nodes[k]));
      for (; nextKernel < kernels.size() && kernels[nextKernel].first == k; ++nextKernel)
        region_.append(std::move(kernels[nextKernel].second));
    }
    auto redirect = [&](ir::Value*& v) {
      if (auto it = replaced_.find(v); it != replaced_.end()) v = it->second;
    };
    for (const auto& n : region_.nodes())
      if (!fusedAway.count(n.get()))
        for (ir::Value*& v : n->operands) redirect(v);
    for (ir::Value*& v : region_.returns) redirect(v);
    region_.removeIf([&](const ir::Node& n) { return fusedAway.count(&n) > 0; });
    removeDeadNodes(region_);  // scalar constants now copied into bodies
    region_.sortTopologically();
    return true;
  }

  ir::Region& region_;
  std::vector<Group> groups_;
  std::unordered_map<const ir::Node*, size_t> groupOf_;
  std::unordered_map<const ir::Value*, std::vector<ir::Node*>> users_;
  std::unordered_map<const ir::Node*, size_t> position_;
  std::unordered_map<const ir::Value*, ir::Value*> replaced_;
};

}  // namespace

PassResult FusePass::run(ir::Graph& g, ir::DiagnosticEngine&) {
  bool changed = Fuser(g.body).run();
  int next = 0;
  changed |= numberKernels(g.body, next);
  return {changed, false};
}

}  // namespace graphc::passes
