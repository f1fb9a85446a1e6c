// The `hsdp` command. Exit status: 0 success, 2 invalid input (the message names the
// parameter and its allowed range), 1 internal error. Under mpirun with more than one
// process (docs/distributed.md) `train` runs data-parallel, and an error on any process
// stops the job: "hsdp: error: rank R: ..." and MPI_Abort with that status.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <streambuf>
#include <unistd.h>
#include <stdexcept>

#include <algorithm>
#include <iostream>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "field_names.hpp"
#include "hsdp/run_spec.hpp"
#include "hsdp/train/train_spec.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/train/distributed.hpp"
#include "hsdp/version.hpp"

namespace hsdp::cli {
std::vector<Command>& commands() {
  static std::vector<Command> registered;
  return registered;
}
}  // namespace hsdp::cli

namespace {

// Ends the process with `status`: under mpirun with several processes an error stops the
// whole job (the message names this rank); otherwise as a plain process.
// Standard output is checked at the end (docs/input.md "Output files"): everything printed is
// flushed, and a write that failed (a full disk, `> /dev/full`, a file-size limit: SIGXFSZ is
// ignored, so that the write fails with EFBIG) is an error, exit status 1, never a silent 0.
// std::cout writes through this buffer, which keeps the system's reason of the first failure.
class StandardOutput : public std::streambuf {
 public:
  int error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (flush_buffer() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return flush_buffer(); }

 public:
  StandardOutput() { setp(buffer_, buffer_ + sizeof buffer_); }

 private:
  int flush_buffer() {
    const char* p = pbase();
    while (p < pptr()) {
      const ssize_t w = ::write(STDOUT_FILENO, p, static_cast<std::size_t>(pptr() - p));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        if (error_ == 0) error_ = w < 0 ? errno : EIO;
        setp(buffer_, buffer_ + sizeof buffer_);  // dropped: the command reports the failure
        return -1;
      }
      p += w;
    }
    setp(buffer_, buffer_ + sizeof buffer_);
    return error_ == 0 ? 0 : -1;
  }
  char buffer_[1 << 16];
  int error_ = 0;
};

StandardOutput& standard_output() {
  // Never destroyed: std::cout is flushed once more by the runtime after every static object
  // of this program is gone (std::ios_base::Init's destructor), and a buffer that were a static
  // object would be destroyed by then (AddressSanitizer: SEGV in std::ostream::flush at exit).
  // Reachable from this pointer, so no leak checker counts it.
  static StandardOutput* const buffer = new StandardOutput;
  return *buffer;
}

// The system's reason the report could not be written, or empty when every write succeeded.
std::string standard_output_error() {
  std::cout.flush();
  std::fflush(stdout);  // anything written through stdio (none expected)
  if (const int e = standard_output().error(); e != 0) return std::strerror(e);
  if (std::ferror(stdout) || std::cout.fail()) return "a write failed";
  return {};
}

int finish(int status, const std::string& message = {}, const char* kind = "error") {
  namespace dist = hsdp::train::distributed;
  if (dist::world().size > 1 && status != 0)
    dist::abort_job(kind == std::string_view("error") ? message : kind + (": " + message), status);
  if (!message.empty()) std::cerr << "hsdp: " << kind << ": " << hsdp::escape_controls(message) << "\n";
  if (const std::string why = standard_output_error(); !why.empty()) {
    std::cerr << "hsdp: error: standard output: the report could not be written (" << why << ")\n";
    if (status == 0) status = 1;
  }
  dist::finalize();
  return status;
}

// Every value typed on the command line is read by the library's parse of its type, before the
// parser converts it (CLI11 saturates 9223372036854775808 to ...807 and reads '' as "not
// given"): an empty value, an integer beyond 64 bits or a number beyond the float64 range is an
// error naming the flag with the text as typed. One rule for every option of every command, by
// the type the option declares.
// A field whose value is true or false (a run's drop_last, order_known; the training run's).
bool is_boolean(const std::string& field) {
  for (const hsdp::RunField& f : hsdp::RunSpec::fields())
    if (f.name == field) return f.type == hsdp::RunField::Type::boolean;
  for (const hsdp::train::TrainField& f : hsdp::train::TrainSpec::fields())
    if (f.name == field) return f.choices == "true|false";
  return false;
}

void read_values_through_the_library(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_expected_min() == 0 || option->get_name().empty()) continue;  // a switch; help
    const std::string type = option->get_type_name();
    const std::string field = hsdp::cli::field_of_flag(option->get_name());
    option->check(CLI::Validator(
        [type, field](std::string& text) -> std::string {
          const hsdp::Param name = hsdp::opt(field);
          if (text.empty())
            hsdp::fail(name, "(empty)", type == "INT"     ? "an integer"
                                        : type == "UINT"  ? "an integer >= 0"
                                        : type == "FLOAT" ? "a number"
                                        : is_boolean(field) ? "true or false"
                                                          : "a value");
          if (type == "INT") hsdp::parse_integer(name, text);
          else if (type == "UINT") hsdp::parse_unsigned(name, text);
          else if (type == "FLOAT") hsdp::parse_real(name, text);
          return {};
        },
        "", "value"));
  }
  for (CLI::App* sub : app.get_subcommands({})) read_values_through_the_library(*sub);
}

}  // namespace

int main(int argc, char** argv) {
  namespace dist = hsdp::train::distributed;
  const dist::World world = dist::init(&argc, &argv);
  // A file-size limit makes a write fail with EFBIG (reported, naming the output) instead of
  // killing the command with its staged files left behind (docs/input.md "Output files").
  std::signal(SIGXFSZ, SIG_IGN);
  std::cout.rdbuf(&standard_output());
  // Messages and reports name the library's fields as this command's flags.
  hsdp::use_field_names(hsdp::cli::flag_names(), hsdp::cli::flag_names());
  CLI::App app{"hsdp: differential privacy of the last iterate of noisy gradient descent"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("hsdp {}", hsdp::version()), "Print the version and exit");
  auto& registered = hsdp::cli::commands();
  std::sort(registered.begin(), registered.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::vector<std::function<int()>> commands;
  for (const auto& c : registered) commands.push_back(c.add(app));
  read_values_through_the_library(app);
  // The command typed ("account", "audit exact"), for the last resort below.
  std::string command = "hsdp";
  for (int i = 1; i < argc && argv[i][0] != '-'; ++i) command += std::string(" ") + argv[i];
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return finish(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return finish(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return finish(app.exit(e));
  } catch (const CLI::ParseError& e) {
    // Every message of the command reads "hsdp: error: ..."; a command it does not know is
    // named (the parser only says that one is required).
    std::string message = e.what();
    std::string names;
    bool known = false;
    for (const auto& c : registered) {
      names += (names.empty() ? "" : ", ") + c.name;
      known = known || (argc > 1 && c.name == argv[1]);
    }
    if (argc > 1 && argv[1][0] != '-' && !known)
      message = fmt::format("unknown command '{}': must be one of {}", argv[1], names);
    std::cerr << "hsdp: error: " << hsdp::escape_controls(message) << "\nRun with --help for more information.\n";
    return finish(2, world.size > 1 ? "invalid command line (above)" : "");
  } catch (const hsdp::InvalidArgument& e) {  // a flag's value, read by the library
    return finish(2, e.what());
  }
  if (world.size > 1 && !app.got_subcommand("train"))
    return finish(2, fmt::format("under mpirun with {} processes only `hsdp train` runs (data-parallel); "
                                 "run other commands as one process",
                                 world.size));
  try {
    // The last resort below, for its test (tests/cli/test_malformed_catalogue.cpp, LastResort):
    // no input can reach it, so the test states this variable (docs/input.md).
    if (const char* what = std::getenv("HSDP_TEST_INTERNAL_ERROR"); what && *what) throw std::logic_error(what);
    for (auto& run : commands) {
      const int status = run();
      if (status >= 0) return finish(status);
    }
    return finish(0);
  } catch (const hsdp::InvalidArgument& e) {
    return finish(2, e.what());
  } catch (const std::bad_alloc&) {
    return finish(1, hsdp::internal_error(command, "out of memory (std::bad_alloc)"), "internal error");
  } catch (const std::exception& e) {
    return finish(1, hsdp::internal_error(command, e.what()), "internal error");
  } catch (...) {
    return finish(1, hsdp::internal_error(command, "an exception that is not a std::exception"), "internal error");
  }
}
