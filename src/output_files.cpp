#include "hsdp/output_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "hsdp/errors.hpp"

namespace hsdp {

namespace {

namespace fs = std::filesystem;

// Where an output goes (docs/data.md "Output files").
struct Destination {
  const OutputFile* file = nullptr;
  std::string path;        // the file written: the output's path, or the end of its symbolic links
  enum class Kind { create, replace, through } kind = Kind::create;
  struct stat st {};       // the replaced file's (replace) or the device's (through)
  std::string staged;      // the temporary written beside `path` (create, replace)
};

[[noreturn]] void refuse(const OutputFile& file, std::string_view why) {
  fail(opt(file.field), file.path, fmt::format("a writable file path ({})", why));
}

// The end of the chain of symbolic links at `path` (a link is followed, relative to its own
// directory); the last name need not exist. At most 40 links (the system's ELOOP bound).
std::string follow_links(const OutputFile& file) {
  std::string path = file.path;
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    if (hops == 40) refuse(file, "too many levels of symbolic links");
    std::error_code ec;
    const fs::path target = fs::read_symlink(path, ec);
    if (ec) refuse(file, ec.message());
    path = target.is_absolute() ? target.string() : (fs::path(path).parent_path() / target).string();
  }
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
  const int fd = temporary_beside(d.path, "tmp", tmp);
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
  // Stage every new or replaced file first: an error in any of them leaves none behind.
  auto drop_staged = [&] {
    for (auto& d : dest)
      if (!d.staged.empty()) std::remove(d.staged.c_str());
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
  // The previous version of each replaced file, kept as a hard link until every rename has
  // succeeded (empty: the file is new, or cannot be linked).
  std::vector<std::string> backup(dest.size());
  for (std::size_t i = 0; i < dest.size(); ++i) {
    if (dest[i].kind != Destination::Kind::replace) continue;
    std::string name;
    const int fd = temporary_beside(dest[i].path, "old", name);
    if (fd < 0) continue;
    ::close(fd);
    std::remove(name.c_str());
    if (::link(dest[i].path.c_str(), name.c_str()) == 0) backup[i] = name;
  }
  auto drop_backups = [&] {
    for (const auto& b : backup)
      if (!b.empty()) std::remove(b.c_str());
  };
  for (std::size_t i = 0; i < dest.size(); ++i) {
    if (dest[i].kind == Destination::Kind::through) continue;
    if (std::rename(dest[i].staged.c_str(), dest[i].path.c_str()) == 0) {
      dest[i].staged.clear();
      continue;
    }
    const int e = errno;
    // Undo: the files renamed so far go back to their previous version (or away).
    for (std::size_t j = 0; j < i; ++j) {
      if (dest[j].kind == Destination::Kind::through) continue;
      if (!backup[j].empty()) {
        if (std::rename(backup[j].c_str(), dest[j].path.c_str()) == 0) backup[j].clear();
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

}  // namespace hsdp
