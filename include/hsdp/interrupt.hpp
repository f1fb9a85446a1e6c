// Cancellation of long requests (training, membership-inference audits, calibration searches,
// comparison sweeps): a front end installs a check, the library's long loops poll it.
//
// The CLI installs none (SIGINT ends the process; cli/ removes staged files). The Python
// module installs one that runs Python's signal handlers (PyErr_CheckSignals) so that Ctrl-C
// raises KeyboardInterrupt within a fraction of a second instead of after the request
// (python/src/interrupt.cpp). Nothing is half-done: the request's result is discarded, no file
// has been written (outputs are written after the work).
#pragma once

#include <atomic>
#include <functional>

namespace hsdp {

/// Thrown by poll_interrupt() when the installed check asks to stop. Not a std::exception:
/// no `catch (const std::exception&)` on the way out (a fallback, a last resort) can take it for
/// an error of the computation; the front end that installed the check catches it.
struct Interrupted {};

/// Installs `check` process-wide (replacing any previous one; an empty function removes it).
/// It is called from any thread that runs a polled loop, at most every few milliseconds per
/// thread, and returns true to stop the request; once it returned true, every thread's next
/// poll throws until stop_handled() is called. Install before any request runs.
void set_interrupt_check(std::function<bool()> check);

/// The front end has reported the interruption: later requests run again.
void stop_handled();

namespace detail {
extern std::atomic<bool> interrupt_check_installed;
void poll_interrupt_slow();
}  // namespace detail

/// Called by long loops (once per training step, audit trial, calibration evaluation, sweep
/// point): one relaxed atomic load when no check is installed (the CLI). Throws Interrupted.
inline void poll_interrupt() {
  if (detail::interrupt_check_installed.load(std::memory_order_relaxed)) detail::poll_interrupt_slow();
}

}  // namespace hsdp
