// CSV reader (docs/data.md): streaming, one line at a time; every field checked.
#include <fmt/format.h>

#include <cmath>

#include <algorithm>
#include <charconv>
#include <fstream>

#include "io.hpp"
#include "parts.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::data {
namespace {

using detail::fail_at;
using detail::quoted;

struct Field {
  std::string text;     // trimmed, quotes removed
  std::size_t column;   // 1-based byte column where the field's text starts
  bool quoted = false;  // a quoted field is never a number
};

// Splits one line into fields. Spaces and tabs around a field are not part of it (unless
// one of them is the delimiter); a field may be double-quoted, with "" for a quote inside.
// Quoted fields cannot span lines: the readers work a line at a time.
void split(std::string_view line, char delim, std::string_view name, std::size_t lineno,
           std::vector<Field>& fields) {
  std::size_t count = 0;
  auto blank = [delim](char c) { return (c == ' ' || c == '\t') && c != delim; };
  std::size_t i = 0;
  for (;;) {
    if (fields.size() <= count) fields.emplace_back();
    Field& f = fields[count++];
    f.text.clear();
    f.quoted = false;
    while (i < line.size() && blank(line[i])) ++i;
    f.column = i + 1;
    if (i < line.size() && line[i] == '"') {
      f.quoted = true;
      const std::size_t open = i++;
      for (;;) {
        if (i >= line.size())
          fail_at(name, lineno, open + 1,
                  "unterminated quoted field (a quoted field must end on its own line)");
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            f.text += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        f.text += line[i++];
      }
      while (i < line.size() && blank(line[i])) ++i;
      if (i < line.size() && line[i] != delim)
        fail_at(name, lineno, i + 1,
                fmt::format("unexpected {} after a closing quote (expected the delimiter {})",
                            quoted(line.substr(i, 1)), quoted(std::string_view(&delim, 1))));
    } else {
      const std::size_t start = i;
      while (i < line.size() && line[i] != delim) {
        if (line[i] == '"')
          fail_at(name, lineno, i + 1, "quote inside an unquoted field (quote the whole field)");
        ++i;
      }
      std::size_t end = i;
      while (end > start && blank(line[end - 1])) --end;
      f.text.assign(line.substr(start, end - start));
    }
    if (i >= line.size()) break;
    ++i;  // the delimiter
  }
  fields.resize(count);
}

bool all_numbers(const std::vector<Field>& fields, std::size_t skip) {
  double v = 0;
  for (std::size_t j = 0; j < fields.size(); ++j)
    if (j != skip && (fields[j].quoted || !detail::parse_finite(fields[j].text, v))) return false;
  return true;
}

bool parse_count(const Field& f, std::size_t& out) {
  if (f.quoted || f.text.empty()) return false;
  const auto* end = f.text.data() + f.text.size();
  const auto [p, ec] = std::from_chars(f.text.data(), end, out);
  return ec == std::errc() && p == end;
}

// scikit-learn's bundled CSVs start with "n,d,class name 0,class name 1,...". At least two
// class names are required so that a data row "5,3,M" (two integer features and a text
// label) is not mistaken for such a header.
bool sklearn_header(const std::vector<Field>& fields, std::size_t& n, std::size_t& d) {
  if (fields.size() < 4 || !parse_count(fields[0], n) || !parse_count(fields[1], d)) return false;
  double v = 0;
  for (std::size_t j = 2; j < fields.size(); ++j)
    if (!fields[j].quoted && detail::parse_finite(fields[j].text, v)) return false;
  return d > 0;
}

}  // namespace

// `part`: reading the lines of one process's range (data/shard.hpp): `lines` starts at line
// part->first_line; the layout comes from the file's first line (part->line_one when the range
// starts later); the checks that need every part (no records, the declared count) are left
// to the caller, which gets the header's facts back in `part`.
Dataset detail::read_csv_lines(LineSource& lines, const std::string& name, const CsvOptions& options,
                               CsvPart* part) {
  if (options.storage == FeatureStorage::uint8)
    fail(opt("feature_storage"), "uint8", "float64 or float32 for a CSV file (uint8 is for IDX images)");
  if (options.delimiter == '"' || options.delimiter == '\n' || options.delimiter == '\r' ||
      options.delimiter == '\0')
    fail("delimiter", quoted(std::string_view(&options.delimiter, 1)),
         "a character other than a quote, NUL or a line break");

  if (!options.labeled && options.label_column)
    fail(opt("label_column"), std::to_string(*options.label_column),
         fmt::format("absent when the file has no label column ({})", error_field("no_labels")));

  Dataset data;
  data.source = name;
  std::string line;
  std::size_t lineno = 0;
  if (part && options.skip_lines != 0) fail("skip_lines", std::to_string(options.skip_lines), "0 when reading parts");
  for (; lineno < options.skip_lines; ++lineno)
    if (!lines.next(line))
      fail("skip_lines", std::to_string(options.skip_lines),
           fmt::format("at most the {} lines of {}", lineno, name));

  std::vector<Field> fields;
  std::size_t expected = 0;   // fields per row, fixed by the header or the first row
  std::size_t label = 0;      // label column (options.labeled = false: none, = expected)
  std::size_t features = 0;   // features per row
  std::size_t header_line = 0;
  std::size_t declared_n = 0;  // records promised by a scikit-learn header
  bool declared = false;
  bool first = true;

  auto choose_label = [&](std::size_t width, std::size_t at) {
    if (!options.labeled) {
      // No label column: every field is a feature (label = width matches no field).
      if (width < 1) fail_at(name, at, 1, "0 fields: a row needs at least one feature");
      label = width;
      features = width;
    } else {
      if (width < 2)
        fail_at(name, at, 1,
                fmt::format("{} field(s): a row needs at least one feature and a label", width));
      label = options.label_column.value_or(width - 1);
      if (label >= width)
        fail(opt("label_column"), std::to_string(label),
             fmt::format("in [0, {}]: the rows of {} have {} fields ({}:{})", width - 1, name, width, name, at));
      features = width - 1;
    }
    if (features > options.limits.features)
      fail_at(name, at, 1,
              fmt::format("{} features: more than {} (the most hsdp reads; docs/data.md \"Limits\")", features,
                          options.limits.features));
    expected = width;
  };

  // Decides the layout from the first line's fields; true when it is a header.
  auto decide = [&](std::size_t at) {
    std::size_t n = 0;
    std::size_t d = 0;
    const bool sk = options.header != CsvOptions::Header::absent && sklearn_header(fields, n, d);
    bool header = options.header == CsvOptions::Header::present || sk;
    if (options.header == CsvOptions::Header::auto_detect && !header) {
      const std::size_t width = fields.size();
      const std::size_t lab = !options.labeled ? width : options.label_column.value_or(width == 0 ? 0 : width - 1);
      header = !all_numbers(fields, lab);
    }
    if (header) {
      header_line = at;
      if (sk && !options.labeled)  // its rows are d features and a label
        fail_at(name, at, 1,
                fmt::format("a scikit-learn header \"n,d,class names\" (n = {}, d = {}): its rows have a label "
                            "column, but the file is read without labels ({})",
                            n, d, error_field("no_labels")));
      if (sk) {
        declared = true;
        declared_n = n;
        choose_label(d + 1, at);
      } else {
        choose_label(fields.size(), at);
      }
      return true;
    }
    choose_label(fields.size(), at);
    return false;
  };
  if (part) {
    lineno = part->first_line - 1;
    if (!part->owns_line_one) {
      // The range starts after line 1: the layout is line 1's. The process that holds line 1
      // reports what is wrong with it; this one then stops reading (an empty part).
      first = false;
      try {
        if (!part->line_one || part->line_one->find_first_not_of(" \t") == std::string::npos)
          throw InvalidArgument("no layout");
        split(*part->line_one, options.delimiter, name, 1, fields);
        decide(1);
      } catch (const InvalidArgument&) {
        part->layout_failed = true;
        return data;
      }
    }
  }

  while (lines.next(line)) {
    ++lineno;
    if (line.find_first_not_of(" \t") == std::string::npos)
      fail_at(name, lineno, 1, "empty line (every line must be a record)");
    split(line, options.delimiter, name, lineno, fields);

    if (first) {
      first = false;
      if (decide(lineno)) continue;
    }

    if (fields.size() != expected) {
      const std::size_t column =
          fields.size() > expected ? fields[expected].column : line.size() + 1;
      fail_at(name, lineno, column,
              fmt::format("{} fields, expected {} ({})", fields.size(), expected,
                          header_line ? fmt::format("as declared by the header on line {}",
                                                    header_line)
                                      : "as in the first row"));
    }
    // The limits, before the record is stored (a gzip of a few kilobytes can hold billions).
    if (data.n >= options.limits.records)
      fail_at(name, lineno, 1,
              fmt::format("more than {} records (the most hsdp reads from one file; docs/data.md \"Limits\")",
                          options.limits.records));
    if ((data.n + 1) * features > options.limits.values)
      fail_at(name, lineno, 1,
              fmt::format("more than {} feature values ({} records x {} features; docs/data.md \"Limits\")",
                          options.limits.values, data.n + 1, features));
    if (declared && !part && data.n == declared_n)
      fail_at(name, lineno, 1,
              fmt::format("more records than the {} declared by the header on line {}",
                          declared_n, header_line));
    for (std::size_t j = 0; j < fields.size(); ++j) {
      const Field& f = fields[j];
      if (j == label) {
        if (f.text.empty()) fail_at(name, lineno, f.column, "empty label");
        data.raw_labels.push_back(f.text);
        continue;
      }
      double v = 0;
      std::string why;
      if (f.quoted || !detail::parse_finite(f.text, v, &why))
        fail_at(name, lineno, f.column,
                fmt::format("feature {}: {} is {} (features must be finite float64 numbers)",
                            j, quoted(f.text), f.quoted ? "quoted text" : why));
      if (options.storage == FeatureStorage::float32) {
        const auto f32 = static_cast<float>(v);
        if (!std::isfinite(f32))
          fail_at(name, lineno, f.column,
                  fmt::format("feature {}: {} is outside the float32 range (feature storage "
                              "float32 holds |values| up to about 3.4e38)",
                              j, quoted(f.text)));
        data.x32.push_back(f32);
      } else {
        data.x.push_back(v);
      }
    }
    data.origin.push_back(lineno);
    ++data.n;
  }
  data.storage = options.storage;
  if (part) {
    part->declared = declared;
    part->declared_n = declared_n;
    part->header_line = header_line;
    part->lines = lineno;
    data.d = features;
    return data;
  }
  if (declared && data.n != declared_n)
    fail_at(name, header_line, 1,
            fmt::format("the header declares {} records but the file has {}", declared_n,
                        data.n));
  if (data.n == 0) fail_at(name, lineno + 1, 1, "no records");
  data.d = features;
  return data;
}

Dataset read_csv(std::istream& in, const std::string& name, const CsvOptions& options) {
  auto lines = detail::istream_lines(in, name, options.limits);
  return detail::read_csv_lines(*lines, name, options);
}

Dataset read_csv(const std::string& path, const CsvOptions& options) {
  auto lines = detail::open_lines(path, options.limits);
  return detail::read_csv_lines(*lines, path, options);
}

}  // namespace hsdp::data
