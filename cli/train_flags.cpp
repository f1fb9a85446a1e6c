#include "train_flags.hpp"

#include <string>

#include "field_names.hpp"

namespace hsdp::cli {

void add_train_flags(CLI::App& sub, TrainFlags& o) {
  // One flag per field of the training request (TrainSpec::fields()); the library reads each
  // value from its text (TrainSpec::set), so a flag holds a value exactly when it was typed.
  for (const train::TrainField& field : train::TrainSpec::fields()) {
    const std::string name(field.name);
    const std::string help(field.help);
    CLI::Option* option = nullptr;
    if (field.is_switch()) {
      option = sub.add_flag_callback(flag(name), [&o, name] { o.set(name, ""); }, help);
    } else {
      option = sub.add_option_function<std::string>(flag(name), [&o, name](const std::string& text) { o.set(name, text); },
                                                    help);
      option->type_name(field.type == train::TrainField::Type::integer ? "INT"
                        : field.type == train::TrainField::Type::real  ? "FLOAT"
                                                                       : "TEXT");
    }
    if (field.required) option->required();
    else if (field.has_default() && !field.is_switch()) option->default_str(field.default_text());
  }
}

}  // namespace hsdp::cli
