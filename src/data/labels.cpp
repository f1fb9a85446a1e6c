// Explicit label mapping and class selection (docs/data.md, "Labels").
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
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
    fail(opt("positive"), detail::quoted(*positive), "unset unless the label kind is binary");

  std::vector<double> y(data.n);
  LabelMapping mapping;
  if (kind == LabelKind::real) {
    for (std::size_t i = 0; i < data.n; ++i) {
      std::string why;
      if (!detail::parse_finite(data.raw_labels[i], y[i], &why))
        throw InvalidArgument(fmt::format("{}: label {} is {}: real-valued labels must be finite numbers",
                                          data.label_place(i), detail::quoted(data.raw_labels[i]), why));
    }
  } else {
    const Distinct labels = distinct(data);
    const std::size_t k = labels.text.size();
    if (binary && k != 2)
      fail("labels", list(labels.text),
           fmt::format("exactly 2 distinct labels for a binary mapping (found {} in {})", k,
                       data.label_file()));
    if (!binary && k < 2)
      fail("labels", list(labels.text),
           fmt::format("at least 2 distinct labels for classes (in {})", data.label_file()));
    std::vector<double> value(k);
    if (binary) {
      // Without a stated positive label, the larger one is positive (sorted last).
      std::size_t pos = 1;
      if (positive) {
        const auto found = find(labels, *positive);
        if (!found)
          fail(opt("positive"), detail::quoted(*positive),
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

std::vector<std::string> label_summary(const Dataset& data) {
  std::unordered_map<std::string, bool> seen;
  std::vector<std::string> out;
  for (const auto& s : data.raw_labels)
    if (seen.emplace(s, true).second) out.push_back(s);
  return out;
}

namespace {

// The labels of a whole data set, from its parts' summaries: a dataset holding one record
// per summary entry, so that distinct(), map_labels() and select_classes() on it decide as
// on the whole data set (the same distinct labels, the same first-written texts, numeric
// iff every label is a number).
Dataset universe_of(const Dataset& part, const std::vector<std::string>& universe) {
  Dataset u;
  u.n = universe.size();
  u.raw_labels = universe;
  u.source = part.source;
  return u;
}

// For each record of `part`, the index of its label among the entries of `u` (the first
// entry equal to it: by value when every label of the whole data set is a number).
std::vector<std::size_t> entries_of(const Dataset& part, const Dataset& u, bool numeric) {
  std::vector<std::size_t> out(part.n);
  if (numeric) {
    std::map<double, std::size_t> at;
    for (std::size_t k = 0; k < u.n; ++k) {
      double v = 0;
      detail::parse_finite(u.raw_labels[k], v);
      at.emplace(v + 0.0, k);
    }
    for (std::size_t i = 0; i < part.n; ++i) {
      double v = 0;
      const auto it = detail::parse_finite(part.raw_labels[i], v) ? at.find(v + 0.0) : at.end();
      if (it == at.end()) throw std::logic_error("a label of a part is missing from the labels of all parts");
      out[i] = it->second;
    }
  } else {
    std::unordered_map<std::string, std::size_t> at;
    for (std::size_t k = 0; k < u.n; ++k) at.emplace(u.raw_labels[k], k);
    for (std::size_t i = 0; i < part.n; ++i) {
      const auto it = at.find(part.raw_labels[i]);
      if (it == at.end()) throw std::logic_error("a label of a part is missing from the labels of all parts");
      out[i] = it->second;
    }
  }
  return out;
}

}  // namespace

void map_labels(Dataset& part, LabelKind kind, std::optional<std::string> positive,
                const std::vector<std::string>& universe) {
  if (part.raw_labels.size() != part.n)
    fail("raw_labels.size()", std::to_string(part.raw_labels.size()),
         fmt::format("n = {} (one raw label per record)", part.n));
  if (kind == LabelKind::real) {
    if (part.n > 0) return map_labels(part, kind, std::move(positive));
    if (positive) fail(opt("positive"), detail::quoted(*positive), "unset unless the label kind is binary");
    part.y.clear();
    part.labels = {};
    return;
  }
  Dataset u = universe_of(part, universe);
  map_labels(u, kind, std::move(positive));  // every check, on the labels of all parts
  const auto entry = entries_of(part, u, distinct(u).numeric);
  part.y.resize(part.n);
  for (std::size_t i = 0; i < part.n; ++i) part.y[i] = u.y[entry[i]];
  part.labels = u.labels;
}

Dataset select_classes(const Dataset& part, const std::vector<std::string>& raw_labels,
                       const std::vector<std::string>& universe) {
  if (part.raw_labels.size() != part.n)
    fail("raw_labels.size()", std::to_string(part.raw_labels.size()),
         fmt::format("n = {} (one raw label per record)", part.n));
  const Dataset u = universe_of(part, universe);
  const Dataset kept = select_classes(u, raw_labels);  // every check, on the labels of all parts
  const Distinct labels = distinct(u);
  std::vector<bool> keep(u.n, false);
  for (const auto& label : kept.raw_labels) {
    const auto found = find(labels, label);
    for (std::size_t k = 0; k < u.n; ++k)
      if (found && labels.of_record[k] == *found) keep[k] = true;
  }
  const auto entry = entries_of(part, u, labels.numeric);
  Dataset out = Dataset::empty_like(part);
  for (std::size_t i = 0; i < part.n; ++i) {
    if (!keep[entry[i]]) continue;
    out.append_features_of(part, i);
    out.raw_labels.push_back(part.raw_labels[i]);
    if (i < part.origin.size()) out.origin.push_back(part.origin[i]);
    ++out.n;
  }
  return out;
}

Dataset select_classes(const Dataset& data, const std::vector<std::string>& raw_labels) {
  require_raw_labels(data);
  // The labels to keep are what a request states as `classes` (`--classes 0 6`).
  if (raw_labels.empty()) fail(opt("classes"), "{}", "at least one label to select");
  const Distinct labels = distinct(data);
  std::vector<bool> keep(labels.text.size(), false);
  for (const auto& label : raw_labels) {
    const auto found = find(labels, label);
    if (!found)
      fail(opt("classes"), detail::quoted(label),
           fmt::format("labels present in {}: {}", data.label_file(), list(labels.text)));
    if (keep[*found])
      fail(opt("classes"), detail::quoted(label), "listed once (it is repeated)");
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
