// The users of a data set's records (federated training with several records per user,
// docs/distributed.md "Federated training"): one user id per record, in record order.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hsdp/data/dataset.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::data {

/// Sets data.users to `ids` (one per record of `data`, any non-blank text). `where(i)` names
/// the place of id i (0-based) in the caller's terms ("users.txt:3", "users[2]"); a count
/// mismatch or a blank id is an InvalidArgument naming `field` and that place.
void assign_users(Dataset& data, std::vector<std::string> ids, const Param& field,
                  const std::function<std::string(std::size_t)>& where);

/// Reads one user id per line of `path` (plain or gzip; the line terminator removed) and
/// assigns them to the records of `data` (assign_users, places "path:line").
void read_users(Dataset& data, const std::string& path, const Param& field = opt("users"));

}  // namespace hsdp::data
