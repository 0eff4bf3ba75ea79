#include "codegen/cpu/KernelLibrary.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "codegen/cpu/CompiledKernel.h"
#include "codegen/cpu/Jit.h"
#include "ir/Diagnostics.h"
#include "runtime/FileIO.h"
#include "runtime/cpu/ThreadPool.h"

extern char** environ;

namespace graphc::codegen::cpu {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// A private temporary folder, removed with everything in it.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "graphc-export-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw ir::Error("export: cannot create a temporary folder");
    path_ = pattern;
  }
  ~TemporaryFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void writeBytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw ir::Error(fmt::format("export: cannot write {}", path.string()));
}

/// Runs `argv` (found on PATH) with its output in `log`; its exit status,
/// or -1 when it could not start.
int run(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int started = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (started != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::string buildKernelLibrary(const codegen::LoweredKernels& lowered, CompileReport& report) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> objects(lowered.kernels.size());
  runtime::ThreadPool::global().parallelFor(
      static_cast<int64_t>(objects.size()), 1, [&](int64_t begin, int64_t end, int) {
        for (auto i = static_cast<size_t>(begin); i < static_cast<size_t>(end); ++i) {
          try {
            objects[i] = Jit::instance().compileObject(*lowered.kernels[i], exportedKernelSymbol(i));
          } catch (const ir::Error& e) {
            throw ir::LocatedError(lowered.fused[i]->loc, e.what());
          }
        }
      });
  report.add(fmt::format("compile {} kernels to objects", objects.size()), secondsSince(start));

  start = std::chrono::steady_clock::now();
  TemporaryFolder folder;
  // ld.bfd from binutils; -z now binds libmvec's functions at dlopen, so a
  // missing one is an error at load rather than in the middle of a run.
  std::vector<std::string> argv = {"ld",
                                   "-shared",
                                   "-z",
                                   "now",
                                   "-z",
                                   "noexecstack",
                                   "--hash-style=gnu",
                                   "-o",
                                   (folder.path() / "kernels.so").string()};
  for (size_t i = 0; i < objects.size(); ++i) {
    const std::filesystem::path object = folder.path() / fmt::format("kernel{}.o", i);
    writeBytes(object, objects[i]);
    argv.push_back(object.string());
  }
  for (const char* lib : {"-lmvec", "-lm"}) argv.emplace_back(lib);
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"})
    if (std::filesystem::is_directory(dir)) argv.push_back(fmt::format("-L{}", dir));
  const std::filesystem::path log = folder.path() / "ld.log";
  const int status = run(argv, log);
  if (status != 0) {
    std::string output;
    try {
      output = runtime::readFile(log);
    } catch (const ir::Error&) {
    }
    throw ir::Error(status < 0
                        ? std::string("export: cannot run the linker 'ld' (binutils) to make the package's "
                                      "shared object")
                        : fmt::format("export: the linker failed making the package's shared object:\n{}", output));
  }
  std::string library = runtime::readFile(folder.path() / "kernels.so");
  report.add("link the kernels' shared object", secondsSince(start));
  return library;
}

}  // namespace graphc::codegen::cpu
