// The ranks' files hold one event per line ("[" first, each event followed by a comma, no
// closing bracket: a rank that dies mid-job leaves a file that still merges). The merge keeps the
// event lines and writes them as one JSON object.
#include "tools/run/trace_merge.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/errors.hpp"

namespace tiercc::run {

int mergeTraces(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("tiercc-trace-", 0) == 0 && name.size() > 5 && name.ends_with(".json"))
      files.push_back(entry.path());
  }
  if (ec) fail(ErrorCode::SystemError, "--trace: cannot read ", dir, ": ", ec.message());
  if (files.empty()) return 0;
  std::sort(files.begin(), files.end());
  const std::string target = dir + "/trace.json";
  std::ofstream out(target, std::ios::trunc);
  if (!out) fail(ErrorCode::SystemError, "--trace: cannot write ", target);
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
      while (!line.empty() && (line.back() == ',' || line.back() == ' ')) line.pop_back();
      if (line.empty() || line == "[" || line == "]" || line.front() != '{' || line.back() != '}') continue;
      out << (first ? "" : ",\n") << line;
      first = false;
    }
  }
  out << "\n]}\n";
  if (!out) fail(ErrorCode::SystemError, "--trace: writing ", target, " failed");
  return static_cast<int>(files.size());
}

}  // namespace tiercc::run
