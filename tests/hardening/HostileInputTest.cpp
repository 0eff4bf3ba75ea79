// Inputs a hostile but fair user can write, each of which once crashed,
// hung, wrapped or lied (issue 18), and what graphc does with them now:
// sizes whose byte counts overflow int64, int64 constants beyond 2^53, .npy
// headers and data that do not fit, 100 KB diagnostic lines, empty amax
// rows, eigh of NaN, an unsafe disk cache, a symlink where an output goes.
// CI runs this binary under AddressSanitizer + UBSan too.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "TestUtil.h"
#include "codegen/BufferAssignment.h"
#include "codegen/DiskCache.h"
#include "codegen/kernel/Analysis.h"
#include "codegen/kernel/KernelIR.h"
#include "codegen/kernel/Lowering.h"
#include "frontend/api/graphc.h"
#include "frontend/parser/DiagnosticVerifier.h"
#include "ir/Builder.h"
#include "ir/SizeMath.h"
#include "runtime/FileIO.h"
#include "runtime/Npy.h"
#include "runtime/Random.h"
#include "tests/fuzz/FuzzChecks.h"

namespace graphc {
namespace {

namespace fs = std::filesystem;

/// A fresh directory under the test's temporary directory.
fs::path scratchDir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("graphc-hardening-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// --- sizes -------------------------------------------------------------------------

TEST(SizeMath, OverflowIsNulloptNeverAWrappedNumber) {
  EXPECT_EQ(ir::mulSizes(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(ir::mulSizes(int64_t{1} << 32, int64_t{1} << 31), std::nullopt);
  EXPECT_EQ(ir::addSizes(INT64_MAX, 1), std::nullopt);
  EXPECT_EQ(ir::productOf(std::vector<int64_t>{2097152, 2097152, 1048576}), int64_t{1} << 62);
  EXPECT_EQ(ir::bytesOf(DType::F32, std::vector<int64_t>{2097152, 2097152, 1048576}), std::nullopt);
  EXPECT_EQ(ir::productOf(std::vector<int64_t>{3, -1}), std::nullopt);
  EXPECT_EQ(ir::productOf(std::vector<int64_t>{2, INT64_MAX, 0}), std::nullopt);  // each step checked
  EXPECT_EQ(ir::alignUp(65, 64), 128);
  EXPECT_EQ(ir::alignUp(INT64_MAX - 3, 64), std::nullopt);
  EXPECT_THROW(ir::checkedMul(INT64_MAX, 2, "test"), ir::Error);
  EXPECT_THROW(runtime::Tensor(DType::F64, {int64_t{1} << 61, 8}), ir::Error);
}

/// The issue's six-line file: a static type of 2^62 f32 elements once
/// planned a 0-byte arena that a kernel then wrote 2^64 bytes into.
TEST(SizeOverflow, AStaticTypeWhoseBytesOverflowIsAVerifierError) {
  const char* text = R"(graph @g(%x: f32[2097152, 1, 1], %y: f32[1, 2097152, 1], %z: f32[1, 1, 1048576]) -> (f32[]) {
  %t = add(%x, %y)
  %v = add(%t, %z)
  %s = sum(%v)
  return %s
})";
  ir::DiagnosticEngine diags;
  EXPECT_FALSE(frontend::parseString(text, diags, "overflow.graph"));
  ASSERT_FALSE(diags.all().empty());
  EXPECT_EQ(diags.all()[0].message, "type f32[2097152, 2097152, 1048576] is too large: its byte count overflows int64");
  EXPECT_EQ(diags.all()[0].loc.line, 3);
}

/// The same through symbolic sizes: caught when the sizes are bound, on
/// every device, before anything is allocated or written.
TEST(SizeOverflow, SymbolicSizesThatOverflowAreARunError) {
  const char* text = R"(graph @g(%x: f32[A, 1, 1], %y: f32[1, B, 1], %z: f32[1, 1, C]) -> (f32[]) {
  %t = add(%x, %y)
  %v = add(%t, %z)
  %s = sum(%v)
  return %s
})";
  const std::vector<Tensor> in = {Tensor(DType::F32, {2097152, 1, 1}), Tensor(DType::F32, {1, 2097152, 1}),
                                  Tensor(DType::F32, {1, 1, 1048576})};
  EXPECT_EQ(errorOf([&] { compile(Graph::parse(text), {.device = Device::Cpu}).run(in); }),
            "the buffer of 4*A*B*C bytes overflows int64 for A=2097152, B=2097152, C=1048576");
  // Sizes bound by empty inputs cost nothing to pass; a value of those
  // sizes overflows on every device before anything is allocated (the
  // reference interpreter materialises it, so it checks each result).
  const char* empty = R"(graph @g(%a: f32[A, 0], %b: f32[B, 0], %c: f32[C, 0]) -> (f32[]) {
  %f = full() {value = 1.0} : f32[A, B, C]
  %s = sum(%f)
  return %s
})";
  const std::vector<Tensor> sizes = {Tensor(DType::F32, {int64_t{1} << 21, 0}),
                                     Tensor(DType::F32, {int64_t{1} << 21, 0}),
                                     Tensor(DType::F32, {int64_t{1} << 21, 0})};
  for (Device device : {Device::Cpu, Device::Reference}) {
    const std::string error = errorOf([&] { compile(Graph::parse(empty), {.device = device}).run(sizes); });
    EXPECT_TRUE(contains(error, "overflows int64") || contains(error, "too large"))
        << deviceName(device) << ": " << error;
  }
}

TEST(MemoryPlan, SymbolicSizesAreNotRoundedUpPerElement) {
  // f32[A, B, C] once took 8*A*B*C (the coefficient rounded to 8); each
  // buffer is now its exact size, aligned to 64 where it starts.
  const codegen::Bytes f32 =
      codegen::Bytes::of({DType::F32, {ir::Dim::sym("A"), ir::Dim::sym("B"), ir::Dim::sym("C")}});
  EXPECT_EQ(f32.str(), "4*A*B*C");
  const codegen::Bytes i8 = codegen::Bytes::of({DType::I8, {ir::Dim::sym("N")}});
  const codegen::ArenaOffset two = codegen::ArenaOffset{} + i8 + f32;
  const ir::SymbolBindings sizes{{"A", 3}, {"B", 5}, {"C", 7}, {"N", 10}};
  EXPECT_EQ(two.evaluate(sizes), 64 + 448);  // 10 bytes aligned to 64, then 420 aligned to 64
  EXPECT_EQ(two.str(), "align64(N) + align64(4*A*B*C)");
  const codegen::ArenaOffset aligned =
      codegen::ArenaOffset{} + codegen::Bytes::of({DType::F32, {ir::Dim::sym("B"), ir::Dim::of(32)}});
  EXPECT_EQ(aligned.str(), "128*B");
  EXPECT_THROW((codegen::ArenaOffset{} + f32).evaluate({{"A", 1 << 30}, {"B", 1 << 30}, {"C", 1 << 30}}), ir::Error);
}

// --- int64 constants ------------------------------------------------------------

TEST(Int64Constants, ExactThroughTheKernelIRAndEveryEmitter) {
  const char* text = R"(graph @g(%i: i64[4]) -> (i64[4], i64[4], i64[4], i64[4]) {
  %a = minimum(%i, 9223372036854775807)
  %b = add(%i, 9007199254740993)
  %c = mul(%i, 9223372036854775807)
  %d = maximum(%i, -9223372036854775808)
  return %a, %b, %c, %d
})";
  Tensor x(DType::I64, {4});
  for (int64_t k = 0; k < 4; ++k) x.setInt(k, std::vector<int64_t>{1, 2, 3, -4}[static_cast<size_t>(k)]);
  const std::vector<Tensor> want = compile(Graph::parse(text), {.device = Device::Reference}).run({x});
  const std::vector<Tensor> got = compile(Graph::parse(text), {.device = Device::Cpu}).run({x});
  for (size_t r = 0; r < want.size(); ++r)
    for (int64_t k = 0; k < 4; ++k)
      EXPECT_EQ(got[r].getInt(k), want[r].getInt(k)) << "output " << r << " element " << k;
  EXPECT_EQ(want[0].getInt(0), 1);                 // minimum with INT64_MAX is the identity
  EXPECT_EQ(want[1].getInt(0), 9007199254740994);  // 2^53 + 1 + 1, not 2^53 + 2 by accident of rounding
  EXPECT_EQ(want[2].getInt(1), -2);                // 2 * INT64_MAX wraps
  EXPECT_EQ(want[3].getInt(3), -4);

  Executable exe = compile(Graph::parse(text));
  const ir::Graph& g = exe.optimized().entry();
  std::string printed;
  for (const ir::Node* f : codegen::kernel::fusedOps(g.body))
    printed += codegen::kernel::print(codegen::kernel::lower(*f));
  EXPECT_TRUE(contains(printed, "9223372036854775807")) << printed;
  EXPECT_TRUE(contains(printed, "9007199254740993")) << printed;
  EXPECT_TRUE(contains(printed, "-9223372036854775808")) << printed;
}

TEST(Int64Constants, NarrowIntegerConstantsWrapAsTheReferenceStoresThem) {
  const char* text = R"(graph @g(%i: i8[3], %j: i32[3]) -> (i32[3], i8[3]) {
  %b = add(%j, 2147483647)
  %w = full() {value = 300} : i8[3]
  %c = add(%i, %w)
  return %b, %c
})";
  Tensor i(DType::I8, {3}), j(DType::I32, {3});
  for (int64_t k = 0; k < 3; ++k) {
    i.setInt(k, k - 1);
    j.setInt(k, k);
  }
  const auto want = compile(Graph::parse(text), {.device = Device::Reference}).run({i, j});
  const auto got = compile(Graph::parse(text), {.device = Device::Cpu}).run({i, j});
  for (size_t r = 0; r < want.size(); ++r)
    for (int64_t k = 0; k < 3; ++k)
      EXPECT_EQ(got[r].getInt(k), want[r].getInt(k)) << "output " << r << " element " << k;
}

// --- .npy ------------------------------------------------------------------------

std::string npy(const std::string& header, const std::string& data = "", int major = 1) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (int k = 0; k < (major == 1 ? 2 : 4); ++k) out += static_cast<char>((header.size() >> (8 * k)) & 0xff);
  return out + header + data;
}

std::string npyError(const std::string& bytes) {
  return errorOf([&] { runtime::parseNpy(bytes, "t.npy"); });
}

TEST(HostileNpy, LongHeadersParseWithoutRecursion) {
  // A 60 KB descr, a 30,000-entry shape, a rank-100,000 v2 header: each
  // once overflowed the stack inside std::regex.
  EXPECT_TRUE(
      contains(npyError(npy("{'descr': '" + std::string(60000, 'x') + "', 'fortran_order': False, 'shape': (4,), }")),
               "unsupported dtype 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"));
  std::string shape;
  for (int k = 0; k < 30000; ++k) shape += "1, ";
  EXPECT_EQ(npyError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }", "", 2)),
            "t.npy: the shape has more than 64 dims");
  std::string rank;
  for (int k = 0; k < 100000; ++k) rank += "1,";
  EXPECT_EQ(npyError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (" + rank + "), }", "", 2)),
            "t.npy: the shape has more than 64 dims");
  // 64 dims is numpy's own limit and fine.
  std::string dims64;
  for (int k = 0; k < 64; ++k) dims64 += "1, ";
  EXPECT_EQ(
      runtime::parseNpy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims64 + "), }", "abcd"), "t.npy")
          .rank(),
      64);
}

TEST(HostileNpy, MalformedHeadersAreClearErrors) {
  EXPECT_EQ(npyError(npy("{'descr': '<f4', 'fortran_order': False}")), "t.npy: header has no 'shape'");
  EXPECT_EQ(npyError(npy("{'descr': '<f4', 'shape': (1,), 'fortran_order': False, 'extra': 1}")),
            "t.npy: unexpected key 'extra' in the header");
  EXPECT_TRUE(
      contains(npyError(npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,)}")), "neither True nor False"));
  EXPECT_TRUE(contains(npyError(npy("{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}")), "malformed header"));
  EXPECT_TRUE(
      contains(npyError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}")), "bad shape entry '-1'"));
  EXPECT_TRUE(
      contains(npyError(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}")), "structured"));
  EXPECT_TRUE(contains(npyError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}")),
                       "bad shape entry"));
  EXPECT_TRUE(contains(npyError(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4)}")),
                       "overflows int64"));
  EXPECT_TRUE(contains(npyError(std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12)), "headers of at most"));
}

TEST(HostileNpy, TheDataLengthIsCheckedBeforeAnythingIsAllocated) {
  // 144 bytes declaring 9 GiB once cost 9.7 GB and 29 s before the error.
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1024, 1024, 1024, 9), }";
  const fs::path dir = scratchDir("npy");
  {
    std::ofstream(dir / "huge.npy", std::ios::binary) << npy(header);
  }
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  EXPECT_EQ(
      errorOf([&] { runtime::readNpy((dir / "huge.npy").string()); }),
      (dir / "huge.npy").string() + ": data holds 0 bytes but shape (1024, 1024, 1024, 9) of <f4 needs 38654705664");
  EXPECT_TRUE(contains(npyError(npy(header, "abc")), "data holds 3 bytes"));
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 100 * 1024);  // KiB: nothing near 9 GiB was touched
  // A stream is read no further than the header declares (plus one byte).
  EXPECT_TRUE(contains(errorOf([] { runtime::readNpy("/dev/zero"); }), "not a .npy file (bad magic)"));
  // One byte too many is an error too.
  {
    std::ofstream(dir / "extra.npy", std::ios::binary)
        << npy("{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }", "abc");
  }
  EXPECT_TRUE(contains(errorOf([&] { runtime::readNpy((dir / "extra.npy").string()); }), "data holds 3 bytes"));
  fs::remove_all(dir);
}

// --- files -------------------------------------------------------------------------

TEST(FileIO, ReadFileRefusesWhatItCannotBoundBeforeReading) {
  EXPECT_TRUE(contains(errorOf([] { runtime::readFile("/dev/zero", 1 << 20); }), "larger than 1048576 bytes"));
  EXPECT_TRUE(contains(errorOf([] { runtime::readFile("/"); }), "is a directory"));
  EXPECT_TRUE(contains(errorOf([] { runtime::readFile("/nonexistent/file"); }), "cannot open file: No such file"));
  const fs::path dir = scratchDir("read");
  {
    std::ofstream(dir / "big.txt") << std::string(5000, 'x');
  }
  EXPECT_TRUE(contains(errorOf([&] { runtime::readFile(dir / "big.txt", 4096); }), "the file is 5000 bytes"));
  EXPECT_EQ(runtime::readFile(dir / "big.txt").size(), 5000u);
  fs::remove_all(dir);
}

/// --save-outputs writes through writeNpy: a symlink planted where an
/// output goes is replaced, and the file it pointed at is left alone.
TEST(FileIO, WritesNeverFollowAPlantedSymlink) {
  const fs::path dir = scratchDir("write");
  const fs::path outside = dir / "outside.txt";
  fs::create_directories(dir / "out");
  {
    std::ofstream(outside) << "precious";
  }
  fs::create_symlink(outside, dir / "out" / "output0.npy");
  runtime::writeNpy((dir / "out" / "output0.npy").string(), runtime::randomTensor(DType::F32, {3}, 1));
  EXPECT_EQ(runtime::readFile(outside), "precious");
  EXPECT_FALSE(fs::is_symlink(dir / "out" / "output0.npy"));
  EXPECT_EQ(runtime::readNpy((dir / "out" / "output0.npy").string()).numel(), 3);
  // No temporary file is left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir / "out")) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  fs::remove_all(dir);
}

// --- diagnostics -----------------------------------------------------------------

TEST(HostileDiagnostics, ALongLineIsQuotedAsAWindowAroundTheColumn) {
  // A 10 MB line (the issue's was 1 GB): the error quotes 120 columns of
  // it and cuts the name it repeats.
  const std::string name(10'000'000, 'x');
  const std::string text = "graph @g(%x: f32[4]) -> (f32[4]) { %y = relu(%" + name + ") return %y }\n";
  ir::DiagnosticEngine diags;
  EXPECT_FALSE(frontend::parseString(text, diags, "long.graph"));
  ASSERT_FALSE(diags.all().empty());
  const std::string shown = ir::format(diags.all()[0]);
  EXPECT_LT(shown.size(), 1500u);
  EXPECT_TRUE(contains(shown, "long.graph:1:46: error: use of undefined value '%xxxx")) << shown.substr(0, 200);
  EXPECT_TRUE(contains(shown, "more characters)")) << shown.substr(0, 200);
  EXPECT_TRUE(contains(shown, "relu(%xxxx")) << shown;
  // The caret sits under the column it names, inside the window.
  const std::string far = std::string(1000, ' ') + "%y = relu(%q)";
  ir::DiagnosticEngine farDiags;
  EXPECT_FALSE(
      frontend::parseString("graph @g(%x: f32[4]) -> (f32[4]) {" + far + " return %y }\n", farDiags, "far.graph"));
  const std::string farShown = ir::format(farDiags.all().at(0));
  const size_t caretLine = farShown.rfind('\n', farShown.size() - 2) + 1;
  const size_t sourceLine = farShown.find('\n') + 1;
  const size_t caret = farShown.find('^', caretLine) - caretLine;
  EXPECT_EQ(farShown.substr(sourceLine + caret, 2), "%q") << farShown;
}

TEST(HostileDiagnostics, AFailingHandlerNeverThrowsFromTheDestructor) {
  {
    ir::DiagnosticEngine diags([](const ir::Diagnostic&) { throw std::bad_alloc(); });
    diags.error({}, "pending when the engine goes");
  }  // would std::terminate if the destructor let the exception out
  SUCCEED();
}

TEST(HostileDiagnostics, AHundredKilobyteExpectationLineIsRead) {
  auto buffer = std::make_shared<ir::SourceBuffer>();
  buffer->name = "t.graph";
  const std::string text(100'000, 'y');
  buffer->text =
      "// expected-error@+1 {{" + text + "}}\nline two\n// expected-error@+999999999999 {{overflowing offset}}\n";
  ir::Diagnostic produced{ir::Severity::Error, ir::SourceLoc{buffer, 2, 1}, "x" + text + "x", {}};
  EXPECT_EQ(frontend::verifyDiagnostics(*buffer, {produced}), "");
}

// --- backends agree ------------------------------------------------------------------

TEST(BackendsAgree, AmaxOverAnEmptyDimHasNoIdentityOnEveryDevice) {
  const char* text = R"(graph @g(%x: f32[3, N]) -> (f32[3]) {
  %y = amax(%x) {dims = [1]}
  return %y
})";
  for (Device device : {Device::Reference, Device::Cpu})
    EXPECT_EQ(errorOf([&] { compile(Graph::parse(text), {.device = device}).run({Tensor(DType::F32, {3, 0})}); }),
              "amax of an empty tensor has no identity")
        << deviceName(device);
  // A softmax over an empty row stores nothing, and is no error.
  const char* softmax = "graph @g(%x: f32[3, N]) -> (f32[3, N]) {\n  %y = softmax(%x) {dim = 1}\n  return %y\n}\n";
  for (Device device : {Device::Reference, Device::Cpu})
    EXPECT_EQ(compile(Graph::parse(softmax), {.device = device}).run({Tensor(DType::F32, {3, 0})})[0].numel(), 0);
}

TEST(BackendsAgree, EighOfNaNOrInfIsOneErrorOnEveryPath) {
  const char* text =
      "graph @g(%a: f64[2, N, N]) -> (f64[2, N], f64[2, N, N]) {\n  %w, %v = eigh(%a)\n  return %w, %v\n}\n";
  for (int64_t n : {4, 40}) {  // the cpu backend's Jacobi path, and its LAPACK path
    Tensor a(DType::F64, {2, n, n});
    for (int64_t i = 0; i < n; ++i) a.setDouble((n + i) * n + i, 1.0);
    a.setDouble(n * n + (n - 1) * n, std::numeric_limits<double>::quiet_NaN());  // matrix 1, lower triangle
    for (Device device : {Device::Reference, Device::Cpu})
      EXPECT_EQ(errorOf([&] { compile(Graph::parse(text), {.device = device}).run({a}); }),
                "eigh: matrix 1 of the batch has a NaN or Inf entry (eigh needs finite input)")
          << deviceName(device) << " n=" << n;
    // The triangle eigh does not read may hold anything.
    Tensor upper(DType::F64, {2, n, n});
    upper.setDouble(n - 1, std::numeric_limits<double>::infinity());
    for (Device device : {Device::Reference, Device::Cpu})
      EXPECT_EQ(compile(Graph::parse(text), {.device = device}).run({upper}).size(), 2u) << deviceName(device);
  }
}

// --- the disk cache ------------------------------------------------------------------

/// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(DiskCache, DirectoriesAndEntriesArePrivate) {
  const fs::path root = scratchDir("cache") / "root";
  ScopedEnv env("GRAPHC_CACHE_DIR", root.c_str());
  const std::optional<fs::path> dir = codegen::cacheDirectory("cpu");
  ASSERT_TRUE(dir);
  EXPECT_EQ(*dir, root / "cpu");
  struct stat info{};
  ASSERT_EQ(stat(dir->c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  const std::string key = codegen::cacheKey("kernel text");
  codegen::writeCacheEntry(*dir / key, key, "payload");
  ASSERT_EQ(stat((*dir / key).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_EQ(codegen::readCacheEntry(*dir / key, key), "payload");
  EXPECT_EQ(codegen::readCacheEntry(*dir / key, codegen::cacheKey("another")), std::nullopt);
  fs::remove_all(root.parent_path());
}

TEST(DiskCache, ADirectoryOthersMayWriteIsRefused) {
  const fs::path root = scratchDir("shared") / "root";
  fs::create_directories(root / "cpu");
  chmod(root.c_str(), 0777);
  ScopedEnv env("GRAPHC_CACHE_DIR", root.c_str());
  EXPECT_EQ(codegen::cacheDirectory("cpu"), std::nullopt);
  chmod(root.c_str(), 0700);
  chmod((root / "cpu").c_str(), 0775);
  EXPECT_EQ(codegen::cacheDirectory("cpu"), std::nullopt);
  chmod((root / "cpu").c_str(), 0700);
  EXPECT_EQ(codegen::cacheDirectory("cpu"), root / "cpu");
  fs::remove_all(root.parent_path());
}

TEST(DiskCache, WithoutHomeItNeverFallsBackToASharedDirectory) {
  ScopedEnv a("GRAPHC_CACHE_DIR", nullptr), b("XDG_CACHE_HOME", nullptr), c("HOME", nullptr);
  const std::optional<fs::path> dir = codegen::cacheDirectory("cuda");
  if (dir) {  // the password database's home, or none
    EXPECT_FALSE(dir->string().starts_with("/tmp")) << *dir;
  }
}

TEST(DiskCache, UnsafeOrLyingEntriesAreMisses) {
  const fs::path root = scratchDir("entries");
  ScopedEnv env("GRAPHC_CACHE_DIR", root.c_str());
  const fs::path dir = *codegen::cacheDirectory("cuda");
  const std::string key = codegen::cacheKey("module");
  codegen::writeCacheEntry(dir / key, key, std::string(1000, 'p'));
  ASSERT_TRUE(codegen::readCacheEntry(dir / key, key));
  // A size field claiming 2 GB: refused by the file's length, not allocated.
  {
    std::fstream f(dir / key, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8 + 32);
    const uint64_t lie = uint64_t{2} << 30;
    f.write(reinterpret_cast<const char*>(&lie), sizeof lie);
  }
  EXPECT_EQ(codegen::readCacheEntry(dir / key, key), std::nullopt);
  // A symlink planted as an entry, and an entry others may write.
  codegen::writeCacheEntry(dir / "real", key, "x");
  fs::create_symlink(dir / "real", dir / "link");
  EXPECT_EQ(codegen::readCacheEntry(dir / "link", key), std::nullopt);
  chmod((dir / "real").c_str(), 0666);
  EXPECT_EQ(codegen::readCacheEntry(dir / "real", key), std::nullopt);
  fs::remove_all(root);
}

/// What the fuzzers found in the model ops, as the fuzzers check it (a
/// round trip, the default pipeline, kernel lowering, a reference run): a
/// padded window's negative offset overflowed the index simplifier's bound
/// (INT64_MAX - -1), and argmax over a symbolic dim converted 2^63 to int64.
/// Under the asan preset's UBSan either was an abort.
TEST(FuzzFindings, ModelOpsThatOnceHitUndefinedBehaviourStayClean) {
  for (const char* file : {"tests/lit/parse/model-ops.graph", "tests/golden/cases/max_pool_i8.graph",
                           "tests/golden/cases/avg_pool_include_pad_f32.graph"}) {
    ir::DiagnosticEngine diags;
    auto m = frontend::parseFile(std::string(GRAPHC_SOURCE_DIR) + "/" + file, diags);
    ASSERT_TRUE(m) << file;
    fuzz::checkModule(*m);
  }
}

/// An empty tensor's other sizes may multiply past int64 (the ONNX fuzzer's
/// find: strides of [0, 2^40, 2^40]). Its strides are never used, and an
/// op whose results are empty computes nothing.
TEST(FuzzFindings, EmptyTensorsWithHugeSizesBesideTheZero) {
  EXPECT_EQ(runtime::contiguousStrides({0, int64_t{1} << 40, int64_t{1} << 40}), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(runtime::contiguousStrides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  auto m = testing::parseOk(
      "graph @g(%x: f32[0, 1099511627776, 1099511627776]) -> (f32[0, 1099511627776, 1099511627775]) {\n"
      "  %y = slice(%x) {dim = 2, start = 1}\n"
      "  %z = exp(%y)\n"
      "  return %z\n}\n");
  ASSERT_TRUE(m);
  runtime::Tensor x(ir::DType::F32, {0, int64_t{1} << 40, int64_t{1} << 40});
  std::vector<runtime::Tensor> out = runtime::interpret(*m->entry(), {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].numel(), 0);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{0, int64_t{1} << 40, (int64_t{1} << 40) - 1}));
}

TEST(FuzzFindings, IntegerScalarsFromDoublesSaturate) {
  EXPECT_EQ(ir::scalarAttribute(ir::DType::I64, static_cast<double>(INT64_MAX)).i, INT64_MAX);
  EXPECT_EQ(ir::scalarAttribute(ir::DType::I64, -1e300).i, INT64_MIN);
  EXPECT_EQ(ir::scalarAttribute(ir::DType::I64, NAN).i, 0);
  EXPECT_EQ(ir::scalarAttribute(ir::DType::I32, -7.0).i, -7);
}

}  // namespace
}  // namespace graphc
