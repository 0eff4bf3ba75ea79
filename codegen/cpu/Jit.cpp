#include "codegen/cpu/Jit.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "codegen/DiskCache.h"
#include "ir/Diagnostics.h"

namespace graphc::codegen::cpu {

namespace {

std::string errorText(llvm::Error e) { return llvm::toString(std::move(e)); }

}  // namespace

/// One kernel's machine code in the JIT, in a JITDylib of its own (every
/// kernel's object defines the same symbol, kKernelSymbol, so that an
/// object is the same bytes whichever process compiled it): removed, its
/// memory unmapped, when the last CompiledKernel referring to it goes. It
/// keeps the JIT alive, so an Executable outliving Jit::instance() at exit
/// is still safe.
struct KernelCode {
  std::shared_ptr<Jit::Impl> owner;
  llvm::orc::JITDylib* dylib = nullptr;
  ~KernelCode();
};

namespace {

/// The libm functions kernels call whose libmvec variants (glibc ≥ 2.35)
/// the vectoriser may call instead: the f64 name, its arity, and whether
/// LLVM 19's LIBMVEC_X86 table already has its SSE and AVX2 variants.
struct VectorMath {
  const char* name;
  int arity;
  bool inLlvmTable;
};
constexpr VectorMath kVectorMath[] = {
    {"exp", 1, true},    {"log", 1, true},    {"sin", 1, true},    {"cos", 1, true},   {"tan", 1, true},
    {"pow", 2, true},    {"expm1", 1, true},  {"log1p", 1, true},  {"tanh", 1, false}, {"erf", 1, false},
    {"sinh", 1, false},  {"cosh", 1, false},  {"asin", 1, false},  {"acos", 1, false}, {"atan", 1, false},
    {"asinh", 1, false}, {"acosh", 1, false}, {"atanh", 1, false}, {"log2", 1, false}, {"log10", 1, false},
    {"atan2", 2, false},
};

/// The vector variants to offer: SSE ('b') and AVX2 ('d') ones LLVM's table
/// lacks, and with AVX-512F all the AVX-512 ('e') ones, which LLVM's table
/// leaves out (their arguments live in zmm registers). Vector ABI names:
/// _ZGV<isa>N<lanes><v per argument>_<name>.
std::vector<llvm::VecDesc> vectorFunctions(bool avx512) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const VectorMath& f : kVectorMath)
      for (const char* suffix : {"", "f"})
        for (const char* isa : {"b", "d", "e"}) {
          const int lanes = (*suffix ? 4 : 2) << (*isa == 'b' ? 0 : *isa == 'd' ? 1 : 2);
          const std::string args(static_cast<size_t>(f.arity), 'v');
          all.push_back(fmt::format("{}{}", f.name, suffix));
          all.push_back(fmt::format("_ZGV{}N{}{}_{}{}", isa, lanes, args, f.name, suffix));
          all.push_back(fmt::format("_ZGV_LLVM_N{}{}", lanes, args));
        }
    return all;
  }();
  std::vector<llvm::VecDesc> descs;
  size_t k = 0;
  for (const VectorMath& f : kVectorMath)
    for (int suffix = 0; suffix < 2; ++suffix)
      for (const char isa : {'b', 'd', 'e'}) {
        const std::string& scalar = names[k];
        const std::string& vector = names[k + 1];
        const std::string& abi = names[k + 2];
        k += 3;
        const bool wanted = isa == 'e' ? avx512 : !f.inLlvmTable;
        if (!wanted) continue;
        const unsigned lanes = (suffix ? 4u : 2u) << (isa == 'b' ? 0 : isa == 'd' ? 1 : 2);
        descs.emplace_back(scalar, vector, llvm::ElementCount::getFixed(lanes), false, abi);
      }
  return descs;
}

/// The one function every kernel object defines.
constexpr const char* kKernelSymbol = "graphc_kernel";

/// Which build of the emitter this is: the file this code was loaded from
/// (the cpu backend module, or a program that links it in), by path, size
/// and modification time. A rebuilt or upgraded graphc emits other code
/// for the same kernel IR, so its cached objects must not be reused.
std::string emitterIdentity() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<const void*>(&emitterIdentity), &info) || !info.dli_fname) return "unknown build";
  struct stat st{};
  if (stat(info.dli_fname, &st) != 0) return fmt::format("{}", info.dli_fname);
  return fmt::format("{} {} {}.{:09}", info.dli_fname, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

/// The cache key: the kernel IR without the kernel's name.
std::string cacheKey(const codegen::kernel::Kernel& k) {
  codegen::kernel::Kernel unnamed = k;
  unnamed.name.clear();
  return codegen::kernel::print(unnamed);
}

}  // namespace

struct Jit::Impl : std::enable_shared_from_this<Jit::Impl> {
  std::optional<llvm::orc::JITTargetMachineBuilder> builder;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::mutex cacheMutex, jitMutex;
  /// What, beside the kernel, decides its machine code: a disk-cache entry
  /// made by another LLVM or for another CPU is never loaded.
  std::string machineKey;
  int64_t nextDylib = 0;
  /// The most recently used kernels, kept compiled; the least recently used
  /// beyond kCacheCapacity are dropped from the cache (and their code freed
  /// once no Executable holds them), so a process that compiles graph after
  /// graph does not grow without bound (each object costs memory mappings).
  static constexpr size_t kCacheCapacity = 2048;
  std::list<std::string> recency;  // most recent first
  std::unordered_map<std::string, std::pair<std::shared_ptr<const CompiledKernel>, std::list<std::string>::iterator>>
      cache;

  void remember(const std::string& key, std::shared_ptr<const CompiledKernel> k) {
    if (cache.count(key)) return;  // another thread compiled it meanwhile: either copy serves
    recency.push_front(key);
    cache.emplace(key, std::make_pair(std::move(k), recency.begin()));
    if (cache.size() > kCacheCapacity) {
      cache.erase(recency.back());
      recency.pop_back();
    }
  }

  /// TargetMachines are not thread-safe: one per compiling thread.
  llvm::TargetMachine& threadMachine() {
    thread_local std::unique_ptr<llvm::TargetMachine> tm;
    if (!tm) tm = createMachine(*builder);
    return *tm;
  }

  /// The same machine generating position-independent code, for the
  /// shared object of an exported package: the same CPU, features and
  /// pipeline, so its kernels compute what the JIT's do, bit for bit.
  llvm::TargetMachine& threadPicMachine() {
    thread_local std::unique_ptr<llvm::TargetMachine> tm;
    if (!tm) {
      llvm::orc::JITTargetMachineBuilder pic = *builder;
      pic.setRelocationModel(llvm::Reloc::PIC_);
      tm = createMachine(pic);
    }
    return *tm;
  }

  static std::unique_ptr<llvm::TargetMachine> createMachine(llvm::orc::JITTargetMachineBuilder& b) {
    auto created = b.createTargetMachine();
    if (!created) throw ir::Error("cpu backend: " + errorText(created.takeError()));
    return std::move(*created);
  }

  Impl() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    std::string error;
    if (llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1", &error))
      throw ir::Error("cpu backend: cannot load glibc's libmvec.so.1: " + error);
    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!builder) throw ir::Error("cpu backend: " + errorText(builder.takeError()));
    builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    this->builder = *builder;
    llvm::TargetMachine& tm = threadMachine();  // fails here, once, if LLVM cannot target the host
    machineKey = fmt::format("graphc cpu object 1; {}; LLVM {}; {}; {}; {}", emitterIdentity(), LLVM_VERSION_STRING,
                             tm.getTargetTriple().str(), tm.getTargetCPU().str(), tm.getTargetFeatureString().str());
    auto created = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*builder).create();
    if (!created) throw ir::Error("cpu backend: " + errorText(created.takeError()));
    jit = std::move(*created);
    auto process =
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit->getDataLayout().getGlobalPrefix());
    if (!process) throw ir::Error("cpu backend: " + errorText(process.takeError()));
    jit->getMainJITDylib().addGenerator(std::move(*process));
  }

  /// Links `object` into a JITDylib of its own and fills in `out`'s address
  /// and code; false when the object does not link or lacks the kernel
  /// (a stale or damaged cache entry: the caller compiles afresh).
  bool link(CompiledKernel& out, std::unique_ptr<llvm::MemoryBuffer> object) {
    std::lock_guard lock(jitMutex);
    auto dylib = jit->createJITDylib(fmt::format("kernel{}", nextDylib++));
    if (!dylib) {
      llvm::consumeError(dylib.takeError());
      return false;
    }
    dylib->addToLinkOrder(jit->getMainJITDylib());  // libm, libmvec and the process's symbols
    // On failure the dylib goes here, under the lock this function holds
    // (a KernelCode would take it again in its destructor).
    auto drop = [&](llvm::Error e) {
      llvm::consumeError(std::move(e));
      llvm::consumeError(jit->getExecutionSession().removeJITDylib(*dylib));
      return false;
    };
    if (auto e = jit->addObjectFile(*dylib, std::move(object))) return drop(std::move(e));
    auto address = jit->lookup(*dylib, kKernelSymbol);
    if (!address) return drop(address.takeError());
    out.address = address->toPtr<void*>();
    out.code = std::shared_ptr<KernelCode>(new KernelCode{shared_from_this(), &*dylib});
    return true;
  }

  /// A module holding kernel `k` as `name`, optimised at O3 for the host.
  std::unique_ptr<llvm::Module> build(const codegen::kernel::Kernel& k, const std::string& name, llvm::LLVMContext& ctx,
                                      llvm::TargetMachine& tm) {
    auto m = std::make_unique<llvm::Module>("graphc." + k.name, ctx);
    m->setDataLayout(tm.createDataLayout());
    m->setTargetTriple(tm.getTargetTriple().str());
    llvm::Function* f = emitKernel(k, name, *m);
    f->addFnAttr("target-cpu", tm.getTargetCPU());
    f->addFnAttr("target-features", tm.getTargetFeatureString());
    std::string problems;
    llvm::raw_string_ostream os(problems);
    if (llvm::verifyModule(*m, &os))
      throw ir::Error(fmt::format("cpu codegen produced invalid IR for {}: {}", k.name, problems));
    optimize(*m, tm);
    return m;
  }

  /// Machine code for the module, as an in-memory object file.
  std::unique_ptr<llvm::MemoryBuffer> codegen(llvm::Module& m, llvm::CodeGenFileType type, llvm::TargetMachine& tm) {
    llvm::SmallString<0> buffer;
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, os, nullptr, type)) throw ir::Error("cpu backend: the host target cannot emit code");
    pm.run(m);
    return llvm::MemoryBuffer::getMemBufferCopy(buffer.str(), m.getModuleIdentifier());
  }

  void optimize(llvm::Module& m, llvm::TargetMachine& tm) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions tuning;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    llvm::PassBuilder pb(&tm, tuning);
    llvm::TargetLibraryInfoImpl tli(tm.getTargetTriple());
    tli.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, tm.getTargetTriple());
    tli.addVectorizableFunctions(vectorFunctions(tm.getTargetFeatureString().contains("+avx512f")));
    fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tli); });
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(m, mam);
  }
};

KernelCode::~KernelCode() {
  std::lock_guard lock(owner->jitMutex);
  llvm::consumeError(owner->jit->getExecutionSession().removeJITDylib(*dylib));
}

Jit::Jit() : impl_(std::make_shared<Impl>()) {}
Jit::~Jit() = default;

Jit& Jit::instance() {
  static Jit jit;
  return jit;
}

std::shared_ptr<const CompiledKernel> Jit::compile(const codegen::kernel::Kernel& k) {
  const std::string key = cacheKey(k);
  {
    std::lock_guard lock(impl_->cacheMutex);
    if (auto it = impl_->cache.find(key); it != impl_->cache.end()) {
      impl_->recency.splice(impl_->recency.begin(), impl_->recency, it->second.second);
      auto hit = std::make_shared<CompiledKernel>(*it->second.first);
      hit->from = CompiledKernel::From::Memory;
      hit->compileSeconds = 0;
      return hit;
    }
  }
  // Emitting, optimising and code generation run on the calling thread with
  // its own LLVMContext and TargetMachine, so kernels compile in parallel;
  // only linking the object into the JIT is serialised. The object comes
  // from the disk cache when an earlier process compiled the same kernel
  // for the same CPU with the same LLVM.
  const auto start = std::chrono::steady_clock::now();
  const std::string diskKey = codegen::cacheKey(key + '\0' + impl_->machineKey);
  const std::optional<std::filesystem::path> dir = cacheDirectory("cpu");
  const std::filesystem::path file = dir ? *dir / (diskKey + ".o") : std::filesystem::path();
  auto compiled = std::make_shared<CompiledKernel>();
  std::unique_ptr<llvm::MemoryBuffer> object;
  if (std::optional<std::string> cached = dir ? readCacheEntry(file, diskKey) : std::nullopt) {
    object = llvm::MemoryBuffer::getMemBufferCopy(*cached, "graphc." + k.name);
    compiled->from = CompiledKernel::From::Disk;
  }
  if (!object || !impl_->link(*compiled, std::move(object))) {
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m = impl_->build(k, kKernelSymbol, ctx, impl_->threadMachine());
    object = impl_->codegen(*m, llvm::CodeGenFileType::ObjectFile, impl_->threadMachine());
    if (dir) writeCacheEntry(file, diskKey, object->getBuffer());
    compiled->from = CompiledKernel::From::Compiled;
    if (!impl_->link(*compiled, std::move(object)))
      throw ir::Error(fmt::format("cpu backend: the JIT cannot link the code of kernel {}", k.name));
  }
  compiled->signature = signatureOf(k);
  compiled->compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::lock_guard lock(impl_->cacheMutex);
  impl_->remember(key, compiled);
  return compiled;
}

std::string Jit::emitLLVM(const codegen::kernel::Kernel& k) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = impl_->build(k, k.name, ctx, impl_->threadMachine());
  std::string text;
  llvm::raw_string_ostream os(text);
  m->print(os, nullptr);
  return text;
}

std::string Jit::emitAsm(const codegen::kernel::Kernel& k) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = impl_->build(k, k.name, ctx, impl_->threadMachine());
  return std::string(impl_->codegen(*m, llvm::CodeGenFileType::AssemblyFile, impl_->threadMachine())->getBuffer());
}

std::string Jit::compileObject(const codegen::kernel::Kernel& k, const std::string& symbol) {
  llvm::LLVMContext ctx;
  llvm::TargetMachine& tm = impl_->threadPicMachine();
  std::unique_ptr<llvm::Module> m = impl_->build(k, symbol, ctx, tm);
  return std::string(impl_->codegen(*m, llvm::CodeGenFileType::ObjectFile, tm)->getBuffer());
}

std::map<std::string, std::string> Jit::target() const {
  llvm::TargetMachine& tm = impl_->threadMachine();
  return {{"triple", tm.getTargetTriple().str()},
          {"cpu", tm.getTargetCPU().str()},
          {"features", tm.getTargetFeatureString().str()},
          {"llvm", LLVM_VERSION_STRING}};
}

}  // namespace graphc::codegen::cpu
