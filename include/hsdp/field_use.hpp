// The rule every request follows (DESIGN.md "Stating a run vs the run"): each field the user
// stated is read by the resolved request, or refused naming it and why -- never accepted and
// silently ignored ("--batch-size = 5: must be absent: full batches read every record").
//
// One mechanism for every request. A request knows what was stated: a field holds a value
// exactly when the user stated it (std::optional members, defaults applied by resolution),
// listed by the request's to_map() / stated(). A request's fields are declared in a table, and
// each entry may carry a read condition over the resolved request: nullopt when the resolved
// request reads the field, otherwise why it does not. require_read() applies the table to what
// was stated. A new field joins the rule by declaring itself in its request's table (with its
// condition when some resolutions do not read it); no front end lists special cases: the CLI
// and Python only spell the fields (FieldNames, errors.hpp).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "hsdp/errors.hpp"
#include "hsdp/run.hpp"

namespace hsdp {

/// Why the resolved request `R` does not read a field (it must then be absent), or nullopt
/// when it does.
template <typename R>
using ReadCondition = std::optional<std::string> (*)(const R& resolved);

/// One field of a request and its read condition (nullptr: always read).
template <typename R>
struct ReadRule {
  std::string_view field;
  ReadCondition<R> unread = nullptr;
};

/// "<field> = <value>: must be absent: <why>" (InvalidArgument naming the field as the front
/// end spells it; the value as it was stated).
[[noreturn]] void refuse_unread(std::string_view field, std::string_view value, std::string_view why);

/// A stated field whose text is empty (`--eta ''`, model=""): "<field> = (empty): must be <what>".
[[noreturn]] void refuse_empty(std::string_view field, std::string_view what);

/// The value of a stated field as messages show it: "(empty)" for empty text.
std::string stated_value(std::string_view text);

/// Applies the rule: for each stated field (library name -> the value as stated, in the order
/// given) that has a rule in `rules` with a condition, refuses the first one the resolved
/// request `resolved` does not read.
template <typename R>
void require_read(const FieldValues& stated, std::span<const ReadRule<R>> rules, const R& resolved) {
  for (const auto& [field, value] : stated)
    for (const ReadRule<R>& rule : rules)
      if (rule.field == field && rule.unread)
        if (const auto why = rule.unread(resolved)) refuse_unread(field, value, *why);
}

}  // namespace hsdp
