// File names are bytes, and outputs never replace inputs (docs/input.md): the JSON escape of a
// file name (json_file_name) against an independent decoder, the message escape of bytes that
// are not UTF-8, and refuse_outputs_over_inputs on the spellings of one file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "hsdp/errors.hpp"
#include "hsdp/output_files.hpp"

namespace {

namespace fs = std::filesystem;

// Percent-decoding (RFC 3986 section 2.1), written independently of json_file_name: what
// Python's urllib.parse.unquote_to_bytes does.
std::string percent_decode(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

TEST(FileNames, JsonEscapeOfBytesThatAreNotUtf8) {
  EXPECT_EQ(hsdp::json_file_name("d.csv"), "d.csv");
  EXPECT_EQ(hsdp::json_file_name("d\xff.csv"), "d%FF.csv");
  EXPECT_EQ(hsdp::json_file_name("a%41b"), "a%2541b");  // '%' itself: the rule is unambiguous
  EXPECT_EQ(hsdp::json_file_name("caf\xc3\xa9"), "caf\xc3\xa9");           // U+00E9 kept
  EXPECT_EQ(hsdp::json_file_name("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");  // U+1F600 kept
  EXPECT_EQ(hsdp::json_file_name("\xc0\xaf"), "%C0%AF");                    // overlong '/'
  EXPECT_EQ(hsdp::json_file_name("\xed\xa0\x80"), "%ED%A0%80");             // a surrogate
  EXPECT_EQ(hsdp::json_file_name("\xe2\x82"), "%E2%82");                    // cut short
  EXPECT_EQ(hsdp::json_file_name("\xf4\x90\x80\x80"), "%F4%90%80%80");      // above U+10FFFF
  EXPECT_EQ(hsdp::json_file_name(std::string("a\0b", 3)), std::string("a\0b", 3));  // JSON escapes NUL
}

TEST(FileNames, JsonEscapeIsLosslessOverEveryByte) {
  // Every byte value alone and in pairs: the escape decodes back to the name exactly, and the
  // escaped text is valid UTF-8 (every byte of it starts a well-formed sequence).
  for (int a = 1; a < 256; ++a) {
    for (int b = 0; b < 256; b += 17) {
      const std::string name{static_cast<char>(a), static_cast<char>(b), 'x'};
      const std::string stored = hsdp::json_file_name(name);
      ASSERT_EQ(percent_decode(stored), name) << a << " " << b;
      for (std::size_t i = 0; i < stored.size(); i += hsdp::utf8_length_at(stored, i))
        ASSERT_NE(hsdp::utf8_length_at(stored, i), 0u) << a << " " << b;
    }
  }
}

TEST(FileNames, MessagesEscapeBytesThatAreNotUtf8) {
  EXPECT_EQ(hsdp::escape_controls("d\xff.csv"), "d\\xff.csv");
  EXPECT_EQ(hsdp::escape_controls("caf\xc3\xa9\n"), "caf\xc3\xa9\\n");
  try {
    hsdp::fail(hsdp::opt("data"), "x\xfe.csv", "a readable file");
    FAIL();
  } catch (const hsdp::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("x\\xfe.csv"), std::string::npos) << e.what();
  }
}

class Aliases : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("hsdp_aliases_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sub");
    std::ofstream(dir_ / "d.csv") << "1,0\n";
    fs::create_symlink("d.csv", dir_ / "link.csv");
    fs::create_hard_link(dir_ / "d.csv", dir_ / "hard.csv");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string at(const std::string& name) const { return (dir_ / name).string(); }
  // The field named by the refusal of `output` over `input` (--data), or "" when allowed.
  std::string refused(const std::string& output, const std::string& input) const {
    try {
      hsdp::refuse_outputs_over_inputs({{output, "output"}}, {{input, "data"}});
      return "";
    } catch (const hsdp::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("data ("), std::string::npos) << e.what();
      return e.field();
    }
  }
  fs::path dir_;
};

TEST_F(Aliases, OneFileHoweverSpelled) {
  EXPECT_EQ(refused(at("d.csv"), at("d.csv")), "output");
  EXPECT_EQ(refused((dir_ / "." / "d.csv").string(), at("d.csv")), "output");
  EXPECT_EQ(refused((dir_ / "sub" / ".." / "d.csv").string(), at("d.csv")), "output");
  EXPECT_EQ(refused(at("link.csv"), at("d.csv")), "output");  // the link's target is replaced
  EXPECT_EQ(refused(at("d.csv"), at("link.csv")), "output");
  EXPECT_EQ(refused(at("new.csv"), at("new.csv")), "output");  // not yet there: the same path
}

TEST_F(Aliases, OtherFilesAreAllowed) {
  EXPECT_EQ(refused(at("hard.csv"), at("d.csv")), "");  // another name: only it is replaced
  EXPECT_EQ(refused(at("e.csv"), at("d.csv")), "");
  EXPECT_EQ(refused(at("sub/d.csv"), at("d.csv")), "");
  EXPECT_EQ(refused("/dev/null", "/dev/null"), "");  // written through, never replaced
}

}  // namespace
