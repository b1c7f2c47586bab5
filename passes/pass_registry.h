// Every pass, registered by kebab-case name in one sorted table.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "passes/pass.h"

namespace gxc {

// Null when no pass has that name.
std::unique_ptr<Pass> createPass(std::string_view name);
std::vector<std::string_view> registeredPassNames();  // sorted

}  // namespace gxc
