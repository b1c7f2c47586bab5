#include "tests/unit/op_fixture_graph.h"

#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "tests/unit/op_fixtures.h"

namespace gxc::fixtures {

OpFixtureGraph buildOpFixtureGraph(const std::vector<Device>& devices) {
  OpFixtureGraph g;
  g.graph = std::make_unique<Graph>("all_op_fixtures");
  for (const OpCase& c : allOpCases()) {
    std::vector<Value*> operands;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      std::string name = c.name + ".in" + std::to_string(i);
      operands.push_back(g.graph->addInput(
          name, TensorType::of(c.inputs[i].dtype, c.inputs[i].shape, Device::cpu())));
      g.inputs[name] = toTensor(c.inputs[i]);
    }
    OpKind kind = *parseOpKind(c.op);
    Device device;
    if (kind == OpKind::To) device = Device::cpu();  // a `to` on the host: lowered away
    Op* op = g.graph->appendOp(kind, operands, c.name, TensorType{false, DType::F32, {}, device},
                               toAttrs(c.attrs));
    g.graph->addOutput(c.name, op->result);
    g.opOf[c.name] = op;
  }
  PassContext context;
  context.target = Target::of(devices);
  PassManager(defaultPipeline()).run(*g.graph, context);
  return g;
}

}  // namespace gxc::fixtures
