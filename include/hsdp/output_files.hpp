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

/// A file a command reads or writes, and the field that named it (its library name: "data",
/// "model_file", "output"). A standard stream the command writes is named by its descriptor
/// (`fd` 1 or 2) and described by `field` ("standard output").
struct FileUse {
  std::string path;
  std::string field;
  int fd = -1;
};

/// Refuses, before any work, an output that would replace one of the inputs (docs/input.md
/// "Outputs never replace inputs"): InvalidArgument naming both fields ("--output = d.csv: must
/// be another file than --data (./d.csv) ..."). An output is compared as the directory entry
/// the rename would replace: its symbolic links followed, then (device, inode) of its directory
/// and its name, so that `d.csv`, `./d.csv`, an absolute path or a symbolic link to it are one
/// file, whether it exists yet or not; a hard link (another name of the same inode) is another
/// file (only that name is replaced). A stream input (`fd` >= 0) is the regular file it writes
/// to, compared by (device, inode): `--output /proc/self/fd/1 > log.txt` is refused. An output
/// that is a device or a FIFO is written through, never replaced, and is not compared.
void refuse_outputs_over_inputs(const std::vector<FileUse>& outputs, const std::vector<FileUse>& inputs);

/// The standard output and standard error of this process when they are regular files (a
/// redirection `> log.txt`): inputs of refuse_outputs_over_inputs for a command that prints.
std::vector<FileUse> standard_streams();

/// How a file name is stored in a JSON document (docs/input.md "File names are bytes"): '%'
/// and every byte that is not part of a valid UTF-8 sequence are written %HH (two upper-case
/// hex digits), every other byte as it is. Lossless and unambiguous: a name that is valid UTF-8
/// and holds no '%' is stored unchanged, and Python's urllib.parse.unquote_to_bytes gives the
/// name's bytes back.
std::string json_file_name(std::string_view name);

/// The length of the well-formed UTF-8 sequence (RFC 3629) starting at text[at], 1..4; 0 when
/// the byte there does not start one. escape_controls (errors.hpp) writes such a byte as \xHH,
/// so that every message is valid UTF-8 (a file name is bytes).
std::size_t utf8_length_at(std::string_view text, std::size_t at);

}  // namespace hsdp
