// Explicit label mapping and class selection (docs/data.md, "Labels").
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "io.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::data {

std::string LabelMapping::describe() const {
  if (raw.empty()) return "none (labels used as real numbers)";
  // "+1" beside "-1" reads as the sign convention it is; "1" beside "0" does not need it.
  const bool signs = std::any_of(mapped.begin(), mapped.end(), [](double v) { return v < 0; });
  std::string out;
  for (std::size_t i = 0; i < raw.size() && i < mapped.size(); ++i) {
    if (i > 0) out += ", ";
    out += fmt::format("{} -> {}{}", raw[i], signs && mapped[i] > 0 ? "+" : "", mapped[i]);
  }
  return out;
}

namespace {

// The distinct labels of a dataset. When every label is a number they are told apart by
// value ("+1", "1" and "1.0" are one label, shown as first written) and sorted
// numerically; otherwise by text, sorted lexicographically.
struct Distinct {
  bool numeric = true;
  std::vector<std::string> text;        // sorted distinct labels, as first written
  std::vector<std::size_t> of_record;   // index into `text` for each record
  std::vector<double> value;            // numeric value of each distinct label (numeric)
};

Distinct distinct(const Dataset& data) {
  Distinct out;
  std::vector<double> values(data.raw_labels.size());
  for (std::size_t i = 0; i < values.size() && out.numeric; ++i)
    out.numeric = detail::parse_finite(data.raw_labels[i], values[i]);
  out.of_record.resize(data.raw_labels.size());
  if (out.numeric) {
    std::map<double, std::size_t> first;  // value -> first record with it
    for (std::size_t i = 0; i < values.size(); ++i) first.emplace(values[i] + 0.0, i);
    std::map<double, std::size_t> rank;
    for (const auto& [v, i] : first) {
      rank.emplace(v, out.text.size());
      out.text.push_back(data.raw_labels[i]);
      out.value.push_back(v);
    }
    for (std::size_t i = 0; i < values.size(); ++i) out.of_record[i] = rank.at(values[i] + 0.0);
  } else {
    std::map<std::string, std::size_t> rank;
    for (const auto& s : data.raw_labels) rank.emplace(s, 0);
    for (auto& [s, r] : rank) {
      r = out.text.size();
      out.text.push_back(s);
    }
    for (std::size_t i = 0; i < values.size(); ++i) out.of_record[i] = rank.at(data.raw_labels[i]);
  }
  return out;
}

std::string list(const std::vector<std::string>& labels) {
  constexpr std::size_t shown = 12;
  std::string out = "{";
  for (std::size_t i = 0; i < labels.size() && i < shown; ++i)
    out += (i ? ", " : "") + detail::quoted(labels[i]);
  if (labels.size() > shown) out += fmt::format(", ... ({} in all)", labels.size());
  return out + "}";
}

// Index of `label` among the distinct labels, by value when they are numbers.
std::optional<std::size_t> find(const Distinct& labels, const std::string& label) {
  if (labels.numeric) {
    double v = 0;
    if (!detail::parse_finite(label, v)) return std::nullopt;
    const auto it = std::find(labels.value.begin(), labels.value.end(), v + 0.0);
    if (it == labels.value.end()) return std::nullopt;
    return static_cast<std::size_t>(it - labels.value.begin());
  }
  const auto it = std::find(labels.text.begin(), labels.text.end(), label);
  if (it == labels.text.end()) return std::nullopt;
  return static_cast<std::size_t>(it - labels.text.begin());
}

void require_raw_labels(const Dataset& data) {
  if (data.raw_labels.size() != data.n)
    fail("raw_labels.size()", std::to_string(data.raw_labels.size()),
         fmt::format("n = {} (one raw label per record)", data.n));
  if (data.n == 0) fail("n", "0", "at least 1 record");
}

}  // namespace

std::string_view to_string(LabelKind kind) {
  switch (kind) {
    case LabelKind::plus_minus_one: return "plus-minus-one";
    case LabelKind::zero_one: return "zero-one";
    case LabelKind::classes: return "classes";
    case LabelKind::real: return "real";
  }
  return "real";
}

void map_labels(Dataset& data, LabelKind kind, std::optional<std::string> positive) {
  require_raw_labels(data);
  const bool binary = kind == LabelKind::plus_minus_one || kind == LabelKind::zero_one;
  if (positive && !binary)
    fail("positive", detail::quoted(*positive), "unset unless the label kind is binary");

  std::vector<double> y(data.n);
  LabelMapping mapping;
  if (kind == LabelKind::real) {
    for (std::size_t i = 0; i < data.n; ++i) {
      std::string why;
      if (!detail::parse_finite(data.raw_labels[i], y[i], &why)) {
        const std::size_t where = i < data.origin.size() ? data.origin[i] : i + 1;
        throw InvalidArgument(fmt::format(
            "{}:{}: label {} is {}: real-valued labels must be finite numbers", data.source,
            where, detail::quoted(data.raw_labels[i]), why));
      }
    }
  } else {
    const Distinct labels = distinct(data);
    const std::size_t k = labels.text.size();
    if (binary && k != 2)
      fail("labels", list(labels.text),
           fmt::format("exactly 2 distinct labels for a binary mapping (found {} in {})", k,
                       data.source));
    if (!binary && k < 2)
      fail("labels", list(labels.text),
           fmt::format("at least 2 distinct labels for classes (in {})", data.source));
    std::vector<double> value(k);
    if (binary) {
      // Without a stated positive label, the larger one is positive (sorted last).
      std::size_t pos = 1;
      if (positive) {
        const auto found = find(labels, *positive);
        if (!found)
          fail("positive", detail::quoted(*positive),
               fmt::format("one of the labels {}", list(labels.text)));
        pos = *found;
      }
      const double low = kind == LabelKind::plus_minus_one ? -1.0 : 0.0;
      value[pos] = 1.0;
      value[1 - pos] = low;
      mapping.raw = {labels.text[1 - pos], labels.text[pos]};
      mapping.mapped = {low, 1.0};
    } else {
      for (std::size_t c = 0; c < k; ++c) {
        value[c] = static_cast<double>(c);
        mapping.raw.push_back(labels.text[c]);
        mapping.mapped.push_back(value[c]);
      }
    }
    for (std::size_t i = 0; i < data.n; ++i) y[i] = value[labels.of_record[i]];
  }
  data.y = std::move(y);
  data.labels = std::move(mapping);
}

Dataset select_classes(const Dataset& data, const std::vector<std::string>& raw_labels) {
  require_raw_labels(data);
  if (raw_labels.empty()) fail("raw_labels", "{}", "at least one label to select");
  const Distinct labels = distinct(data);
  std::vector<bool> keep(labels.text.size(), false);
  for (const auto& label : raw_labels) {
    const auto found = find(labels, label);
    if (!found)
      fail("raw_labels", detail::quoted(label),
           fmt::format("labels present in {}: {}", data.source, list(labels.text)));
    if (keep[*found])
      fail("raw_labels", detail::quoted(label), "listed once (it is repeated)");
    keep[*found] = true;
  }
  Dataset out = Dataset::empty_like(data);
  for (std::size_t i = 0; i < data.n; ++i) {
    if (!keep[labels.of_record[i]]) continue;
    out.append_features_of(data, i);
    out.raw_labels.push_back(data.raw_labels[i]);
    if (i < data.origin.size()) out.origin.push_back(data.origin[i]);
    if (i < data.users.size()) out.users.push_back(data.users[i]);
    ++out.n;
  }
  return out;
}

}  // namespace hsdp::data
