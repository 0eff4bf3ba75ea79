// See Interrupt.h.
#include "Interrupt.h"

#include <signal.h>

#include <nanobind/nanobind.h>

namespace graphc::python {

namespace {

// Read by the signal handler: a lock-free atomic pointer is
// async-signal-safe to load and store.
std::atomic<std::atomic<bool>*> mainRunFlag{nullptr};
struct sigaction pythonHandler{};
unsigned long mainThread = 0;
bool installed = false;

void onInterrupt(int signal, siginfo_t* info, void* context) {
  if (std::atomic<bool>* flag = mainRunFlag.load()) flag->store(true);
  if (pythonHandler.sa_flags & SA_SIGINFO)
    pythonHandler.sa_sigaction(signal, info, context);
  else if (pythonHandler.sa_handler != SIG_DFL && pythonHandler.sa_handler != SIG_IGN)
    pythonHandler.sa_handler(signal);
}

}  // namespace

void installInterruptHandler() {
  static_assert(std::atomic<std::atomic<bool>*>::is_always_lock_free);
  namespace nb = nanobind;
  mainThread = nb::cast<unsigned long>(nb::module_::import_("threading").attr("main_thread")().attr("ident"));
  if (sigaction(SIGINT, nullptr, &pythonHandler) != 0) return;
  const bool python = (pythonHandler.sa_flags & SA_SIGINFO) ||
                      (pythonHandler.sa_handler != SIG_DFL && pythonHandler.sa_handler != SIG_IGN);
  if (!python) return;
  struct sigaction chained{};
  chained.sa_sigaction = onInterrupt;
  chained.sa_flags = SA_SIGINFO | (pythonHandler.sa_flags & (SA_ONSTACK | SA_RESTART));
  chained.sa_mask = pythonHandler.sa_mask;
  installed = sigaction(SIGINT, &chained, nullptr) == 0;
}

bool interruptible() { return installed && PyThread_get_thread_ident() == mainThread; }

InterruptScope::InterruptScope(std::atomic<bool>* flag) : previous_(mainRunFlag.exchange(flag)) {}
InterruptScope::~InterruptScope() { mainRunFlag.store(previous_); }

}  // namespace graphc::python
