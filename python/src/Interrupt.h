// Ctrl-C during a run. Python's SIGINT handler only records the signal;
// KeyboardInterrupt is raised when the interpreter next runs bytecode,
// which is after a run that has released the GIL has finished — seconds,
// or never. A C handler chained in front of Python's also sets the cancel
// flag of the run the main thread is in, so the run stops (between pieces
// of bounded work, as RunOptions::cancel does) and the call raises
// KeyboardInterrupt.
#pragma once

#include <atomic>

namespace graphc::python {

/// Installs the chained handler when SIGINT is Python's (not SIG_DFL or
/// SIG_IGN); called once, at import, which records the main thread.
void installInterruptHandler();

/// Whether the calling thread is Python's main thread, the one
/// KeyboardInterrupt is raised in, and the handler is installed.
bool interruptible();

/// While alive, SIGINT sets `flag` (the main thread's run's cancel flag).
class InterruptScope {
 public:
  explicit InterruptScope(std::atomic<bool>* flag);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  std::atomic<bool>* previous_;
};

}  // namespace graphc::python
