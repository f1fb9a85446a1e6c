#include "hsdp/data/users.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "io.hpp"

namespace hsdp::data {

void assign_users(Dataset& data, std::vector<std::string> ids, const Param& field,
                  const std::function<std::string(std::size_t)>& where) {
  const std::string records = fmt::format("one user id per record of {} ({} records)",
                                          data.source.empty() ? std::string("the data") : data.source, data.n);
  if (ids.size() > data.n)
    fail(field, fmt::format("{}: an id past the last record", where(data.n)), records);
  if (ids.size() < data.n)
    fail(field, fmt::format("{} ids, the id of record {} ({}) missing", ids.size(), ids.size() + 1, where(ids.size())),
         records);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto& id = ids[i];
    if (std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isspace(c) != 0; }))
      fail(field, fmt::format("{}: (blank)", where(i)), "a non-blank user id for every record");
    // Ids are compared byte for byte, so "alice " would be another user than "alice": a user
    // split in two under-reports the user-level loss. White space around an id is refused,
    // naming where (docs/input.md "Users files"), never trimmed by a guess.
    const auto blank = [](unsigned char c) { return std::isspace(c) != 0; };
    if (blank(static_cast<unsigned char>(id.front())) || blank(static_cast<unsigned char>(id.back()))) {
      const std::size_t column = blank(static_cast<unsigned char>(id.front())) ? 1 : id.find_last_not_of(" \t\v\f\r\n") + 2;
      fail(field, fmt::format("{} column {}: \"{}\"", where(i), column, id),
           "a user id without white space before or after it (ids are compared byte for byte: \"alice \" and "
           "\"alice\" would be two users)");
    }
  }
  data.users = std::move(ids);
}

void read_users(Dataset& data, const std::string& path, const Param& field) {
  const std::unique_ptr<detail::LineSource> lines = detail::open_lines(path, field);
  std::vector<std::string> ids;
  ids.reserve(data.n);
  std::string line;
  // Stop one line past the records: enough to name the first line too many.
  while (ids.size() <= data.n && lines->next(line)) ids.push_back(line);
  assign_users(data, std::move(ids), field, [&](std::size_t i) { return fmt::format("{}:{}", path, i + 1); });
}

}  // namespace hsdp::data
