// tiercc-run --trace DIR: the ranks write their timelines into DIR (TIERCC_TRACE); when the job
// ends, their files are merged into DIR/trace.json, one trace that Perfetto and chrome://tracing
// open with a process per rank.
#pragma once

#include <string>

namespace tiercc::run {

/// Merges every DIR/tiercc-trace-*.json into DIR/trace.json; returns the number of files merged
/// (0: none, and no trace.json). Error{SystemError} if DIR cannot be read or written.
int mergeTraces(const std::string& dir);

}  // namespace tiercc::run
