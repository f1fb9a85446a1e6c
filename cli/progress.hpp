// The one progress line of the command (docs/input.md "Progress"): on stderr, only when stderr
// is a terminal (nothing when it is piped or redirected, so that outputs and logs never hold
// it), and only for a request that has run longer than a few seconds (kDelay): a short request
// prints nothing. One line rewritten in place with '\r' (at most 10 times a second), ended with
// a newline when the request ends. Used by train and audit mia (steps of training), calibrate
// (the search's evaluations) and compare (the sweep's points).
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

namespace hsdp::cli {

class ProgressLine {
 public:
  static constexpr std::chrono::milliseconds kDelay{2000};
  static constexpr std::chrono::milliseconds kInterval{100};

  ProgressLine() : shown_(::isatty(STDERR_FILENO) == 1), start_(Clock::now()), last_(start_ - kInterval) {}
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() { end(); }

  /// Whether this process can show progress at all (stderr is a terminal).
  bool possible() const { return shown_; }

  /// Shows `text` (computed only when it is shown) as the current state.
  void show(const std::function<std::string()>& text) {
    if (!shown_) return;
    const auto now = Clock::now();
    if (now - start_ < kDelay || now - last_ < kInterval) return;
    last_ = now;
    const std::string line = text();
    std::fprintf(stderr, "\r%s\033[K", line.c_str());  // \033[K: the rest of a longer line cleared
    std::fflush(stderr);
    drawn_ = true;
  }

  /// Ends the line (a newline if anything was shown); later calls show nothing.
  void end() {
    if (drawn_) {
      std::fputc('\n', stderr);
      std::fflush(stderr);
    }
    drawn_ = false;
    shown_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool shown_;
  bool drawn_ = false;
  Clock::time_point start_, last_;
};

/// A bar of `what` (t of T done) on a shared ProgressLine, for the library's progress
/// callbacks (train::Watch::progress, audit::MiaRequest::progress); empty when stderr is not a
/// terminal (the library then skips the calls).
inline std::function<void(std::int64_t, std::int64_t)> progress_bar(std::string what) {
  auto line = std::make_shared<ProgressLine>();
  if (!line->possible()) return {};
  return [line, what = std::move(what)](std::int64_t t, std::int64_t T) {
    if (T <= 0) return;
    line->show([&] {
      constexpr int width = 40;
      const int done = static_cast<int>(width * t / T);
      return "[" + std::string(static_cast<std::size_t>(done), '=') + std::string(static_cast<std::size_t>(width - done), ' ') +
             "] " + std::to_string(100 * t / T) + "% " + what + " " + std::to_string(t) + "/" + std::to_string(T);
    });
    if (t == T) line->end();
  };
}

}  // namespace hsdp::cli
