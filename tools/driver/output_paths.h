// The paths a command writes (--output, --save, --report, --trace, ...), checked before any
// work starts, so that a mistake there costs no run or training: a missing folder is made
// when the file is written, as --output makes its own; a file where a folder must be, or a
// folder that cannot be written, is a command-line error (status 2) naming the option.
#pragma once

#include <string>

namespace gxc {

// `dir` is, or can be made as, a folder gxc may write into; `explanation` follows the
// message when `dir` is a file.
void checkOutputDirOption(const char* option, const std::string& dir, const char* explanation = "");
// `path` can be written as a file: it is no folder, and its folder is, or can be made as, one
// gxc may write into.
void checkOutputFileOption(const char* option, const std::string& path);
// Makes `path`'s folder if it is missing; a failure is a runtime error naming the option.
void makeParentDirs(const char* option, const std::string& path);

}  // namespace gxc
