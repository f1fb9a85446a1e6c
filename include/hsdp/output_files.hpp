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

/// Writes every file or none. First each destination is checked (a non-empty path, not a
/// directory, not named twice) and each file is written whole to a temporary beside its
/// destination; any failure removes the temporaries and leaves every existing file as it was.
/// Then the temporaries are renamed over their destinations; should a rename fail, the
/// files already renamed are put back as they were (a hard link kept the previous version).
/// Throws InvalidArgument naming the field of the file that could not be written.
void write_files_atomically(const std::vector<OutputFile>& files);

/// One file: write_files_atomically({{path, content, field}}).
void write_file_atomically(const std::string& path, const std::string& content, std::string_view field);

}  // namespace hsdp
