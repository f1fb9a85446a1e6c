// What a command leaves when it is stopped while writing (docs/input.md "Output files"):
// SIGINT, SIGTERM, SIGHUP while the model is staged remove the staged temporary and end the
// command by that signal, the previous output intact; a file-size limit (ulimit -f) makes the
// write fail with EFBIG, reported naming --output, exit 2, nothing left; a report that cannot
// be written to standard output (/dev/full) exits 1 with a message. The staging moment is held
// by the test hook HSDP_TEST_PAUSE_STAGED=<marker> (src/output_files.cpp), as the last resort's
// test states HSDP_TEST_INTERNAL_ERROR.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bad_inputs.hpp"
#include "cli_runner.hpp"

namespace {

namespace fs = std::filesystem;
namespace bad = hsdp::testing::bad;

struct Dir {
  fs::path path;
  explicit Dir(const std::string& name)
      : path(fs::path(::testing::TempDir()) / ("hsdp_output_safety_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
    bad::write(path / "good.csv", bad::good_csv());
    bad::write(path / "m.json", std::string("the previous model\n"));
  }
  ~Dir() {
    if (!::testing::Test::HasFailure()) fs::remove_all(path);
  }
  // Every name in the directory but the inputs and the previous model.
  std::vector<std::string> extra() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) {
      const std::string name = e.path().filename().string();
      if (name != "good.csv" && name != "m.json" && name != "marker" && name != "out" && name != "err")
        out.push_back(name);
    }
    return out;
  }
};

// Starts `hsdp train ... --output m.json` in `dir` with every signal at its default disposition
// (a background job of a shell ignores SIGINT), stdout and stderr to files; `fsize` > 0 sets
// the file-size limit. Returns the child's pid.
pid_t start_train(const Dir& dir, bool pause, rlim_t fsize = 0) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGXFSZ, SIGPIPE}) ::signal(sig, SIG_DFL);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (::chdir(dir.path.c_str()) != 0) ::_exit(120);
  const int out = ::open("out", O_WRONLY | O_CREAT | O_TRUNC, 0644), err = ::open("err", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(out, 1);
  ::dup2(err, 2);
  if (pause) ::setenv("HSDP_TEST_PAUSE_STAGED", "marker", 1);
  if (fsize > 0) {
    const rlimit limit{fsize, fsize};
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ::execl(HSDP_CLI_PATH, HSDP_CLI_PATH, "train", "--data", "good.csv", "--model", "logistic", "--sigma", "1", "--seed",
          "1", "--output", "m.json", static_cast<char*>(nullptr));
  ::_exit(121);
}

bool wait_for(const fs::path& file, pid_t pid) {
  for (int i = 0; i < 200; ++i) {  // 20 s: the machine may be loaded
    if (fs::exists(file)) return true;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return false;  // ended without staging
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

class StagedAtSignal : public ::testing::TestWithParam<int> {};

TEST_P(StagedAtSignal, RemovesTheTemporaryAndEndsByTheSignal) {
  const int sig = GetParam();
  const Dir dir("signal_" + std::to_string(sig));
  const pid_t pid = start_train(dir, true);
  ASSERT_TRUE(wait_for(dir.path / "marker", pid)) << bad::read(dir.path / "err");
  // Staged: the complete model beside m.json, not yet renamed over it.
  const auto staged = dir.extra();
  ASSERT_EQ(staged.size(), 1u);
  EXPECT_EQ(staged[0].rfind(".m.json.tmp.", 0), 0u) << staged[0];
  ::kill(pid, sig);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), sig);
  EXPECT_TRUE(dir.extra().empty()) << dir.extra().front();
  EXPECT_EQ(bad::read(dir.path / "m.json"), "the previous model\n");
}

INSTANTIATE_TEST_SUITE_P(Signals, StagedAtSignal, ::testing::Values(SIGINT, SIGTERM, SIGHUP),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == SIGINT ? "SIGINT" : info.param == SIGTERM ? "SIGTERM" : "SIGHUP";
                         });

// The file-size limit: the write fails with EFBIG (SIGXFSZ is ignored while writing), the error
// names --output, nothing is left and the previous model stays.
TEST(OutputSafety, FileSizeLimitIsAnErrorNamingTheOutput) {
  const Dir dir("efbig");
  const pid_t pid = start_train(dir, false, 1024);  // the model has ~10 kB
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 2);
  const std::string err = bad::read(dir.path / "err");
  EXPECT_NE(err.find("hsdp: error: --output = m.json"), std::string::npos) << err;
  EXPECT_NE(err.find("File too large"), std::string::npos) << err;
  EXPECT_TRUE(dir.extra().empty()) << dir.extra().front();
  EXPECT_EQ(bad::read(dir.path / "m.json"), "the previous model\n");
}

// Standard output that cannot be written: exit 1 and the system's reason, never a silent 0.
TEST(OutputSafety, StandardOutputWriteErrorExitsOne) {
  const auto r = hsdp::testing::run_command(std::string(HSDP_CLI_PATH) + " account --example --json > /dev/full");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("hsdp: error: standard output"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  // A refused command keeps its own status (2) and message.
  const auto bad_flag = hsdp::testing::run_command(std::string(HSDP_CLI_PATH) + " account --example --n 0 > /dev/full");
  EXPECT_EQ(bad_flag.status, 2) << bad_flag.err;
}

// /dev/stdout that is a pipe (no file name: /proc/self/fd/1 reads "pipe:[...]") is written
// through, never "created" beside /proc/self/fd.
TEST(OutputSafety, DevStdoutPipeIsWrittenThrough) {
  const Dir dir("pipe");
  const auto r = hsdp::testing::run_command("cd '" + dir.path.string() + "' && " + HSDP_CLI_PATH +
                                            " train --data good.csv --model logistic --sigma 1 --seed 1 --output "
                                            "/dev/stdout | cat");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"format\": \"hsdp-model\""), std::string::npos) << r.out.substr(0, 200);
  EXPECT_NE(r.out.find("model written to /dev/stdout"), std::string::npos);
  EXPECT_TRUE(dir.extra().empty()) << dir.extra().front();
}

}  // namespace
