#include "train_flags.hpp"

#include <string>

#include "field_names.hpp"

namespace hsdp::cli {

void add_train_flags(CLI::App& sub, TrainFlags& o) {
  // One flag per field of the training request (TrainSpec::fields()), bound to its member so
  // that the help shows its type and default.
  for (const train::TrainField& field : train::TrainSpec::fields()) {
    const std::string name = flag(field.name);
    const std::string help(field.help);
    CLI::Option* option = nullptr;
    if (field.flag) option = sub.add_flag(name, o.*field.flag, help);
    else if (field.real) option = sub.add_option(name, o.*field.real, help);
    else if (field.word) option = sub.add_option(name, o.*field.word, help);
    else if (field.optional_real) option = sub.add_option(name, o.*field.optional_real, help);
    else if (field.optional_integer) option = sub.add_option(name, o.*field.optional_integer, help);
    else option = sub.add_option(name, o.*field.optional_word, help);
    if (field.required) option->required();
    else if (field.has_default() && !field.is_switch()) option->capture_default_str();
  }
}

}  // namespace hsdp::cli
