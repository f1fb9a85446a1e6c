#include "io.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "hsdp/errors.hpp"

namespace hsdp::data::detail {

void fail_at(std::string_view name, std::size_t line, std::size_t column, std::string_view what) {
  throw InvalidArgument(fmt::format("{}:{}:{}: {}", name, line, column, what));
}

void fail_at_byte(std::string_view name, std::uint64_t offset, std::string_view what) {
  throw InvalidArgument(fmt::format("{}: byte {}: {}", name, offset, what));
}

std::string quoted(std::string_view token) {
  constexpr std::size_t shown = 40;
  std::string out = "'";
  for (std::size_t i = 0; i < token.size() && i < shown; ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\')
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  if (token.size() > shown) out += "...";
  return out + "'";
}

bool parse_finite(std::string_view text, double& value, std::string* why) {
  auto reason = [&](const char* r) {
    if (why) *why = r;
    return false;
  };
  if (text.empty()) return reason("empty");
  std::string_view body = text;
  // std::from_chars rejects a leading '+', but LIBSVM labels are written "+1".
  if (body.front() == '+') {
    body.remove_prefix(1);
    if (body.empty() || body.front() == '-' || body.front() == '+') return reason("not a number");
  }
  const auto* first = body.data();
  const auto* last = body.data() + body.size();
  const auto [end, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range) return reason("out of the float64 range");
  if (ec != std::errc() || end != last) return reason("not a number");
  if (!std::isfinite(value)) return reason("not finite");
  return true;
}

namespace {

// Where the (possibly compressed) bytes come from.
class RawInput {
 public:
  virtual ~RawInput() = default;
  virtual std::size_t read(std::uint8_t* out, std::size_t size) = 0;
  // Passes over up to `count` bytes; returns how many.
  virtual std::uint64_t skip(std::uint64_t count) {
    std::vector<std::uint8_t> scratch(std::min<std::uint64_t>(count, 1 << 16));
    std::uint64_t done = 0;
    while (done < count) {
      const std::size_t got = read(scratch.data(), static_cast<std::size_t>(std::min<std::uint64_t>(count - done, scratch.size())));
      if (got == 0) break;
      done += got;
    }
    return done;
  }
};

class FileInput final : public RawInput {
 public:
  explicit FileInput(const std::string& path) : path_(path) {
    file_ = std::fopen(path.c_str(), "rb");
    if (file_ == nullptr)
      fail("path", path, fmt::format("a readable file ({})", std::strerror(errno)));
    // fopen opens a directory; its first read would fail with a message naming no field.
    struct stat st {};
    if (::fstat(::fileno(file_), &st) == 0 && S_ISDIR(st.st_mode)) {
      std::fclose(file_);
      fail("path", path, "a readable file (it is a directory)");
    }
  }
  FileInput(const FileInput&) = delete;
  FileInput& operator=(const FileInput&) = delete;
  ~FileInput() override { std::fclose(file_); }
  std::size_t read(std::uint8_t* out, std::size_t size) override {
    const std::size_t got = std::fread(out, 1, size, file_);
    if (got < size && std::ferror(file_))
      throw InvalidArgument(fmt::format("{}: cannot read: {}", path_, std::strerror(errno)));
    return got;
  }
  std::uint64_t skip(std::uint64_t count) override {
    // A seek, clamped to the end of the file.
    const off_t here = ::ftello(file_);
    if (here < 0 || ::fseeko(file_, 0, SEEK_END) != 0)
      throw InvalidArgument(fmt::format("{}: cannot seek: {}", path_, std::strerror(errno)));
    const off_t end = ::ftello(file_);
    const auto step = static_cast<off_t>(std::min<std::uint64_t>(count, static_cast<std::uint64_t>(end - here)));
    if (::fseeko(file_, here + step, SEEK_SET) != 0)
      throw InvalidArgument(fmt::format("{}: cannot seek: {}", path_, std::strerror(errno)));
    return static_cast<std::uint64_t>(step);
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

class MemoryInput final : public RawInput {
 public:
  explicit MemoryInput(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  std::size_t read(std::uint8_t* out, std::size_t size) override {
    const std::size_t n = std::min(size, bytes_.size() - pos_);
    if (n > 0) std::memcpy(out, bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
};

// Plain bytes, or gzip decompressed on the fly (detected from the magic bytes 1f 8b).
// zlib's own gzread would silently ignore bytes after the last gzip member and treat a
// truncated stream as a short one; here both are errors, since nothing may be skipped.
class Decoder final : public ByteSource {
 public:
  Decoder(std::unique_ptr<RawInput> input, std::string name)
      : input_(std::move(input)), name_(std::move(name)), in_(1 << 16) {
    fill();
    gzip_ = avail_ >= 2 && in_[0] == 0x1f && in_[1] == 0x8b;
    if (gzip_ && inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK)
      throw InvalidArgument(fmt::format("{}: cannot initialise the gzip decoder", name_));
  }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  ~Decoder() override {
    if (gzip_) inflateEnd(&stream_);
  }

  std::size_t read(std::uint8_t* out, std::size_t size) override {
    std::size_t total = 0;
    while (total < size && !done_) {
      if (pos_ == avail_ && !fill()) {
        if (gzip_ && !at_member_start_)
          throw InvalidArgument(fmt::format("{}: truncated gzip data", name_));
        done_ = true;
        break;
      }
      if (!gzip_) {
        const std::size_t n = std::min(size - total, avail_ - pos_);
        std::memcpy(out + total, in_.data() + pos_, n);
        pos_ += n;
        total += n;
        continue;
      }
      if (at_member_start_) {
        // Between members only another gzip member may follow (concatenated members form
        // one stream, as gzip(1) treats them).
        if (in_[pos_] != 0x1f || (pos_ + 1 < avail_ && in_[pos_ + 1] != 0x8b))
          fail_at_byte(name_, offset_ + pos_,
                       "data after the end of the gzip stream (not another gzip member)");
        if (members_ > 0) inflateReset(&stream_);
        at_member_start_ = false;
      }
      stream_.next_in = in_.data() + pos_;
      stream_.avail_in = static_cast<uInt>(avail_ - pos_);
      const auto want = static_cast<uInt>(std::min<std::size_t>(size - total, 1u << 30));
      stream_.next_out = out + total;
      stream_.avail_out = want;
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      total += want - stream_.avail_out;
      pos_ = avail_ - stream_.avail_in;
      if (rc == Z_STREAM_END) {
        ++members_;
        at_member_start_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw InvalidArgument(fmt::format("{}: invalid gzip data: {}", name_,
                                          stream_.msg ? stream_.msg : zError(rc)));
      }
    }
    return total;
  }

  std::uint64_t skip(std::uint64_t count) override {
    if (gzip_) return ByteSource::skip(count);
    // Plain: what is buffered, then a seek of the input.
    const std::uint64_t buffered = std::min<std::uint64_t>(count, avail_ - pos_);
    pos_ += static_cast<std::size_t>(buffered);
    if (buffered == count) return count;
    const std::uint64_t sought = input_->skip(count - buffered);
    offset_ += avail_ + sought;
    pos_ = avail_ = 0;
    return buffered + sought;
  }

  bool compressed() const override { return gzip_; }

 private:
  // Refills the input buffer once it is used up; false at the end of the input.
  bool fill() {
    offset_ += avail_;
    pos_ = 0;
    avail_ = input_->read(in_.data(), in_.size());
    return avail_ > 0;
  }

  std::unique_ptr<RawInput> input_;
  std::string name_;
  std::vector<std::uint8_t> in_;
  std::size_t pos_ = 0;
  std::size_t avail_ = 0;
  std::uint64_t offset_ = 0;  // compressed bytes before in_[0]
  bool gzip_ = false;
  bool done_ = false;
  bool at_member_start_ = true;
  std::size_t members_ = 0;
  z_stream stream_{};
};

// The checks every line of text gets (LineSource): line `lineno` of `name` is complete, its
// terminator removed.
void check_line(std::string_view name, std::size_t lineno, std::string_view line) {
  if (const auto cr = line.find('\r'); cr != std::string_view::npos)
    fail_at(name, lineno, cr + 1,
            "a carriage return inside the line: lines must end with \\n or \\r\\n (convert a file "
            "with CR-only line ends, as classic Mac OS wrote them, first)");
}

[[noreturn]] void fail_nul(std::string_view name, std::size_t lineno, std::size_t column) {
  fail_at(name, lineno, column,
          fmt::format("a NUL byte: not a text file (binary IDX files are read with {})", error_field("format", "idx")));
}

[[noreturn]] void fail_long_line(std::string_view name, std::size_t lineno, std::uint64_t limit) {
  fail_at(name, lineno, 1,
          fmt::format("a line longer than {} bytes (the longest line hsdp reads; docs/data.md \"Limits\")", limit));
}

constexpr std::string_view kBom = "\xef\xbb\xbf";

class ByteLines final : public LineSource {
 public:
  ByteLines(std::unique_ptr<ByteSource> bytes, std::string name, std::size_t first_line, const DataLimits& limits)
      : bytes_(std::move(bytes)), name_(std::move(name)), buffer_(1 << 16), lineno_(first_line),
        bom_(first_line == 1), limits_(limits) {}

  bool next(std::string& line) override {
    line.clear();
    bool any = false;
    for (;;) {
      if (pos_ == len_) {
        len_ = bytes_->read(buffer_.data(), buffer_.size());
        pos_ = 0;
        total_ += len_;
        if (total_ > limits_.file_bytes)
          throw InvalidArgument(fmt::format(
              "{}: more than {} bytes of data (the largest file hsdp reads; docs/data.md \"Limits\")", name_,
              limits_.file_bytes));
        if (bom_) {  // only the very start of the file may hold a byte-order mark
          bom_ = false;
          if (len_ >= kBom.size() && std::memcmp(buffer_.data(), kBom.data(), kBom.size()) == 0) pos_ = kBom.size();
        }
        if (len_ == 0 || pos_ == len_) {
          if (len_ == 0) return any && finish(line);
          continue;
        }
      }
      any = true;
      const auto* start = reinterpret_cast<const char*>(buffer_.data() + pos_);
      const auto* nl = static_cast<const char*>(std::memchr(start, '\n', len_ - pos_));
      const auto take = static_cast<std::size_t>(nl ? nl - start : static_cast<std::ptrdiff_t>(len_ - pos_));
      // Checked before the bytes are kept: a binary file or an endless line fails at once.
      if (const void* nul = std::memchr(start, '\0', take))
        fail_nul(name_, lineno_, line.size() + static_cast<std::size_t>(static_cast<const char*>(nul) - start) + 1);
      if (line.size() + take > limits_.line_bytes) fail_long_line(name_, lineno_, limits_.line_bytes);
      line.append(start, take);
      pos_ += take;
      if (nl == nullptr) continue;
      ++pos_;  // the newline
      return finish(line);
    }
  }

 private:
  bool finish(std::string& line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    check_line(name_, lineno_, line);
    ++lineno_;
    return true;
  }
  std::unique_ptr<ByteSource> bytes_;
  std::string name_;
  std::vector<std::uint8_t> buffer_;
  std::size_t pos_ = 0;
  std::size_t len_ = 0;
  std::size_t lineno_;
  bool bom_;
  std::uint64_t total_ = 0;
  DataLimits limits_;
};

class StreamLines final : public LineSource {
 public:
  StreamLines(std::istream& in, std::string name, const DataLimits& limits)
      : in_(in), name_(std::move(name)), limits_(limits) {}
  bool next(std::string& line) override {
    if (!std::getline(in_, line)) {
      if (in_.bad()) throw InvalidArgument(fmt::format("{}: read error", name_));
      return false;
    }
    if (lineno_ == 1 && line.compare(0, kBom.size(), kBom) == 0) line.erase(0, kBom.size());
    if (line.size() > limits_.line_bytes) fail_long_line(name_, lineno_, limits_.line_bytes);
    if (const auto nul = line.find('\0'); nul != std::string::npos) fail_nul(name_, lineno_, nul + 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    check_line(name_, lineno_, line);
    ++lineno_;
    return true;
  }

 private:
  std::istream& in_;
  std::string name_;
  std::size_t lineno_ = 1;
  DataLimits limits_;
};

}  // namespace

std::uint64_t ByteSource::skip(std::uint64_t count) {
  std::vector<std::uint8_t> scratch(static_cast<std::size_t>(std::min<std::uint64_t>(count, 1 << 16)));
  std::uint64_t done = 0;
  while (done < count) {
    const std::size_t got =
        read(scratch.data(), static_cast<std::size_t>(std::min<std::uint64_t>(count - done, scratch.size())));
    if (got == 0) break;
    done += got;
  }
  return done;
}

std::size_t LimitedBytes::read(std::uint8_t* out, std::size_t size) {
  const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(size, left_));
  if (want == 0) return 0;
  const std::size_t got = inner_.read(out, want);
  left_ -= got;
  return got;
}

std::unique_ptr<LineSource> byte_lines(std::unique_ptr<ByteSource> bytes, const std::string& name,
                                       std::size_t first_line, const DataLimits& limits) {
  return std::make_unique<ByteLines>(std::move(bytes), name, first_line, limits);
}

std::unique_ptr<LineSource> open_lines(const std::string& path, const DataLimits& limits) {
  return std::make_unique<ByteLines>(open_bytes(path), path, 1, limits);
}

std::unique_ptr<LineSource> open_lines(const std::string& path, const Param& field) {
  try {
    return open_lines(path);
  } catch (const InvalidArgument& e) {  // name the caller's field, not the reader's "path"
    if (e.field() != "path") throw;
    fail(field, e.value(), e.range());
  }
}

std::unique_ptr<LineSource> istream_lines(std::istream& in, const std::string& name, const DataLimits& limits) {
  return std::make_unique<StreamLines>(in, name, limits);
}

std::unique_ptr<ByteSource> open_bytes(const std::string& path) {
  return std::make_unique<Decoder>(std::make_unique<FileInput>(path), path);
}

std::unique_ptr<ByteSource> memory_bytes(std::span<const std::uint8_t> bytes,
                                         const std::string& name) {
  return std::make_unique<Decoder>(std::make_unique<MemoryInput>(bytes), name);
}

}  // namespace hsdp::data::detail
