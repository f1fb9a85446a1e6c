#include "hsdp/output_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "hsdp/errors.hpp"

namespace hsdp {

namespace {

namespace fs = std::filesystem;

// ---- Staged files and signals (docs/input.md "Output files"). A signal that would end the
// process (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE at their default disposition) while files
// are staged first removes them: the handler unlinks the registered names (unlink(2) is
// async-signal-safe), restores the default disposition and raises the signal again, so the
// process ends as it would have. A signal that a caller handles itself (Python's SIGINT) is
// left to it: the write then ends normally and removes its temporaries. While the renames run
// (a few system calls), a signal is held and raised once they are done, so that the outputs
// are all committed or none. SIGXFSZ (a file-size limit, `ulimit -f`) is ignored while
// writing, so that write(2) fails with EFBIG and the error names the output.

constexpr std::size_t kSlots = 64;
std::array<std::array<char, PATH_MAX>, kSlots> g_staged_names{};
std::array<std::atomic<bool>, kSlots> g_staged_used{};
std::atomic<int> g_holding{0};
std::atomic<int> g_held_signal{0};
constexpr std::array<int, 5> kEndingSignals{SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};

void remove_staged_files() {
  for (std::size_t i = 0; i < kSlots; ++i)
    if (g_staged_used[i].load(std::memory_order_acquire)) ::unlink(g_staged_names[i].data());
}

extern "C" void on_ending_signal(int sig) {
  if (g_holding.load() > 0) {
    g_held_signal.store(sig);
    return;
  }
  const int saved = errno;
  remove_staged_files();
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);  // delivered when the handler returns (the signal is blocked while it runs)
  errno = saved;
}

// A staged name, registered for the handler while it exists (a name longer than PATH_MAX, or
// more than kSlots at once, is not registered: it is still removed on every error).
class StagedName {
 public:
  StagedName() = default;
  explicit StagedName(const std::string& name) { set(name); }
  StagedName(const StagedName&) = delete;
  StagedName& operator=(const StagedName&) = delete;
  ~StagedName() { clear(); }
  void set(const std::string& name) {
    clear();
    if (name.size() >= PATH_MAX) return;
    for (std::size_t i = 0; i < kSlots; ++i) {
      if (g_staged_used[i].load()) continue;
      std::lock_guard<std::mutex> lock(mutex());
      if (g_staged_used[i].load()) continue;
      std::memcpy(g_staged_names[i].data(), name.c_str(), name.size() + 1);
      g_staged_used[i].store(true, std::memory_order_release);
      slot_ = i;
      return;
    }
  }
  void clear() {
    if (slot_) g_staged_used[*slot_].store(false, std::memory_order_release);
    slot_.reset();
  }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  std::optional<std::size_t> slot_;
};

// While alive: the handler installed for every ending signal at its default disposition, and
// SIGXFSZ ignored if it was at its default; the previous dispositions restored after. Nested
// and concurrent writes (threads) share one installation (a count).
class SignalGuard {
 public:
  SignalGuard() {
    std::lock_guard<std::mutex> lock(mutex());
    if (count()++ > 0) return;
    for (std::size_t k = 0; k < kEndingSignals.size(); ++k) {
      struct sigaction old {};
      ::sigaction(kEndingSignals[k], nullptr, &old);
      installed()[k] = !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
      if (!installed()[k]) continue;
      struct sigaction ours {};
      ours.sa_handler = on_ending_signal;
      ::sigfillset(&ours.sa_mask);
      ::sigaction(kEndingSignals[k], &ours, nullptr);
    }
    struct sigaction old {};
    ::sigaction(SIGXFSZ, nullptr, &old);
    xfsz_ignored() = !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
    if (xfsz_ignored()) ::signal(SIGXFSZ, SIG_IGN);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;
  ~SignalGuard() {
    std::lock_guard<std::mutex> lock(mutex());
    if (--count() > 0) return;
    for (std::size_t k = 0; k < kEndingSignals.size(); ++k)
      if (installed()[k]) ::signal(kEndingSignals[k], SIG_DFL);
    if (xfsz_ignored()) ::signal(SIGXFSZ, SIG_DFL);
  }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static int& count() {
    static int n = 0;
    return n;
  }
  static std::array<bool, kEndingSignals.size()>& installed() {
    static std::array<bool, kEndingSignals.size()> v{};
    return v;
  }
  static bool& xfsz_ignored() {
    static bool v = false;
    return v;
  }
};

// While alive (the renames; the creation and registration of a temporary), an ending signal is
// held; the last Hold to end raises it, so that the handler removes what is staged and the
// process ends as it would have, with its outputs all committed or none.
class Hold {
 public:
  Hold() { g_holding.fetch_add(1); }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  ~Hold() {
    if (g_holding.fetch_sub(1) == 1)
      if (const int sig = g_held_signal.exchange(0); sig != 0) ::raise(sig);
  }
};

// The test hook of the signal tests (tests/cli/test_output_signals.cpp; as
// HSDP_TEST_INTERNAL_ERROR, docs/input.md): with HSDP_TEST_PAUSE_STAGED=<file>, once every
// output is staged the write creates <file> and waits up to 30 s for a signal.
void pause_if_tested() {
  const char* marker = std::getenv("HSDP_TEST_PAUSE_STAGED");
  if (marker == nullptr || *marker == '\0') return;
  const int fd = ::open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) ::close(fd);
  for (int i = 0; i < 300; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

// Where an output goes (docs/data.md "Output files").
struct Destination {
  const OutputFile* file = nullptr;
  std::string path;        // the file written: the output's path, or the end of its symbolic links
  enum class Kind { create, replace, through } kind = Kind::create;
  struct stat st {};       // the replaced file's (replace) or the device's (through)
  std::string staged;      // the temporary written beside `path` (create, replace)
  std::shared_ptr<StagedName> registered = std::make_shared<StagedName>();  // `staged`, for the handler
};

[[noreturn]] void refuse(const OutputFile& file, std::string_view why) {
  fail(opt(file.field), file.path, fmt::format("a writable file path ({})", why));
}

// The end of the chain of symbolic links at `path` (a link is followed, relative to its own
// directory); the last name need not exist. At most 40 links (the system's ELOOP bound). A
// link of /proc that names no path (/proc/self/fd/1 of a pipe: "pipe:[123]"; of a deleted
// file: "/x (deleted)") is where the chain ends: the system follows it itself (stat, open).
// Empty, with `why` set, on an error.
std::string follow_links(const std::string& start, std::string& why) {
  std::string path = start;
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    if (hops == 40) {
      why = "too many levels of symbolic links";
      return {};
    }
    std::error_code ec;
    const fs::path target = fs::read_symlink(path, ec);
    if (ec) {
      why = ec.message();
      return {};
    }
    const std::string next = target.is_absolute() ? target.string() : (fs::path(path).parent_path() / target).string();
    if (fs::absolute(fs::path(path), ec).string().rfind("/proc/", 0) == 0) {
      struct stat here {}, there {};
      const bool same = target.is_absolute() && ::stat(path.c_str(), &here) == 0 && ::stat(next.c_str(), &there) == 0 &&
                        here.st_dev == there.st_dev && here.st_ino == there.st_ino;
      if (!same) return path;
    }
    path = next;
  }
}

std::string follow_links(const OutputFile& file) {
  std::string why;
  std::string path = follow_links(file.path, why);
  if (path.empty()) refuse(file, why);
  return path;
}

// The directory of `path` and its file name.
std::pair<std::string, std::string> split(const std::string& path) {
  const fs::path p(path);
  return {p.has_parent_path() ? p.parent_path().string() : std::string("."), p.filename().string()};
}

// A new temporary file beside `path`, named after it (".<name>.<tag>.XXXXXX", the name cut so
// that the whole fits in the directory's NAME_MAX: an output named with 255 bytes works); -1
// and errno on failure.
int temporary_beside(const std::string& path, std::string_view tag, std::string& name) {
  const auto [dir, base] = split(path);
  long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (name_max <= 0) name_max = NAME_MAX;
  const std::size_t room = static_cast<std::size_t>(name_max) - (tag.size() + 9);  // "." ".<tag>." "XXXXXX"
  name = (fs::path(dir) / fmt::format(".{}.{}.XXXXXX", base.substr(0, room), tag)).string();
  return ::mkstemp(name.data());
}

// Writes all of `content` to `fd`; 0 or errno.
int write_all(int fd, const std::string& content) {
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t w = ::write(fd, content.data() + written, content.size() - written);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    written += static_cast<std::size_t>(w);
  }
  return 0;
}

// Checks a destination before anything is written: what it is, and how it will be written.
Destination check_destination(const OutputFile& file, std::set<std::string>& seen) {
  if (file.path.empty()) fail(opt(file.field), "(empty)", "a file path");
  Destination d;
  d.file = &file;
  d.path = follow_links(file);
  const auto [dir, base] = split(d.path);
  long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (name_max <= 0) name_max = NAME_MAX;
  if (base.size() > static_cast<std::size_t>(name_max))
    refuse(file, fmt::format("{}: a file name of {} bytes, at most {} here", std::strerror(ENAMETOOLONG), base.size(),
                             name_max));
  if (::stat(d.path.c_str(), &d.st) == 0) {
    if (S_ISDIR(d.st.st_mode)) refuse(file, "it is a directory");
    if (S_ISREG(d.st.st_mode)) {
      struct stat link {};
      if (::lstat(d.path.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
        refuse(file, "a file with a name: it is an open file that has none (deleted), which cannot be replaced");
      d.kind = Destination::Kind::replace;
    } else if (S_ISCHR(d.st.st_mode) || S_ISFIFO(d.st.st_mode)) {
      d.kind = Destination::Kind::through;  // written through, never replaced
    } else {
      refuse(file, fmt::format("it is a {}: only a regular file, a character device or a FIFO is written",
                               S_ISSOCK(d.st.st_mode) ? "socket" : S_ISBLK(d.st.st_mode) ? "block device" : "special file"));
    }
  } else if (errno != ENOENT) {
    refuse(file, std::strerror(errno));
  }
  std::error_code ec;
  const std::string key = fs::weakly_canonical(fs::path(d.path), ec).string();
  if (!seen.insert(ec ? d.path : key).second)
    fail(opt(file.field), file.path, "a file no other output of the command writes");
  return d;
}

// Writes the content of a new or replaced file to a temporary beside it: the mode and owner of
// the file it replaces (a new file: 0666 less the umask); throws InvalidArgument naming the
// field (and removes the temporary) on any failure.
void stage(Destination& d) {
  const OutputFile& file = *d.file;
  std::string tmp;
  int fd = -1;
  {
    const Hold hold;  // created and registered at once: a signal between them would leave it
    fd = temporary_beside(d.path, "tmp", tmp);
    if (fd >= 0) d.registered->set(tmp);
  }
  if (fd < 0) {
    const int e = errno;
    refuse(file, fmt::format("{}{}", split(d.path).first == "." ? "" : split(d.path).first + ": ", std::strerror(e)));
  }
  int error = write_all(fd, file.content);
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (error == 0) {
    if (d.kind == Destination::Kind::replace) {
      // The replaced file's owner and mode. fchown first (it may clear set-id bits), and only
      // when the ids differ from ours; one we cannot give the file back is refused, never
      // silently changed.
      if ((d.st.st_uid != ::geteuid() || d.st.st_gid != ::getegid()) && ::fchown(fd, d.st.st_uid, d.st.st_gid) != 0) {
        ::close(fd);
        std::remove(tmp.c_str());
        refuse(file, fmt::format("it belongs to uid {} gid {}, which a replacement written by this user cannot keep "
                                 "({})",
                                 d.st.st_uid, d.st.st_gid, std::strerror(errno)));
      }
      if (::fchmod(fd, d.st.st_mode & 07777) != 0) error = errno;
    } else {
      const mode_t mask = ::umask(0);
      ::umask(mask);
      if (::fchmod(fd, 0666 & ~mask) != 0) error = errno;  // mkstemp creates 0600
    }
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    std::remove(tmp.c_str());
    refuse(file, std::strerror(error));
  }
  d.staged = tmp;
}

// Writes the content through a character device or a FIFO (opened for writing, never
// created, truncated or replaced). A FIFO without a reader is refused at once (opening it
// would wait for one).
void write_through(const Destination& d) {
  const OutputFile& file = *d.file;
  const bool fifo = S_ISFIFO(d.st.st_mode);
  const int fd = ::open(d.path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | (fifo ? O_NONBLOCK : 0));
  if (fd < 0) {
    if (fifo && errno == ENXIO) refuse(file, "a FIFO with no reader: start the reader first");
    refuse(file, std::strerror(errno));
  }
  if (fifo) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // a reader may be slow
  int error = write_all(fd, file.content);
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) refuse(file, std::strerror(error));
}

}  // namespace

void write_files_atomically(const std::vector<OutputFile>& files) {
  std::set<std::string> seen;
  std::vector<Destination> dest;
  for (const auto& f : files) dest.push_back(check_destination(f, seen));
  const SignalGuard signals;  // staged files removed on an ending signal; EFBIG instead of SIGXFSZ
  // Stage every new or replaced file first: an error in any of them leaves none behind.
  auto drop_staged = [&] {
    for (auto& d : dest)
      if (!d.staged.empty()) {
        std::remove(d.staged.c_str());
        d.registered->clear();
      }
  };
  try {
    for (auto& d : dest)
      if (d.kind != Destination::Kind::through) stage(d);
    // Devices and FIFOs next (they cannot be taken back): a failure leaves no file changed.
    for (const auto& d : dest)
      if (d.kind == Destination::Kind::through) write_through(d);
  } catch (...) {
    drop_staged();
    throw;
  }
  pause_if_tested();
  // The commit: an ending signal is held until it is done.
  const Hold hold;
  // The previous version of each replaced file, kept as a hard link until every rename has
  // succeeded (empty: the file is new, or cannot be linked), registered like the temporaries.
  std::vector<std::string> backup(dest.size());
  std::vector<StagedName> backup_registered(dest.size());
  for (std::size_t i = 0; i < dest.size(); ++i) {
    if (dest[i].kind != Destination::Kind::replace) continue;
    std::string name;
    const int fd = temporary_beside(dest[i].path, "old", name);
    if (fd < 0) continue;
    ::close(fd);
    std::remove(name.c_str());
    backup_registered[i].set(name);
    if (::link(dest[i].path.c_str(), name.c_str()) == 0) backup[i] = name;
    else backup_registered[i].clear();
  }
  auto drop_backups = [&] {
    for (std::size_t i = 0; i < backup.size(); ++i)
      if (!backup[i].empty()) {
        std::remove(backup[i].c_str());
        backup_registered[i].clear();
      }
  };
  for (std::size_t i = 0; i < dest.size(); ++i) {
    if (dest[i].kind == Destination::Kind::through) continue;
    if (std::rename(dest[i].staged.c_str(), dest[i].path.c_str()) == 0) {
      dest[i].staged.clear();
      dest[i].registered->clear();
      continue;
    }
    const int e = errno;
    // Undo: the files renamed so far go back to their previous version (or away).
    for (std::size_t j = 0; j < i; ++j) {
      if (dest[j].kind == Destination::Kind::through) continue;
      if (!backup[j].empty()) {
        if (std::rename(backup[j].c_str(), dest[j].path.c_str()) == 0) {
          backup[j].clear();
          backup_registered[j].clear();
        }
      } else {
        std::remove(dest[j].path.c_str());
      }
    }
    drop_staged();
    drop_backups();
    refuse(*dest[i].file, std::strerror(e));
  }
  drop_backups();
}

void write_file_atomically(const std::string& path, const std::string& content, std::string_view field) {
  write_files_atomically({{path, content, std::string(field)}});
}

namespace {

// The directory entry a path names once its symbolic links are followed: (device, inode) of its
// directory and its last name. Nothing when it cannot be told (a dangling chain, a missing
// directory: the write or the read reports that itself).
struct Entry {
  dev_t dev = 0;
  ino_t ino = 0;
  std::string name;
  bool operator==(const Entry&) const = default;
};

std::optional<Entry> entry_of(const std::string& path) {
  std::string why;
  const std::string end = follow_links(path, why);
  if (end.empty()) return std::nullopt;
  const auto [dir, base] = split(end);
  struct stat st {};
  if (base.empty() || base == "." || base == ".." || ::stat(dir.c_str(), &st) != 0) return std::nullopt;
  return Entry{st.st_dev, st.st_ino, base};
}

}  // namespace

void refuse_outputs_over_inputs(const std::vector<FileUse>& outputs, const std::vector<FileUse>& inputs) {
  for (const FileUse& out : outputs) {
    if (out.path.empty()) continue;  // refused by the write, naming the field
    struct stat ost {};
    const bool exists = ::stat(out.path.c_str(), &ost) == 0;
    if (exists && !S_ISREG(ost.st_mode)) continue;  // written through, never replaced
    const std::optional<Entry> oe = entry_of(out.path);
    for (const FileUse& in : inputs) {
      bool same = false;
      std::string what;
      if (in.fd >= 0) {
        struct stat ist {};
        same = exists && ::fstat(in.fd, &ist) == 0 && S_ISREG(ist.st_mode) && ist.st_dev == ost.st_dev &&
               ist.st_ino == ost.st_ino;
        what = fmt::format("the file {} goes to", in.field);
      } else {
        const std::optional<Entry> ie = entry_of(in.path);
        same = oe && ie && *oe == *ie;
        what = fmt::format("{} ({})", error_field(in.field), in.path);
      }
      if (same)
        fail(opt(out.field), out.path,
             fmt::format("another file than {}: it is the same file, which the output would replace", what));
    }
  }
}

std::vector<FileUse> standard_streams() {
  std::vector<FileUse> out;
  const std::pair<int, const char*> streams[] = {{STDOUT_FILENO, "standard output"}, {STDERR_FILENO, "standard error"}};
  for (const auto& [fd, name] : streams) {
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) out.push_back({fmt::format("/proc/self/fd/{}", fd), name, fd});
  }
  return out;
}

std::string json_file_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (std::size_t i = 0; i < name.size();) {
    const std::size_t n = utf8_length_at(name, i);
    if (n == 0 || name[i] == '%') {
      out += fmt::format("%{:02X}", static_cast<unsigned char>(name[i]));
      ++i;
    } else {
      out.append(name.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace hsdp
