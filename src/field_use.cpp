#include "hsdp/field_use.hpp"

#include <fmt/format.h>

namespace hsdp {

std::string stated_value(std::string_view text) { return text.empty() ? std::string("(empty)") : std::string(text); }

void refuse_unread(std::string_view field, std::string_view value, std::string_view why) {
  // A switch (stated by its presence) shows as "true".
  fail(opt(field), value.empty() ? std::string("true") : std::string(value), fmt::format("absent: {}", why));
}

void refuse_empty(std::string_view field, std::string_view what) { fail(opt(field), "(empty)", what); }

}  // namespace hsdp
