// gxc-opt: textual IR in, passes, textual IR out; what the lit tests drive.
#include <iostream>

#include "tools/driver/gxc_cli.h"

int main(int argc, char** argv) { return gxc::gxcOptMain(argc, argv, std::cout, std::cerr); }
