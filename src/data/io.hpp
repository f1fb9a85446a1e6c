// Shared plumbing of the data readers: line and byte sources (plain or gzip, file or
// memory), strict number parsing and the "file:line:column: message" errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::data::detail {

/// Throws hsdp::InvalidArgument("<name>:<line>:<column>: <what>").
[[noreturn]] void fail_at(std::string_view name, std::size_t line, std::size_t column,
                          std::string_view what);
/// Throws hsdp::InvalidArgument("<name>: byte <offset>: <what>") (binary formats).
[[noreturn]] void fail_at_byte(std::string_view name, std::uint64_t offset,
                               std::string_view what);

/// A token as it appears in a message: quoted, at most 40 characters, control and
/// non-ASCII bytes escaped as \xHH so a binary file cannot garble the terminal.
std::string quoted(std::string_view token);

/// Parses the whole of `text` as a finite float64 ("+" allowed in front). Returns false on
/// anything else (empty, trailing characters, inf, nan, out of range); `why` says which.
bool parse_finite(std::string_view text, double& value, std::string* why = nullptr);

/// Lines of a text stream with the terminator ("\n" or "\r\n") removed. The text after
/// the last newline is a line if it is not empty, as with std::getline. Every text reader
/// reads through one, so the checks of text are made once, here: a UTF-8 byte-order mark at
/// the start of the file is dropped (it is not part of the first field); a NUL byte (a
/// binary file) or a carriage return inside a line (CR-only line ends) is an error naming
/// <name>:<line>:<column>; a line longer than limits.line_bytes or a file longer than
/// limits.file_bytes (decompressed) is an error before it is held. Lines are numbered from
/// `first_line` (a source that starts inside a file, data/shard.hpp).
class LineSource {
 public:
  virtual ~LineSource() = default;
  /// false at the end of the input.
  virtual bool next(std::string& line) = 0;
};

/// Reads `path` (plain or gzip, detected from its content) in chunks, never whole.
std::unique_ptr<LineSource> open_lines(const std::string& path, const DataLimits& limits = {});
/// The same for a file a request states in `field` (a users file, a feature-ranges file): a
/// missing or unreadable file is an InvalidArgument naming that field, not the reader's "path".
std::unique_ptr<LineSource> open_lines(const std::string& path, const Param& field);
std::unique_ptr<LineSource> istream_lines(std::istream& in, const std::string& name,
                                          const DataLimits& limits = {});

/// Bytes of a binary stream, decompressed on the fly when it is gzip.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// Reads up to `size` bytes; returns how many were read (fewer only at the end).
  virtual std::size_t read(std::uint8_t* out, std::size_t size) = 0;
  /// Passes over up to `count` bytes; returns how many (fewer only at the end). A plain file
  /// seeks; gzip data is decompressed and dropped (it cannot seek).
  virtual std::uint64_t skip(std::uint64_t count);
  /// True when the bytes are decompressed gzip data.
  virtual bool compressed() const { return false; }
};

/// At most `limit` bytes of `inner` (which must outlive it).
class LimitedBytes final : public ByteSource {
 public:
  LimitedBytes(ByteSource& inner, std::uint64_t limit) : inner_(inner), left_(limit) {}
  std::size_t read(std::uint8_t* out, std::size_t size) override;

 private:
  ByteSource& inner_;
  std::uint64_t left_;
};

/// Lines of a byte source (as open_lines reads them), named `name` in messages and numbered
/// from first_line (a byte-order mark is dropped only when first_line = 1).
std::unique_ptr<LineSource> byte_lines(std::unique_ptr<ByteSource> bytes, const std::string& name,
                                       std::size_t first_line = 1, const DataLimits& limits = {});

/// The bytes of `path`. A path that cannot be opened, or names a directory, is an
/// InvalidArgument on the field "path" (value: the path as given), which callers rename to
/// the field that named the file.
std::unique_ptr<ByteSource> open_bytes(const std::string& path);
/// `bytes` must outlive the source.
std::unique_ptr<ByteSource> memory_bytes(std::span<const std::uint8_t> bytes,
                                         const std::string& name);

}  // namespace hsdp::data::detail
