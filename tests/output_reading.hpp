// Reading what `hsdp compare` and the library write: temporary files, CSV tables and SVG plots
// (checked by xmllint), shared by tests/test_compare.cpp and tests/cli/test_compare_cli.cpp.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace hsdp::testing {

inline std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "hsdp_compare_" + std::to_string(::getpid()) + "_" + name;
}

inline std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// xmllint (libxml2) is an independent, strict XML parser: exit 0 iff well-formed.
inline bool well_formed_xml(const std::string& svg) {
  const std::string path = temp_path("check.svg");
  {
    std::ofstream out(path);
    out << svg;
  }
  const int status = std::system(("xmllint --noout " + path + " 2>/dev/null").c_str());
  std::remove(path.c_str());
  return status == 0;
}

// ---- CSV reading --------------------------------------------------------------------------

struct Csv {
  std::vector<std::string> comments;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::size_t column(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return 0;
  }
};

inline std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += c;
    }
  }
  cells.push_back(cell);
  return cells;
}

inline Csv parse_csv(const std::string& text) {
  Csv csv;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      csv.comments.push_back(line);
    } else if (csv.header.empty()) {
      csv.header = split_csv_line(line);
    } else {
      csv.rows.push_back(split_csv_line(line));
      EXPECT_EQ(csv.rows.back().size(), csv.header.size()) << line;
    }
  }
  return csv;
}

inline double cell_value(const std::string& cell) {
  if (cell == "inf") return std::numeric_limits<double>::infinity();
  return std::stod(cell);
}

inline bool has_comment(const Csv& csv, const std::string& fragment) {
  for (const auto& c : csv.comments)
    if (c.find(fragment) != std::string::npos) return true;
  return false;
}

// ---- SVG reading --------------------------------------------------------------------------

struct Frame {
  double x, y, w, h;
};

inline Frame frame_of(const std::string& svg) {
  std::smatch m;
  const std::regex rect(R"re(<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)" fill="none")re");
  EXPECT_TRUE(std::regex_search(svg, m, rect));
  return {std::stod(m[1]), std::stod(m[2]), std::stod(m[3]), std::stod(m[4])};
}

inline std::vector<std::vector<std::pair<double, double>>> polylines(const std::string& svg) {
  std::vector<std::vector<std::pair<double, double>>> out;
  const std::regex poly(R"re(<polyline[^>]*points="([^"]*)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), poly); it != std::sregex_iterator(); ++it) {
    std::vector<std::pair<double, double>> pts;
    std::istringstream in((*it)[1].str());
    std::string pair;
    while (in >> pair) {
      const auto comma = pair.find(',');
      pts.emplace_back(std::stod(pair.substr(0, comma)), std::stod(pair.substr(comma + 1)));
    }
    out.push_back(pts);
  }
  return out;
}

}  // namespace hsdp::testing
