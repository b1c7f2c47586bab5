// Every op on every dtype docs/model-format.md lists for it has a case in tests/fixtures/ops.json,
// so that each backend's fixture suite runs it there. The pairs are tests/fixtures/op_dtypes.json,
// which mirrors the format's op table (a row's inputs column and the dtype paragraph above the
// table); make_op_fixtures.py (op_cases_dtypes.py) writes a case for each. A failure names each
// pair without a case, or an op the table and the op kinds disagree on.
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ir/op_kinds.h"
#include "tests/unit/op_fixtures.h"

namespace gxc {
namespace {

using nlohmann::json;

json readTable() {
  std::ifstream file(std::string(GXC_FIXTURE_DIR) + "/op_dtypes.json");
  if (!file) return json();
  return json::parse(file);
}

struct OpDTypes {
  size_t input = 0;  // which operand's dtype the table names (where's a, not its bool cond)
  std::vector<std::string> dtypes;
};

std::map<std::string, OpDTypes> tableOps(const json& table) {
  std::map<std::string, OpDTypes> ops;
  for (const auto& [op, spec] : table.at("ops").items()) {
    OpDTypes entry;
    const json& sets = spec.is_object() ? spec.at("dtypes") : spec;
    if (spec.is_object()) entry.input = spec.value("input", size_t{0});
    for (const json& set : sets) {
      std::string name = set.get<std::string>();
      if (table.at("sets").contains(name)) {
        for (const json& dtype : table.at("sets").at(name))
          entry.dtypes.push_back(dtype.get<std::string>());
      } else {
        entry.dtypes.push_back(name);
      }
    }
    ops[op] = entry;
  }
  return ops;
}

TEST(OpFixtureCoverage, TableNamesEveryModelOp) {
  json table = readTable();
  ASSERT_FALSE(table.is_null()) << "tests/fixtures/op_dtypes.json is missing";
  std::map<std::string, OpDTypes> ops = tableOps(table);
  std::set<std::string> exempt;
  for (const json& op : table.at("exempt")) {
    exempt.insert(op.get<std::string>());
    EXPECT_TRUE(parseOpKind(op.get<std::string>())) << "exempt op " << op << " is no op";
  }
  for (std::string_view name : modelOpNames()) {
    std::string op(name);
    EXPECT_TRUE(ops.count(op) || exempt.count(op))
        << "model op " << op << " is neither in op_dtypes.json nor exempt: add its dtypes";
  }
  for (const auto& [op, entry] : ops) {
    auto kind = parseOpKind(op);
    EXPECT_TRUE(kind && isModelOp(*kind)) << "op_dtypes.json names " << op << ", no model op";
    for (const std::string& dtype : entry.dtypes)
      EXPECT_TRUE(parseDType(dtype)) << op << ": unknown dtype " << dtype;
  }
}

TEST(OpFixtureCoverage, EveryOpHasACaseInEveryDTypeItTakes) {
  json table = readTable();
  ASSERT_FALSE(table.is_null()) << "tests/fixtures/op_dtypes.json is missing";
  ASSERT_FALSE(fixtures::allOpCases().empty()) << "tests/fixtures/ops.json is missing";
  std::map<std::string, OpDTypes> ops = tableOps(table);
  std::map<std::string, std::set<std::string>> covered;
  for (const fixtures::OpCase& c : fixtures::allOpCases()) {
    auto found = ops.find(c.op);
    if (found == ops.end() || c.inputs.size() <= found->second.input) continue;
    covered[c.op].insert(std::string(dtypeName(c.inputs[found->second.input].dtype)));
  }
  int missing = 0;
  for (const auto& [op, entry] : ops) {
    for (const std::string& dtype : entry.dtypes) {
      if (covered[op].count(dtype)) continue;
      ++missing;
      ADD_FAILURE() << "no case in ops.json of " << op << " on " << dtype
                    << " (tests/fixtures/op_cases_dtypes.py writes one when it can)";
    }
  }
  EXPECT_EQ(missing, 0);
}

}  // namespace
}  // namespace gxc
