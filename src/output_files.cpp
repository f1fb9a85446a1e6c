#include "hsdp/output_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "hsdp/errors.hpp"

namespace hsdp {

namespace {

namespace fs = std::filesystem;

// A new temporary file beside `path`, named after it ("<dir>/.<name>.<tag>.XXXXXX"); -1 and
// errno on failure.
int temporary_beside(const std::string& path, std::string_view tag, std::string& name) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  name = (dir / fmt::format(".{}.{}.XXXXXX", target.filename().string(), tag)).string();
  return ::mkstemp(name.data());
}

// Writes `content` to a new temporary file beside `file.path` and returns its name; throws
// InvalidArgument naming the file's field (and removes the temporary) on any failure.
std::string stage(const OutputFile& file) {
  const Param field = opt(file.field);
  std::string tmp;
  const int fd = temporary_beside(file.path, "tmp", tmp);
  if (fd < 0)
    fail(field, file.path,
         fmt::format("a writable file path ({} cannot be written: {})",
                     fs::path(file.path).has_parent_path() ? fs::path(file.path).parent_path().string() : ".",
                     std::strerror(errno)));
  std::size_t written = 0;
  int error = 0;
  while (written < file.content.size()) {
    const ssize_t w = ::write(fd, file.content.data() + written, file.content.size() - written);
    if (w < 0) {
      if (errno == EINTR) continue;
      error = errno;
      break;
    }
    written += static_cast<std::size_t>(w);
  }
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  // mkstemp creates 0600; an output is an ordinary file (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (error == 0 && ::fchmod(fd, 0666 & ~mask) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    std::remove(tmp.c_str());
    fail(field, file.path, fmt::format("a writable file path ({})", std::strerror(error)));
  }
  return tmp;
}

// Checks a destination before anything is written.
void check_destination(const OutputFile& file, std::set<std::string>& seen) {
  const Param field = opt(file.field);
  if (file.path.empty()) fail(field, "(empty)", "a file path");
  struct stat st {};
  if (::stat(file.path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    fail(field, file.path, "a writable file path (it is a directory)");
  std::error_code ec;
  const std::string key = fs::weakly_canonical(fs::path(file.path), ec).string();
  if (!seen.insert(ec ? file.path : key).second)
    fail(field, file.path, "a file no other output of the command writes");
}

}  // namespace

void write_files_atomically(const std::vector<OutputFile>& files) {
  std::set<std::string> seen;
  for (const auto& f : files) check_destination(f, seen);
  // Stage every file first: an error in any of them leaves none behind.
  std::vector<std::string> staged;
  try {
    for (const auto& f : files) staged.push_back(stage(f));
  } catch (...) {
    for (const auto& t : staged) std::remove(t.c_str());
    throw;
  }
  // The previous version of each existing destination, kept as a hard link until every
  // rename has succeeded (empty: the destination did not exist, or cannot be linked).
  std::vector<std::string> backup(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::string name;
    const int fd = temporary_beside(files[i].path, "old", name);
    if (fd < 0) continue;
    ::close(fd);
    std::remove(name.c_str());
    if (::link(files[i].path.c_str(), name.c_str()) == 0) backup[i] = name;
  }
  auto drop_backups = [&] {
    for (const auto& b : backup)
      if (!b.empty()) std::remove(b.c_str());
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (std::rename(staged[i].c_str(), files[i].path.c_str()) == 0) continue;
    const int e = errno;
    // Undo: the files renamed so far go back to their previous version (or away).
    for (std::size_t j = 0; j < i; ++j) {
      if (!backup[j].empty()) {
        if (std::rename(backup[j].c_str(), files[j].path.c_str()) == 0) backup[j].clear();
      } else {
        std::remove(files[j].path.c_str());
      }
    }
    for (std::size_t j = i; j < files.size(); ++j) std::remove(staged[j].c_str());
    drop_backups();
    fail(opt(files[i].field), files[i].path, fmt::format("a writable file path ({})", std::strerror(e)));
  }
  drop_backups();
}

void write_file_atomically(const std::string& path, const std::string& content, std::string_view field) {
  write_files_atomically({{path, content, std::string(field)}});
}

}  // namespace hsdp
