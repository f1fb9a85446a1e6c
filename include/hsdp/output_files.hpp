// The files a command writes, committed together or not at all (docs/architecture.md: "nothing
// half-written is left behind"). Every output of a command (hsdp compare --csv --svg, audit
// exact --csv --plot, train --output, predict --output) goes through write_files_atomically.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hsdp {

/// One output of a request: where, what, and the field that named it (its library name,
/// "csv", "svg", "output"; spelled by the front end in messages: `--svg`, `svg`).
struct OutputFile {
  std::string path;
  std::string content;
  std::string field;
};

/// Writes every file or none (docs/data.md "Output files"). First each destination is checked:
/// a non-empty path, not named twice, and what it is. A symbolic link is followed to the file it
/// names (the link stays; a dangling link's target is created). A regular file (or a new one) is
/// written whole to a temporary beside it, given the mode and owner of the file it replaces (a
/// new file: 0666 less the umask; an owner this user cannot give it is refused), then renamed
/// over it. A character device (/dev/null, /dev/stdout's terminal) or a FIFO is never replaced:
/// the content is written through it (a FIFO without a reader is refused at once, never waited
/// on); this cannot be taken back, so devices are written after every temporary is staged and
/// before any rename. A directory, socket or block device is refused. Names up to the
/// directory's NAME_MAX work (the temporary's name is cut to fit). Any failure before the
/// renames removes the temporaries and leaves every existing file as it was; should a rename
/// fail, the files already renamed are put back as they were (a hard link kept the previous
/// version). Throws InvalidArgument naming the field of the file that could not be written,
/// with the system's reason.
void write_files_atomically(const std::vector<OutputFile>& files);

/// One file: write_files_atomically({{path, content, field}}).
void write_file_atomically(const std::string& path, const std::string& content, std::string_view field);

}  // namespace hsdp
