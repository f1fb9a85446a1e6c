// The cancellation hook (include/hsdp/interrupt.hpp).
#include "hsdp/interrupt.hpp"

#include <chrono>
#include <memory>
#include <mutex>

namespace hsdp {

namespace detail {
std::atomic<bool> interrupt_check_installed{false};
}  // namespace detail

namespace {

std::mutex check_mutex;                 // guards `check` against a concurrent set_interrupt_check
std::shared_ptr<std::function<bool()>> check;
std::atomic<bool> stop_requested{false};  // the check said stop: every thread's poll throws

// The check is called at most every 5 ms per thread: a training step can take a microsecond,
// and Python's check takes the GIL.
constexpr auto kInterval = std::chrono::milliseconds(5);

}  // namespace

void set_interrupt_check(std::function<bool()> c) {
  std::lock_guard lock(check_mutex);
  check = c ? std::make_shared<std::function<bool()>>(std::move(c)) : nullptr;
  stop_requested = false;
  detail::interrupt_check_installed = check != nullptr;
}

void stop_handled() { stop_requested = false; }

void detail::poll_interrupt_slow() {
  if (stop_requested.load(std::memory_order_relaxed)) throw Interrupted{};
  thread_local std::chrono::steady_clock::time_point next{};
  const auto now = std::chrono::steady_clock::now();
  if (now < next) return;
  next = now + kInterval;
  std::shared_ptr<std::function<bool()>> c;
  {
    std::lock_guard lock(check_mutex);
    c = check;
  }
  if (c && (*c)()) {
    stop_requested = true;
    throw Interrupted{};
  }
}

}  // namespace hsdp
