// Public feature ranges from a file (include/hsdp/data/readers.hpp, docs/data.md "Public
// feature ranges"): what a data set's documentation states, never computed from records.
#include <fmt/format.h>

#include <string_view>

#include "hsdp/data/readers.hpp"
#include "hsdp/limits.hpp"
#include "io.hpp"

namespace hsdp::data {

std::vector<FeatureRange> read_feature_ranges(const std::string& path, const Param& field) {
  const std::unique_ptr<detail::LineSource> lines = detail::open_lines(path, field);
  std::vector<FeatureRange> out;
  std::string line;
  for (std::size_t number = 1; lines->next(line); ++number) {
    // One range per feature, at most limits::features of them, and no more lines than the
    // record limit (blank and comment lines included): a gzip bomb is refused as it is read.
    if (number > limits::records)
      fail(field, fmt::format("{}:{}", path, number),
           fmt::format("a file of at most {} lines (docs/data.md \"Limits\")", limits::records));
    std::string_view text(line);
    text = text.substr(0, text.find('#'));
    std::vector<std::string_view> words;
    std::size_t i = 0;
    while (i < text.size()) {
      const std::size_t start = text.find_first_not_of(" \t\r,", i);
      if (start == std::string_view::npos) break;
      const std::size_t end = std::min(text.find_first_of(" \t\r,", start), text.size());
      words.push_back(text.substr(start, end - start));
      i = end;
    }
    if (words.empty()) continue;  // blank or comment
    const std::string where = fmt::format("{}:{}", path, number);
    FeatureRange r;
    std::string why;
    if (words.size() != 2)
      fail(field, fmt::format("{}: {} values", where, words.size()), "two numbers per line: min max");
    for (std::size_t k = 0; k < 2; ++k)
      if (!detail::parse_finite(words[k], k == 0 ? r.min : r.max, &why))
        fail(field, fmt::format("{}: {} ({})", where, detail::quoted(words[k]), why),
             "two finite numbers per line: min max");
    if (!(r.min < r.max))
      fail(field, fmt::format("{}: min {} max {}", where, show(r.min), show(r.max)), "min < max on every line");
    if (out.size() == limits::features)
      fail(field, fmt::format("{}:{}: more than {} ranges", path, number, limits::features),
           fmt::format("one range per feature, at most {} (the most features a record may have; docs/data.md "
                       "\"Limits\")",
                       limits::features));
    out.push_back(r);
  }
  if (out.empty()) fail(field, fmt::format("{}: no ranges", path), "one line \"min max\", or one per feature");
  return out;
}

}  // namespace hsdp::data
