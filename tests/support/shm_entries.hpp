// /dev/shm as a test sees it, scoped to one job: other tests running in parallel (ctest -j)
// create and unlink segments of their own at any moment, so "nothing left behind" must look at
// this job's names only. A rank prints its prefix (printShmPrefix); the parent checks that no
// entry with it remains (leftInDevShm).
#pragma once

#include <dirent.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/multiprocess.hpp"

namespace tiercc::test {

/// The segment prefix of the communicators of this process ("tiercc-<job>-<comm>-d0"), from
/// their mapped (and already unlinked) segments; "" if none is mapped.
inline std::string shmPrefix() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const std::size_t at = line.find("/dev/shm/tiercc-"), l = line.rfind("-l");
    if (at != std::string::npos && l != std::string::npos && l > at) return line.substr(at + 9, l - at - 9);
  }
  return {};
}

/// Entries of /dev/shm whose name starts with `prefix`.
inline std::vector<std::string> shmEntriesOf(const std::string& prefix) {
  std::vector<std::string> found;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d))
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) found.emplace_back(e->d_name);
    closedir(d);
  }
  return found;
}

/// The lines of a rank's output that start with `tag`, without it.
inline std::vector<std::string> linesOf(const RankResult& r, const std::string& tag) {
  std::vector<std::string> found;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(tag, 0) == 0) found.push_back(line.substr(tag.size()));
  return found;
}

/// In a rank, with its communicators alive: prints "[prefix] <segment prefix>" for each of
/// them (every distinct tiercc segment prefix mapped in this process) for the parent.
inline void printShmPrefixes() {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> seen;
  for (std::string line; std::getline(maps, line);) {
    const std::size_t at = line.find("/dev/shm/tiercc-"), l = line.rfind("-l");
    if (at == std::string::npos || l == std::string::npos || l <= at) continue;
    const std::string prefix = line.substr(at + 9, l - at - 9);
    bool known = false;
    for (const std::string& s : seen) known = known || s == prefix;
    if (!known) seen.push_back(prefix);
  }
  for (const std::string& prefix : seen) std::printf("[prefix] %s\n", prefix.c_str());
  std::fflush(stdout);
}

/// In the parent: what the job's ranks left in /dev/shm ("" if nothing), and whether any rank
/// reported a prefix at all (a job that reports none checks nothing).
inline std::string leftInDevShm(const JobResult& job, bool& sawPrefix) {
  sawPrefix = false;
  std::string left;
  for (const RankResult& r : job.ranks)
    for (const std::string& prefix : linesOf(r, "[prefix] ")) {
      if (prefix.empty()) continue;
      sawPrefix = true;
      for (const std::string& e : shmEntriesOf(prefix)) left += (left.empty() ? "" : ", ") + e;
    }
  return left;
}

}  // namespace tiercc::test
