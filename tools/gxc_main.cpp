// gxc: compile a model for a set of devices, and run it. The logic lives in gxc_driver.
#include <iostream>

#include "runtime/host/host_threads.h"
#include "tools/driver/compile_session.h"
#include "tools/driver/gxc_cli.h"
#include "tools/driver/terminal_progress.h"

int main(int argc, char** argv) {
  gxc::runOnEveryCore();
  gxc::leaveToProcessExit();
  return gxc::gxcMain(argc, argv, std::cout, std::cerr, gxc::stderrIsTerminal());
}
