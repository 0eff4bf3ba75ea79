// The memory plan of a graph (computed by the memory-plan pass): where each
// intermediate buffer lives in one arena. Sizes may be symbolic, so they
// are sums of terms `coefficient * symbols` ("1024*B + 64").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace graphc::ir {

/// A byte count: a sum of coefficients times products of symbolic sizes
/// (the key "" is the constant term; "B*S" the coefficient of B·S).
struct Bytes {
  std::map<std::string, int64_t> terms;

  static Bytes constant(int64_t n);
  Bytes operator+(const Bytes& other) const;
  /// Whether this is at most `other` for every value of the symbols (each
  /// coefficient at most the other's; symbols are non-negative).
  bool fitsIn(const Bytes& other) const;
  bool isZero() const;
  /// The byte count for these values of the symbols (each must be bound).
  int64_t evaluate(const std::map<std::string, int64_t>& symbols) const;
  std::string str() const;
  bool operator==(const Bytes&) const = default;
};

struct BufferAssignment {
  std::string value;  // the value's printed name
  Bytes offset, size;
  int firstStep = 0, lastStep = 0;  // positions of the defining node and the last use
  std::string reusedFrom;           // the value whose slot this one took over in place, if any
};

struct MemoryPlan {
  std::vector<BufferAssignment> buffers;
  Bytes peak;  // the arena size
};

/// The plan as `//` comments, one line per buffer and the peak.
std::string describe(const MemoryPlan& plan);

}  // namespace graphc::ir
